#!/usr/bin/env bash
# Benchmark of remodel on a real cluster, on this machine (issue 36):
#
#   (1) `remodel backfill` rows/s of the rideshare example (TRIPS trips: 3 x TRIPS + TRIPS/200
#       rows) on one node with one replica, then on three nodes with three replicas: the same
#       data, the same node settings (`scripts/db up cluster --nodes 1`, then `--nodes 3`, each
#       fresh, on loopback addresses from CLUSTER_IP, in folders of their own), the default
#       settings of the backfill (adaptive concurrency, the plan's LOCAL_QUORUM);
#   (2) on the three nodes, `remodel sync --follow` while pgbench commits RATE transactions/s for
#       SECS seconds, node DOWN_NODE stopped DOWN_AT seconds in and started again DOWN_FOR
#       seconds later (bench/sync.sh with NODE_DOWN): the lag p50/p99 before, during and after,
#       and the catch-up time.
#
# Prints the figures, and exits 1 when a run fails or sync misses bench/sync.sh's outage targets.
# Needs: the Postgres of scripts/db (scripts/db up pg), the Cassandra jars (scripts/db resolves
# them), psql, pgbench, python3.
# Settings: TRIPS (200000), RATE (500), SECS (180), DOWN_AT (60), DOWN_FOR (60), DOWN_NODE (2),
# KILL (set: kill -9 instead of a clean stop), CLUSTER_IP (127.0.0.5; clear of the test cluster's
# 127.0.0.2-4), REMODEL_CLUSTER_HEAP (1G), BENCH_DIR (/tmp/remodel-bench-cluster), SKIP_SYNC=1.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-cluster}"
TRIPS="${TRIPS:-200000}"
KS=bench_cluster
export REMODEL_CLUSTER_IP="${CLUSTER_IP:-127.0.0.5}"
BIN="$ROOT/target/release/remodel"
rm -rf "$DIR"
mkdir -p "$DIR"

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p remodel --bin remodel)
eval "$("$ROOT/scripts/db" env)"
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$KS"

# The cluster of this bench lives in its own scripts/db folder: stopped whatever happens.
CLUSTER_DB=""
stop_cluster() {
  if [[ -n "$CLUSTER_DB" ]]; then
    REMODEL_DB_DIR="$CLUSTER_DB" "$ROOT/scripts/db" down cluster >/dev/null || true
    CLUSTER_DB=""
  fi
}
trap stop_cluster EXIT

# up N: a fresh cluster of N nodes.
up() {
  stop_cluster
  CLUSTER_DB="$DIR/db-$1"
  REMODEL_DB_DIR="$CLUSTER_DB" "$ROOT/scripts/db" up cluster --nodes "$1" | tail -1
}

echo "== load $TRIPS trips"
psql -q "$REMODEL_PG_URL" -c "DROP SCHEMA IF EXISTS $KS CASCADE; CREATE SCHEMA $KS" 2>/dev/null
"$BIN" example-data rideshare --source "$PG_URL" --trips "$TRIPS" >/dev/null

# backfill NODES REPLICATION: the rows/s of a backfill into a fresh cluster of NODES nodes.
backfill() {
  local nodes="$1" replication="$2" run="$DIR/run-$1"
  echo "== (1) backfill on $nodes node(s), --replication $replication"
  up "$nodes"
  "$BIN" plan "$ROOT/examples/rideshare" --keyspace "$KS" --replication "$replication" \
    --out "$DIR/plan-$nodes" >/dev/null 2>&1
  "$BIN" backfill --plan "$DIR/plan-$nodes/plan.json" --source "$PG_URL" \
    --target "$REMODEL_CLUSTER_IP:9042" --create-schema --run-dir "$run" --progress none \
    >"$DIR/out-$nodes" 2>"$DIR/err-$nodes" || { tail -n 20 "$DIR/err-$nodes"; exit 1; }
  tail -n 2 "$DIR/out-$nodes"
  python3 - "$run/summary.json" "$nodes" >>"$DIR/results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rows = sum(t["rows_written"] for t in s["tables"])
c = s.get("concurrency") or {}
print(f"{sys.argv[2]}\t{rows}\t{s['elapsed_seconds']:.1f}\t{rows / s['elapsed_seconds']:.0f}\t"
      f"{c.get('min')}-{c.get('max')} (end {c.get('current')})\t{s['retries']}")
PY
}

: >"$DIR/results"
backfill 1 1
backfill 3 datacenter1=3
python3 - "$DIR/results" "$TRIPS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
print(f"\n== backfill, {sys.argv[2]} trips, the same data and node settings")
print(f"{'cluster':<22} {'rows':>9} {'seconds':>8} {'rows/s':>8}  {'in flight':<20} retries")
for n, r, secs, rate, level, retries in rows:
    name = "1 node, 1 replica" if n == "1" else f"{n} nodes, {n} replicas"
    print(f"{name:<22} {int(r):>9,} {secs:>8} {int(rate):>8,}  {level:<20} {retries}")
if len(rows) == 2:
    print(f"3 nodes RF 3 / 1 node RF 1 = {int(rows[1][3]) / int(rows[0][3]):.2f}")
PY

if [[ -n "${SKIP_SYNC:-}" ]]; then exit 0; fi
echo
echo "== (2) sync at ${RATE:-500} commits/s, node ${DOWN_NODE:-2} down ${DOWN_FOR:-60} s from ${DOWN_AT:-60} s ${KILL:+(kill -9)}"
up 3
REMODEL_DB_DIR="$CLUSTER_DB" TARGET="$REMODEL_CLUSTER_IP:9042" REPLICATION=datacenter1=3 \
  TRIPS="$TRIPS" RATE="${RATE:-500}" SECS="${SECS:-180}" BENCH_DIR="$DIR/sync" REMODEL_BIN="$BIN" \
  NODE_DOWN="${DOWN_NODE:-2}:${DOWN_AT:-60}:${DOWN_FOR:-60}" KILL="${KILL:-}" \
  "$ROOT/bench/sync.sh"
