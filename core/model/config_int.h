/* config_int.h -- between config.c and the files that decode one section
 * of the broker config each (config_auth.c). */
#ifndef GB_CONFIG_INT_H
#define GB_CONFIG_INT_H

#include "config.h"
#include "yamldoc.h"

/* auth: (config_auth.c); decoded after teams:, whose names it checks. */
void gb_config__dec_auth(gb_ydec *c, const gb_ynode *n, gb_config *cfg);
void gb_config__free_auth(gb_config *cfg);
/* priorities: (config_priority.c): the defaults, decoding, freeing. */
void gb_config__default_priorities(gb_config *cfg);
void gb_config__dec_priorities(gb_ydec *c, const gb_ynode *n,
                               gb_config *cfg);
void gb_config__free_priorities(gb_config *cfg);
/* A team or token name: 1..63 of [a-z0-9_.-], starting with a letter. */
int gb_config__valid_name(const char *s);

/* The keys of section of the one key table (config.c: gb_config_keys),
 * NULL-terminated, into out[cap]: what the decoder accepts there.
 * Returns out. */
const char *const *gb_config__keys_in(const char *section, const char **out,
                                      size_t cap);
#define GB_CONFIG_KEYS(section) \
	gb_config__keys_in(section, (const char *[32]){NULL}, 32)

#endif
