#!/usr/bin/env bash
# Benchmark of `remodel backfill` on the rideshare example: TRIPS generated trips (default 1M)
# fill the plan's three trip tables and drivers_by_id (3 x TRIPS + TRIPS/200 rows), side by side:
#
#   (a) remodel backfill (release build) with its default settings (adaptive concurrency), wall
#       time and peak RSS (GNU time);
#   (b) the write ceiling: crates/backfill/examples/ceiling_writer.rs writes the same rows,
#       pre-built in memory, with the same driver, one prepared INSERT per row, at each of
#       LEVELS concurrencies; the best counts;
#   (c) cqlsh COPY FROM (PyPI cqlsh, installed into a venv in $DIR) of CSV files of the same rows;
#   (d) the read ceiling: psql \copy of each table's source_sql to /dev/null;
#
# (a) is timed from its first write on, as (b) is (both after their connections and the tables are
# made; the whole run's time is printed too). (a) and (b) are measured on an equally warm node: a first backfill warms it up (JIT, memtables,
# compaction) and is not counted, then ROUNDS rounds (default 2) run both, in turn first (b then
# a, a then b, …), and the best of each counts. Then (a) again at TRIPS_BIG trips (default 3M) to
# show that its memory does not grow with the data. Prints rows/s of each, the ratios a/b, a/d, a/c, and the RSS of remodel and Cassandra.
# Exits 1 when a target is missed: a / min(b, d) >= 0.8, a / c >= 3 (when (c) ran), and the peak
# RSS at TRIPS_BIG at most 1.5 times the one at TRIPS (when that run ran).
#
# Needs: the databases of scripts/db running (scripts/db up), psql, python3, GNU time.
# Settings: TRIPS, TRIPS_BIG (0 skips the second run), LEVELS (64,128,256,512), ROUNDS (2), SKIP_CQLSH=1,
# BENCH_DIR (default /tmp/remodel-bench-backfill), TARGET (host:port, default scripts/db's node) and
# CASS_PID_FILE (its pid file).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-backfill}"
TRIPS="${TRIPS:-1000000}"
TRIPS_BIG="${TRIPS_BIG:-3000000}"
LEVELS="${LEVELS:-64,128,256,512}"
ROUNDS="${ROUNDS:-2}"
KS=bench_backfill
mkdir -p "$DIR"

for tool in psql python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 1; }
done
eval "$("$ROOT/scripts/db" env)"
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$KS"
# TARGET (host:port) measures another node than scripts/db's (a node of its own, so that a shared
# one is left alone), CASS_PID_FILE its pid file for the memory figures.
NODE="${TARGET:-$REMODEL_CQL_URL}"
HOST="${NODE%:*}"
PORT="${NODE##*:}"

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p remodel --bin remodel && \
  cargo build --release -q -p remodel-backfill --example ceiling_writer)
BIN="$ROOT/target/release/remodel"
CEILING="$ROOT/target/release/examples/ceiling_writer"

CQLSH="$DIR/venv/bin/cqlsh"
if [ -z "${SKIP_CQLSH:-}" ] && [ ! -x "$CQLSH" ]; then
  echo "== install cqlsh (PyPI) into $DIR/venv"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install -q cqlsh
fi

# The Cassandra JVM of scripts/db, for its memory.
cass_pid() {
  local f
  for f in "${CASS_PID_FILE:-}" "${REMODEL_DB_DIR:-}/cassandra/cassandra.pid" "$ROOT/.remodel-db/cassandra/cassandra.pid" \
           "$(cd "$ROOT" && git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../.remodel-db/cassandra/cassandra.pid"; do
    [ -f "$f" ] && { cat "$f"; return; }
  done
}
cass_rss() {
  local pid; pid=$(cass_pid)
  [ -n "$pid" ] && awk '/^VmRSS:/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || echo "?"
}

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
rate() { echo "scale=0; $1 / $2" | bc -l; }

cql() { "$CQLSH" "$HOST" "$PORT" -e "$1" >/dev/null; }
cql_drop() {
  if [ -x "$CQLSH" ]; then cql "DROP KEYSPACE IF EXISTS $KS"; fi
}

# load N: the example's rows and a plan for keyspace $KS.
load() {
  psql -q "$REMODEL_PG_URL" -c "CREATE SCHEMA IF NOT EXISTS $KS"
  "$BIN" example-data rideshare --source "$PG_URL" --trips "$1" --replace
  "$BIN" plan examples/rideshare --keyspace "$KS" --out "$DIR/plan" >/dev/null
}

# tables: name <TAB> column list <TAB> source_sql <TAB> CSV select, one line a table.
tables() {
  python3 - "$DIR/plan/plan.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
for t in plan["design"]["tables"]:
    cols = [c["name"] for c in t["columns"]]
    csv = []
    for c in t["columns"]:
        q = '"%s"' % c["name"]
        if c["type"] == "timestamp":
            csv.append("to_char(s.%s AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+0000'" % q)
        else:
            csv.append("s.%s" % q)
    print("\t".join([t["name"], ",".join(cols), t["source_sql"],
                     "SELECT %s FROM (%s) s" % (", ".join(csv), t["source_sql"])]))
PY
}

# run_a NAME: remodel backfill into a fresh keyspace; sets A_SECS, A_ROWS, A_RSS_MB.
run_a() {
  cql_drop
  rm -rf "$DIR/run-$1"
  (cd "$ROOT" && /usr/bin/time -v -o "$DIR/time.$1" "$BIN" backfill --plan "$DIR/plan/plan.json" \
    --source "$PG_URL" --target "$NODE" --create-schema --run-dir "$DIR/run-$1" --progress lines \
    > "$DIR/out.$1" 2> "$DIR/err.$1") || { tail -n 20 "$DIR/err.$1"; exit 1; }
  cat "$DIR/out.$1"
  # The ceiling's clock starts with its session connected and its tables made: so does this one,
  # at the attempt's first line of backfill.log (after --create-schema, the connections and the
  # ranges' planning), so the two compare the writes alone. The whole run's time is shown too.
  A_SECS=$(python3 - "$DIR/run-$1" <<'PY'
import json, re, sys
elapsed = json.load(open(sys.argv[1] + "/summary.json"))["elapsed_seconds"]
setup = 0.0
for line in open(sys.argv[1] + "/backfill.log"):
    m = re.match(r"\[\s*([0-9.]+)s\] attempt ", line)
    if m:
        setup = float(m.group(1))
        break
print(f"{elapsed - setup:.3f}")
print(f"   (a) {elapsed:.1f} s in all, {setup:.1f} s of it before the writes (schema, connections, ranges)", file=sys.stderr)
PY
)
  A_ROWS=$(python3 -c "import json; print(sum(t['rows_written'] for t in json.load(open('$DIR/run-$1/summary.json'))['tables']))")
  A_RSS_MB=$(awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$DIR/time.$1")
}

echo "== load $TRIPS trips"
load "$TRIPS"
CASS_BEFORE=$(cass_rss)

echo "== (d) read ceiling: psql \\copy (source_sql) TO /dev/null"
D_ROWS=0; D_SECS=0
while IFS=$'\t' read -r name cols sql csv; do
  t0=$(now)
  n=$(psql -X -q "$PG_URL" -c "\\copy ($sql) TO '/dev/null'" | awk '{print $2}')
  t1=$(now)
  n=${n:-$(psql -X -At "$PG_URL" -c "SELECT count(*) FROM ($sql) s")}
  printf '   %-22s %10s rows in %6.2f s\n' "$name" "$n" "$(secs "$t0" "$t1")"
  D_ROWS=$((D_ROWS + n)); D_SECS=$(echo "$D_SECS + $(secs "$t0" "$t1")" | bc -l)
done < <(tables)
D_RATE=$(rate "$D_ROWS" "$D_SECS")

echo "== warm-up: remodel backfill, $TRIPS trips (not counted)"
run_a warmup

A_RATE=0; B_RATE=0
measure_a() {
  echo "== (a) remodel backfill, $TRIPS trips (round $1)"
  run_a "small-$1"
  local r; r=$(rate "$A_ROWS" "$A_SECS")
  echo "   (a) round $1: $r rows/s, $(python3 -c "import json; c=json.load(open('$DIR/run-small-$1/summary.json'))['concurrency']; print(f\"{c['min']} to {c['max']} in flight, {c['current']} at the end\")")"
  if (( r > A_RATE )); then A_RATE=$r; A_RSS_SMALL=$A_RSS_MB; fi
}
measure_b() {
  echo "== (b) write ceiling: pre-built rows, one INSERT each, concurrency $LEVELS (round $1)"
  "$CEILING" "$DIR/plan/plan.json" "$PG_URL" "$NODE" "$LEVELS" | tee "$DIR/out.ceiling-$1"
  local r; r=$(awk '/^ceiling best:/ { printf "%.0f", $3 }' "$DIR/out.ceiling-$1")
  if (( r > B_RATE )); then B_RATE=$r; fi
}
for ((round = 1; round <= ROUNDS; round++)); do
  if (( round % 2 == 1 )); then measure_b "$round"; measure_a "$round"; else measure_a "$round"; measure_b "$round"; fi
done

C_RATE=""
if [ -z "${SKIP_CQLSH:-}" ]; then
  echo "== (c) cqlsh COPY FROM of CSV files of the same rows"
  C_ROWS=0; C_SECS=0
  while IFS=$'\t' read -r name cols sql csv; do
    psql -X -q "$PG_URL" -c "\\copy ($csv) TO '$DIR/$name.csv' WITH CSV"
    cql "TRUNCATE $KS.$name"
    n=$(wc -l < "$DIR/$name.csv")
    t0=$(now)
    "$CQLSH" "$HOST" "$PORT" --request-timeout 60 \
      -e "COPY $KS.$name ($cols) FROM '$DIR/$name.csv' WITH HEADER = false" > "$DIR/cqlsh.$name" 2>&1
    t1=$(now)
    printf '   %-22s %10s rows in %6.2f s\n' "$name" "$n" "$(secs "$t0" "$t1")"
    C_ROWS=$((C_ROWS + n)); C_SECS=$(echo "$C_SECS + $(secs "$t0" "$t1")" | bc -l)
    rm -f "$DIR/$name.csv"
  done < <(tables)
  C_RATE=$(rate "$C_ROWS" "$C_SECS")
fi

A_RSS_BIG=""
if [ "$TRIPS_BIG" != 0 ]; then
  echo "== (a) again at $TRIPS_BIG trips (memory must not grow with the data)"
  load "$TRIPS_BIG"
  run_a big
  A_RSS_BIG=$A_RSS_MB
  A_RATE_BIG=$(rate "$A_ROWS" "$A_SECS")
fi

ratio() {
  if [ -n "$2" ] && [ "$2" != 0 ]; then echo "scale=2; $1 / $2" | bc -l; else echo "-"; fi
}
# at_least RATIO BOUND: true when RATIO is a number >= BOUND ("-": no ratio, a miss).
at_least() { [ "$1" != "-" ] && [ "$(echo "$1 >= $2" | bc -l)" = 1 ]; }
MISSED=()
MIN_BD=$(( B_RATE < D_RATE ? B_RATE : D_RATE ))
echo
echo "== results ($TRIPS trips; 2 shared cores; Cassandra RSS $CASS_BEFORE before, $(cass_rss) after)"
printf '(a) remodel backfill      %8s rows/s   peak RSS %s MiB (best of %s rounds)\n' "$A_RATE" "$A_RSS_SMALL" "$ROUNDS"
printf '(b) write ceiling         %8s rows/s (best of %s rounds)\n' "$B_RATE" "$ROUNDS"
printf '(c) cqlsh COPY FROM       %8s rows/s\n' "${C_RATE:--}"
printf '(d) psql \\copy read       %8s rows/s\n' "$D_RATE"
AB=$(ratio "$A_RATE" "$MIN_BD")
AC=$(ratio "$A_RATE" "$C_RATE")
printf 'a / min(b, d) = %s (target >= 0.8)   a / c = %s (target >= 3)\n' "$AB" "$AC"
at_least "$AB" 0.8 || MISSED+=("a / min(b, d) = $AB, under 0.8")
if [ -n "$C_RATE" ]; then at_least "$AC" 3 || MISSED+=("a / c = $AC, under 3"); fi
if [ -n "$A_RSS_BIG" ]; then
  printf '(a) at %s trips: %s rows/s, peak RSS %s MiB (vs %s MiB at %s trips)\n' \
    "$TRIPS_BIG" "$A_RATE_BIG" "$A_RSS_BIG" "$A_RSS_SMALL" "$TRIPS"
  at_least "$(ratio "$((A_RSS_SMALL * 3))" "$((A_RSS_BIG * 2))")" 1 ||
    MISSED+=("peak RSS grew with the data: $A_RSS_BIG MiB at $TRIPS_BIG trips vs $A_RSS_SMALL MiB at $TRIPS")
fi
if [ "${#MISSED[@]}" -gt 0 ]; then
  printf 'bench/backfill.sh: target missed: %s\n' "${MISSED[@]}" >&2
  exit 1
fi
echo "bench/backfill.sh: every target met"
