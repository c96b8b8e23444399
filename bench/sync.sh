#!/usr/bin/env bash
# Benchmark of `remodel sync` on the rideshare example: TRIPS trips backfilled inside the slot's
# snapshot, then `sync --follow` while pgbench commits RATE transactions/s for SECS seconds (each:
# a trip moved to another day and city, which moves its rows in three tables, and a driver's
# rating). Every 0.2 s the lag is sampled from the run folder's sync.json (now minus the commit
# time of the last transaction Cassandra acknowledged). Prints the writer's commit rate, the
# transactions/s applied while it ran, and the lag p50/p99.
# Exits 1 when a target is missed: applied/s >= 0.95 x the commit rate (sync keeps up) and lag
# p99 <= 5 s.
#
# Needs: the databases of scripts/db running, psql, pgbench (Debian's postgresql), python3.
# Settings: TRIPS (10000), RATE (500), SECS (20), REMODEL_BIN (default target/release/remodel,
# built when missing), BENCH_DIR (/tmp/remodel-bench-sync).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-sync}"
TRIPS="${TRIPS:-10000}"
RATE="${RATE:-500}"
SECS="${SECS:-20}"
BIN="${REMODEL_BIN:-$ROOT/target/release/remodel}"
KS=bench_sync
SLOT="bench_sync_$$"
PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)"
[[ -x "$PGBENCH" ]] || { echo "bench: pgbench missing (apt-get install postgresql)" >&2; exit 1; }
if [[ ! -x "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -q -p remodel --bin remodel)
fi
eval "$("$ROOT/scripts/db" env)"
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$KS"
rm -rf "$DIR"; mkdir -p "$DIR"
finish() {
  [[ -n "${SYNC_PID:-}" ]] && kill "$SYNC_PID" 2>/dev/null && wait "$SYNC_PID" 2>/dev/null || true
  "$BIN" sync --finish --source "$PG_URL" --run-dir "$DIR/run" >/dev/null 2>&1 || true
}
trap finish EXIT

psql "$REMODEL_PG_URL" -qc "DROP SCHEMA IF EXISTS $KS CASCADE; CREATE SCHEMA $KS" 2>/dev/null
"$BIN" example-data rideshare --source "$PG_URL" --trips "$TRIPS" >/dev/null
psql "$PG_URL" -qc "ALTER TABLE trips REPLICA IDENTITY FULL"
"$BIN" plan "$ROOT/examples/rideshare" --keyspace "$KS" --out "$DIR/plan" >/dev/null 2>&1
echo "== backfill inside the slot's snapshot ($TRIPS trips)"
"$BIN" sync --plan "$DIR/plan/plan.json" --source "$PG_URL" --target "$REMODEL_CQL_URL" \
  --run-dir "$DIR/run" --slot "$SLOT" --create-schema --progress none 2>/dev/null | head -1

cat > "$DIR/writer.sql" <<SQL
\set i random(1, $TRIPS)
BEGIN;
UPDATE trips SET started_at = started_at + interval '1 minute', city = (ARRAY['nyc','sf','london','paris'])[1 + :i % 4] WHERE trip_id = md5('trip-' || :i)::uuid;
UPDATE drivers SET rating = round((3 + random() * 2)::numeric, 2) WHERE driver_id = 'drv_' || (1 + :i % 50);
COMMIT;
SQL

"$BIN" sync --plan "$DIR/plan/plan.json" --source "$PG_URL" --target "$REMODEL_CQL_URL" \
  --run-dir "$DIR/run" --slot "$SLOT" --follow --progress none 2>"$DIR/sync.log" &
SYNC_PID=$!
sleep 2
before=$(python3 -c "import json;print(json.load(open('$DIR/run/sync.json'))['transactions'])")
echo "== pgbench: $RATE commits/s for $SECS s while sync follows"
python3 - "$DIR/run/sync.json" "$SECS" > "$DIR/lag.txt" <<'PY' &
import json, sys, time
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s = json.load(open(sys.argv[1]))
        if s.get("last_timestamp"):
            print(max(0.0, time.time() - s["last_timestamp"] / 1e6))
    except (OSError, ValueError):
        pass
    time.sleep(0.2)
PY
LAG_PID=$!
start=$(date +%s.%N)
PGOPTIONS="-c search_path=$KS" "$PGBENCH" -n -c 4 -j 2 -R "$RATE" -T "$SECS" -f "$DIR/writer.sql" \
  "$REMODEL_PG_URL" > "$DIR/pgbench.txt" 2>&1
wait "$LAG_PID"
# Let sync apply the tail, then count what it applied in the window.
sleep 3
after=$(python3 -c "import json;print(json.load(open('$DIR/run/sync.json'))['transactions'])")
end=$(date +%s.%N)
tps=$(grep -oP 'tps = \K[0-9.]+' "$DIR/pgbench.txt" | head -1)
committed=$(grep -oP 'number of transactions actually processed: \K[0-9]+' "$DIR/pgbench.txt")
python3 - "$tps" "$committed" "$before" "$after" "$start" "$end" "$DIR/lag.txt" <<'PY'
import sys
tps, committed, before, after, start, end = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
lags = sorted(float(l) for l in open(sys.argv[7]) if l.strip())
applied = after - before
rate = applied / (end - start)
p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
print(f"writer: {committed} transactions, {tps:.0f} commits/s")
print(f"sync: {applied} transactions applied in {end - start:.1f} s ({rate:.0f}/s over the window incl. 3 s of tail)")
print(f"lag: p50 {p(0.5):.2f} s, p99 {p(0.99):.2f} s ({len(lags)} samples)")
ok = applied >= 0.95 * committed and p(0.99) <= 5.0
print("targets: applied >= 0.95 x committed, lag p99 <= 5 s:", "met" if ok else "MISSED")
sys.exit(0 if ok else 1)
PY
