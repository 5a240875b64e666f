/* fuzz_config.c -- libFuzzer target for the broker config loader: no
 * crash, leak or hang, and a failed load reports errors and leaves the
 * config zeroed.  Build and run: `make fuzz` (see tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	char *msgs;
	if (gb_config_load_buf("fuzz.yaml", (const char *)data, size, &c,
	                       &d) == 0) {
		if (d.n != 0 || !c.broker_id || !c.listen || !c.state_path)
			abort();
		gb_config_free(&c);
	} else if (c.broker_id || c.drivers || d.n + d.dropped == 0) {
		abort();
	}
	msgs = gb_diags_str(&d);
	free(msgs);
	gb_diags_free(&d);
	return 0;
}
