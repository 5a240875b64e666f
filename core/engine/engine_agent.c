/* engine_agent.c -- an agent pool's instance bootstrap: a one-time
 * token minted per instance (kept hashed, store_agent.c) and the
 * cloud-init part that writes gpubroker-agent's config, joined to the
 * pool's own user_data as MIME multipart so that still runs too. */
#include "engine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUNDARY "==gpubroker-agent-part=="

/* The MIME type cloud-init knows the user's own part by. */
static const char *part_type(const char *ud)
{
	if (strncmp(ud, "#!", 2) == 0)
		return "text/x-shellscript";
	if (strncmp(ud, "#cloud-config", 13) == 0)
		return "text/cloud-config";
	if (strncmp(ud, "#cloud-boothook", 15) == 0)
		return "text/cloud-boothook";
	if (strncmp(ud, "#include", 8) == 0)
		return "text/x-include-url";
	/* cloud-init finds the type of a text/plain part from its start */
	return "text/plain";
}

char *gb_engine__agent_user_data(gb_engine *e, const gb_pool_spec *spec,
                                 int index, gb_error *err)
{
	const gb_config *cfg = e->o.cfg;
	char tok[65], sha[65], name[200];
	gb_buf b = GB_BUF_INIT;
	const char *ud = spec->user_data;
	if (!cfg || !cfg->agent_broker_url) {
		gb_error_set(err, GB_ERR_INVALID, 0, "AgentNotConfigured",
		             "pool %s has agent: true but the broker config has "
		             "no agent.broker_url (the address instances reach "
		             "the daemon at): set it, or drop agent: true",
		             spec->name);
		return NULL;
	}
	snprintf(name, sizeof(name), "%s-%d", spec->name, index);
	if (gb_random_hex(tok, 32) != 0) {
		gb_error_set(err, GB_ERR_INTERNAL, 0, "Random", "no random "
		             "bytes for the agent bootstrap token of %s", name);
		return NULL;
	}
	gb_sha256_hex(tok, strlen(tok), sha);
	if (gb_store_agent_mint(e->o.store, spec->name, name, sha,
	                        gb_now_ms() +
	                                cfg->agent_bootstrap_ttl_s * 1000) != 0) {
		gb_error_set(err, GB_ERR_INTERNAL, 0, "Store", "the agent "
		             "bootstrap token of %s was not kept: %s", name,
		             gb_store_errmsg(e->o.store));
		memset(tok, 0, sizeof(tok));
		return NULL;
	}
	gb_buf_printf(&b,
	        "Content-Type: multipart/mixed; boundary=\"" BOUNDARY "\"\n"
	        "MIME-Version: 1.0\n\n"
	        "--" BOUNDARY "\n"
	        "Content-Type: text/cloud-config; charset=\"us-ascii\"\n"
	        "MIME-Version: 1.0\n"
	        "Content-Disposition: attachment; "
	        "filename=\"gpubroker-agent.cfg\"\n\n"
	        "#cloud-config\n"
	        "write_files:\n"
	        "  - path: /etc/gpubroker-agent.conf\n"
	        "    permissions: '0600'\n"
	        "    content: |\n"
	        "      # written by gpubroker for instance %s\n"
	        "      broker_url = %s\n"
	        "      instance = %s\n"
	        "      bootstrap_token = %s\n"
	        "      interval = %lld\n"
	        "runcmd:\n"
	        "  - [sh, -c, 'if command -v gpubroker-agent >/dev/null; then "
	        "systemctl enable --now gpubroker-agent; else echo "
	        "gpubroker-agent is not installed on this image >&2; fi']\n",
	        name, cfg->agent_broker_url, name, tok,
	        (long long)cfg->agent_interval_s);
	memset(tok, 0, sizeof(tok));
	if (ud && *ud)
		gb_buf_printf(&b,
		        "\n--" BOUNDARY "\n"
		        "Content-Type: %s; charset=\"us-ascii\"\n"
		        "MIME-Version: 1.0\n"
		        "Content-Disposition: attachment; "
		        "filename=\"user-data\"\n\n%s%s",
		        part_type(ud), ud,
		        ud[strlen(ud) - 1] == '\n' ? "" : "\n");
	gb_buf_printf(&b, "\n--" BOUNDARY "--\n");
	return gb_buf_take(&b);
}
