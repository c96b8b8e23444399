#!/usr/bin/env bash
# Benchmark of `remodel workload` against pgBadger, both reading the same Postgres stderr log.
#
# 1. builds the release binary;
# 2. generates a log of about SIZE_MB (default 36) in $BENCH_DIR (default /tmp/remodel-bench, never
#    the repo) by repeating the RDS-format corpus log (fixtures/corpora/pgbadger-logs/rds.log.bz2,
#    pgbench plus monitoring queries, 18 MB) with every number inside a pgbench statement replaced
#    by a random one;
# 3. runs `remodel workload --json` and pgBadger (one process, the log's --prefix, JSON output)
#    RUNS times each (default 5), alternately, on that same file; a run that exits non-zero, or
#    writes no output, stops the benchmark with its error output (REMODEL_BIN=PATH runs that
#    binary instead of building the release one: to try the script, not to measure);
# 4. checks that both found the same statements: per kind (SELECT, INSERT, UPDATE, DELETE), the
#    statements remodel counted (its access patterns' calls plus the SELECTs it counted but does
#    not model: catalog queries, no table) against pgBadger's (`database_info`, summed over the
#    databases), and fails on a difference;
# 5. prints per tool the median over the runs of wall time, CPU time (user + system: the machine
#    may be shared) and throughput, the largest peak RSS, and the ratio of the medians;
# 6. runs remodel alone (pgBadger would take ~25 min a run) RUNS times on a log of SCALE_MB
#    (default 1024, 0 skips it) and compares its peak RSS and throughput with the runs of step 3,
#    measured in the same run: memory must not grow with the input;
# 7. exits 1 when a target is missed: remodel's median wall-time throughput at least MIN_RATIO
#    (50) times pgBadger's, and remodel's peak RSS under LIMIT_MB (200) MB in every run.
#
# Needs: cargo, perl, bzip2, jq, bc, pgbadger (apt-get install -y pgbadger jq bc), GNU time
# (/usr/bin/time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench}"
SIZE_MB="${SIZE_MB:-36}"
SCALE_MB="${SCALE_MB:-1024}"
RUNS="${RUNS:-5}"
MIN_RATIO="${MIN_RATIO:-50}"
LIMIT_MB="${LIMIT_MB:-200}"
MISSED=()
PREFIX='%t:%r:%u@%d:[%p]:'
mkdir -p "$DIR"

for tool in perl bzcat pgbadger jq bc /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 1; }
done

if [ -n "${REMODEL_BIN:-}" ]; then
  # Another build of remodel (e.g. a debug one, to try this script quickly): not a measurement.
  BIN="$REMODEL_BIN"
  echo "== remodel: $BIN (REMODEL_BIN)"
else
  echo "== build (release)"
  (cd "$ROOT" && cargo build --release -q -p remodel)
  BIN="$ROOT/target/release/remodel"
fi

# generate FILE MB: the corpus log repeated until FILE holds at least MB megabytes, numbers random.
generate() {
  local file=$1 want=$2
  if [ -s "$file" ] && [ "$(du -m "$file" | cut -f1)" -ge "$want" ]; then
    return
  fi
  echo "== generate $file (>= $want MB, random literals)"
  bzcat "$ROOT/fixtures/corpora/pgbadger-logs/rds.log.bz2" > "$DIR/base.log"
  local base copies
  base=$(du -m "$DIR/base.log" | cut -f1)
  copies=$(( (want + base - 1) / base ))
  for _ in $(seq "$copies"); do cat "$DIR/base.log"; done |
    perl -pe 'BEGIN { srand(42) } if (/ statement: .*pgbench_/) { my ($h, $s) = split(/ statement: /, $_, 2); $s =~ s/(?<![\w\$.])\d+/int(rand(1000000))/ge; $_ = "$h statement: $s" }' > "$file"
  rm -f "$DIR/base.log"
}

mb() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }

# timed NAME OUTPUT CMD...: runs CMD under GNU time (its stdout to $DIR/out.NAME); fails with its
# stderr when it fails or leaves OUTPUT empty; appends "wall cpu rss_mb" to $DIR/times.NAME.
timed() {
  local name=$1 output=$2; shift 2
  local rc=0
  rm -f "$output"
  /usr/bin/time -v -o "$DIR/time.$name" "$@" > "$DIR/out.$name" 2> "$DIR/err.$name" || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$output" ]; then
    echo "bench: $name failed (exit $rc, $output empty):" >&2
    tail -20 "$DIR/err.$name" >&2
    exit 1
  fi
  local wall cpu rss
  wall=$(grep 'Elapsed (wall clock)' "$DIR/time.$name" | awk '{print $NF}' |
    awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { print t }' "$DIR/time.$name")
  rss=$(( $(grep 'Maximum resident' "$DIR/time.$name" | awk '{print $NF}') / 1024 ))
  echo "$wall $cpu $rss" >> "$DIR/times.$name"
}

# median NAME COLUMN: the median of a column of $DIR/times.NAME (1 wall, 2 cpu); max for 3 (rss).
median() {
  if [ "$2" = 3 ]; then
    awk '{print $3}' "$DIR/times.$1" | sort -n | tail -1
  else
    awk -v c="$2" '{print $c}' "$DIR/times.$1" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
  fi
}

report() {
  local name=$1 file=$2 wall cpu rss
  wall=$(median "$name" 1); cpu=$(median "$name" 2); rss=$(median "$name" 3)
  printf '%-22s %8.1f MB  median of %d: wall %8.2f s %8.1f MB/s  cpu %8.2f s %8.1f MB/s  peak RSS %5d MB\n' \
    "$name" "$(mb "$file")" "$RUNS" "$wall" "$(echo "scale=2; $(mb "$file") / $wall" | bc)" \
    "$cpu" "$(echo "scale=2; $(mb "$file") / $cpu" | bc)" "$rss"
}

# Statements per kind as remodel counted them: the calls of its access patterns, plus the
# SELECTs it counted as utility (catalog queries, no table): `select 12345` lines, sorted.
remodel_counts() {
  jq -r '
    ([.patterns[] | {k: (.kind | ascii_upcase), n: .calls}]
     + [.utility[]? | select(.kind | test("^SELECT"; "i")) | {k: "SELECT", n: .count}])
    | group_by(.k) | map("\(.[0].k) \(map(.n) | add)") | .[]' "$1" | sort
}

# The same from pgBadger's JSON: its per-database counts of each kind, summed.
pgbadger_counts() {
  jq -r '
    [.database_info[][] | to_entries[] | select(.key | test("^(select|insert|update|delete)$"))]
    | group_by(.key) | map("\(.[0].key | ascii_upcase) \(map(.value) | add)") | .[]' "$1" | sort
}

LOG="$DIR/same.log"
generate "$LOG" "$SIZE_MB"
rm -f "$DIR"/times.*
echo "== run: $RUNS runs of each tool on $LOG ($(mb "$LOG") MB), alternately"
for i in $(seq "$RUNS"); do
  timed remodel "$DIR/out.remodel" "$BIN" workload --json "$LOG"
  timed pgbadger "$DIR/pgbadger.json" pgbadger -q -j 1 -f stderr --prefix "$PREFIX" -o "$DIR/pgbadger.json" "$LOG"
  echo "   run $i of $RUNS done"
done

echo "== same statements?"
remodel_counts "$DIR/out.remodel" > "$DIR/counts.remodel"
pgbadger_counts "$DIR/pgbadger.json" > "$DIR/counts.pgbadger"
paste "$DIR/counts.remodel" "$DIR/counts.pgbadger" | awk '{ printf "%-8s remodel %10s  pgbadger %10s\n", $1, $2, $4 }'
if ! diff "$DIR/counts.remodel" "$DIR/counts.pgbadger" > "$DIR/counts.diff"; then
  echo "bench: the two tools counted different statements:" >&2
  cat "$DIR/counts.diff" >&2
  exit 1
fi

echo
report remodel "$LOG"
report pgbadger "$LOG"
R=$(echo "scale=2; $(median pgbadger 1) / $(median remodel 1)" | bc)
RC=$(echo "scale=2; $(median pgbadger 2) / $(median remodel 2)" | bc)
echo "same input: remodel is ${R}x pgBadger's throughput by median wall time, ${RC}x by median CPU time (target >= ${MIN_RATIO}x)"
# at_least A B: true when the decimal A >= B.
at_least() { [ "$(echo "$1 >= $2" | bc)" = 1 ]; }
at_least "$R" "$MIN_RATIO" || MISSED+=("throughput ${R}x pgBadger's, under ${MIN_RATIO}x")
[ "$(median remodel 3)" -lt "$LIMIT_MB" ] || MISSED+=("remodel peak RSS $(median remodel 3) MB, not under $LIMIT_MB MB")

if [ "$SCALE_MB" -gt 0 ]; then
  BIG="$DIR/big.log"
  generate "$BIG" "$SCALE_MB"
  echo "== scale: $RUNS runs of remodel alone on $BIG ($(mb "$BIG") MB)"
  for _ in $(seq "$RUNS"); do
    timed remodel-big "$DIR/out.remodel-big" "$BIN" workload "$BIG"
  done
  report remodel-big "$BIG"
  SMALL_TPUT=$(echo "scale=4; $(mb "$LOG") / $(median remodel 1)" | bc)
  BIG_TPUT=$(echo "scale=4; $(mb "$BIG") / $(median remodel-big 1)" | bc)
  echo "against the $(mb "$LOG") MB runs above: peak RSS $(median remodel-big 3) MB vs $(median remodel 3) MB" \
    "(target < $LIMIT_MB MB, independent of size); throughput ratio $(echo "scale=2; $BIG_TPUT / $SMALL_TPUT" | bc)x"
  [ "$(median remodel-big 3)" -lt "$LIMIT_MB" ] ||
    MISSED+=("remodel peak RSS $(median remodel-big 3) MB on $(mb "$BIG") MB, not under $LIMIT_MB MB")
fi
if [ "${#MISSED[@]}" -gt 0 ]; then
  printf 'bench/workload.sh: target missed: %s\n' "${MISSED[@]}" >&2
  exit 1
fi
echo "bench/workload.sh: every target met"
