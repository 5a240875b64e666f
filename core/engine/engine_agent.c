/* engine_agent.c -- an agent pool's instance bootstrap: a one-time
 * token minted per instance (kept hashed, store_agent.c) and the
 * cloud-init part that writes gpubroker-agent's config, joined to the
 * pool's own user_data as MIME multipart so that still runs too. */
#include "engine_int.h"

#include <errno.h>
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

static int is_deb(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && strcmp(path + n - 4, ".deb") == 0;
}

int gb_agent_package_sha256(const char *path, char out[65])
{
	char *data = NULL;
	size_t len = 0;
	if (gb_read_file(path, GB_AGENT_PACKAGE_MAX, &data, &len) != 0)
		return -1;
	gb_sha256_hex(data, len, out);
	free(data);
	return 0;
}

/* The metadata service whose instance id the agent sends at
 * registration (the broker checks it against the instance's). */
static const char *metadata_of(const char *cloud)
{
	return strcmp(cloud, "aws") == 0     ? "ec2"
	       : strcmp(cloud, "gcp") == 0   ? "gce"
	       : strcmp(cloud, "azure") == 0 ? "azure"
	                                     : "none";
}

char *gb_engine__agent_user_data(gb_engine *e, const gb_pool_spec *spec,
                                 const char *cloud, int index, gb_error *err)
{
	const gb_config *cfg = e->o.cfg;
	char tok[65], sha[65], name[200], pkg_sha[65] = "";
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
	if (cfg->agent_package &&
	    gb_agent_package_sha256(cfg->agent_package, pkg_sha) != 0) {
		gb_error_set(err, GB_ERR_INVALID, 0, "AgentPackage", "cannot "
		             "read agent.package %s: %s; fix the path or drop "
		             "the key", cfg->agent_package, strerror(errno));
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
	        "      metadata = %s\n",
	        name, cfg->agent_broker_url, name, tok,
	        (long long)cfg->agent_interval_s, metadata_of(cloud));
	memset(tok, 0, sizeof(tok));
	if (cfg->agent_package && !is_deb(cfg->agent_package))
		/* a bare binary: its unit too (a .deb brings its own) */
		gb_buf_printf(&b,
		        "  - path: /etc/systemd/system/gpubroker-agent.service\n"
		        "    content: |\n"
		        "      [Unit]\n"
		        "      Description=gpubroker instance agent\n"
		        "      Wants=network-online.target\n"
		        "      After=network-online.target\n"
		        "      [Service]\n"
		        "      ExecStart=/usr/bin/gpubroker-agent -c "
		        "/etc/gpubroker-agent.conf\n"
		        "      Restart=on-failure\n"
		        "      StateDirectory=gpubroker-agent\n"
		        "      [Install]\n"
		        "      WantedBy=multi-user.target\n");
	if (spec->ssh_keys.n) {
		/* the user data now given, EC2 adds no key pair of the
		 * spec's (aws driver): cloud-init does, on every cloud */
		gb_buf_printf(&b, "ssh_authorized_keys:\n");
		for (size_t i = 0; i < spec->ssh_keys.n; i++) {
			gb_buf_printf(&b, "  - '");
			for (const char *k = spec->ssh_keys.v[i]; *k; k++)
				if (*k == '\'')
					gb_buf_printf(&b, "''");
				else if (*k != '\n' && *k != '\r')
					gb_buf_printf(&b, "%c", *k);
			gb_buf_printf(&b, "'\n");
		}
	}
	gb_buf_printf(&b, "runcmd:\n");
	if (cfg->agent_package)
		/* fetched from the broker, installed only if it is the
		 * package the broker pinned */
		gb_buf_printf(&b,
		        "  - [sh, -c, 'set -e; f=/var/tmp/gpubroker-agent.pkg; "
		        "curl -fsS --retry 10 -o $f %s/v1/agent/package; "
		        "echo \"%s  $f\" | sha256sum -c -; %s']\n",
		        cfg->agent_broker_url, pkg_sha,
		        is_deb(cfg->agent_package)
		                ? "dpkg -i $f"
		                : "install -m 0755 $f /usr/bin/gpubroker-agent; "
		                  "systemctl daemon-reload");
	gb_buf_printf(&b,
	        "  - [sh, -c, 'if command -v gpubroker-agent >/dev/null; then "
	        "systemctl enable --now gpubroker-agent; else echo "
	        "gpubroker-agent is not installed on this image >&2; fi']\n");
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

/* The agent's last words from its last report (JSON text, may be NULL):
 * into out[cap]. */
static void last_words(const char *report, char *out, size_t cap)
{
	json_t *j = report ? json_loads(report, 0, NULL) : NULL;
	json_t *g = json_object_get(j, "gpus");
	const char *err = json_string_value(json_object_get(j, "error"));
	if (!j)
		snprintf(out, cap, "its agent never reported");
	else if (err)
		snprintf(out, cap, "its agent says: %s", err);
	else if (json_array_size(g))
		snprintf(out, cap, "its agent sees %zu GPU%s (%s), not the "
		         "offer's", json_array_size(g),
		         json_array_size(g) == 1 ? "" : "s",
		         json_string_value(json_object_get(
		                 json_array_get(g, 0), "name")));
	else
		snprintf(out, cap, "its agent sees no GPU");
	json_decref(j);
}

int gb_engine_agent_overdue(gb_engine *e, const gb_pool_row *row)
{
	const gb_config *cfg = e->o.cfg;
	int64_t timeout_ms = cfg ? cfg->agent_ready_timeout_s * 1000 : 0;
	int64_t now = gb_now_ms(), *ready = NULL;
	gb_pool_spec spec;
	gb_inst_row *rows = NULL, **late = NULL;
	size_t n = 0, nready = 0, nlate = 0;
	char err[512];
	if (timeout_ms <= 0 || strcmp(row->state, "active") != 0 ||
	    gb_engine__spec(row, &spec, err, sizeof(err)) != 0)
		return 0;
	if (!spec.agent) {
		gb_pool_spec_free(&spec);
		return 0;
	}
	gb_pool_spec_free(&spec);
	if (gb_engine__lock_pool(e, row->name, err, sizeof(err)) != 0)
		return 0; /* another process changes it: its turn */
	if (gb_store_inst_list(e->o.store, row->name, 1, &rows, &n) != 0 ||
	    gb_store_agent_ready(e->o.store, row->name, &ready, &nready) != 0)
		goto out;
	late = gb_xcalloc(n ? n : 1, sizeof(*late));
	for (size_t i = 0; i < n; i++) {
		gb_inst_row *r = &rows[i];
		char why[300];
		char *report = NULL;
		int ok = 0;
		if (strcmp(r->state, "running") != 0 || !r->running_ms ||
		    r->terminate_requested_ms || now - r->running_ms < timeout_ms)
			continue;
		for (size_t k = 0; k < nready && !ok; k++)
			ok = ready[k] == r->id;
		if (ok)
			continue;
		gb_store_agent_last(e->o.store, r->id, &report);
		last_words(report, why, sizeof(why));
		free(report);
		gb_engine__event(e, row->name, r->name, "not-ready",
		                 "instance %s is not ready %llds after it ran "
		                 "(agent.ready_timeout): %s; replacing it",
		                 r->name ? r->name : "?",
		                 (long long)((now - r->running_ms) / 1000), why);
		late[nlate++] = r;
	}
	if (nlate)
		gb_engine__terminate_rows(e, late, nlate, "not ready");
out:
	gb_engine__unlock_pool(e, row->name);
	free(late);
	free(ready);
	gb_inst_list_free(rows, n);
	return (int)nlate;
}
