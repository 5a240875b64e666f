#!/usr/bin/python3
"""truth.py -- compare gpubroker's state DB with cloudsim's truth.

Used by tests/reliability/*.sh and tests/integration/reliability_short.sh
(not a test itself: tests/run.sh runs only *.sh).  Reads the SQLite state
directly (WAL: safe while the daemon runs, and right after a SIGKILL) and
cloudsim's /_sim/instances?live=1.  Standard library only.

  truth.py check DB CONTROL BROKER EXPECT.json
      EXPECT: {"pool": N, ...}; N > 0 = active with N instances, 0 =
      destroyed.  Exit 0 when converged and consistent; otherwise exit 1
      and print the first problems on stdout.  Checked:
        - every expected pool: state, desired, exactly N pending/running
          rows and no other live row (no terminating leftovers);
        - cloudsim's live instances of the pool == the store's rows, by id
          (0 duplicated, store == cloudsim);
        - every live cloudsim instance carrying gpubroker-broker=BROKER
          is a live store row of an active pool (0 leaked);
        - no provider id twice among live rows; no open intent.
  truth.py inflight DB
      prints "OPEN_INTENTS UNSETTLED_POOLS" right after a kill: intents
      still open (a cloud call was in flight) and active/destroying pools
      whose live rows differ from their desired size or are not running.
  truth.py summary DB CONTROL BROKER
      one JSON line: store and cloudsim counts (for logs).
  truth.py costdiff DB CONTROL [START_TOL_MS END_TOL_MS]
      per instance: the store's billed interval and price against
      cloudsim's bill (both bill at least the cloud's minimum, from the
      bill's "billing"); prints the largest differences.  With tolerances:
      exit 1 when an instance is billed by one side only, has another
      price, or its start / end differ by more than the tolerance.
  truth.py endcheck DB CONTROL EXACT_MS EARLY_MS POOLS OURS
      where billing ended: every billed instance's end in the store must
      be within EXACT_MS of cloudsim's, except in POOLS (comma-separated:
      pools whose terminate a kill interrupted), where it may also be up
      to EARLY_MS early (recovery ends it at the journal time: the cloud
      took the request somewhere within that call).  Then the totals:
      OURS (gpubroker's cost total) must equal the store rows' sum, the
      bill's total the sum of its instances, and the two totals may
      differ by no more than the per-instance allowances add up to (sum of
      price x (start difference + end allowance)).  Exit 1 otherwise.
  truth.py killopen DB PID TIMEOUT_MS
      polls the journal every 5 ms and SIGKILLs PID the moment an intent
      is open (a cloud call in flight): an aimed kill.  Prints the ms it
      waited; exit 0 after the kill, 1 (nothing killed) when no intent
      opened within TIMEOUT_MS.
  truth.py creates DB POOL SINCE_MS
      "INTENTS INSTANCES FIRST_ISSUED LAST_ISSUED LAST_CLOSED" (unix ms)
      of the pool's create intents issued at or after SINCE_MS.
"""
import json
import os
import signal
import sqlite3
import sys
import time
import urllib.request

LIVE_UP = ("pending", "running")


def db_open(path):
    # read-only URI: never create a DB or take a write lock
    return sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=10)


def sim_live(control):
    with urllib.request.urlopen(control + "/_sim/instances?live=1",
                                timeout=20) as r:
        return json.load(r)["instances"]


def store_rows(db):
    c = db_open(db)
    try:
        pools = {n: {"state": s, "desired": d} for n, s, d in c.execute(
            "SELECT name, state, desired FROM pools")}
        rows = c.execute(
            "SELECT pool, cloud, provider_id, state FROM instances "
            "WHERE state != 'terminated'").fetchall()
        open_intents = c.execute(
            "SELECT count(*) FROM intents WHERE state = 'open'").fetchone()[0]
    finally:
        c.close()
    return pools, rows, open_intents


def check(db, control, broker, expect_path):
    with open(expect_path) as f:
        expect = json.load(f)
    pools, rows, open_intents = store_rows(db)
    sim = sim_live(control)
    probs = []
    ours = [i for i in sim if i["tags"].get("gpubroker-broker") == broker]
    sim_by_pool = {}
    for i in ours:
        sim_by_pool.setdefault(i["tags"].get("gpubroker-pool"), []).append(i)
    store_by_pool = {}
    seen = {}
    for pool, cloud, pid, state in rows:
        store_by_pool.setdefault(pool, []).append((cloud, pid, state))
        key = (cloud, pid)
        if pid and key in seen:
            probs.append("provider id %s/%s twice among live rows" % key)
        seen[key] = pool
    for pool, n in sorted(expect.items()):
        p = pools.get(pool)
        srows = store_by_pool.get(pool, [])
        sids = sorted(i["id"] for i in sim_by_pool.get(pool, []))
        if p is None:
            probs.append("%s: not in the store" % pool)
            continue
        if n == 0:
            if p["state"] != "destroyed":
                probs.append("%s: state %s, want destroyed" % (pool, p["state"]))
            if srows:
                probs.append("%s: %d live store rows after destroy" % (pool, len(srows)))
            if sids:
                probs.append("%s: %d live in cloudsim after destroy: %s" % (pool, len(sids), sids))
            continue
        up = sorted(pid or "?" for _, pid, st in srows if st in LIVE_UP)
        other = [(pid, st) for _, pid, st in srows if st not in LIVE_UP]
        if p["state"] != "active":
            probs.append("%s: state %s, want active" % (pool, p["state"]))
        if p["desired"] != n:
            probs.append("%s: desired %d, want %d" % (pool, p["desired"], n))
        if len(up) != n:
            probs.append("%s: %d pending/running in the store, want %d" % (pool, len(up), n))
        if other:
            probs.append("%s: live rows not yet settled: %s" % (pool, other))
        if len(sids) != n:
            probs.append("%s: %d live in cloudsim, want %d (duplicate or missing)"
                         % (pool, len(sids), n))
        if up != sids:
            probs.append("%s: store ids %s != cloudsim ids %s" % (pool, up, sids))
    # leaks: anything of ours alive that no active pool's row explains
    explained = {(c, pid) for pool, c, pid, st in rows
                 if pools.get(pool, {}).get("state") == "active"}
    for i in ours:
        if (i["cloud"], i["id"]) not in explained:
            probs.append("LEAK: %s %s (pool tag %s) is live in cloudsim but "
                         "not a live row of an active pool"
                         % (i["cloud"], i["id"], i["tags"].get("gpubroker-pool")))
    for pool in pools:
        if pool not in expect and pools[pool]["state"] != "destroyed":
            probs.append("%s: in the store (%s) but not expected"
                         % (pool, pools[pool]["state"]))
    if open_intents:
        probs.append("%d intents still open" % open_intents)
    if probs:
        for p in probs[:12]:
            print(p)
        return 1
    return 0


def inflight(db):
    pools, rows, open_intents = store_rows(db)
    by_pool = {}
    for pool, _, _, st in rows:
        by_pool.setdefault(pool, []).append(st)
    unsettled = 0
    for name, p in pools.items():
        sts = by_pool.get(name, [])
        if p["state"] == "destroying":
            unsettled += 1
        elif p["state"] == "active" and (
                len(sts) != p["desired"] or any(s != "running" for s in sts)):
            unsettled += 1
    print(open_intents, unsettled)
    return 0


def killopen(db, pid, timeout_ms):
    t0 = time.monotonic()
    c = None
    while (time.monotonic() - t0) * 1000 < timeout_ms:
        try:
            if c is None:
                c = db_open(db)
            n = c.execute("SELECT count(*) FROM intents "
                          "WHERE state = 'open'").fetchone()[0]
        except sqlite3.Error:
            n = 0  # busy, or the schema not there yet: look again
        if n:
            os.kill(pid, signal.SIGKILL)
            print(int((time.monotonic() - t0) * 1000))
            return 0
        time.sleep(0.005)
    print(int((time.monotonic() - t0) * 1000))
    return 1


def summary(db, control, broker):
    pools, rows, open_intents = store_rows(db)
    sim = [i for i in sim_live(control)
           if i["tags"].get("gpubroker-broker") == broker]
    print(json.dumps({
        "pools_active": sum(1 for p in pools.values() if p["state"] == "active"),
        "pools_total": len(pools),
        "store_live_rows": len(rows),
        "cloudsim_live": len(sim),
        "open_intents": open_intents}))
    return 0


def creates(db, pool, since):
    c = db_open(db)
    try:
        n, k, first, last, closed = c.execute(
            "SELECT count(*), coalesce(sum(count), 0), coalesce(min(created_at), 0),"
            " coalesce(max(created_at), 0), coalesce(max(closed_at), 0)"
            " FROM intents WHERE kind = 'create' AND pool = ? AND created_at >= ?",
            (pool, int(since))).fetchone()
    finally:
        c.close()
    print(n, k, first, last, closed)
    return 0


def iso_ms(t):
    """cloudsim's 2026-01-02T03:04:05.678Z -> unix ms"""
    import calendar
    import time
    base, frac = t.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) * 1000 + int(frac)


def bill_and_rows(db, control, cols):
    """cloudsim's bill and the store's instance rows (the given columns)"""
    with urllib.request.urlopen(control + "/_sim/bill", timeout=20) as r:
        bill = json.load(r)
    c = db_open(db)
    try:
        return bill, c.execute("SELECT %s FROM instances" % cols).fetchall()
    finally:
        c.close()


def min_ms(bill):
    """{cloud: minimum billed ms}: the minimums cloudsim bills, which are
    the drivers' billing_minimum_s (gpubroker's cost bills the same)"""
    return {c: v.get("minimum_s", 0) * 1000
            for c, v in bill.get("billing", {}).items()}


def billed_ms(start, end, minimum):
    """what gpubroker bills for [start, end]: the lifetime, at least the
    cloud's minimum (nothing for a row that has no end)"""
    if not end:
        return 0
    return max(end - start, minimum, 0)


def costdiff(db, control, start_tol=None, end_tol=None):
    bill, rows = bill_and_rows(
        db, control, "cloud, provider_id, pool, state, launched_ms,"
        " terminated_ms, terminate_requested_ms, price_per_hour, intent_id")
    mins = min_ms(bill)
    store = {}
    for cl, pid, pool, st, l, t, tr, price, iid in rows:
        store.setdefault((cl, pid), []).append((pool, st, l, t, tr, price, iid))
    diffs = []
    bad = []
    max_ds = max_de = 0
    tot_b = tot_s = 0.0
    for b in bill["instances"]:
        key = (b["cloud"], b["id"])
        bc = b["cost"]
        tot_b += bc
        srows = store.pop(key, [])
        sc = 0.0
        info = []
        if len(srows) != 1:
            bad.append("%s/%s: %d store rows for one billed instance" % (key[0], key[1], len(srows)))
        for pool, st, l, t, tr, price, iid in srows:
            end = t if t else tr
            sc += billed_ms(l, end, mins.get(key[0], 0)) / 1000.0 * price / 3600.0
            ds = l - iso_ms(b["started"])
            de = (end - iso_ms(b["ended"])) if b.get("ended") and end else None
            if abs(price - b["price_per_hour"]) > 1e-6:
                bad.append("%s/%s: price %s, billed at %s" % (key[0], key[1], price, b["price_per_hour"]))
            if start_tol is not None and abs(ds) > start_tol:
                bad.append("%s/%s: start differs by %+d ms" % (key[0], key[1], ds))
            if de is None and (b.get("ended") or end):
                bad.append("%s/%s: ended on one side only" % key)
            elif de is not None and end_tol is not None and abs(de) > end_tol:
                bad.append("%s/%s: end differs by %+d ms" % (key[0], key[1], de))
            max_ds = max(max_ds, abs(ds))
            max_de = max(max_de, abs(de or 0))
            info.append("%s %s start %+d ms end %s (intent %s)" % (
                pool, st, l - iso_ms(b["started"]),
                "%+d ms" % (end - iso_ms(b["ended"])) if b.get("ended") else "live",
                iid))
        tot_s += sc
        diffs.append((sc - bc, key, bc, sc, info))
    diffs.sort(key=lambda d: -abs(d[0]))
    print("bill %.6f store %.6f (%+.3f%%); %d instances billed, %d store rows "
          "not billed" % (tot_b, tot_s, (tot_s - tot_b) / tot_b * 100 if tot_b else 0,
                          len(bill["instances"]), len(store)))
    for d, key, bc, sc, info in diffs[:15]:
        print("%+.6f %s/%s bill %.6f store %.6f %s" % (d, key[0], key[1], bc, sc, "; ".join(info)))
    for key, v in list(store.items())[:5]:
        print("not billed: %s %s" % (key, v))
        bad.append("%s/%s: in the store, never billed by cloudsim" % key)
    print("largest differences: start %d ms, end %d ms" % (max_ds, max_de))
    if start_tol is not None and bad:
        for x in bad[:10]:
            print("BAD " + x)
        return 1
    return 0


def endcheck(db, control, exact_ms, early_ms, pools, ours):
    bill, rows = bill_and_rows(
        db, control, "cloud, provider_id, pool, launched_ms, terminated_ms,"
        " terminate_requested_ms, price_per_hour")
    store = {(cl, pid): (pool, l, t or tr, price)
             for cl, pid, pool, l, t, tr, price in rows}
    mins = min_ms(bill)
    tot_s = sum(billed_ms(l, e, mins.get(k[0], 0)) / 3.6e6 * p
                for k, (_, l, e, p) in store.items())
    bad = []
    bound = 0.0
    early = {}
    for b in bill["instances"]:
        key = (b["cloud"], b["id"])
        if key not in store or not b.get("ended"):
            bad.append("%s/%s: not ended on both sides" % key)
            continue
        pool, l, end, price = store[key]
        de = end - iso_ms(b["ended"])
        lo = -(early_ms if pool in pools else exact_ms)
        ds = abs(l - iso_ms(b["started"]))
        bound += price * (ds + max(-lo, exact_ms)) / 3.6e6
        if de < -exact_ms:
            early.setdefault(pool, []).append(de)
        if not lo <= de <= exact_ms:
            bad.append("%s/%s (%s): end %+d ms vs the bill, allowed %d..+%d"
                       % (key[0], key[1], pool, de, lo, exact_ms))
    for pool in sorted(early):
        print("early end (interrupted terminate): %s %s ms" % (
            pool, " ".join("%+d" % d for d in sorted(early[pool]))))
    print("bill total %.6f, store rows %.6f, gpubroker cost %.6f; gap %.6f,"
          " bound %.6f" % (bill["total"], tot_s, ours, bill["total"] - ours,
                           bound))
    billed = sum(b["cost"] for b in bill["instances"])
    # cloudsim rounds each instance's cost to 6 decimals
    if abs(bill["total"] - billed) > 5e-7 * len(bill["instances"]) + 1e-9:
        bad.append("cloudsim's bill total %.6f is not the sum of its "
                   "instances %.6f" % (bill["total"], billed))
    if abs(ours - tot_s) > 1e-6:
        bad.append("gpubroker's cost total %.6f is not the sum of its rows "
                   "%.6f" % (ours, tot_s))
    if abs(bill["total"] - ours) > bound + 1e-6:
        bad.append("the totals differ by %.6f, more than the per-instance "
                   "allowances add up to (%.6f)" % (bill["total"] - ours, bound))
    for x in bad[:10]:
        print("BAD " + x)
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 6 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4], argv[5])
    if len(argv) >= 3 and argv[1] == "inflight":
        return inflight(argv[2])
    if len(argv) >= 6 and argv[1] == "costdiff":
        return costdiff(argv[2], argv[3], int(argv[4]), int(argv[5]))
    if len(argv) >= 4 and argv[1] == "costdiff":
        return costdiff(argv[2], argv[3])
    if len(argv) >= 8 and argv[1] == "endcheck":
        return endcheck(argv[2], argv[3], int(argv[4]), int(argv[5]),
                        set(p for p in argv[6].split(",") if p),
                        float(argv[7]))
    if len(argv) >= 5 and argv[1] == "killopen":
        return killopen(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) >= 5 and argv[1] == "creates":
        return creates(argv[2], argv[3], argv[4])
    if len(argv) >= 5 and argv[1] == "summary":
        return summary(argv[2], argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
