#!/usr/bin/env bash
# Benchmark of `remodel workload` against pgBadger on a large Postgres stderr log.
#
# 1. builds the release binary;
# 2. generates a >= 1 GB log in $BENCH_DIR (default /tmp/remodel-bench, never the repo) by
#    repeating the RDS-format corpus log (fixtures/corpora/pgbadger-logs/rds.log.bz2, pgbench plus
#    monitoring queries) with every number inside a statement replaced by a random one;
# 3. times `remodel workload` on the whole file and on a slice, and pgBadger (one process, the
#    log's --prefix) on the same slice (pgBadger reads ~2 MB/s: the whole file would take ~10 min;
#    set PGBADGER_FULL=1 to run it on the whole file anyway);
# 4. prints seconds, MB/s, the throughput ratio and peak RSS (/usr/bin/time -v).
#
# Needs: cargo, perl, bzip2, pgbadger (apt-get install -y pgbadger), GNU time (/usr/bin/time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench}"
TARGET_MB="${TARGET_MB:-1024}"
SLICE_MB="${SLICE_MB:-100}"
PREFIX='%t:%r:%u@%d:[%p]:'
mkdir -p "$DIR"

for tool in perl bzcat pgbadger /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 1; }
done

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p remodel)
BIN="$ROOT/target/release/remodel"

LOG="$DIR/big.log"
SLICE="$DIR/slice.log"
if [ ! -s "$LOG" ] || [ "$(du -m "$LOG" | cut -f1)" -lt "$TARGET_MB" ]; then
  echo "== generate $LOG (>= $TARGET_MB MB, random literals)"
  bzcat "$ROOT/fixtures/corpora/pgbadger-logs/rds.log.bz2" > "$DIR/base.log"
  base_mb=$(du -m "$DIR/base.log" | cut -f1)
  copies=$(( TARGET_MB / base_mb + 1 ))
  for _ in $(seq "$copies"); do cat "$DIR/base.log"; done |
    perl -pe 'BEGIN { srand(42) } if (/ statement: .*pgbench_/) { my ($h, $s) = split(/ statement: /, $_, 2); $s =~ s/(?<![\w\$.])\d+/int(rand(1000000))/ge; $_ = "$h statement: $s" }' > "$LOG"
  rm -f "$DIR/base.log"
fi
head -c "$((SLICE_MB * 1024 * 1024))" "$LOG" | sed '$d' > "$SLICE"

mb() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }

# run NAME FILE CMD... : times CMD with GNU time, sets SECS and RSS_MB
run() {
  local name=$1 file=$2; shift 2
  /usr/bin/time -v -o "$DIR/time.$name" "$@" > "$DIR/out.$name" 2> "$DIR/err.$name" || true
  local wall
  wall=$(grep 'Elapsed (wall clock)' "$DIR/time.$name" | awk '{print $NF}')
  SECS=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  RSS_MB=$(( $(grep 'Maximum resident' "$DIR/time.$name" | awk '{print $NF}') / 1024 ))
  # CPU time (user + system): the machine may be shared, so wall time alone is noisy.
  CPU=$(awk -F': ' '/User time|System time/ { t += $2 } END { print t }' "$DIR/time.$name")
  printf '%-28s %8.1f MB  wall %8.2f s %9.1f MB/s  cpu %8.2f s %9.1f MB/s  peak RSS %5d MB\n' \
    "$name" "$(mb "$file")" "$SECS" "$(echo "scale=1; $(mb "$file") / $SECS" | bc)" \
    "$CPU" "$(echo "scale=1; $(mb "$file") / $CPU" | bc)" "$RSS_MB"
}

echo "== run"
run "remodel (whole file)" "$LOG" "$BIN" workload "$LOG"
R_BIG=$SECS; R_BIG_RSS=$RSS_MB; R_BIG_CPU=$CPU
run "remodel (slice)" "$SLICE" "$BIN" workload "$SLICE"
R_SLICE=$SECS; R_SLICE_RSS=$RSS_MB
if [ "${PGBADGER_FULL:-0}" = 1 ]; then
  run "pgbadger -j 1 (whole file)" "$LOG" pgbadger -q -j 1 -f stderr --prefix "$PREFIX" -o "$DIR/pgbadger.html" "$LOG"
  P_FILE=$LOG
else
  run "pgbadger -j 1 (slice)" "$SLICE" pgbadger -q -j 1 -f stderr --prefix "$PREFIX" -o "$DIR/pgbadger.html" "$SLICE"
  P_FILE=$SLICE
fi
P_SECS=$SECS; P_CPU=$CPU

R_MBS=$(echo "scale=2; $(mb "$LOG") / $R_BIG" | bc)
P_MBS=$(echo "scale=2; $(mb "$P_FILE") / $P_SECS" | bc)
echo
echo "remodel: $R_MBS MB/s on $(mb "$LOG") MB; pgbadger: $P_MBS MB/s on $(mb "$P_FILE") MB"
echo "throughput ratio remodel/pgbadger (wall): $(echo "scale=1; $R_MBS / $P_MBS" | bc)x (target >= 50x)"
R_CMBS=$(echo "scale=2; $(mb "$LOG") / $R_BIG_CPU" | bc)
P_CMBS=$(echo "scale=2; $(mb "$P_FILE") / $P_CPU" | bc)
echo "throughput ratio remodel/pgbadger (cpu time): $R_CMBS / $P_CMBS MB/s = $(echo "scale=1; $R_CMBS / $P_CMBS" | bc)x"
echo "same slice: remodel $R_SLICE s vs pgbadger $P_SECS s = $(echo "scale=1; $P_SECS / $R_SLICE" | bc)x"
echo "peak RSS: $R_SLICE_RSS MB on the slice, $R_BIG_RSS MB on the whole file (target < 200 MB, independent of size)"
echo
echo "remodel's summary of the whole file:"
head -12 "$DIR/out.remodel (whole file)"
