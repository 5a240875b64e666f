/* timejson.c -- times in JSON (timejson.h). */
#include "timejson.h"

#include "util.h"

json_t *gb_json_time(int64_t unix_ms)
{
	char buf[32];
	if (unix_ms == 0)
		return json_null();
	return json_string(gb_format_time_ms(unix_ms, buf, sizeof(buf)));
}

int gb_json_time_get(const json_t *j, int64_t *unix_ms)
{
	const char *s = json_string_value(j);
	return s ? gb_parse_time_ms(s, unix_ms) : -1;
}
