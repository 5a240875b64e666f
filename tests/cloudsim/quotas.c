/*
 * quotas.c -- the names quotas are kept under, per cloud:
 *   AWS:   the vCPU quota bucket of an instance type ("P", "G", "F",
 *          "X", "Inf", "DL", "Trn", "HPC", or "Standard").
 *   Azure: a VM family derived from the size name:
 *          Standard_ND96isr_H100_v5 -> standardNDISRH100v5Family
 *          (series letters + upper-cased suffix + the other parts).
 *   GCP:   the GPU metric: NVIDIA_<MODEL>_GPUS, PREEMPTIBLE_... for spot
 *          (A100-80GB -> NVIDIA_A100_80GB_GPUS).
 */
#include <ctype.h>
#include <string.h>

#include "sim.h"

const char *sim_aws_family(const char *type, char *buf, size_t cap)
{
	static const struct {
		const char *prefix, *family;
	} map[] = {
		{"p", "P"},     {"g", "G"},     {"vt", "G"},  {"f", "F"},
		{"x", "X"},     {"inf", "Inf"}, {"dl", "DL"}, {"trn", "Trn"},
		{"hpc", "HPC"},
	};
	char pre[16];
	size_t n = 0;
	while (type[n] && isalpha((unsigned char)type[n]) && n + 1 < sizeof(pre)) {
		pre[n] = (char)tolower((unsigned char)type[n]);
		n++;
	}
	pre[n] = '\0';
	for (size_t i = 0; i < GB_ARRAY_LEN(map); i++) {
		if (strcmp(pre, map[i].prefix) == 0) {
			snprintf(buf, cap, "%s", map[i].family);
			return buf;
		}
	}
	snprintf(buf, cap, "Standard");
	return buf;
}

const char *sim_azure_family(const char *vmsize, char *buf, size_t cap)
{
	gb_buf b = GB_BUF_INIT;
	const char *p = vmsize;
	const char *us;
	if (strncmp(p, "Standard_", 9) == 0)
		p += 9;
	gb_buf_puts(&b, "standard");
	/* first part: series letters, digits, suffix letters */
	while (*p && isupper((unsigned char)*p))
		gb_buf_putc(&b, *p++);
	while (*p && isdigit((unsigned char)*p))
		p++;
	while (*p && *p != '_')
		gb_buf_putc(&b, (char)toupper((unsigned char)*p++));
	/* the other parts, without underscores */
	while ((us = strchr(p, '_'))) {
		const char *next = strchr(us + 1, '_');
		size_t len = next ? (size_t)(next - us - 1) : strlen(us + 1);
		gb_buf_append(&b, us + 1, len);
		p = us + 1 + len;
	}
	gb_buf_puts(&b, "Family");
	snprintf(buf, cap, "%s", gb_buf_str(&b));
	gb_buf_free(&b);
	return buf;
}

const char *sim_gcp_gpu_metric(const char *gpu, int spot, char *buf,
                               size_t cap)
{
	size_t o;
	o = (size_t)snprintf(buf, cap, "%sNVIDIA_", spot ? "PREEMPTIBLE_" : "");
	for (const char *p = gpu; *p && o + 6 < cap; p++)
		buf[o++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
	snprintf(buf + o, cap - o, "_GPUS");
	return buf;
}
