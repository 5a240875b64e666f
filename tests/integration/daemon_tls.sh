#!/bin/sh
# daemon_tls.sh -- the daemon's TLS takes TLS 1.2 and 1.3 with
# forward-secret AEAD suites only: TLS 1.0 and 1.1, static-RSA and CBC
# suites (AES128-SHA) fail the handshake; a tls.key readable by everyone
# stops serve (with the fix), one readable by its group is warned about,
# as a state database others may read.
. "$GB_SRC/tests/lib/integration.sh"

command -v openssl >/dev/null 2>&1 || fail "openssl(1) is not installed (Debian openssl; make deps installs it)"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is missing (make deps)"; exit 77; }
sim_start
# an RSA key: its certificate could be used with static-RSA suites
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" >"$T/openssl.log" 2>&1 ||
	fail "openssl could not make a certificate: $(tail -3 "$T/openssl.log")"
/usr/bin/python3 - "$CONF" "$T/broker.yaml" "$T" <<'PY' || fail "cannot edit the config"
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
c['tls'] = {'cert': sys.argv[3] + '/cert.pem', 'key': sys.argv[3] + '/key.pem'}
yaml.safe_dump(c, open(sys.argv[2], "w"), sort_keys=False)
PY
CONF=$T/broker.yaml

# a world-readable key: refused
chmod 0644 "$T/key.pem"
"$GB" -c "$CONF" serve >"$T/s.out" 2>"$T/s.log" && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'tls.key $T/key.pem is readable by everyone (mode 0644)' $T/s.log && grep -q 'chmod 600 $T/key.pem' $T/s.log" \
	"serve refuses a world-readable tls.key, saying how to fix it (exit $rc)"
# group-readable key and state database: warned
chmod 0640 "$T/key.pem"
gb status >/dev/null 2>&1 || true # creates the state database
chmod 0644 "$GPUBROKER_STATE"
daemon_start
check "grep -q 'tls.key $T/key.pem is readable by its group (mode 0640)' $T/daemon.log" "a group-readable tls.key is warned about"
check "grep -q 'state database $GPUBROKER_STATE is readable by everyone (mode 0644): chmod 600' $T/daemon.log" \
	"a world-readable state database is warned about"

HP=${GPUBROKER_SERVER#https://}
# shake ARGS...: one TLS handshake with openssl s_client; 0 if it made one
shake() {
	echo | timeout 10 openssl s_client -connect "$HP" -CAfile "$T/cert.pem" "$@" >"$T/shake.out" 2>&1
}
check "shake -tls1_3" "TLS 1.3 handshakes"
check "shake -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256" "TLS 1.2 with ECDHE and AES-GCM handshakes"
check "! shake -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0'" "TLS 1.1 is refused"
check "! shake -tls1 -cipher 'DEFAULT:@SECLEVEL=0'" "TLS 1.0 is refused"
check "! shake -tls1_2 -cipher AES128-SHA" "AES128-SHA (static RSA, CBC) is refused"
check "! shake -tls1_2 -cipher AES256-GCM-SHA384" "static RSA key exchange (no forward secrecy) is refused"
check "! shake -tls1_2 -cipher ECDHE-RSA-AES128-SHA" "CBC suites are refused"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" "$GPUBROKER_SERVER/healthz")
check "[ $code = 200 ]" "curl gets /healthz over TLS ($code)"
echo PASS
