#!/bin/sh
# insecure_endpoints.sh -- credentials never go out in clear: a cloud
# endpoint on plain http:// to a host that is not loopback (from the
# config or the environment) is refused by the host's transport before
# anything is signed or sent, naming the URL and the fix; the CLI refuses
# --server http://other-host (its bearer token) and other schemes
# (file://) before connecting.  192.0.2.1 (TEST-NET-1) is never reached:
# each refusal is immediate.
. "$GB_SRC/tests/lib/integration.sh"

sim_start
write_spec "$T/aws.yaml" insec-aws aws A10G 1
write_spec "$T/azure.yaml" insec-azure azure A10 1
t0=$(date +%s)
AWS_ENDPOINT_URL_EC2=http://192.0.2.1:9/ gb apply -f "$T/aws.yaml" --auto-approve --wait --timeout 20s >"$T/out" 2>&1 && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'InsecureEndpoint' $T/out && grep -q 'plain http:// to 192.0.2.1 would send credentials in clear' $T/out && grep -q 'allow_insecure_http' $T/out" \
	"aws: an http:// endpoint to another host is refused, saying how to fix"
AZURE_AUTHORITY_HOST=http://192.0.2.1:9 gb apply -f "$T/azure.yaml" --auto-approve --wait --timeout 20s >"$T/out" 2>&1 && rc=0 || rc=$?
check "[ \$rc = 1 ] && grep -q 'plain http:// to 192.0.2.1' $T/out" \
	"azure: an http:// authority host (where the client secret goes) is refused"
check "[ $(($(date +%s) - t0)) -le 30 ] && [ \"\$(sim_live)\" = 0 ]" "refused at once; nothing created"

for srv in http://192.0.2.1:7878 http://10.0.0.1 'file:///etc/passwd' 'ftp://127.0.0.1/'; do
	GPUBROKER_TOKEN=demo-admin-token "$GB" --server "$srv" status >"$T/out" 2>&1 && rc=0 || rc=$?
	check "[ \$rc = 1 ] && grep -q 'daemon.s address (--server or GPUBROKER_SERVER)' $T/out && ! grep -q demo-admin-token $T/out" \
		"CLI: --server $srv is refused before connecting"
done
check "grep -q 'ftp:// scheme is not allowed' $T/out" "CLI: the scheme is named"
daemon_start
check "GPUBROKER_TOKEN=demo-admin-token gb status >/dev/null" "CLI: http:// to 127.0.0.1 works"
check "GPUBROKER_TOKEN=demo-admin-token gb --server \$(echo \$GPUBROKER_SERVER | sed 's/127.0.0.1/localhost/') status >/dev/null" \
	"CLI: http://localhost works"
echo PASS
