/* drvc_json.c -- defensive jansson accessors and time parsing. */
#include "drvc_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_mem.h"
#include "drvc_util.h"

const char *drvc_jstr(const json_t *o, const char *key)
{
	if (!json_is_object(o))
		return NULL;
	return json_string_value(json_object_get(o, key));
}

json_t *drvc_jpath(const json_t *o, const char *path)
{
	char key[128];
	const json_t *cur = o;
	while (*path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		if (!cur)
			return NULL;
		path += n + (dot ? 1 : 0);
	}
	return (json_t *)cur;
}

const char *drvc_jpath_str(const json_t *o, const char *path)
{
	return json_string_value(drvc_jpath(o, path));
}

int drvc_jint(const json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d != d || d < -9.2e18 || d > 9.2e18 || d != (double)(int64_t)d)
			return -1;
		*out = (int64_t)d;
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		long long x;
		if (!*s || (!isdigit((unsigned char)s[0]) && s[0] != '-'))
			return -1;
		errno = 0;
		x = strtoll(s, &end, 10);
		if (errno || *end)
			return -1;
		*out = (int64_t)x;
		return 0;
	}
	return -1;
}

int drvc_jnum(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		double d;
		if (!*s)
			return -1;
		errno = 0;
		d = strtod(s, &end);
		if (errno || *end || d != d)
			return -1;
		*out = d;
		return 0;
	}
	return -1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;
	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int64_t drvc_rfc3339_ms(const char *s)
{
	int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0, ms = 0, nd = 0;
	const char *p;
	if (!s || strlen(s) < 19)
		return -1;
	if (digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
	    s[7] != '-' || digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
	    s[16] != ':' || digits(s + 17, 2, &se))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return -1;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p)) {
			if (nd++ < 3)
				ms = ms * 10 + (*p - '0');
			p++;
		}
		for (; nd < 3; nd++)
			ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om))
			return -1;
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	return (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se -
	        sign * (oh * 3600 + om * 60)) * 1000 + ms;
}

int64_t drvc_rfc3339(const char *s)
{
	int64_t ms = drvc_rfc3339_ms(s);
	return ms < 0 ? -1 : ms / 1000;
}

int64_t drvc_http_date(const char *s)
{
	static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	int d, y, h, mi, se, m = -1;
	/* "Sun, 06 Nov 1994 08:49:37 GMT" */
	if (!s || strlen(s) < 29 || s[3] != ',' || s[4] != ' ')
		return -1;
	s += 5;
	if (digits(s, 2, &d) || s[2] != ' ')
		return -1;
	for (int i = 0; i < 12; i++)
		if (strncmp(s + 3, mon[i], 3) == 0)
			m = i + 1;
	if (m < 0 || s[6] != ' ' || digits(s + 7, 4, &y) || s[11] != ' ' ||
	    digits(s + 12, 2, &h) || s[14] != ':' || digits(s + 15, 2, &mi) ||
	    s[17] != ':' || digits(s + 18, 2, &se) || strcmp(s + 20, " GMT"))
		return -1;
	return days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + se;
}

gb_kv *drvc_json_kv_borrow(const json_t *o, size_t *n)
{
	const char *k;
	json_t *v;
	gb_kv *kv;
	*n = 0;
	if (!json_is_object(o))
		return NULL;
	kv = drvc_xcalloc(json_object_size(o) + 1, sizeof(gb_kv));
	json_object_foreach((json_t *)o, k, v) {
		if (!json_is_string(v))
			continue;
		kv[*n].key = k;
		kv[*n].value = json_string_value(v);
		(*n)++;
	}
	return kv;
}

gb_kv *drvc_json_kv(const json_t *o, size_t *n)
{
	gb_kv *kv = drvc_json_kv_borrow(o, n);
	for (size_t i = 0; i < *n; i++) {
		kv[i].key = drvc_xstrdup(kv[i].key);
		kv[i].value = drvc_xstrdup(kv[i].value);
	}
	return kv;
}

void drvc_kv_free(gb_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free((char *)kv[i].key);
		free((char *)kv[i].value);
	}
	free(kv);
}

int drvc_command_answer(json_t *doc, void (*out)(void *ud, const char *json),
                        void *ud, gb_error *err)
{
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
	                 : NULL;
	json_decref(doc);
	if (!text) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "Json", "cannot encode JSON");
		return -1;
	}
	out(ud, text);
	free(text);
	return 0;
}

int drvc_credentials_answer(const char *source, const char *looked_in,
                            void (*out)(void *ud, const char *json),
                            void *ud, gb_error *err)
{
	json_t *doc = source ? json_pack("{s:b, s:s}", "found", 1, "source",
	                                 source)
	                     : json_pack("{s:b, s:s}", "found", 0, "looked_in",
	                                 looked_in ? looked_in : "");
	return drvc_command_answer(doc, out, ud, err);
}

int drvc_credentials_command(const char *driver, const char *verb, int argc,
                             const char *source, const char *looked_in,
                             void (*out)(void *ud, const char *json),
                             void *ud, gb_error *err)
{
	if (verb && strcmp(verb, "credentials") == 0 && argc == 0)
		return drvc_credentials_answer(source, looked_in, out, ud, err);
	drvc_err(err, GB_ERR_INVALID, 0, "UnknownCommand",
	         "the %s driver has no command \"%s\" (it answers: "
	         "credentials)", driver, verb ? verb : "");
	return -1;
}
