#!/bin/sh
# cloudsim's SigV4 verifier against the published test vectors
# (../shared/reference/sigv4-vectors: every botocore-aws4_testsuite case
# and the header-form cases of aws-signing-test-suite/v4 except the S3-style
# *-unnormalized ones).
set -u
GB_SRC=${GB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
GB_BUILD=${GB_BUILD:-$GB_SRC/build}
dir=${GB_SHARED:-}/reference/sigv4-vectors
if [ -z "${GB_SHARED:-}" ] || [ ! -d "$dir" ]; then
	echo "SKIP: the SigV4 test vectors are in ../shared/reference/sigv4-vectors," \
	     "which is absent here (GB_SHARED unset or missing)"
	exit 77
fi
out=$("$GB_BUILD/bin/cloudsim" selftest-sigv4 "$dir")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: selftest-sigv4 exit $rc"; exit 1; }
n=$(echo "$out" | grep -c '^PASS botocore/')
[ "$n" -ge 34 ] || { echo "FAIL: only $n botocore cases passed (34 expected)"; exit 1; }
n=$(echo "$out" | grep -c '^PASS v4/')
[ "$n" -ge 31 ] || { echo "FAIL: only $n v4 header cases passed (31 expected)"; exit 1; }
echo "all checks passed"
