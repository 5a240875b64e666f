#!/bin/sh
# store_faults_full.sh -- the whole store fault sweep (issue 29), on
# SQLite and then on PostgreSQL (tests/lib/pg.sh; that half is skipped,
# saying so, without a server).  Three pools of 2, 2 and 1 instances on
# cloudsim; the store is made to fail at each statement in turn
# (GB_STORE_FAULT, HACKING.md) of: apply (a spec change of one pool),
# scale up, scale down, scale to the same size (issue 29's command),
# destroy, one reconcile pass of the daemon (with its gc), gc, and the
# recovery of an open create intent at a start.  After every fault
# (tests/lib/store_faults.sh): no instance of a pool the command is not
# about was terminated; the command failed saying the state store failed,
# or it did its job; after a recovery run cloudsim's live instances are
# the journal's, id by id.  The short sweep in make test is
# tests/integration/store_faults.sh.
# Env: SF_STRIDE (1: every statement), SF_KIND (ioerr), SF_BACKENDS
# ("sqlite postgresql"), SF_SWEEPS (the sweeps to run: scale_down
# scale_up scale_same destroy apply reconcile gc recover).
. "$GB_SRC/tests/lib/integration.sh"
. "$GB_SRC/tests/lib/store_faults.sh"
. "$GB_SRC/tests/lib/pg.sh"

# ---- the recovery of an open intent at a start ----
# An open create intent of pool a: a scale up whose write of what it
# made (instances recorded, intent closed: one transaction) fails.
sf_open_intent() {
	GB_STORE_FAULT="1:UPDATE intents" gb scale a 3 >>"$T/restore.log" 2>&1 || true
}
# gc's own job never needed the intent resolved (an open intent's
# token explains its instances); a start whose recovery the fault cut
# leaves the intent open for the next start, which the check's own
# status is: then the journal has what the cloud made.  On PostgreSQL a
# lease whose release the fault cut holds the pool until it lapses
# (lease_s, 15 s), so the next start waits for that.
sf_done_recover() {
	wait_until 25 sf_all_same
}
sf_restore_recover() {
	gb serve --reconcile-once >>"$T/restore.log" 2>&1 || true
	sf_restore_scale_down
	sf_open_intent
}

# want NAME: the sweep is in SF_SWEEPS (default: all of them)
want() {
	case " ${SF_SWEEPS:-scale_down scale_up scale_same destroy apply reconcile gc recover} " in
	*" $1 "*) return 0 ;;
	*) return 1 ;;
	esac
}

sweep_all() {
	sim_start
	sf_setup
	write_spec "$T/b3.yaml" b aws A10G 3
	want scale_down && sf_sweep scale_down a scale a 1
	want scale_up && sf_sweep scale_up a scale a 3
	want scale_same && sf_sweep scale_same a scale a 2
	want destroy && sf_sweep destroy c destroy c --auto-approve
	want apply && sf_sweep apply b apply -f "$T/b3.yaml" --auto-approve
	want reconcile && sf_sweep reconcile - serve --reconcile-once
	want gc && sf_sweep gc - gc
	if want recover; then
		sf_open_intent
		sf_sweep recover a gc
	fi
	kill -TERM "$SIM_PID" 2>/dev/null || true
	wait "$SIM_PID" 2>/dev/null || true
	SIM_PID=""
}

for be in ${SF_BACKENDS:-sqlite postgresql}; do
	case $be in
	sqlite)
		echo "---- SQLite"
		export GPUBROKER_STATE="$T/sf.db"
		sweep_all
		;;
	postgresql)
		echo "---- PostgreSQL"
		if gb_pg_start "$T/pg" >"$T/pgstart.out" 2>&1; then
			:
		else
			echo "SKIP (PostgreSQL half): $(cat "$T/pgstart.out")"
			continue
		fi
		trap '_rc=$?; set +e; gb_pg_stop >/dev/null 2>&1; (exit $_rc); lib_cleanup' EXIT
		export PGPASSWORD="$GB_PG_PASSWORD"
		GPUBROKER_STATE=$(gb_pg_createdb gbsf) || fail "cannot create the database"
		export GPUBROKER_STATE
		sweep_all
		gb_pg_stop >/dev/null 2>&1
		;;
	esac
done
echo "ok: $SF_RUNS faults injected in all: $SF_FAILED commands failed saying the store failed, $SF_OK did their job anyway"
