#!/bin/sh
# tests/integration/packaging.sh -- the CI examples and the packaging, as
# far as they can be checked on one machine without network:
#
#  1. examples/ci/{github-actions,gitlab-ci}.yml parse as YAML and have the
#     promised shape (apply --wait -o json, destroy in an always-run step,
#     secrets only through the environment, no ${{ }} in shell code);
#     examples/ci/pool.yaml validates with the CI variables and refuses to
#     validate without CI_JOB_ID (no shared fallback name).
#  2. The CI pipelines RUN: their shell steps are executed, as GitHub and
#     GitLab would, against real daemons (a fresh one per scenario) with API
#     tokens whose only "cloud" is an on-prem node on this host (the spec's
#     clouds line is swapped for [onprem], its regions line for the site's
#     name glob ["us-*"]: region names are per cloud, and a glob naming no
#     region of the pool's clouds is refused; nothing else changes).  ssh and
#     nvidia-smi are stand-ins that run here.  Checked: the pool is created
#     with the CI token, the job runs on the address apply printed,
#     heartbeats reach the daemon, the always-run step destroys the pool
#     after success AND after a failed job, a never-created pool is
#     "nothing to destroy" (destroy --ignore-not-found), an instance with
#     no address of the kind the runner needs (GPUBROKER_ADDRESS public,
#     the default, and the stand-in's private-only node) fails the acquire
#     step naming the fix while the release step still destroys the pool,
#     and a pool whose job died is destroyed by the
#     daemon at its TTL (and counted in gpubroker_teardowns_total).
#     /metrics refuses a scrape without a token when tokens are configured.
#  3. packaging/grafana-dashboard.json is a valid dashboard model and every
#     metric name in its queries is exported by a running daemon's /metrics
#     (a token-less loopback daemon, and the token ones above with live
#     instances), with the labels its queries select and group by.
#  4. Every daemon stops on SIGTERM with exit status 0.
#  5. packaging/gpubroker.service passes `systemd-analyze verify` with no
#     warning (ExecStart pointed at the built binary), and the sysusers
#     file creates the user (systemd-sysusers --root); each is skipped with
#     a note when the tool is missing.
#
# Needs /usr/bin/python3 with PyYAML (Debian python3-yaml; `make deps`),
# jq and curl.  Exit 77 only when the gpubroker binary is missing.
set -u
: "${GB_BUILD:?GB_BUILD must name the build directory}"
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="$GB_BUILD/bin/gpubroker"
if [ ! -x "$GB" ]; then
	echo "skip: $GB is missing (build it first: make BUILD=...)"
	exit 77
fi
PY=/usr/bin/python3

tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	echo "ok    $*"
}
note() {
	echo "note  $*"
}

for tool in curl jq; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "FAIL: $tool is missing (make deps)"
		exit 1
	}
done
if ! "$PY" -c 'import yaml' >/dev/null 2>&1; then
	echo "FAIL: $PY with PyYAML is needed to parse the CI files (Debian" \
	     "python3-yaml; make deps installs it)"
	exit 1
fi
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/home/state"
mkdir -p "$HOME"
cd "$GB_SRC" || exit 1

# ------------------------------------------------------------ helpers
# start_daemon NAME ARGS...: gpubroker serve in the background; sets
# d_pid and d_url from its first stdout line.
start_daemon() {
	name=$1
	shift
	"$GB" serve "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	d_pid=$!
	pids="$pids $d_pid"
	d_url=""
	i=0
	while [ $i -lt 300 ]; do
		d_url=$(head -n 1 "$tmp/$name.out" 2>/dev/null |
			sed -n 's/^{"listen": *"\(http:\/\/127\.0\.0\.1:[0-9]*\)".*/\1/p')
		[ -n "$d_url" ] && return 0
		kill -0 "$d_pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	fail "daemon $name did not print its address; stderr:"
	cat "$tmp/$name.err"
	return 1
}

# stop_daemon NAME PID: SIGTERM, wait (at most 30 s), exit status 0.
stop_daemon() {
	kill -TERM "$2"
	i=0
	while kill -0 "$2" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$2" 2>/dev/null; then
		fail "daemon $1 still running 30 s after SIGTERM"
		kill -KILL "$2"
	fi
	wait "$2"
	st=$?
	[ "$st" = 0 ] && ok "daemon $1: SIGTERM -> exit 0" ||
		{ fail "daemon $1: SIGTERM -> exit $st"; tail -5 "$tmp/$1.err"; }
	rest=""
	for p in $pids; do
		[ "$p" = "$2" ] || rest="$rest $p"
	done
	pids=$rest
	grep -q 'stopped; the journal is consistent' "$tmp/$1.err" ||
		fail "daemon $1: no clean-stop line in its log"
}

# ------------------------------------------------ 1. CI files, pool spec
cat >"$tmp/static.py" <<'EOF'
import re, sys, yaml
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)

gh = yaml.safe_load(open("examples/ci/github-actions.yml"))
on = gh.get("on", gh.get(True))          # YAML 1.1 reads "on" as true
check(isinstance(on, dict) and on, "github: no 'on' triggers")
jobs = gh.get("jobs") or {}
check(len(jobs) == 1, "github: expected one job")
job = next(iter(jobs.values()))
env = job.get("env") or {}
check(env.get("GPUBROKER_SERVER") == "${{ vars.GPUBROKER_SERVER }}",
      "github: GPUBROKER_SERVER must come from the repository variable")
# no stored secret signs in: the job's OIDC ID token does (auth.oidc)
check("GPUBROKER_TOKEN" not in env and "secrets.GPUBROKER_TOKEN" not in open("examples/ci/github-actions.yml").read(),
      "github: no stored broker token: the job signs in with its OIDC ID token")
check((gh.get("permissions") or {}).get("id-token") == "write",
      "github: permissions must grant id-token: write (the OIDC sign-in)")
check(bool(env.get("GPUBROKER_OIDC_AUDIENCE")), "github: GPUBROKER_OIDC_AUDIENCE names the broker's audience")
check(re.fullmatch(r"\$\{\{ github\.run_id \}\}-\$\{\{ github\.run_attempt \}\}",
                   str(env.get("CI_JOB_ID"))),
      "github: CI_JOB_ID must be <run_id>-<run_attempt>")
check(((job.get("defaults") or {}).get("run") or {}).get("shell") == "bash",
      "github: defaults.run.shell must be bash (-eo pipefail)")
steps = job.get("steps") or []
runs = [s for s in steps if "run" in s]
for s in runs:
    check("${{" not in s["run"], "github: step %r pastes ${{ }} into shell code"
          % s.get("name"))
acq = [s for s in runs if s.get("name") == "acquire GPUs"]
check(len(acq) == 1, "github: no step named 'acquire GPUs'")
if acq:
    check(re.search(r"gpubroker apply -f \S+ --auto-approve --wait --timeout 20m -o json > pool\.json",
                    acq[0]["run"]), "github: acquire GPUs does not run apply --wait -o json > pool.json")
    check("jq " in acq[0]["run"], "github: addresses not extracted with jq")
last = steps[-1] if steps else {}
check(str(last.get("if", "")).replace("${{", "").replace("}}", "").strip() == "always()",
      "github: the last step must run with if: always()")
check("gpubroker destroy" in last.get("run", ""), "github: the last step must destroy the pool")
check(any("ssh " in s["run"] for s in runs), "github: no step runs the job over ssh")

gl = yaml.safe_load(open("examples/ci/gitlab-ci.yml"))
gjobs = {k: v for k, v in gl.items() if isinstance(v, dict) and "script" in v}
check(len(gjobs) == 1, "gitlab: expected one job")
gj = next(iter(gjobs.values()))
script = "\n".join(gj.get("script") or [])
after = "\n".join(gj.get("after_script") or [])
check(re.search(r"gpubroker apply -f \S+ --auto-approve --wait --timeout 20m -o json > pool\.json", script),
      "gitlab: script does not run apply --wait -o json > pool.json")
check("gpubroker destroy" in after, "gitlab: after_script must destroy the pool")
check("gpubroker destroy" not in script, "gitlab: destroy belongs in after_script")
check("GPUBROKER_SERVER" not in (gl.get("variables") or {}) and
      "GPUBROKER_SERVER" not in (gj.get("variables") or {}),
      "gitlab: GPUBROKER_SERVER must come from CI/CD settings, not the file")
check("GPUBROKER_TOKEN" not in open("examples/ci/gitlab-ci.yml").read(),
      "gitlab: no stored broker token: the job signs in with its OIDC ID token")
check(((gj.get("id_tokens") or {}).get("GPUBROKER_OIDC_TOKEN") or {}).get("aud"),
      "gitlab: id_tokens must give GPUBROKER_OIDC_TOKEN with an aud")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF
if "$PY" "$tmp/static.py"; then
	ok "CI files parse as YAML and have the promised steps"
else
	fails=$((fails + 1))
fi

SSH_PUB="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci@example.com"
if env -u CI_JOB_ID GPUBROKER_SSH_PUBLIC_KEY="$SSH_PUB" \
	"$GB" validate -f examples/ci/pool.yaml >"$tmp/v.out" 2>"$tmp/v.err"; then
	fail "pool.yaml validates without CI_JOB_ID: pipelines could share a pool"
else
	grep -q 'CI_JOB_ID is not set' "$tmp/v.err" && ok "pool.yaml refuses a missing CI_JOB_ID" ||
		{ fail "pool.yaml without CI_JOB_ID: unexpected error"; cat "$tmp/v.err"; }
fi
if CI_JOB_ID=987654-2 CI_PIPELINE_ID=987654 CI_PROJECT_NAME=demo \
	GPUBROKER_SSH_PUBLIC_KEY="$SSH_PUB" \
	"$GB" validate -o json -f examples/ci/pool.yaml >"$tmp/v.json" 2>"$tmp/v.err"; then
	got=$(jq -r '.[0].pools[0] | [.name, .lifecycle.ttl, .lifecycle.idle_timeout,
		.labels["ci-pipeline"], (.ssh_keys | length)] | @tsv' "$tmp/v.json" 2>/dev/null)
	want=$(printf 'ci-987654-2\t7200\t1800\t987654\t1')
	[ "$got" = "$want" ] && ok "pool.yaml: name ci-<job>, TTL 2h, idle 30m, pipeline label" ||
		fail "pool.yaml decoded as [$got], expected [$want]"
else
	fail "pool.yaml does not validate with the CI variables set"
	cat "$tmp/v.err"
fi

# ------------------------------------- 2a. daemon A: no tokens, loopback
state_a="$tmp/a"
mkdir -p "$state_a"
if start_daemon a --listen 127.0.0.1:0 --state "$state_a/state.db"; then
	pid_a=$d_pid
	curl -fsS "$d_url/healthz" >/dev/null || fail "daemon a: /healthz"
	curl -sS -o /dev/null "$d_url/v1/no-such-thing" # a 4xx for the counters
	if curl -fsS "$d_url/metrics" >"$tmp/a.metrics"; then
		ok "daemon a (no tokens): /metrics answers"
	else
		fail "daemon a: GET /metrics failed"
	fi
	stop_daemon a "$pid_a"
fi

# ------------------- 2b. daemon B: tokens, on-prem node, the CI pipelines
mkdir -p "$tmp/bin"
CI_TOKEN=$(openssl rand -hex 32 2>/dev/null || od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
PROM_TOKEN=$(openssl rand -hex 32 2>/dev/null || od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
ci_hash=$(printf %s "$CI_TOKEN" | sha256sum | cut -d' ' -f1)
prom_hash=$(printf %s "$PROM_TOKEN" | sha256sum | cut -d' ' -f1)

# start_b NAME: a daemon with API tokens whose only "cloud" is one on-prem
# node on this host (local transport), with a fresh store in $tmp/NAME;
# sets pid_b, url_b and GPUBROKER_SERVER.  One per scenario.
start_b() {
	mkdir -p "$tmp/$1"
	cat >"$tmp/$1/nodes.yaml" <<EOF
sites:
  - {name: us-ci-lab, lat: 39.0, lon: -77.5, jurisdiction: US, country: US}
nodes:
  - name: ci-node-1
    site: us-ci-lab
    transport: local
    address: 127.0.0.1
    gpus: {model: L4, count: 1}
    price_per_gpu_hour: 0.5
EOF
	cat >"$tmp/$1/broker.yaml" <<EOF
broker_id: packaging-test
state: $tmp/$1/state.db
policy_path: [$GB_SRC/policies]
drivers: [{name: onprem}]
onprem: {inventory: $tmp/$1/nodes.yaml}
tokens:
  - {name: ci, sha256: $ci_hash, role: operator, team: research}
  - {name: prometheus, sha256: $prom_hash, role: viewer, team: research}
teams:
  - {name: research, max_gpus: 8}
daemon: {reconcile_period: 1s}
EOF
	start_daemon "$1" -c "$tmp/$1/broker.yaml" --listen 127.0.0.1:0 || return 1
	pid_b=$d_pid
	url_b=$d_url
	export GPUBROKER_SERVER="$url_b"
}

# stand-ins: ssh runs the remote command here (and checks the key file is
# private); nvidia-smi answers the heartbeat query, and as the "job" waits
# until the runner's heartbeat reached the daemon and looks at /metrics
# while the pool is live.
cat >"$tmp/bin/ssh" <<'EOF'
#!/bin/sh
host="" key=""
while [ $# -gt 0 ]; do
	case "$1" in
	-i) key=$2; shift 2 ;;
	-[oplFJEcmwb]) shift 2 ;;
	-*) shift ;;
	*) host=$1; shift; break ;;
	esac
done
mode=$(stat -c %a "$key" 2>/dev/null || echo none)
echo "host=$host keymode=$mode cmd=$*" >>"$SSH_LOG"
exec sh -c "$*"
EOF
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*--query-gpu=utilization.gpu*) printf '12\n87\n' ;;
-L)
	if [ "${FAKE_GPU_FAIL:-0}" = 1 ]; then
		echo "fake: CUDA error: an illegal memory access" >&2
		exit 1
	fi
	i=0
	while [ $i -lt 150 ]; do
		if curl -fsS -H "Authorization: Bearer $FAKE_VIEW_TOKEN" \
			"$GPUBROKER_SERVER/v1/pools/ci-$CI_JOB_ID" 2>/dev/null |
			jq -e '.last_heartbeat_at != null' >/dev/null; then
			echo "heartbeat seen for ci-$CI_JOB_ID" >>"$FAKE_MARK"
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	i=0
	while [ $i -lt 50 ]; do
		curl -fsS -H "Authorization: Bearer $FAKE_VIEW_TOKEN" \
			"$GPUBROKER_SERVER/metrics" >"$FAKE_METRICS.tmp" 2>/dev/null &&
			grep -q '^gpubroker_instances{' "$FAKE_METRICS.tmp" &&
			{ mv "$FAKE_METRICS.tmp" "$FAKE_METRICS"; break; }
		sleep 0.1
		i=$((i + 1))
	done
	echo "GPU 0: NVIDIA L4 (UUID: GPU-00000000-fake)"
	;;
*) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
EOF
chmod +x "$tmp/bin/ssh" "$tmp/bin/nvidia-smi"

# The runner: executes a CI file's shell the way GitHub Actions
# (bash --noprofile --norc -eo pipefail per step; if: always()) or GitLab
# (before_script+script in one shell, after_script in another) does.
cat >"$tmp/ci_run.py" <<'EOF'
import json, os, re, signal, subprocess, sys
import yaml

kind, path, work = sys.argv[1], sys.argv[2], sys.argv[3]
only = sys.argv[4] if len(sys.argv) > 4 else None
doc = yaml.safe_load(open(path))
base = dict(os.environ)
force = {k: os.environ[k] for k in os.environ.get("CI_FORCE", "").split() if k in os.environ}

# A step gets 90 s here (its own --timeout 20m is for real clouds); on
# expiry its whole process group goes, and the step counts as failed (124).
def sh(script, env, log):
    with open(log, "w") as out:
        p = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                             cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            return p.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            out.write("\nci_run: step killed after 90 s\n")
            return 124

if kind == "github":
    exprs = json.loads(os.environ["GH_EXPR"])
    def expand(v):
        def one(m):
            e = m.group(1).strip()
            if e not in exprs:
                sys.exit("ci_run: no value for ${{ %s }}" % e)
            return exprs[e]
        return re.sub(r"\$\{\{(.*?)\}\}", one, str(v))
    job = next(iter(doc["jobs"].values()))
    env = dict(base)
    env.update({k: expand(v) for k, v in (job.get("env") or {}).items()})
    env["RUNNER_TEMP"] = os.path.join(work, "_temp")
    os.makedirs(env["RUNNER_TEMP"], exist_ok=True)
    failed = False
    for i, st in enumerate(job["steps"]):
        if "run" not in st:
            continue
        name = st.get("name", "step %d" % i)
        if only and name != only:
            continue
        cond = str(st.get("if", "")).replace("${{", "").replace("}}", "").strip()
        if cond not in ("", "always()"):
            sys.exit("ci_run: cannot evaluate if: %s" % cond)
        if failed and cond != "always()":
            print("%s: skipped" % name)
            continue
        e = dict(env)
        e.update({k: expand(v) for k, v in (st.get("env") or {}).items()})
        e.update(force)
        rc = sh(st["run"], e, os.path.join(work, "step-%d.log" % i))
        print("%s: %d" % (name, rc))
        failed = failed or rc != 0
    sys.exit(1 if failed else 0)

job = next(v for v in doc.values() if isinstance(v, dict) and "script" in v)
env = {k: str(v) for k, v in (doc.get("variables") or {}).items()}
env.update({k: str(v) for k, v in (job.get("variables") or {}).items()})
env.update(base)          # the CI system's and the settings' variables win
env.update(force)
env["CI_PROJECT_DIR"] = work
rc = sh("\n".join(job.get("before_script", []) + job["script"]), env,
        os.path.join(work, "script.log"))
print("script: %d" % rc)
rc2 = sh("\n".join(job.get("after_script", [])), env, os.path.join(work, "after.log"))
print("after_script: %d" % rc2)
sys.exit(1 if rc or rc2 else 0)
EOF

# workspace DIR: a checkout as the pipeline sees it, with the spec's
# clouds swapped for the on-prem stand-in and its regions for the
# stand-in site's (us-ci-lab): exactly those two lines change.
workspace() {
	mkdir -p "$1/examples/ci"
	sed -e 's/^\(    clouds: \)\[aws, gcp, azure\]$/\1[onprem]/' \
		-e 's/^\(    regions: \).*$/\1["us-*"]/' \
		examples/ci/pool.yaml >"$1/examples/ci/pool.yaml"
	n=$(diff examples/ci/pool.yaml "$1/examples/ci/pool.yaml" | grep -c '^>')
	[ "$n" = 2 ] || fail "workspace: expected the spec's clouds and regions lines to change ($n lines did)"
}

# pool_json NAME: the pool as the daemon reports it (viewer token)
pool_json() {
	curl -sS -H "Authorization: Bearer $PROM_TOKEN" "$url_b/v1/pools/$1?all=1"
}

# expect_destroyed NAME WHAT: the pool is destroyed and every instance
# terminated (polls for up to 20 s)
expect_destroyed() {
	i=0
	while [ $i -lt 200 ]; do
		st=$(pool_json "$1" | jq -r '[.state, ([.instances[]? | select(.state != "terminated")] | length)] | @tsv' 2>/dev/null)
		[ "$st" = "$(printf 'destroyed\t0')" ] && { ok "$2"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	fail "$2: pool $1 is [$st], expected destroyed with no live instance"
	pool_json "$1"
	echo
	return 1
}

export PATH="$tmp/bin:$GB_BUILD/bin:$PATH"
# Stands in for the OIDC exchange the pipelines rely on (no issuer here:
# tests/integration/oidc.sh runs the exchange itself end to end): the CLI
# and `gpubroker token` use a given token before any ID token.
export GPUBROKER_TOKEN="$CI_TOKEN"
export FAKE_VIEW_TOKEN="$PROM_TOKEN" FAKE_METRICS="$tmp/b-live.metrics"
export FAKE_MARK="$tmp/mark" SSH_LOG="$tmp/ssh.log"
# the on-prem stand-in's node has a private address only (127.0.0.1), as
# nodes beside a self-hosted runner do: the pipelines use that address
export CI_FORCE="HEARTBEAT_EVERY GPUBROKER_ADDRESS" HEARTBEAT_EVERY=1 GPUBROKER_ADDRESS=private
ghexpr() { # RUN_ID ATTEMPT
	printf '{"vars.GPUBROKER_SERVER": "%s", "unused": "%s",
 "secrets.GPUBROKER_SSH_KEY": "-----BEGIN OPENSSH PRIVATE KEY-----\\nfake\\n-----END OPENSSH PRIVATE KEY-----",
 "vars.GPUBROKER_SSH_PUBLIC_KEY": "%s", "github.run_id": "%s",
 "github.run_attempt": "%s", "github.event.repository.name": "demo"}' \
		"$url_b" "$CI_TOKEN" "$SSH_PUB" "$1" "$2"
}

# --- GitHub Actions, the job succeeds
if start_b gh1; then
	code=$(curl -sS -o /dev/null -w '%{http_code}' "$url_b/metrics")
	[ "$code" = 401 ] && ok "daemon with tokens: /metrics without a token -> 401" ||
		fail "daemon with tokens: /metrics without a token answered $code, expected 401"
	code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PROM_TOKEN" "$url_b/metrics")
	[ "$code" = 200 ] && ok "daemon with tokens: /metrics with the scrape (viewer) token -> 200" ||
		fail "daemon with tokens: /metrics with a viewer token answered $code"
	ws="$tmp/gh1/ws"
	workspace "$ws"
	: >"$SSH_LOG"
	: >"$FAKE_MARK"
	if GH_EXPR=$(ghexpr 4242 1) "$PY" "$tmp/ci_run.py" github \
		examples/ci/github-actions.yml "$ws" >"$tmp/gh1.out"; then
		ok "github workflow: every step passed"
	else
		fail "github workflow failed:"
		cat "$tmp/gh1.out" "$ws"/step-*.log
	fi
	name=$(jq -r '.[0].name' "$ws/pool.json" 2>/dev/null)
	[ "$name" = ci-4242-1 ] && ok "github: pool.json is a JSON array naming pool ci-<run id>-<attempt>" ||
		fail "github: pool.json names pool '$name', expected ci-4242-1"
	[ "$(cat "$ws/hosts" 2>/dev/null)" = 127.0.0.1 ] && ok "github: jq found the instance's address" ||
		fail "github: hosts is '$(cat "$ws/hosts" 2>/dev/null)', expected 127.0.0.1"
	grep -q '^host=ubuntu@127.0.0.1 keymode=600 cmd=nvidia-smi -L$' "$SSH_LOG" &&
		ok "github: the job ran over ssh on that address with a 0600 key" ||
		{ fail "github: no job over ssh to ubuntu@127.0.0.1 with a 0600 key:"; cat "$SSH_LOG"; }
	grep -q 'heartbeat seen for ci-4242-1' "$FAKE_MARK" && ok "github: GPU-use heartbeats reached the daemon" ||
		fail "github: no heartbeat reached the daemon during the job"
	grep -q 'GPU 0: NVIDIA L4' "$ws/step-3.log" 2>/dev/null || fail "github: the job's output is not in its log"
	expect_destroyed ci-4242-1 "github: the always-run step destroyed the pool"
	if grep -qF "$CI_TOKEN" "$tmp/gh1.out" "$ws"/step-*.log; then
		fail "github: the CI token appears in the step logs"
	fi
	# release again for a run that never got a pool
	if GH_EXPR=$(ghexpr 5555 1) "$PY" "$tmp/ci_run.py" github \
		examples/ci/github-actions.yml "$ws" "release GPUs" >"$tmp/gh3.out" &&
		grep -q 'no pool named ci-5555-1; nothing to destroy' "$ws/step-4.log"; then
		ok "github: releasing a pool that was never created passes"
	else
		fail "github: release of a never-created pool:"
		cat "$tmp/gh3.out" "$ws/step-4.log"
	fi
	stop_daemon gh1 "$pid_b"
fi

# --- GitHub Actions, the job fails: the pool is still released
if start_b gh2; then
	ws="$tmp/gh2/ws"
	workspace "$ws"
	if FAKE_GPU_FAIL=1 GH_EXPR=$(ghexpr 4242 2) "$PY" "$tmp/ci_run.py" github \
		examples/ci/github-actions.yml "$ws" >"$tmp/gh2.out"; then
		fail "github: a failing job made the workflow pass"
	fi
	grep -q '^run the job on the GPUs: 1$' "$tmp/gh2.out" && grep -q '^release GPUs: 0$' "$tmp/gh2.out" &&
		ok "github: after a failed job the release step still ran and passed" ||
		{ fail "github (failing job): unexpected step results:"; cat "$tmp/gh2.out" "$ws"/step-*.log; }
	expect_destroyed ci-4242-2 "github: the failed job's pool destroyed"
	stop_daemon gh2 "$pid_b"
fi

# --- GitHub Actions on a hosted runner (GPUBROKER_ADDRESS public, the
# workflow's default) given an instance with a private address only (an
# Azure VM without the driver's public_ip option): the acquire step fails
# saying so and how to fix it, the job does not run, the pool is released
if start_b gh3; then
	ws="$tmp/gh3/ws"
	workspace "$ws"
	: >"$SSH_LOG"
	if GPUBROKER_ADDRESS=public GH_EXPR=$(ghexpr 4243 1) "$PY" "$tmp/ci_run.py" github \
		examples/ci/github-actions.yml "$ws" >"$tmp/gh3.out"; then
		fail "github: a private-only instance passed the acquire step on a public runner"
	fi
	if grep -q '^acquire GPUs: 1$' "$tmp/gh3.out" && grep -q '^release GPUs: 0$' "$tmp/gh3.out" &&
		grep -q "instance ci-4243-1-0 (onprem) has no public address (private: 127.0.0.1), so this runner cannot reach it.*public_ip: \"true\".*GPUBROKER_ADDRESS: private" "$ws/step-2.log"; then
		ok "github: a private-only address fails the acquire step, naming public_ip and GPUBROKER_ADDRESS"
	else
		fail "github (public runner, private address):"
		cat "$tmp/gh3.out" "$ws"/step-*.log
	fi
	grep -q 'cmd=nvidia-smi -L' "$SSH_LOG" && fail "github: the job ran although no address was reachable"
	expect_destroyed ci-4243-1 "github: the pool of the failed acquire released"
	stop_daemon gh3 "$pid_b"
fi

# --- GitLab CI
if start_b gl1; then
	ws="$tmp/gl1/ws"
	workspace "$ws"
	: >"$SSH_LOG"
	printf '%s\n' "-----BEGIN OPENSSH PRIVATE KEY-----" fake "-----END OPENSSH PRIVATE KEY-----" >"$tmp/key-file"
	chmod 644 "$tmp/key-file" # as a File variable may be: the job copies it to 0600
	if CI_JOB_ID=7001 CI_PIPELINE_ID=700 CI_PROJECT_NAME=demo \
		GPUBROKER_SSH_KEY="$tmp/key-file" GPUBROKER_SSH_PUBLIC_KEY="$SSH_PUB" \
		"$PY" "$tmp/ci_run.py" gitlab examples/ci/gitlab-ci.yml "$ws" >"$tmp/gl1.out"; then
		ok "gitlab job: script and after_script passed"
	else
		fail "gitlab job failed:"
		cat "$tmp/gl1.out" "$ws/script.log" "$ws/after.log"
	fi
	grep -q 'heartbeat seen for ci-7001' "$FAKE_MARK" && ok "gitlab: heartbeats reached the daemon" ||
		fail "gitlab: no heartbeat reached the daemon during the job"
	grep -q '^host=ubuntu@127.0.0.1 keymode=600 cmd=nvidia-smi -L$' "$SSH_LOG" &&
		ok "gitlab: the job ran over ssh with a 0600 copy of the File variable" ||
		{ fail "gitlab: no job over ssh with a 0600 key:"; cat "$SSH_LOG"; }
	expect_destroyed ci-7001 "gitlab: after_script destroyed the pool"
	stop_daemon gl1 "$pid_b"
fi

# --- the job dies after acquiring: the daemon destroys the pool at its TTL
if start_b ttl; then
	ws="$tmp/ttl/ws"
	workspace "$ws"
	sed -i 's/^\(    ttl: \)2h /\13s /' "$ws/examples/ci/pool.yaml"
	grep -q '^    ttl: 3s ' "$ws/examples/ci/pool.yaml" || fail "ttl: could not shorten the TTL"
	if (cd "$ws" && CI_JOB_ID=8001 GPUBROKER_SSH_PUBLIC_KEY="$SSH_PUB" timeout 90 \
		"$GB" apply -f examples/ci/pool.yaml --auto-approve --wait --timeout 1m -o json \
		>pool.json 2>apply.err); then
		i=0
		while [ $i -lt 300 ]; do
			st=$(pool_json ci-8001 | jq -r '.state + "/" + (.reason // "")' 2>/dev/null)
			[ "$st" = destroyed/ttl ] && break
			sleep 0.1
			i=$((i + 1))
		done
		[ "$st" = destroyed/ttl ] && ok "abandoned CI pool destroyed by the daemon at its TTL" ||
			fail "abandoned CI pool is '$st' 30 s later, expected destroyed/ttl"
	else
		fail "ttl: apply failed"
		cat "$ws/apply.err"
	fi
	# the TTL teardown happens at a reconcile pass: poll until the counter moves
	i=0
	while [ $i -lt 30 ]; do
		curl -fsS -H "Authorization: Bearer $PROM_TOKEN" "$url_b/metrics" >"$tmp/b-end.metrics"
		grep -q '^gpubroker_teardowns_total{reason="ttl"} [1-9]' "$tmp/b-end.metrics" && break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^gpubroker_teardowns_total{reason="ttl"} 1$' "$tmp/b-end.metrics" &&
		ok "metrics: gpubroker_teardowns_total{reason=\"ttl\"} counted it" ||
		fail "metrics: teardowns_total{reason=\"ttl\"} is not 1: $(grep teardowns_total "$tmp/b-end.metrics")"
	stop_daemon ttl "$pid_b"
fi
[ -s "$FAKE_METRICS" ] || fail "no /metrics snapshot was taken while a pool was live"

# ------------------------------------------------ 3. the Grafana dashboard
cat >"$tmp/dash.py" <<'EOF'
import json, re, sys
bad, notes = [], []
def check(c, m):
    if not c:
        bad.append(m)

d = json.load(open("packaging/grafana-dashboard.json"))
check(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36, "schemaVersion must be >= 36")
for k in ("title", "uid", "panels", "templating", "time"):
    check(k in d, "dashboard has no %r" % k)
tvars = d.get("templating", {}).get("list", [])
dsv = [v for v in tvars if v.get("type") == "datasource" and v.get("query") == "prometheus"]
check(len(dsv) == 1, "need one Prometheus datasource variable")
dsname = dsv[0]["name"] if dsv else "datasource"

# metrics the daemons exported: sample names and their label keys; TYPE
# lines declare a family (a counter with no sample yet is still exported)
exported, labels, sampled = set(), {}, set()
for f in sys.argv[1:]:
    try:
        text = open(f).read()
    except OSError:
        continue
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            n, t = m.groups()
            if t == "histogram":
                exported.update({n + "_bucket", n + "_sum", n + "_count"})
            elif t == "summary":
                exported.update({n + "_sum", n + "_count"})
            else:
                exported.add(n)
            continue
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
        if not m:
            bad.append("%s: cannot parse %r" % (f, line))
            continue
        n = m.group(1)
        exported.add(n)
        sampled.add(n)
        ls = labels.setdefault(n, set())
        for k in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""):
            ls.add(k)
check(len(exported) > 10, "the daemons exported almost nothing: %s" % sorted(exported))

TARGET = {"instance", "job"}   # added by Prometheus to every scraped series
PROM = {"up"}                  # series Prometheus makes for every target
FUNCS = {"sum", "max", "min", "avg", "count", "rate", "increase", "irate",
         "histogram_quantile", "label_values", "topk", "bottomk", "clamp_min",
         "abs", "delta", "deriv", "avg_over_time", "max_over_time", "vector"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right",
            "and", "or", "unless", "bool", "offset"}
exprs = []
ids = set()
def walk(panels):
    for p in panels:
        check(p.get("id") not in ids, "duplicate panel id %r" % p.get("id"))
        ids.add(p.get("id"))
        check("gridPos" in p, "panel %r has no gridPos" % p.get("title"))
        if p.get("type") == "row":
            walk(p.get("panels", []))
            continue
        ts = p.get("targets") or []
        check(ts, "panel %r has no query" % p.get("title"))
        check(p.get("datasource", {}).get("uid") == "${%s}" % dsname,
              "panel %r does not use the datasource variable" % p.get("title"))
        for t in ts:
            check(t.get("expr"), "panel %r: a target without expr" % p.get("title"))
            exprs.append((p.get("title"), t.get("expr", ""), t.get("legendFormat", "")))
walk(d.get("panels", []))
for v in tvars:
    q = v.get("query")
    q = q.get("query") if isinstance(q, dict) else q
    if v.get("type") == "query":
        m = re.fullmatch(r"label_values\((\w+)(?:\{[^}]*\})?,\s*(\w+)\)", q or "")
        check(m, "variable %s: expected label_values(metric, label)" % v.get("name"))
        if m:
            check(m.group(1) in exported, "variable %s uses %s, which the daemon does not export"
                  % (v.get("name"), m.group(1)))
            check(m.group(2) in labels.get(m.group(1), set()) | TARGET,
                  "variable %s: label %s" % (v.get("name"), m.group(2)))

used = set()
for title, e, legend in exprs:
    body = re.sub(r'"[^"]*"', '""', e)
    body = re.sub(r"\[[^\]]*\]", "", body)
    grouped = set()
    for g in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", body):
        grouped.update(x.strip() for x in g.split(",") if x.strip())
    body2 = re.sub(r"\b(?:by|without)\s*\([^)]*\)", " ", body)
    selectors = re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}", body2)
    body3 = re.sub(r"\{[^}]*\}", " ", body2)
    names = set()
    for tok in re.findall(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", body3):
        n, call = tok
        if call or n in KEYWORDS or n in FUNCS:
            continue
        names.add(n)
    names -= PROM   # made by Prometheus for every target
    for n in names:
        check(n.startswith("gpubroker_"), "panel %r uses %s: not a gpubroker metric" % (title, n))
        check(n in exported, "panel %r uses %s, which the daemon does not export" % (title, n))
    used |= names
    if "histogram_quantile" in e:
        check(re.search(r"histogram_quantile\(0\.\d+,\s*sum by \([^)]*\ble\b[^)]*\)\s*\(rate\(\w+_bucket\{", e),
              "panel %r: histogram_quantile must be over sum by (le) (rate(..._bucket))" % title)
    unknown = [n for n in names if n not in sampled]
    if unknown:
        notes.append("panel %r: labels not checked, no sample of %s yet" % (title, ", ".join(sorted(unknown))))
        continue
    have = set().union(*(labels[n] for n in names)) | TARGET
    for n, sel in selectors:
        for k in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", sel):
            check(k in labels.get(n, set()) | TARGET, "panel %r: %s has no label %s" % (title, n, k))
    for k in grouped:
        check(k in have, "panel %r groups by %s, a label none of its metrics has" % (title, k))
    for k in re.findall(r"\{\{\s*(\w+)\s*\}\}", legend):
        check(k in have, "panel %r: legend uses label %s its metrics lack" % (title, k))

# what a panel can show: gpubroker_up is absent, not 0, when the daemon
# is down (Prometheus's up{job} is 0); spend is a rate in dollars per hour
for title, e, legend in exprs:
    check("gpubroker_up" not in e, "panel %r queries gpubroker_up, which cannot show a daemon down: use up{job=...}" % title)
check(any(re.match(r"\w+\(up\{job=", e) for _, e, _ in exprs), "no panel shows Prometheus's up{job=...}")
def units(panels):
    for p in panels:
        yield from units(p.get("panels", []))
        for t in p.get("targets") or []:
            yield p, t.get("expr", "")
for p, e in units(d.get("panels", [])):
    if "gpubroker_cost_per_hour_usd" in e:
        u = p.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        check("/h" in u, "panel %r shows $/h with unit %r (dollars, not dollars per hour)" % (p.get("title"), u))

required = ["gpubroker_pools", "gpubroker_instances", "gpubroker_cost_per_hour_usd",
            "gpubroker_api_request_duration_seconds_bucket", "gpubroker_api_requests_total",
            "gpubroker_driver_request_duration_seconds_bucket", "gpubroker_driver_calls_total",
            "gpubroker_driver_retries_total", "gpubroker_reconcile_duration_seconds_sum",
            "gpubroker_failovers_total", "gpubroker_preemptions_total", "gpubroker_gc_total",
            "gpubroker_teardowns_total", "gpubroker_reconcile_pools"]
for r in required:
    check(r in used, "no panel shows %s" % r)
for n in sorted(exported - used):
    notes.append("exported but on no panel: %s" % n)
for n in notes:
    print("note  " + n)
for b in bad:
    print("FAIL: " + b)
print("checked %d queries over %d metric names" % (len(exprs), len(used)))
sys.exit(1 if bad else 0)
EOF
[ -s "$tmp/a.metrics" ] || fail "no /metrics from the token-less daemon to check the dashboard against"
if "$PY" "$tmp/dash.py" "$tmp/a.metrics" "$tmp/b-live.metrics" "$tmp/b-end.metrics"; then
	ok "dashboard: valid model; every metric and label in its queries is exported"
else
	fails=$((fails + 1))
fi

# ------------------------------------------------ 5. systemd unit, user
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$tmp/unit"
	sed "s#^ExecStart=/usr/local/bin/gpubroker #ExecStart=$GB #" packaging/gpubroker.service \
		>"$tmp/unit/gpubroker.service"
	grep -q "^ExecStart=$GB serve --config /etc/gpubroker/broker.yaml$" "$tmp/unit/gpubroker.service" ||
		fail "gpubroker.service: ExecStart is not /usr/local/bin/gpubroker serve --config /etc/gpubroker/broker.yaml"
	if systemd-analyze verify "$tmp/unit/gpubroker.service" >"$tmp/verify.out" 2>&1 &&
		[ ! -s "$tmp/verify.out" ]; then
		ok "systemd-analyze verify gpubroker.service: clean"
	else
		fail "systemd-analyze verify gpubroker.service:"
		cat "$tmp/verify.out"
	fi
else
	note "systemd-analyze is not installed: gpubroker.service not verified"
fi
for key in 'Type=simple' 'User=gpubroker' 'ExecReload=/bin/kill -HUP $MAINPID' \
	'KillSignal=SIGTERM' 'Restart=on-failure' 'StateDirectory=gpubroker' \
	'NoNewPrivileges=yes' 'ProtectSystem=strict' 'CapabilityBoundingSet=' \
	'EnvironmentFile=-/etc/gpubroker/credentials.env' 'LimitNOFILE=16384'; do
	grep -qxF "$key" packaging/gpubroker.service || fail "gpubroker.service lacks '$key'"
done
if grep -iE '^(Environment=.*(SECRET|TOKEN|KEY)=|.*AWS_SECRET_ACCESS_KEY=)' packaging/gpubroker.service; then
	fail "gpubroker.service carries a secret inline"
fi
if command -v systemd-sysusers >/dev/null 2>&1; then
	mkdir -p "$tmp/root/etc"
	if systemd-sysusers --root="$tmp/root" "$PWD/packaging/gpubroker.sysusers.conf" >"$tmp/su.out" 2>&1; then
		grep -q '^gpubroker:x:[0-9]*:[0-9]*:[^:]*:/var/lib/gpubroker:/usr/sbin/nologin$' "$tmp/root/etc/passwd" &&
			ok "sysusers: creates system user gpubroker (home /var/lib/gpubroker, no login)" ||
			fail "sysusers: unexpected passwd: $(cat "$tmp/root/etc/passwd")"
	else
		fail "systemd-sysusers rejected packaging/gpubroker.sysusers.conf:"
		cat "$tmp/su.out"
	fi
else
	note "systemd-sysusers is not installed: gpubroker.sysusers.conf not checked"
fi

echo
if [ "$fails" -gt 0 ]; then
	echo "packaging: $fails failure(s)"
	exit 1
fi
echo "packaging: all checks passed"
exit 0
