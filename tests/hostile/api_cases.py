#!/usr/bin/python3
"""api_cases.py URL DB -- throw the hostile API corpus at a running daemon.
api_cases.py URL DB --specs DIR -- PUT every DIR/*.yaml (tests/hostile/spec)
    converted to JSON; each must get a 4xx JSON error and leave the store
    as it was.  Files YAML cannot give as JSON (binary, several documents,
    python tags) are YAML-only attacks and skipped; "# api: skip" too.

Every case is one raw HTTP request (sockets, so nothing is "fixed" by a
client library on the way) with the status it must get and, for JSON
errors, the error code and a substring of the message.  After each
refused case the state DB (read-only) must hold exactly the pools,
instances, intents and decisions it held before: nothing is inserted for
refused input (audit rows are expected: refused mutations are audited).
A case must be answered within 15 s (no hang).  Prints one line per case;
exit status 1 when any case failed.  Needs the pool "hostile-target"
(active, team research) to exist for the scale cases.

Tokens: the demo tokens of examples/cloudsim-broker.yaml.
"""
import json
import os
import socket
import sqlite3
import sys
import threading
import time
from urllib.parse import urlsplit

ADMIN = "demo-admin-token"
CI = "demo-ci-token"
SPEC = {"pool": {"name": "x", "team": "research", "count": 1,
                 "gpu": {"model": "A10G"}, "placement": {"clouds": ["aws"]}}}


def spec(**kw):
    s = json.loads(json.dumps(SPEC))
    for k, v in kw.items():
        s["pool"][k] = v
    return json.dumps(s)


def deep(n):
    return '{"pool": ' + "[" * n + "]" * n + "}"


# (name, method, path, body (str|bytes|None), extra headers, token,
#  expected statuses, error code or None, message substring or None)
CASES = [
    # --- PUT /v1/pools/{name}: every bad shape of body
    ("put-empty-body", "PUT", "/v1/pools/x", b"", {}, ADMIN, [400], "EmptyBody", "needs a JSON body"),
    ("put-array", "PUT", "/v1/pools/x", "[]", {}, ADMIN, [400], "InvalidJSON", "must be a JSON object"),
    ("put-string", "PUT", "/v1/pools/x", '"pool"', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-null", "PUT", "/v1/pools/x", "null", {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-number", "PUT", "/v1/pools/x", "42", {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-empty-object", "PUT", "/v1/pools/x", "{}", {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-pool-list", "PUT", "/v1/pools/x", '{"pool": []}', {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-pool-string", "PUT", "/v1/pools/x", '{"pool": "x"}', {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-pool-number", "PUT", "/v1/pools/x", '{"pool": 1e308}', {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-string", "PUT", "/v1/pools/x", spec(count="many"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-huge", "PUT", "/v1/pools/x", spec(count=10 ** 30), {}, ADMIN, [400], "InvalidJSON", "too big integer"),
    ("put-count-int64", "PUT", "/v1/pools/x", spec(count=2 ** 62), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-wraps-to-1", "PUT", "/v1/pools/x", spec(count=2 ** 32 + 1), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-negative", "PUT", "/v1/pools/x", spec(count=-1), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-float", "PUT", "/v1/pools/x", spec(count=2.5), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-count-bool", "PUT", "/v1/pools/x", spec(count=True), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-gpu-null", "PUT", "/v1/pools/x", spec(gpu=None), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-name-mismatch", "PUT", "/v1/pools/x", spec(name="y"), {}, ADMIN, [400], "NameMismatch", "URL names pool x but the spec names y"),
    ("put-name-shell", "PUT", "/v1/pools/x%3Brm%20-rf%20%2F", spec(name="x;rm -rf /"), {}, ADMIN, [400, 404], None, None),
    ("put-name-sql", "PUT", "/v1/pools/p%27%3B%20DROP%20TABLE%20pools%3B--",
     spec(name="p'; DROP TABLE pools;--"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-name-newline", "PUT", "/v1/pools/a%0Ab", spec(name="a\nb"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-name-ansi", "PUT", "/v1/pools/%1B%5B31m", spec(name="\x1b[31m"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-name-upper", "PUT", "/v1/pools/Prod", spec(name="Prod"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-team-other", "PUT", "/v1/pools/x", spec(team="product"), {}, CI, [403], "Forbidden", "cannot create pools for team product"),
    ("put-team-injection", "PUT", "/v1/pools/x", spec(team="r'; --"), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-labels-10k", "PUT", "/v1/pools/x", spec(labels={"k%d" % i: "v" for i in range(10000)}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-label-ansi", "PUT", "/v1/pools/x", spec(labels={"note": "\x1b[2J"}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-label-newline", "PUT", "/v1/pools/x", spec(labels={"note": "a\r\nX-Injected: 1"}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-label-key-sql", "PUT", "/v1/pools/x", spec(labels={"k'; DROP TABLE pools;--": "v"}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-label-reserved", "PUT", "/v1/pools/x", spec(labels={"gpubroker-broker": "other"}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-unknown-key", "PUT", "/v1/pools/x", spec(__proto__={"admin": True}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-extra-top-key", "PUT", "/v1/pools/x", json.dumps(dict(SPEC, extra=1)), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-policy-traversal", "PUT", "/v1/pools/x", spec(policy=["../../../../etc/passwd"]), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-policy-host-path", "PUT", "/v1/pools/hostile-lua",
     spec(name="hostile-lua", policy=["/nonexistent/gpubroker-hostile.lua"]), {}, ADMIN, [400], "InvalidSpec", "is a path"),
    ("put-cloud-traversal", "PUT", "/v1/pools/x", spec(placement={"clouds": ["../../lib/x"]}), {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-huge-body", "PUT", "/v1/pools/x", '{"x": "' + "a" * (2 << 20) + '"}', {}, ADMIN, [413], "TooLarge", "larger than"),
    ("put-chunked-huge", "PUT", "/v1/pools/x", "CHUNKED:" + " " * (2 << 20), {}, ADMIN, [413], "TooLarge", "larger than"),
    ("put-deep-100", "PUT", "/v1/pools/x", deep(100), {}, ADMIN, [400], "TooDeep", "nested deeper than"),
    ("put-deep-100000", "PUT", "/v1/pools/x", deep(100000), {}, ADMIN, [400], "TooDeep", "nested deeper than"),
    ("put-deep-strings", "PUT", "/v1/pools/x", '{"pool": "' + "[" * 5000 + '"}', {}, ADMIN, [400], "InvalidSpec", "invalid"),
    ("put-invalid-json", "PUT", "/v1/pools/x", '{"pool": {', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-trailing-garbage", "PUT", "/v1/pools/x", spec() + "xyz", {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-duplicate-keys", "PUT", "/v1/pools/x", '{"pool": {"name": "x", "name": "y"}}', {}, ADMIN, [400], "InvalidJSON", "duplicate"),
    ("put-escaped-nul", "PUT", "/v1/pools/x", '{"pool": {"name": "x\\u0000y"}}', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-raw-nul", "PUT", "/v1/pools/x", b'{"pool": {"name": "x\x00y"}}', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-invalid-utf8", "PUT", "/v1/pools/x", b'{"pool": {"name": "x\xff\xfe"}}', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-lone-surrogate", "PUT", "/v1/pools/x", '{"pool": {"name": "\\ud800"}}', {}, ADMIN, [400], "InvalidJSON", "not valid JSON"),
    ("put-number-overflow", "PUT", "/v1/pools/x", '{"pool": {"count": 1e999}}', {}, ADMIN, [400], "InvalidJSON", "overflow"),
    ("put-text-plain", "PUT", "/v1/pools/x", "name=x", {"Content-Type": "text/plain"}, ADMIN, [400, 415], None, None),
    ("put-form", "PUT", "/v1/pools/x", "pool=x&count=1", {"Content-Type": "application/x-www-form-urlencoded"}, ADMIN, [400, 415], None, None),
    ("put-multipart", "PUT", "/v1/pools/x", '--zz\r\nContent-Disposition: form-data; name="pool"\r\n\r\nx\r\n--zz--\r\n',
     {"Content-Type": "multipart/form-data; boundary=zz"}, ADMIN, [400, 415], None, None),
    ("put-xml", "PUT", "/v1/pools/x", '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><pool>&a;</pool>',
     {"Content-Type": "application/xml"}, ADMIN, [400, 415], None, None),
    # a web page of another origin (issue 30): a "simple" request needs no
    # preflight, so the daemon refuses the body's type and the foreign Origin
    ("scale-text-plain", "POST", "/v1/pools/hostile-target/scale", '{"count": 7}', {"Content-Type": "text/plain"}, ADMIN,
     [415], "UnsupportedMediaType", "application/json"),
    ("scale-foreign-origin", "POST", "/v1/pools/hostile-target/scale", '{"count": 7}', {"Origin": "http://evil.example"}, ADMIN,
     [403], "CrossOrigin", "another origin"),
    ("reconcile-null-origin", "POST", "/v1/reconcile", None, {"Origin": "null"}, ADMIN, [403], "CrossOrigin", None),
    ("plan-too-many-pools", "POST", "/v1/plan?explain=1",
     "".join("---\npool: {name: p%d, team: research, count: 1, gpu: {model: A10G}}\n" % i for i in range(1000)),
     {"Content-Type": "application/yaml"}, "demo-viewer-token", [413], "TooManyPools", "daemon.plan_max_pools"),
    # --- the URL
    ("url-traversal", "PUT", "/v1/pools/../../etc/passwd", spec(), {}, ADMIN, [400, 404], None, None),
    ("url-traversal-encoded", "PUT", "/v1/pools/..%2F..%2Fetc%2Fpasswd", spec(), {}, ADMIN, [400, 404], None, None),
    ("url-traversal-delete", "DELETE", "/v1/pools/..%2Fhostile-target", None, {}, ADMIN, [404], "NotFound", None),
    ("url-dot-name", "DELETE", "/v1/pools/..", None, {}, ADMIN, [400, 404], None, None),
    ("url-invalid-utf8", "GET", "/v1/pools/%ff%fe", None, {}, ADMIN, [404], "NotFound", "no pool named"),
    ("url-malformed-escape", "GET", "/v1/pools/%ZZ%", None, {}, ADMIN, [400, 404], None, None),
    ("url-nul", "GET", "/v1/pools/nope%00hostile-target", None, {}, ADMIN, [400], "BadRequest", "encoded NUL"),
    ("url-nul-cut", "GET", "/v1/audit%00/x", None, {}, ADMIN, [400], "BadRequest", "encoded NUL"),
    ("url-ansi", "GET", "/v1/pools/%1B%5B2J%1B%5B31mx", None, {}, ADMIN, [404], "NotFound", "no pool named"),
    ("url-long-name", "GET", "/v1/pools/" + "a" * 300, None, {}, ADMIN, [400, 404], None, None),
    ("url-very-long", "GET", "/v1/pools/" + "a" * 200000, None, {}, ADMIN, [400, 404, 414, 431, "closed"], None, None),
    ("url-too-many-segments", "GET", "/v1/pools/a/b/c/d/e/f/g", None, {}, ADMIN, [404], "NotFound", None),
    ("url-double-slash", "DELETE", "//v1//pools//hostile-target//", None, {}, CI, [404], "NotFound", None),
    # libmicrohttpd keeps every argument in the 64 KiB per-connection
    # memory: beyond ~900 it closes the connection without an answer
    ("query-5000-params", "GET", "/v1/pools?" + "&".join("p%d=1" % i for i in range(5000)), None, {}, ADMIN,
     [400, 414, 431, "closed"], None, None),
    ("query-limit-huge", "GET", "/v1/pools?limit=99999999999999999999999", None, {}, ADMIN, [400], "BadQuery", "limit"),
    ("query-limit-negative", "GET", "/v1/pools?limit=-1", None, {}, ADMIN, [400], "BadQuery", "limit"),
    ("query-cost-by", "GET", "/v1/cost?by=%27%3B%20DROP%20TABLE%20pools%3B--", None, {}, ADMIN, [400], "BadQuery", "by must be"),
    ("query-cost-since", "GET", "/v1/cost?since=1e999", None, {}, ADMIN, [400], "BadQuery", "since"),
    ("query-offers-gpu", "GET", "/v1/offers?gpu=%27%20OR%201%3D1--", None, {}, ADMIN, [400], "BadQuery", "unknown GPU model"),
    ("query-events-pool", "GET", "/v1/events?pool=..%2F..%2Fx", None, {}, ADMIN, [404], "NotFound", None),
    # --- scale and heartbeat bodies
    ("scale-string", "POST", "/v1/pools/hostile-target/scale", '{"count": "5"}', {}, ADMIN, [400], "BadRequest", "integer"),
    ("scale-float", "POST", "/v1/pools/hostile-target/scale", '{"count": 2.5}', {}, ADMIN, [400], "BadRequest", "integer"),
    ("scale-missing", "POST", "/v1/pools/hostile-target/scale", '{}', {}, ADMIN, [400], "BadRequest", "integer"),
    ("scale-negative", "POST", "/v1/pools/hostile-target/scale", '{"count": -1}', {}, ADMIN, [400, 422], None, "expected 0 to"),
    ("scale-huge", "POST", "/v1/pools/hostile-target/scale", '{"count": 20000}', {}, ADMIN, [400, 422], None, "expected 0 to"),
    ("scale-int32-overflow", "POST", "/v1/pools/hostile-target/scale", '{"count": 2147483648}', {}, ADMIN, [400, 422], None, None),
    ("scale-wraps-to-1", "POST", "/v1/pools/hostile-target/scale", '{"count": 4294967297}', {}, ADMIN, [422], "Refused", "expected 0 to"),
    ("scale-int64-overflow", "POST", "/v1/pools/hostile-target/scale", '{"count": 9223372036854775808}', {}, ADMIN, [400], "InvalidJSON", "too big integer"),
    ("scale-array", "POST", "/v1/pools/hostile-target/scale", '[5]', {}, ADMIN, [400], "InvalidJSON", "JSON object"),
    ("heartbeat-nan", "POST", "/v1/instances/none/heartbeat", '{"gpu_util": "NaN"}', {}, ADMIN, [400], "BadRequest", "between 0 and"),
    ("heartbeat-overflow", "POST", "/v1/instances/none/heartbeat", '{"gpu_util": 1e999}', {}, ADMIN, [400], "InvalidJSON", None),
    ("heartbeat-negative", "POST", "/v1/instances/none/heartbeat", '{"gpu_util": -0.5}', {}, ADMIN, [400], "BadRequest", "between 0 and"),
    # --- auth and methods
    ("auth-none", "GET", "/v1/pools", None, {}, None, [401], "Unauthenticated", "bearer token"),
    ("auth-basic", "GET", "/v1/pools", None, {"Authorization": "Basic YWRtaW46YWRtaW4="}, "RAW", [401], "Unauthenticated", None),
    ("auth-sql", "GET", "/v1/pools", None, {"Authorization": "Bearer ' OR '1'='1"}, "RAW", [401], "Unauthenticated", "not valid"),
    ("auth-huge", "GET", "/v1/pools", None, {"Authorization": "Bearer " + "a" * 200000}, "RAW", [431, 400, "closed"], None, None),
    ("method-patch", "PATCH", "/v1/pools/hostile-target", spec(), {}, ADMIN, [405], "MethodNotAllowed", None),
    ("method-options", "OPTIONS", "/v1/pools", None, {}, ADMIN, [405], "MethodNotAllowed", None),
    ("method-trace", "TRACE", "/v1/pools", None, {}, ADMIN, [405], "MethodNotAllowed", None),
    ("method-garbage", "FOO", "/v1/pools/hostile-target", None, {}, ADMIN, [405], "MethodNotAllowed", None),
    ("header-many", "GET", "/v1/pools", None, {"X-H%d" % i: "v" for i in range(3000)}, ADMIN, [400, 431, "closed"], None, None),
]

# raw byte streams that are not HTTP at all
RAW = [
    ("raw-garbage", b"GARBAGE\r\n\r\n"),
    ("raw-http09", b"GET /v1/pools\r\n\r\n"),
    ("raw-binary", bytes(range(256)) * 4),
    ("raw-bad-content-length", b"PUT /v1/pools/x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}"),
    # libmicrohttpd takes the last Content-Length and waits for the rest
    # of the body (until its 60 s connection timeout): "waits" is
    # accepted here, other clients are not affected (see slowloris)
    ("raw-two-content-lengths", b"PUT /v1/pools/x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
    ("raw-bad-chunk", b"PUT /v1/pools/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n"),
    ("raw-header-no-colon", b"GET /v1/pools HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n"),
]



def raw(method, path, headers, body=b"", token=ADMIN):
    """A request as bytes, headers exactly as given (repeats, NUL bytes and
    all): what a client library would never send."""
    head = b"%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % (method.encode(), path.encode())
    if token:
        head += b"Authorization: Bearer " + token.encode() + b"\r\n"
    for h in headers:
        head += h + b"\r\n"
    return head + b"\r\n" + body


# raw requests with an exact answer: (name, payload, statuses, error code,
# message substring).  Each was answered loosely once (issue 14): the
# first Authorization won, a NUL cut a header short in silence, a
# 100-continue was promised for a body over the cap, an unknown transfer
# coding got a 500 HTML page, and %2F inside a name was routed as a '/'.
RAW_EXPECT = [
    ("auth-twice", raw("GET", "/v1/pools", [b"Authorization: Bearer wrong-token"]),
     [400], "DuplicateHeader", "Authorization header is sent 2 times"),
    ("auth-twice-valid-second", raw("GET", "/v1/pools", [b"Authorization: Bearer " + ADMIN.encode()], token="wrong"),
     [400], "DuplicateHeader", "Authorization"),
    ("header-nul", raw("GET", "/v1/pools", [b"X-Note: harmless\x00X-Injected: 1"]),
     [400], "MalformedHeader", "NUL byte"),
    ("auth-nul-suffix", raw("GET", "/v1/pools", [], token=ADMIN + "\x00tail"),
     [400], "MalformedHeader", "Authorization"),
    ("expect-100-too-big", raw("PUT", "/v1/pools/x", [b"Content-Type: application/json",
                                                     b"Content-Length: 2000000",
                                                     b"Expect: 100-continue"]),
     [413], "TooLarge", "larger than"),
    ("te-gzip-chunked", raw("PUT", "/v1/pools/x", [b"Content-Type: application/json",
                                                  b"Transfer-Encoding: gzip, chunked"],
                            b"2\r\n{}\r\n0\r\n\r\n"),
     [501], "NotImplemented", "Transfer-Encoding"),
    ("te-and-content-length", raw("PUT", "/v1/pools/x", [b"Content-Type: application/json",
                                                        b"Transfer-Encoding: chunked",
                                                        b"Content-Length: 2"],
                                  b"2\r\n{}\r\n0\r\n\r\n"),
     [400], "BadRequest", "both"),
    ("two-content-lengths", raw("PUT", "/v1/pools/x", [b"Content-Length: 2", b"Content-Length: 40"], b"{}"),
     [400], "DuplicateHeader", "Content-Length"),
    ("encoded-slash-route", raw("GET", "/v1/pools/hostile-target%2Finstances", []),
     [404], "NotFound", "no pool named hostile-target/instances"),
    ("encoded-slash-scale", raw("POST", "/v1/pools/hostile-target%2Fscale", [b"Content-Type: application/json",
                                                                          b"Content-Length: 12"], b'{"count": 3}'),
     [404, 405], None, None),
    # a header that is only unusual: still served
    ("te-header-ignored", raw("GET", "/v1/pools?limit=1", [b"TE: gzip, chunked"]), [200], None, None),
    ("bare-lf-lines", b"GET /v1/pools?limit=1 HTTP/1.1\nHost: x\nConnection: close\nAuthorization: Bearer "
     + ADMIN.encode() + b"\nX-Trailing-Space: v  \n\n", [200], None, None),
]


# Known bugs (name -> what is wrong): they print KNOWN instead of failing
# the run, unless HOSTILE_STRICT=1; once fixed they print FIXED (drop
# them).  None at present: the last two (a scale count wrapping through
# int, a policy path read on the daemon's host) are fixed.
KNOWN_BUGS = {}


def counts(db):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        return tuple(c.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                     for t in ("pools", "instances", "intents", "decisions")) + (
            c.execute("SELECT desired FROM pools WHERE name = 'hostile-target'").fetchone(),)
    finally:
        c.close()


def request(host, port, method, path, body, headers, token, timeout=15):
    """-> (status or "closed", body bytes)"""
    chunked = isinstance(body, str) and body.startswith("CHUNKED:")
    if chunked:
        body = body[len("CHUNKED:"):]
    if isinstance(body, str):
        body = body.encode()
    h = {"Host": "%s:%d" % (host, port), "Connection": "close"}
    if token and token != "RAW":
        h["Authorization"] = "Bearer " + token
    if body is not None:
        h.setdefault("Content-Type", "application/json")
        if not chunked:
            h["Content-Length"] = str(len(body))
        else:
            h["Transfer-Encoding"] = "chunked"
    h.update(headers)
    head = "%s %s HTTP/1.1\r\n" % (method, path) + "".join(
        "%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    payload = head.encode("utf-8", "surrogateescape")
    if body is not None:
        if chunked:
            step = 65536
            for i in range(0, len(body), step):
                part = body[i:i + step]
                payload += b"%x\r\n" % len(part) + part + b"\r\n"
            payload += b"0\r\n\r\n"
        else:
            payload += body
    return exchange(host, port, payload, timeout)


def exchange(host, port, payload, timeout=15):
    s = socket.create_connection((host, port), timeout=timeout)
    s.settimeout(timeout)
    deadline = time.time() + timeout
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer (413/431) before reading it all
        data = b""
        while time.time() < deadline:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            data += b
    except socket.timeout:
        raise TimeoutError("no complete answer within %ds" % timeout)
    finally:
        s.close()
    if time.time() >= deadline:
        raise TimeoutError("no complete answer within %ds" % timeout)
    if not data:
        return "closed", b""
    line = data.split(b"\r\n", 1)[0].split()
    status = int(line[1]) if len(line) > 1 and line[1].isdigit() else "garbled"
    return status, data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""


def check_json_error(body, code, msg):
    try:
        j = json.loads(body)
    except ValueError:
        return "the body is not JSON: %r" % body[:200]
    e = j.get("error") if isinstance(j, dict) else None
    if not isinstance(e, dict) or not isinstance(e.get("message"), str) or not e.get("code"):
        return "no {error: {code, message}} in %r" % body[:200]
    if code and e["code"] != code:
        return "error code %s, want %s (%s)" % (e["code"], code, e["message"][:200])
    if msg and msg not in e["message"]:
        return "message %r lacks %r" % (e["message"][:300], msg)
    return None


def slowloris(host, port, n=40, hold=6):
    """n connections that trickle a request byte by byte, plus one that
    sends half a body and stalls; meanwhile normal requests must be
    answered fast.  Returns (worst latency in s, answered count)."""
    socks = []
    stop = threading.Event()
    for i in range(n):
        s = socket.create_connection((host, port), timeout=5)
        socks.append(s)
    stall = socket.create_connection((host, port), timeout=5)
    stall.sendall(b"PUT /v1/pools/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                  + ADMIN.encode() + b"\r\nContent-Length: 100000\r\n\r\n{\"pool\": ")
    req = b"GET /v1/pools HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 1000

    def trickle():
        i = 0
        while not stop.is_set() and i < len(req):
            for s in socks:
                try:
                    s.send(req[i:i + 1])
                except OSError:
                    pass
            i += 1
            stop.wait(0.2)
    t = threading.Thread(target=trickle)
    t.start()
    worst = 0.0
    answered = 0
    end = time.time() + hold
    try:
        while time.time() < end:
            t0 = time.time()
            st, body = request(host, port, "GET", "/v1/pools", None, {}, ADMIN, timeout=10)
            dt = time.time() - t0
            worst = max(worst, dt)
            if st == 200:
                answered += 1
            time.sleep(0.3)
    finally:
        stop.set()
        t.join()
        for s in socks + [stall]:
            s.close()
    return worst, answered


def specs(url, db, folder):
    import glob
    from urllib.parse import quote
    import yaml
    u = urlsplit(url)
    failed = n = skipped = 0
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        name = os.path.basename(path)
        data = open(path, "rb").read()
        if b"\n# api: skip" in data or data.startswith(b"# api: skip"):
            skipped += 1
            continue
        try:
            doc = yaml.safe_load(data)
            body = json.dumps(doc)
        except Exception:
            skipped += 1
            continue
        pool = doc.get("pool") if isinstance(doc, dict) else None
        pname = pool.get("name") if isinstance(pool, dict) else None
        target = quote(pname if isinstance(pname, str) and pname else "hostile-spec", safe="")
        n += 1
        before = counts(db)
        try:
            st, rbody = request(u.hostname, u.port, "PUT", "/v1/pools/" + target, body, {}, ADMIN)
        except (TimeoutError, OSError) as e:
            print("FAIL spec %-28s %s" % (name, e))
            failed += 1
            continue
        why = None
        if not (isinstance(st, int) and 400 <= st < 500):
            why = "status %s: %r" % (st, rbody[:200])
        else:
            why = check_json_error(rbody, None, None)
        if not why and counts(db) != before:
            why = "the store changed"
        if why:
            print("FAIL spec %-28s %s" % (name, why))
            failed += 1
        else:
            print("ok   spec %-28s %s %s" % (name, st, json.loads(rbody)["error"]["code"]))
    print("%d specs through the API (%d YAML-only skipped), %d failed" % (n, skipped, failed))
    return 1 if failed else 0


def main(url, db):
    u = urlsplit(url)
    host, port = u.hostname, u.port
    failed = 0
    n = 0
    for name, method, path, body, headers, token, want, code, msg in CASES:
        n += 1
        before = counts(db)
        t0 = time.time()
        try:
            st, rbody = request(host, port, method, path, body, headers, token)
        except (TimeoutError, OSError) as e:
            print("FAIL %-28s %s" % (name, e))
            failed += 1
            continue
        dt = time.time() - t0
        why = None
        if st not in want:
            why = "status %s, want %s: %r" % (st, want, rbody[:300])
        elif isinstance(st, int) and (code or msg or st in (400, 401, 403, 404, 405, 413, 422)):
            if not (st in (431, 414) and not rbody.startswith(b"{")):
                why = check_json_error(rbody, code, msg)
        after = counts(db)
        if not why and after != before:
            why = "the store changed: (pools, instances, intents, decisions, target desired) %s -> %s" % (before, after)
        if why and name in KNOWN_BUGS and os.environ.get("HOSTILE_STRICT") != "1":
            print("KNOWN %-27s %s -- %s" % (name, KNOWN_BUGS[name], why[:120]))
        elif why:
            print("FAIL %-28s %s" % (name, why))
            failed += 1
        elif name in KNOWN_BUGS:
            print("FIXED %-27s passes now: remove it from KNOWN_BUGS" % name)
        else:
            print("ok   %-28s %s in %.2fs" % (name, st, dt))
    for name, payload in RAW:
        n += 1
        before = counts(db)
        try:
            st, rbody = exchange(host, port, payload, timeout=3)
        except TimeoutError:
            st, rbody = "waits", b""
        except OSError as e:
            print("FAIL %-28s %s" % (name, e))
            failed += 1
            continue
        ok = st in ("closed", "waits") or (isinstance(st, int) and 400 <= st < 500)
        if not ok or counts(db) != before:
            print("FAIL %-28s answered %s %r (store %s -> %s)" % (name, st, rbody[:200], before, counts(db)))
            failed += 1
        else:
            print("ok   %-28s %s" % (name, st))
    for name, payload, want, code, msg in RAW_EXPECT:
        n += 1
        before = counts(db)
        try:
            st, rbody = exchange(host, port, payload, timeout=5)
        except TimeoutError:
            st, rbody = "waits", b""
        except OSError as e:
            st, rbody = "error %s" % e, b""
        why = None
        if st not in want:
            why = "status %s, want %s: %r" % (st, want, rbody[:300])
        elif code or msg:
            why = check_json_error(rbody, code, msg)
        if not why and counts(db) != before:
            why = "the store changed"
        if why:
            print("FAIL %-28s %s" % (name, why))
            failed += 1
        else:
            print("ok   %-28s %s" % (name, st))
    n += 1
    worst, answered = slowloris(host, port)
    if worst > 2.0 or answered < 5:
        print("FAIL %-28s while 40 connections trickled a request and one stalled "
              "mid-body, normal requests took up to %.2fs (%d answered)" % ("slowloris", worst, answered))
        failed += 1
    else:
        print("ok   %-28s 40 trickling + 1 stalled connections: %d requests answered, worst %.3fs"
              % ("slowloris", answered, worst))
    st, _ = request(host, port, "GET", "/healthz", None, {}, None)
    if st != 200:
        print("FAIL healthz after the corpus: %s" % st)
        failed += 1
    print("%d API cases, %d failed" % (n, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[3] == "--specs":
        sys.exit(specs(sys.argv[1], sys.argv[2], sys.argv[4]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
