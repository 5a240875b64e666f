#!/bin/sh
# tests/integration/packaging_ha.sh -- the packaging for several replicas
# on one PostgreSQL state, as far as it can be checked without a cluster:
#
#  1. packaging/kubernetes/gpubroker.yaml parses as YAML: a ConfigMap with
#     the broker config, a Deployment with 3 replicas whose liveness probe
#     is GET /healthz and readiness probe GET /readyz on the container's
#     port, rolled one replica at a time, a Service that selects the
#     Deployment's pods and targets that port, a PodDisruptionBudget on
#     the same pods; the daemon is told to listen on that port.
#  2. No password literal in the manifests: no Secret object with data,
#     every env variable that looks secret comes from a secretKeyRef, no
#     URL carries user:password@, the config's state is a postgresql://
#     URL without a password and its state_password names an env variable
#     the Deployment fills from a Secret; tokens are SHA-256 hashes.
#  3. The embedded broker config passes `gpubroker validate` (when the
#     built gpubroker knows PostgreSQL state: `gpubroker help state`).
#  4. packaging/gpubroker-replica@.service passes `systemd-analyze verify`
#     as an instance (gpubroker-replica@7878.service) with no warning,
#     keeps every hardening line of gpubroker.service, needs
#     /etc/gpubroker/replica.env, runs `serve --listen HOST:%i` with the
#     shared config, and carries no secret (verify is skipped, with a note,
#     when systemd-analyze is missing).
#
# Needs /usr/bin/python3 with PyYAML (Debian python3-yaml; make deps).
set -u
: "${GB_SRC:?GB_SRC must name the source tree}"
GB="${GB_BUILD:-$GB_SRC/build}/bin/gpubroker"
PY=/usr/bin/python3
if ! "$PY" -c 'import yaml' >/dev/null 2>&1; then
	echo "FAIL: $PY with PyYAML is needed to parse the manifests (Debian python3-yaml; make deps installs it)"
	exit 1
fi
cd "$GB_SRC" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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

# ------------------------------------------ 1, 2. Kubernetes manifests
cat >"$tmp/k8s.py" <<'EOF'
import re, sys, yaml
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)
    return cond

path, cfg_out = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
kinds = {}
for d in docs:
    kinds.setdefault(d.get("kind"), []).append(d)
for k in ("ConfigMap", "Deployment", "Service"):
    check(len(kinds.get(k, [])) == 1, "expected one %s, found %d" % (k, len(kinds.get(k, []))))
if bad:
    print("\n".join("FAIL: " + b for b in bad)); sys.exit(1)
cm, dep, svc = kinds["ConfigMap"][0], kinds["Deployment"][0], kinds["Service"][0]
ns = {d["metadata"].get("namespace") for d in docs}
check(len(ns) == 1, "objects in several namespaces: %s" % ns)

spec = dep["spec"]
check(spec.get("replicas") == 3, "Deployment: replicas is %r, not 3" % spec.get("replicas"))
tlabels = spec["template"]["metadata"].get("labels") or {}
def selects(sel, labels):
    return bool(sel) and all(labels.get(k) == v for k, v in sel.items())
check(selects(spec["selector"].get("matchLabels"), tlabels),
      "Deployment: selector.matchLabels does not match the pod template's labels")
ru = (spec.get("strategy") or {}).get("rollingUpdate") or {}
check(spec.get("strategy", {}).get("type") == "RollingUpdate" and ru.get("maxUnavailable") == 1
      and ru.get("maxSurge") == 0, "Deployment: not rolled one replica at a time (maxUnavailable 1, maxSurge 0)")
pod = spec["template"]["spec"]
cs = pod.get("containers") or []
check(len(cs) == 1, "Deployment: expected one container")
c = cs[0]
ports = c.get("ports") or []
check(len(ports) == 1, "container: expected one port")
port = ports[0] if ports else {}
cport, cname = port.get("containerPort"), port.get("name")
def same_port(p):
    return p is not None and (p == cport or (cname is not None and p == cname))
for probe, want in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
    g = (c.get(probe) or {}).get("httpGet") or {}
    check(g.get("path") == want, "%s: path %r, not %s" % (probe, g.get("path"), want))
    check(same_port(g.get("port")), "%s: port %r is not the container port (%r/%r)"
          % (probe, g.get("port"), cport, cname))
args = c.get("args") or []
check(args[:1] == ["serve"], "container: args do not start with serve")
def arg(flag):
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None
check(arg("--listen") == "0.0.0.0:%s" % cport, "container: --listen %r is not 0.0.0.0:%s" % (arg("--listen"), cport))
conf = arg("--config") or ""
mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts") or []}
vols = {v["name"]: v for v in pod.get("volumes") or []}
cm_mount = [n for n, v in vols.items() if (v.get("configMap") or {}).get("name") == cm["metadata"]["name"]]
check(len(cm_mount) == 1 and cm_mount[0] in mounts and
      conf == mounts[cm_mount[0]].rstrip("/") + "/broker.yaml",
      "container: --config %r is not broker.yaml of the mounted ConfigMap" % conf)
check("broker.yaml" in (cm.get("data") or {}), "ConfigMap: no broker.yaml")

sel = svc["spec"].get("selector") or {}
check(selects(sel, tlabels), "Service: selector %r does not select the Deployment's pods %r" % (sel, tlabels))
sports = svc["spec"].get("ports") or []
check(len(sports) >= 1 and all(same_port(p.get("targetPort", p.get("port"))) for p in sports),
      "Service: targetPort is not the container port")
for pdb in kinds.get("PodDisruptionBudget", []):
    check(selects(pdb["spec"]["selector"].get("matchLabels"), tlabels),
          "PodDisruptionBudget: does not select the Deployment's pods")
    check(pdb["spec"].get("minAvailable", 0) < spec.get("replicas", 0),
          "PodDisruptionBudget: minAvailable leaves no pod evictable")

# --- 2. no password literal
check("Secret" not in kinds or all(not (s.get("data") or s.get("stringData")) for s in kinds["Secret"]),
      "a Secret with data in the manifests")
secretish = re.compile(r"PASSWORD|SECRET|TOKEN|_KEY", re.I)
from_secret = set()
for e in c.get("env") or []:
    ref = (e.get("valueFrom") or {}).get("secretKeyRef")
    if ref:
        from_secret.add(e["name"])
    if secretish.search(e["name"]):
        check(ref is not None and "value" not in e,
              "env %s is not taken from a Secret (secretKeyRef)" % e["name"])
def strings(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from strings(k); yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)
    elif isinstance(x, str):
        yield x
cfg = yaml.safe_load(cm["data"]["broker.yaml"])
for s in list(strings(docs)) + list(strings(cfg)):
    check(not re.search(r"://[^/@\s:]+:[^/@\s]*@", s), "a URL with a password: %r" % s[:60])
    check(not re.search(r"(?i)password\s*[:=]\s*(?!env:|file:)\S", s) or s is cm["data"]["broker.yaml"],
          "a password literal: %r" % s[:60])
def secret_keys(x, where):
    # a key that names a secret must hold a reference, not the value
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(k, str) and re.search(r"(?i)password|secret", k) and isinstance(v, (str, int)):
                check(str(v).startswith(("env:", "file:")), "%s: %s holds a literal" % (where, k))
            secret_keys(v, where)
    elif isinstance(x, list):
        for v in x:
            secret_keys(v, where)
secret_keys(docs, "manifests")
secret_keys(cfg, "broker.yaml")
state = str(cfg.get("state", ""))
check(re.match(r"postgres(ql)?://[^:@/]+@[^/]+/\w+", state) is not None,
      "config: state %r is not a postgresql://USER@HOST/DB URL" % state)
check("sslmode=require" in state or "sslmode=verify" in state, "config: state does not require TLS (sslmode)")
sp = str(cfg.get("state_password", ""))
check(sp.startswith("env:") or sp.startswith("file:"), "config: state_password is not env:NAME or file:PATH")
if sp.startswith("env:"):
    check(sp[4:] in from_secret, "config: state_password %s is not filled from a Secret" % sp)
for t in cfg.get("tokens") or []:
    check(re.fullmatch(r"[0-9a-f]{64}", str(t.get("sha256", ""))) is not None and
          set(t) <= {"name", "sha256", "role", "team"}, "config: token %r is not a SHA-256 hash" % t.get("name"))
check(bool(cfg.get("tokens")), "config: no tokens (the daemon refuses 0.0.0.0 without them)")
for d in cfg.get("drivers") or []:
    for k, v in (d.get("credentials") or {}).items():
        check(str(v).startswith(("env:", "file:")), "config: driver %s credential %s is inline" % (d.get("name"), k))
        if str(v).startswith("env:"):
            check(v[4:] in from_secret, "config: %s is not filled from a Secret" % v)
open(cfg_out, "w").write(cm["data"]["broker.yaml"])
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF
if "$PY" "$tmp/k8s.py" packaging/kubernetes/gpubroker.yaml "$tmp/broker.yaml"; then
	ok "kubernetes: 3 replicas, /healthz liveness and /readyz readiness on the container port, Service and PDB select the pods"
	ok "kubernetes: no password literal; the DB password and cloud keys come from Secrets"
else
	fails=$((fails + 1))
fi

# ----------------------------------------- 3. the config validates
if [ ! -x "$GB" ]; then
	note "$GB is not built: the Kubernetes broker config is not validated"
elif ! "$GB" help state >/dev/null 2>&1; then
	note "$GB predates PostgreSQL state (no 'state' command): the Kubernetes broker config is not validated"
elif [ -s "$tmp/broker.yaml" ]; then
	if "$GB" validate -f "$tmp/broker.yaml" >"$tmp/validate.out" 2>&1; then
		ok "kubernetes: the ConfigMap's broker.yaml passes gpubroker validate"
	else
		fail "kubernetes: gpubroker validate rejects the ConfigMap's broker.yaml:"
		cat "$tmp/validate.out"
	fi
fi

# --------------------------------------------------- 4. replica unit
unit=packaging/gpubroker-replica@.service
if [ ! -f "$unit" ]; then
	fail "$unit is missing"
else
	exe=$GB
	if [ ! -x "$exe" ]; then
		exe=/bin/true
		note "$GB is not built: the unit is verified with ExecStart=/bin/true"
	fi
	if command -v systemd-analyze >/dev/null 2>&1; then
		mkdir -p "$tmp/unit"
		sed "s#^ExecStart=/usr/local/bin/gpubroker #ExecStart=$exe #" "$unit" \
			>"$tmp/unit/gpubroker-replica@7878.service"
		if systemd-analyze verify "$tmp/unit/gpubroker-replica@7878.service" >"$tmp/verify.out" 2>&1 &&
			[ ! -s "$tmp/verify.out" ]; then
			ok "systemd-analyze verify gpubroker-replica@7878.service: clean"
		else
			fail "systemd-analyze verify gpubroker-replica@7878.service:"
			cat "$tmp/verify.out"
		fi
	else
		note "systemd-analyze is not installed: gpubroker-replica@.service not verified"
	fi
	# every hardening line of the single-daemon unit
	sed -n '/^# Hardening/,/^\[Install\]/p' packaging/gpubroker.service | grep '^[A-Za-z]' >"$tmp/hardening"
	[ -s "$tmp/hardening" ] || fail "no hardening block found in packaging/gpubroker.service"
	missing=0
	while IFS= read -r line; do
		grep -qxF "$line" "$unit" || { fail "$unit lacks '$line' (gpubroker.service has it)"; missing=1; }
	done <"$tmp/hardening"
	[ "$missing" = 0 ] && ok "$unit keeps the $(wc -l <"$tmp/hardening") hardening lines of gpubroker.service"
	for key in 'Type=simple' 'User=gpubroker' 'KillSignal=SIGTERM' 'KillMode=mixed' 'Restart=on-failure' \
		'ExecReload=/bin/kill -HUP $MAINPID' 'EnvironmentFile=-/etc/gpubroker/credentials.env' \
		'EnvironmentFile=/etc/gpubroker/replica.env' 'StateDirectory=gpubroker' \
		'ExecStart=/usr/local/bin/gpubroker serve --config /etc/gpubroker/broker.yaml --listen ${GPUBROKER_LISTEN_HOST}:%i'; do
		grep -qxF "$key" "$unit" || fail "$unit lacks '$key'"
	done
	if grep -q '^Environment=GPUBROKER_STATE' "$unit"; then
		fail "$unit sets GPUBROKER_STATE itself (it belongs in /etc/gpubroker/replica.env)"
	fi
	if grep -iE '^Environment=.*(PASSWORD|SECRET|TOKEN|KEY)=|^Environment=.*://[^/@ ]+:[^/@ ]+@' "$unit"; then
		fail "$unit carries a secret inline"
	fi
	ok "$unit: shared config, state from replica.env, serve --listen HOST:%i, no secret inline"
fi

echo
if [ "$fails" -gt 0 ]; then
	echo "packaging_ha: $fails failure(s)"
	exit 1
fi
echo "packaging_ha: all checks passed"
exit 0
