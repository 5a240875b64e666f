#!/usr/bin/python3
"""connload.py -- hold many connections against a gpubroker daemon and
measure what a normal client gets meanwhile.  Used by
tests/integration/daemon_connections.sh (which asserts on its report) and
by `bench/run.sh api` (which prints it).

    connload.py URL TOKEN [--idle N] [--idle-from ADDR]
                [--polls N] [--poll-from FIRST-LAST] [--poll-pool POOL]
                [--poll-after ID] [--probes N] [--pid PID]
                [--wake] [--hold-idle S] [--out FILE]

--idle N        N connections from ADDR (default 127.0.0.2) that send
                nothing.
--polls N       N long polls (GET /v1/events?pool=POOL&after=ID&wait=55),
                spread over the addresses 127.0.0.FIRST..LAST (default
                10-29), each on its own connection.
--probes N      then N requests each of GET /healthz and GET /v1/pools
                from 127.0.0.1, one after another, timed (each must be
                answered within 5 s).
--wake          then POST /v1/pools/POOL/scale {count: desired + 1} and
                time how long until every long poll has its answer.
--hold-idle S   then keep the idle connections S more seconds and count
                how many the daemon closed (its header timeout).
--pid PID       the daemon: its threads and resident memory (from
                /proc/PID/status) before and while the load is held.
--hold S        after the probes, hold every connection S seconds more
--ready FILE    (touched once the load is in place, before the probes:
                a benchmark measures meanwhile).

Prints one JSON object (and writes it to FILE): what was opened, what the
daemon refused at once, the probes' latencies (p50, p99, max, failures),
the long polls' answers, threads and memory.  All traffic is on
127.0.0.0/8.
"""
import argparse
import json
import resource
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        new = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def proc_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Threads", "VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def connect_from(src, host, port, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect((host, port))
    return s


def one_request(host, port, method, path, token, body=None, src="127.0.0.1",
                timeout=5.0):
    """-> (status or None, body bytes, seconds)"""
    t0 = time.monotonic()
    try:
        s = connect_from(src, host, port, timeout)
    except OSError:
        return None, b"", time.monotonic() - t0
    try:
        req = "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % (method, path)
        if token:
            req += "Authorization: Bearer %s\r\n" % token
        data = body.encode() if body is not None else b""
        if body is not None:
            req += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(data)
        s.sendall(req.encode() + b"\r\n" + data)
        buf = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            buf += b
    except OSError:
        return None, b"", time.monotonic() - t0
    finally:
        s.close()
    line = buf.split(b"\r\n", 1)[0].split()
    st = int(line[1]) if len(line) > 1 and line[1].isdigit() else None
    return st, buf.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in buf else b"", time.monotonic() - t0


def metrics(host, port, token):
    st, body, _ = one_request(host, port, "GET", "/metrics", token)
    out = {}
    if st != 200:
        return out
    for line in body.decode(errors="replace").splitlines():
        if line.startswith("#") or " " not in line:
            continue
        k, v = line.rsplit(" ", 1)
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def probe(host, port, token, n):
    res = {}
    for path in ("/healthz", "/v1/pools"):
        lat, fails = [], 0
        for _ in range(n):
            st, _, dt = one_request(host, port, "GET", path, token if path != "/healthz" else None)
            if st == 200:
                lat.append(dt * 1000)
            else:
                fails += 1
        res[path] = {"answered": len(lat), "failed": fails,
                     "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": max(lat) if lat else None}
    return res


def still_open(socks, wait=0.0):
    """How many of socks the peer has not closed (reads nothing)."""
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    closed = set()
    end = time.monotonic() + wait
    while True:
        left = max(0.0, end - time.monotonic())
        for key, _ in sel.select(timeout=left):
            s = key.fileobj
            try:
                if not s.recv(4096):
                    closed.add(s)
                    sel.unregister(s)
            except OSError:
                closed.add(s)
                sel.unregister(s)
        if time.monotonic() >= end:
            break
    sel.close()
    return len(socks) - len(closed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("token")
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--idle-from", default="127.0.0.2")
    ap.add_argument("--polls", type=int, default=0)
    ap.add_argument("--poll-from", default="10-29")
    ap.add_argument("--poll-pool", default=None)
    ap.add_argument("--poll-after", type=int, default=0)
    ap.add_argument("--probes", type=int, default=30)
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--wake", action="store_true")
    ap.add_argument("--hold-idle", type=float, default=0.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--hold", type=float, default=0.0)
    ap.add_argument("--ready", default=None)
    a = ap.parse_args()
    u = urlsplit(a.url)
    host, port = u.hostname, u.port
    rep = {"idle": a.idle, "polls": a.polls}
    got = raise_nofile(a.idle + a.polls + 256)
    if got < a.idle + a.polls + 64:
        print(json.dumps({"skip": "this process may open %d files, not %d" % (got, a.idle + a.polls + 64)}))
        return 77
    if a.pid:
        rep["before"] = proc_status(a.pid)

    # idle connections: opened, nothing sent
    idle, idle_failed = [], 0
    for _ in range(a.idle):
        try:
            idle.append(connect_from(a.idle_from, host, port))
        except OSError:
            idle_failed += 1
    time.sleep(1.0)
    rep["idle_connect_failed"] = idle_failed
    rep["idle_open_after_1s"] = still_open(idle, 0.2) if idle else 0

    # long polls, spread over addresses
    first, last = (int(x) for x in a.poll_from.split("-"))
    polls, poll_failed = [], 0
    path = "/v1/events?wait=55&after=%d%s" % (a.poll_after, "&pool=" + a.poll_pool if a.poll_pool else "")
    req = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (path, a.token)).encode()
    for i in range(a.polls):
        src = "127.0.0.%d" % (first + i % (last - first + 1))
        try:
            s = connect_from(src, host, port)
            s.sendall(req)
            polls.append(s)
        except OSError:
            poll_failed += 1
    rep["poll_connect_failed"] = poll_failed
    # wait until the daemon holds them (its own gauge)
    m = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = metrics(host, port, a.token)
        if m.get("gpubroker_api_long_polls", 0) >= len(polls):
            break
        time.sleep(0.25)
    rep["long_polls_waiting"] = m.get("gpubroker_api_long_polls")
    rep["connections_open"] = m.get("gpubroker_api_connections")
    rep["refused_client_cap"] = m.get('gpubroker_api_connections_refused_total{cap="client"}')
    rep["refused_total_cap"] = m.get('gpubroker_api_connections_refused_total{cap="total"}')
    if a.pid:
        rep["during"] = proc_status(a.pid)
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("ready\n")
    rep["probes"] = probe(host, port, a.token, a.probes)
    if a.hold > 0:
        time.sleep(a.hold)
        rep["still_waiting_after_hold"] = metrics(host, port, a.token).get("gpubroker_api_long_polls")

    if a.wake and a.poll_pool:
        st, body, _ = one_request(host, port, "GET", "/v1/pools/" + a.poll_pool, a.token)
        desired = json.loads(body).get("desired", 1) if st == 200 else 1
        t0 = time.monotonic()
        st, body, _ = one_request(host, port, "POST", "/v1/pools/%s/scale" % a.poll_pool, a.token,
                                  json.dumps({"count": desired + 1}))
        rep["wake_scale_status"] = st
        # every long poll must now get its answer: read them all
        sel = selectors.DefaultSelector()
        bufs = {}
        for s in polls:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            bufs[s] = b""
        done, answered, with_events, statuses = 0, 0, 0, {}
        end = time.monotonic() + 50
        last_at = t0
        while done < len(polls) and time.monotonic() < end:
            for key, _ in sel.select(timeout=1.0):
                s = key.fileobj
                try:
                    b = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    b = b""
                if b:
                    bufs[s] += b
                hdr, sep, body = bufs[s].partition(b"\r\n\r\n")
                clen = None
                for h in hdr.split(b"\r\n")[1:]:
                    k, _, v = h.partition(b":")
                    if k.strip().lower() == b"content-length":
                        clen = int(v.strip())
                complete = sep and clen is not None and len(body) >= clen
                if complete or not b:
                    sel.unregister(s)
                    done += 1
                    last_at = time.monotonic()
                    line = hdr.split(b"\r\n", 1)[0].split()
                    st = int(line[1]) if len(line) > 1 and line[1].isdigit() else "closed"
                    statuses[str(st)] = statuses.get(str(st), 0) + 1
                    if st == 200:
                        answered += 1
                        try:
                            if json.loads(body[:clen]).get("events"):
                                with_events += 1
                        except ValueError:
                            pass
        sel.close()
        rep["wake"] = {"answered": answered, "with_events": with_events, "statuses": statuses,
                       "all_within_s": round(last_at - t0, 3) if done == len(polls) else None}

    if idle and a.hold_idle > 0:
        rep["idle_open_after_hold"] = still_open(idle, a.hold_idle)
    for s in idle + polls:
        s.close()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rep, f)
    print(json.dumps(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
