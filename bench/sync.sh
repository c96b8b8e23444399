#!/usr/bin/env bash
# Benchmark of `remodel sync` on the rideshare example: TRIPS trips backfilled inside the slot's
# snapshot, then `sync --follow` while pgbench commits RATE transactions/s for SECS seconds (each:
# a trip moved to another day and city, which moves its rows in three tables, and a driver's
# rating: 2 row changes, 4 target rows written and 2 deleted). Every 0.5 s it samples the lag from
# the run folder's sync.json (now minus the commit time of the last transaction Cassandra
# acknowledged) and the sync process's resident memory (VmRSS).
# Prints the writer's commit rate; the transactions and row changes applied per second while it
# ran; the lag p50/p99; the peak RSS, and the peak of the first and of the last quarter of the run.
# Exits 1 when a target is missed: applied >= 0.95 x committed within 5 s of the writer's end
# (sync keeps up), lag p99 <= 5 s, and RSS flat (the last quarter's peak <= 1.25 x the first
# quarter's peak + 16 MiB).
#
# With NODE_DOWN=N:AT:FOR (a cluster of `scripts/db up cluster` as TARGET), node N of the cluster
# is stopped AT seconds into the writer's run (`scripts/db stop-node N`, with KILL=1 `--kill`) and
# started again FOR seconds later; the lag is then also given before, during and after the outage,
# with the catch-up time (from the node's start until the lag is back under 1 s and stays there
# for 5 s), and the targets are: applied >= 0.95 x committed, and a catch-up.
#
# Needs: the databases of scripts/db running, psql, pgbench (Debian's postgresql), python3.
# Settings: TRIPS (100000), RATE (500), SECS (600: the issue's 10 minutes), REMODEL_BIN (default
# target/release/remodel, built when missing), BENCH_DIR (/tmp/remodel-bench-sync), TARGET
# (default scripts/db's node), REPLICATION (`remodel plan --replication`, default 1), NODE_DOWN,
# KILL.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-sync}"
TRIPS="${TRIPS:-100000}"
RATE="${RATE:-500}"
SECS="${SECS:-600}"
BIN="${REMODEL_BIN:-$ROOT/target/release/remodel}"
KS=bench_sync
SLOT="bench_sync_$$"
NODE_DOWN="${NODE_DOWN:-}"
PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)"
[[ -x "$PGBENCH" ]] || { echo "bench: pgbench missing (apt-get install postgresql)" >&2; exit 1; }
if [[ ! -x "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -q -p remodel --bin remodel)
fi
eval "$("$ROOT/scripts/db" env)"
TARGET="${TARGET:-$REMODEL_CQL_URL}"
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$KS"
rm -rf "$DIR"; mkdir -p "$DIR"
finish() {
  # Cleanup only (the script's exit status stays the verdict's): the slot must not outlive the
  # bench, whatever happened.
  if [[ -n "${SYNC_PID:-}" ]]; then kill "$SYNC_PID" 2>/dev/null; wait "$SYNC_PID" 2>/dev/null || :; fi
  "$BIN" sync --finish --source "$PG_URL" --run-dir "$DIR/run" >/dev/null 2>&1 || true
}
trap finish EXIT

psql "$REMODEL_PG_URL" -qc "DROP SCHEMA IF EXISTS $KS CASCADE; CREATE SCHEMA $KS" 2>/dev/null
"$BIN" example-data rideshare --source "$PG_URL" --trips "$TRIPS" >/dev/null
psql "$PG_URL" -qc "ALTER TABLE trips REPLICA IDENTITY FULL"
"$BIN" plan "$ROOT/examples/rideshare" --keyspace "$KS" --replication "${REPLICATION:-1}" \
  --out "$DIR/plan" >/dev/null 2>&1
echo "== backfill inside the slot's snapshot ($TRIPS trips)"
bf_start=$(date +%s.%N)
"$BIN" sync --plan "$DIR/plan/plan.json" --source "$PG_URL" --target "$TARGET" \
  --run-dir "$DIR/run" --slot "$SLOT" --create-schema --progress none > "$DIR/first.txt" 2>/dev/null
head -1 "$DIR/first.txt"
echo "backfill and first catch-up: $(python3 -c "print(f'{$(date +%s.%N) - $bf_start:.1f}')") s"

cat > "$DIR/writer.sql" <<SQL
\set i random(1, $TRIPS)
BEGIN;
UPDATE trips SET started_at = started_at + interval '1 minute', city = (ARRAY['nyc','sf','london','paris'])[1 + :i % 4] WHERE trip_id = md5('trip-' || :i)::uuid;
UPDATE drivers SET rating = round((3 + random() * 2)::numeric, 2) WHERE driver_id = 'drv_' || (1 + :i % ($TRIPS / 200));
COMMIT;
SQL

"$BIN" sync --plan "$DIR/plan/plan.json" --source "$PG_URL" --target "$TARGET" \
  --run-dir "$DIR/run" --slot "$SLOT" --follow --progress none 2>"$DIR/sync.log" &
SYNC_PID=$!
sleep 2
read -r before_tx before_ch < <(python3 -c "import json;s=json.load(open('$DIR/run/sync.json'));print(s['transactions'], s['changes'])")
echo "== pgbench: $RATE commits/s for $SECS s while sync follows"
python3 - "$DIR/run/sync.json" "$SECS" "$SYNC_PID" > "$DIR/samples.txt" <<'PY' &
import json, sys, time
end = time.time() + float(sys.argv[2])
start = time.time()
while time.time() < end:
    lag = rss = "-"
    try:
        s = json.load(open(sys.argv[1]))
        if s.get("last_timestamp"):
            lag = max(0.0, time.time() - s["last_timestamp"] / 1e6)
    except (OSError, ValueError):
        pass
    try:
        for line in open(f"/proc/{sys.argv[3]}/status"):
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    except OSError:
        pass
    print(f"{time.time() - start:.1f} {lag} {rss} {time.time():.3f}", flush=True)
    time.sleep(0.5)
PY
SAMPLER_PID=$!
start=$(date +%s.%N)
if [[ -n "$NODE_DOWN" ]]; then
  IFS=: read -r down_node down_at down_for <<<"$NODE_DOWN"
  (
    sleep "$down_at"
    printf '%s ' "$(date +%s.%N)" >"$DIR/outage.txt"
    "$ROOT/scripts/db" stop-node "$down_node" ${KILL:+--kill} >"$DIR/outage.log" 2>&1
    sleep "$down_for"
    printf '%s ' "$(date +%s.%N)" >>"$DIR/outage.txt"
    "$ROOT/scripts/db" start-node "$down_node" >>"$DIR/outage.log" 2>&1
    printf '%s\n' "$(date +%s.%N)" >>"$DIR/outage.txt"
  ) &
  OUTAGE_PID=$!
fi
PGOPTIONS="-c search_path=$KS" "$PGBENCH" -n -c 4 -j 2 -R "$RATE" -T "$SECS" -f "$DIR/writer.sql" \
  "$REMODEL_PG_URL" > "$DIR/pgbench.txt" 2>&1
wait "$SAMPLER_PID"
if [[ -n "${OUTAGE_PID:-}" ]]; then wait "$OUTAGE_PID" || { cat "$DIR/outage.log" >&2; exit 1; }; fi
# Let sync apply the tail, then count what it applied in the window.
sleep 5
read -r after_tx after_ch < <(python3 -c "import json;s=json.load(open('$DIR/run/sync.json'));print(s['transactions'], s['changes'])")
end=$(date +%s.%N)
kill -0 "$SYNC_PID" 2>/dev/null || { echo "bench: sync died: $(tail -3 "$DIR/sync.log")" >&2; exit 1; }
tps=$(grep -oP 'tps = \K[0-9.]+' "$DIR/pgbench.txt" | head -1)
committed=$(grep -oP 'number of transactions actually processed: \K[0-9]+' "$DIR/pgbench.txt")
python3 - "$tps" "$committed" "$before_tx" "$after_tx" "$before_ch" "$after_ch" "$start" "$end" "$SECS" "$DIR/samples.txt" "$DIR/outage.txt" <<'PY'
import os, sys
tps, committed = float(sys.argv[1]), int(sys.argv[2])
before_tx, after_tx, before_ch, after_ch = map(int, sys.argv[3:7])
start, end, secs = float(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9])
samples = [l.split() for l in open(sys.argv[10]) if len(l.split()) == 4]
lags = sorted(float(s[1]) for s in samples if s[1] != "-")
rss = [(float(s[0]), int(s[2])) for s in samples if s[2] != "-"]
applied, changes = after_tx - before_tx, after_ch - before_ch
p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("inf")
window = end - start
print(f"writer: {committed} transactions, {tps:.0f} commits/s ({2 * committed} row changes)")
print(f"sync: {applied} transactions, {changes} row changes applied in {window:.1f} s: "
      f"{applied / secs:.0f} transactions/s, {changes / secs:.0f} row changes/s over the writer's {secs:.0f} s")
print(f"lag: p50 {p(0.5):.2f} s, p99 {p(0.99):.2f} s, max {lags[-1] if lags else float('nan'):.2f} s ({len(lags)} samples)")
q = secs / 4
first = max((r for t, r in rss if t <= q), default=0)
last = max((r for t, r in rss if t >= secs - q), default=0)
peak = max((r for _, r in rss), default=0)
print(f"RSS: peak {peak / 1024:.1f} MiB; first quarter peak {first / 1024:.1f} MiB, last quarter peak {last / 1024:.1f} MiB")
checks = {
    "applied >= 0.95 x committed": applied >= 0.95 * committed,
    "lag p99 <= 5 s": p(0.99) <= 5.0,
    "RSS flat (last quarter <= 1.25 x first + 16 MiB)": 0 < last <= 1.25 * first + 16 * 1024,
}
if os.path.exists(sys.argv[11]):
    # A node was down: the lag before, during and after, and how long the catch-up took.
    down, started, up = map(float, open(sys.argv[11]).read().split())
    timed = [(float(s[3]), float(s[1])) for s in samples if s[1] != "-"]
    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")
    for name, lo, hi in [("before the outage", 0, down), ("node down", down, up),
                         ("after the node's start", up, float("inf"))]:
        xs = [l for t, l in timed if lo <= t < hi]
        print(f"lag {name}: p50 {pct(xs, 0.5):.2f} s, p99 {pct(xs, 0.99):.2f} s, max {max(xs, default=float('nan')):.2f} s ({len(xs)} samples)")
    caught = None
    for i, (t, l) in enumerate(timed):
        if t >= up and all(l2 < 1.0 for t2, l2 in timed[i:] if t2 <= t + 5):
            caught = t - up
            break
    print(f"node down {started - down:.1f} s (stopped, then started again: {up - started:.1f} s to answer CQL); "
          f"caught up (lag under 1 s for 5 s) {'%.1f s after its start' % caught if caught is not None else 'never'}")
    checks = {
        "applied >= 0.95 x committed": applied >= 0.95 * committed,
        "caught up after the outage": caught is not None,
    }
for name, ok in checks.items():
    print(f"target {name}: {'met' if ok else 'MISSED'}")
sys.exit(0 if all(checks.values()) else 1)
PY
