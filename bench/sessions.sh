#!/usr/bin/env bash
# Benchmark of reading a 1 GB log with sessions (issue 23): ingest speed and memory.
#
# 1. builds two release binaries in the same run: this checkout's, and the commit before the
#    sessions landed (BASE_REV, default 003b5d3^: the log readers before they kept sessions),
#    from a temporary worktree in $BENCH_DIR sharing this checkout's target dir (so only the
#    workspace crates are built twice); REMODEL_BIN / BASE_BIN=PATH use given binaries instead
#    (to try the script, not to measure); BASE_REV=none makes the baseline this binary on the
#    log without ids (no second build: today's ingest without sessions);
# 2. generates in $BENCH_DIR (default /tmp/remodel-sessions-bench, never the repo) two stderr
#    logs of about SMALL_MB (100) and BIG_MB (1024) MB from the shape of the fixture's real log
#    (fixtures/sessions/app.log: pgbench over the extended protocol, 4 interleaved sessions,
#    `%m [%p] %c ` prefix): the log repeated, each copy with its own process ids and session
#    ids (so the sessions number ~4 per 600 KB: ~7,000 in 1 GB, near the reader's bound of
#    8,192 held at once) and its bound parameter values shifted (distinct values per copy);
# 3. runs RUNS times (default 3), alternately, on the big log: the base binary (it reads the
#    session ids in each line's prefix as any prefix text and ignores them), this binary, and
#    this binary on the same log with the process and session ids removed; then this binary on
#    the small log RUNS times;
# 4. checks that both binaries counted the same statements per kind (patterns' calls), that
#    this binary followed sessions on the log with ids and none without them;
# 5. prints per run kind the median wall and CPU time, throughput and the largest peak RSS, and
#    the ratios, all against runs of the same script on the same machine;
# 6. exits 1 when a target is missed: this binary's median wall time with sessions at most
#    SESSIONS_PCT (20) % over the base binary's on the same log (the honest baseline: the code
#    before sessions, on identical input; the same binary on the id-less log is printed beside
#    it, as it does not pay for reading the ids), and its peak RSS on the big log at most
#    RSS_PCT (25) % over its peak on the small log (memory flat in the size of the log), and
#    under LIMIT_MB (200) MB.
#
# Needs: cargo, git, perl, jq, bc, GNU time (/usr/bin/time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-sessions-bench}"
SMALL_MB="${SMALL_MB:-100}"
BIG_MB="${BIG_MB:-1024}"
RUNS="${RUNS:-3}"
SESSIONS_PCT="${SESSIONS_PCT:-20}"
RSS_PCT="${RSS_PCT:-25}"
LIMIT_MB="${LIMIT_MB:-200}"
BASE_REV="${BASE_REV:-003b5d3^}"
MISSED=()
mkdir -p "$DIR"

for tool in git perl jq bc /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 1; }
done

if [ "$BASE_REV" = none ]; then
  echo "== base: none (BASE_REV=none): the baseline is this binary on the log without ids"
  BASE=""
elif [ -n "${BASE_BIN:-}" ]; then
  echo "== base: $BASE_BIN (BASE_BIN)"
  BASE="$BASE_BIN"
else
  echo "== build the base (release): $BASE_REV, before sessions"
  rev=$(cd "$ROOT" && git rev-parse --verify "$BASE_REV^{commit}")
  src="$DIR/base-src"
  (cd "$ROOT" && git worktree remove --force "$src" 2>/dev/null || true)
  (cd "$ROOT" && git worktree add --detach "$src" "$rev" >/dev/null)
  (cd "$src" && CARGO_TARGET_DIR="$ROOT/target" cargo build --release -q -p remodel)
  cp "$ROOT/target/release/remodel" "$DIR/remodel-base"
  (cd "$ROOT" && git worktree remove --force "$src")
  BASE="$DIR/remodel-base"
fi
if [ -n "${REMODEL_BIN:-}" ]; then
  echo "== remodel: $REMODEL_BIN (REMODEL_BIN)"
  cp "$REMODEL_BIN" "$DIR/remodel-head"
else
  echo "== build this checkout (release)"
  (cd "$ROOT" && cargo build --release -q -p remodel)
  cp "$ROOT/target/release/remodel" "$DIR/remodel-head"
fi
BIN="$DIR/remodel-head"
if [ -n "$BASE" ] && cmp -s "$BASE" "$BIN"; then
  echo "bench: the base and this binary are the same file" >&2
  exit 1
fi

# generate FILE MB: the fixture's log repeated until FILE holds at least MB megabytes, each copy
# with new process ids, session ids (`%c`: start time and pid in hex) and parameter values.
generate() {
  local file=$1 want=$2
  if [ -s "$file" ] && [ "$(du -m "$file" | cut -f1)" -ge "$want" ]; then
    return
  fi
  echo "== generate $file (>= $want MB from fixtures/sessions/app.log)"
  local base copies
  base=$(stat -c %s "$ROOT/fixtures/sessions/app.log")
  copies=$(( (want * 1048576 + base - 1) / base ))
  perl -e '
    my ($path, $copies) = @ARGV;
    open(my $f, "<", $path) or die "$path: $!";
    my @lines = <$f>;
    for my $k (0 .. $copies - 1) {
      for (@lines) {
        my $l = $_;
        # "… UTC [10845] 6b0fc221.2a5d LOG": a new backend per copy (pid and session id).
        $l =~ s{ \[(\d+)\] ([0-9a-f]{8})\.[0-9a-f]+ }{
          my $pid = 100000 + $k * 8 + $1 % 8;
          sprintf(" [%d] %08x.%x ", $pid, hex($2) + $k, $pid)
        }e;
        # Bound values of ids: shifted per copy, so each copy looks up its own rows.
        $l =~ s{(\$\d+ = \x27)(\d+)\x27}{$1 . ($2 + $k * 1000) . "\x27"}ge if $l =~ /parameters: /;
        print $l;
      }
    }' "$ROOT/fixtures/sessions/app.log" "$copies" > "$file.tmp"
  mv "$file.tmp" "$file"
}

mb() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }

# timed NAME CMD...: runs CMD under GNU time (stdout to $DIR/out.NAME); fails with its stderr
# when it fails or writes nothing; appends "wall cpu rss_mb" to $DIR/times.NAME.
timed() {
  local name=$1; shift
  local rc=0
  /usr/bin/time -v -o "$DIR/time.$name" "$@" > "$DIR/out.$name" 2> "$DIR/err.$name" || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$DIR/out.$name" ]; then
    echo "bench: $name failed (exit $rc):" >&2
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

# median NAME COLUMN: the median of column 1 (wall) or 2 (cpu) of $DIR/times.NAME; the max of 3.
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
  printf '%-16s %8.1f MB  median of %d: wall %7.2f s %7.1f MB/s  cpu %7.2f s %7.1f MB/s  peak RSS %4d MB\n' \
    "$name" "$(mb "$file")" "$RUNS" "$wall" "$(echo "scale=2; $(mb "$file") / $wall" | bc)" \
    "$cpu" "$(echo "scale=2; $(mb "$file") / $cpu" | bc)" "$rss"
}

# Statements per kind as counted: the calls of the access patterns.
counts() { jq -r '[.patterns[] | {k: .kind, n: .calls}] | group_by(.k) | map("\(.[0].k) \(map(.n) | add)") | .[]' "$1" | sort; }
at_most() { [ "$(echo "$1 <= $2" | bc)" = 1 ]; }

BIG="$DIR/sessions-big.log"
SMALL="$DIR/sessions-small.log"
NOIDS="$DIR/sessions-big-noids.log"
generate "$BIG" "$BIG_MB"
generate "$SMALL" "$SMALL_MB"
if [ ! -s "$NOIDS" ] || [ "$NOIDS" -ot "$BIG" ]; then
  perl -pe 's/ \[\d+\] [0-9a-f]{8}\.[0-9a-f]+ / /' "$BIG" > "$NOIDS"
fi
rm -f "$DIR"/times.*

echo "== run: $RUNS runs each on $BIG ($(mb "$BIG") MB): base, this binary, this binary without ids; alternately"
for i in $(seq "$RUNS"); do
  [ -z "$BASE" ] || timed base "$BASE" workload --json "$BIG"
  timed sessions "$BIN" workload --json "$BIG"
  timed no-ids "$BIN" workload --json "$NOIDS"
  echo "   run $i of $RUNS done"
done
echo "== run: $RUNS runs of this binary on $SMALL ($(mb "$SMALL") MB)"
for _ in $(seq "$RUNS"); do
  timed small "$BIN" workload --json "$SMALL"
done

echo "== same statements?"
if [ -n "$BASE" ]; then
  counts "$DIR/out.base" > "$DIR/counts.base"
else
  counts "$DIR/out.no-ids" > "$DIR/counts.base"
fi
counts "$DIR/out.sessions" > "$DIR/counts.sessions"
counts "$DIR/out.no-ids" > "$DIR/counts.no-ids"
paste "$DIR/counts.base" "$DIR/counts.sessions" | awk '{ printf "%-8s base %12s  this %12s\n", $1, $2, $4 }'
if ! diff -q "$DIR/counts.base" "$DIR/counts.sessions" >/dev/null ||
   ! diff -q "$DIR/counts.base" "$DIR/counts.no-ids" >/dev/null; then
  echo "bench: the runs counted different statements (base, with ids, without ids):" >&2
  cat "$DIR"/counts.* >&2
  exit 1
fi
WITH=$(jq '.sessions.statements // 0' "$DIR/out.sessions")
SESS=$(jq '.sessions.sessions // 0' "$DIR/out.sessions")
EVICTED=$(jq '.sessions.evicted // 0' "$DIR/out.sessions")
WITHOUT=$(jq '.sessions.statements // 0' "$DIR/out.no-ids")
echo "sessions followed: $SESS sessions, $WITH statements ($EVICTED sessions closed early by the bound); without ids: $WITHOUT statements"
[ "$WITH" -gt 0 ] && [ "$WITHOUT" -eq 0 ] ||
  MISSED+=("sessions: $WITH statements followed with ids, $WITHOUT without (expected > 0 and 0)")

echo
[ -z "$BASE" ] || report base "$BIG"
report sessions "$BIG"
report no-ids "$NOIDS"
report small "$SMALL"
BASE_RUN=base
[ -n "$BASE" ] || BASE_RUN=no-ids
R=$(echo "scale=3; $(median sessions 1) / $(median $BASE_RUN 1)" | bc)
RC=$(echo "scale=3; $(median sessions 2) / $(median $BASE_RUN 2)" | bc)
RN=$(echo "scale=3; $(median sessions 1) / $(median no-ids 1)" | bc)
echo "ingest with sessions / baseline ($BASE_RUN: $BASE_REV): wall ${R}x, cpu ${RC}x (target <= 1 + ${SESSIONS_PCT}%);" \
  "with sessions / this binary on the log without ids: wall ${RN}x"
at_most "$R" "$(echo "scale=3; 1 + $SESSIONS_PCT / 100" | bc)" ||
  MISSED+=("ingest with sessions ${R}x the base's wall time, over 1 + ${SESSIONS_PCT}%")
RSS_BIG=$(median sessions 3); RSS_SMALL=$(median small 3)
G=$(echo "scale=3; $RSS_BIG / $RSS_SMALL" | bc)
echo "peak RSS: $RSS_BIG MB on $(mb "$BIG") MB vs $RSS_SMALL MB on $(mb "$SMALL") MB: ${G}x (target <= 1 + ${RSS_PCT}%, under $LIMIT_MB MB); baseline $(median $BASE_RUN 3) MB"
at_most "$G" "$(echo "scale=3; 1 + $RSS_PCT / 100" | bc)" ||
  MISSED+=("peak RSS ${G}x from $(mb "$SMALL") MB to $(mb "$BIG") MB of log, over 1 + ${RSS_PCT}%")
[ "$RSS_BIG" -lt "$LIMIT_MB" ] || MISSED+=("peak RSS $RSS_BIG MB, not under $LIMIT_MB MB")

if [ "${#MISSED[@]}" -gt 0 ]; then
  printf 'bench/sessions.sh: target missed: %s\n' "${MISSED[@]}" >&2
  exit 1
fi
echo "bench/sessions.sh: every target met"
