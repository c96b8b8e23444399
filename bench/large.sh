#!/usr/bin/env bash
# The large robustness cases of issue 14 (../shared/robustness-cases/README.md), generated here
# (never stored), each run with the release binary under GNU time: wall time and peak RSS.
# Targets (the script exits 1 when one is missed, after printing every case): every command
# exits 0, every case under LIMIT_MB (200) MB peak RSS, tables20k and and80k each under
# LIMIT_S (10) s, and tables20k_plan at most MAX_GROWTH (30) times tables2k_plan (near-linear:
# 10x the tables; quadratic would be 100x).
#
#   bench/large.sh              # all cases
#   bench/large.sh sql_gz and80k  # some of them
#   REMODEL_BIN=target/debug/remodel LIMIT_MB=1 bench/large.sh tables2k   # a quick look at the failure path
#
# Cases (in $BENCH_DIR, default /tmp/remodel-large, reused when present):
#   sql_gz     a 100 MB .sql.gz of one-line SELECTs (SQL files stream like logs)
#   log_line   a .log.gz holding one 1 GB statement line (skipped: over the 16 MiB limit)
#   insert20   a 20 MB INSERT (skipped: over the limit) next to a 10 MB one (one row kept)
#   shapes     100k distinct query shapes (different column lists), workload and plan
#   tables20k  20k tables, one query: plan (foreign keys inferred from naming); tables2k and
#              tables5k are the same at 2k and 5k tables (near-linear: 20k costs ~10x 2k)
#   and80k     one SELECT with 80k AND terms: workload and analyze
# Needs: cargo, python3, GNU time (/usr/bin/time). REMODEL_BIN=PATH runs that binary instead of
# building the release one (to try the script, not to measure).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-large}"
LIMIT_MB="${LIMIT_MB:-200}"
LIMIT_S="${LIMIT_S:-10}"
MAX_GROWTH="${MAX_GROWTH:-30}"
mkdir -p "$DIR"
[[ -x /usr/bin/time ]] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }

if [[ -n "${REMODEL_BIN:-}" ]]; then
  BIN="$REMODEL_BIN"
  echo "== remodel: $BIN (REMODEL_BIN: not a measurement)"
else
  echo "== build (release)"
  (cd "$ROOT" && cargo build --release -q -p remodel)
  BIN="$ROOT/target/release/remodel"
fi
MISSED=()

gen() { # gen FILE PYTHON: writes FILE with the python program unless it exists
  [[ -s "$1" ]] || { echo "   generating $(basename "$1")"; python3 -c "$2" "$1"; }
}

# run NAME CMD…: prints wall seconds and peak RSS of CMD; keeps its output in $DIR/NAME.out.
# A command that fails, or misses the memory target, is a missed target.
run() {
  local name=$1; shift
  local t="$DIR/$name.time" rc=0
  /usr/bin/time -v -o "$t" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" || rc=$?
  local wall rss verdict=()
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$t")
  rss=$(awk -F': ' '/Maximum resident/ { printf "%d", $2 / 1024 }' "$t")
  ((rc == 0)) || verdict+=("EXIT $rc (see $DIR/$name.err)")
  ((rss < LIMIT_MB)) || verdict+=("OVER $LIMIT_MB MB")
  case "$name" in
    tables20k_* | and80k_*)
      awk -v w="$wall" -v l="$LIMIT_S" 'BEGIN { exit !(w < l) }' || verdict+=("OVER $LIMIT_S s") ;;
  esac
  ((${#verdict[@]} == 0)) || MISSED+=("$name: ${verdict[*]}")
  printf '%-22s %9.2f s  %6d MB  %s\n' "$name" "$wall" "$rss" "${verdict[*]:-ok}"
  printf '%s\n' "$name $wall $rss" >> "$DIR/results.txt"
}

schema_t() { # a table t (id, c0 … c29) and the rideshare tables
  printf 'CREATE TABLE t (id bigint PRIMARY KEY%s);\n' "$(for i in $(seq 0 29); do printf ', c%d text' "$i"; done)" > "$DIR/t.sql"
}

case_sql_gz() {
  gen "$DIR/big.sql.gz" '
import gzip, sys, random
random.seed(1)
with gzip.open(sys.argv[1], "wt", compresslevel=1) as f:
    n = 0
    while n < 100 << 20:
        line = "SELECT c%d, c%d FROM t WHERE id = %d;\n" % (random.randrange(30), random.randrange(30), random.randrange(10**9))
        f.write(line); n += len(line)'
  run sql_gz_workload "$BIN" workload "$DIR/big.sql.gz"
}

case_log_line() {
  gen "$DIR/one-line.log.gz" '
import gzip, sys
with gzip.open(sys.argv[1], "wt", compresslevel=1) as f:
    f.write("2025-01-01 00:00:00 UTC [1] LOG:  statement: SELECT 1 FROM t WHERE id IN (1")
    chunk = ",1" * (1 << 19)
    for _ in range(1024): f.write(chunk)
    f.write(");\n2025-01-01 00:00:01 UTC [1] LOG:  statement: SELECT c1 FROM t WHERE id = 7\n")'
  run log_line_workload "$BIN" workload "$DIR/one-line.log.gz"
}

case_insert20() {
  gen "$DIR/insert.sql" '
import sys
with open(sys.argv[1], "w") as f:
    for mb in (20, 10):
        f.write("INSERT INTO t (id, c0) VALUES (0, %s)" % "\x27x\x27")
        row = ", (1, %s)" % "\x27abcdefgh\x27"
        f.write(row * ((mb << 20) // len(row)))
        f.write(";\n")
    f.write("SELECT c0 FROM t WHERE id = 1;\n")'
  schema_t
  run insert20_workload "$BIN" workload "$DIR/insert.sql"
  run insert20_plan "$BIN" plan --schema "$DIR/t.sql" --queries "$DIR/insert.sql" --out "$DIR/insert-plan"
}

case_shapes() {
  gen "$DIR/shapes.sql" '
import sys, itertools
cols = ["c%d" % i for i in range(30)]
with open(sys.argv[1], "w") as f:
    n = 0
    for k in (3, 4):
        for combo in itertools.combinations(cols, k):
            f.write("SELECT %s FROM t WHERE id = %d;\n" % (", ".join(combo), n))
            n += 1
            if n == 100000: sys.exit(0)'
  schema_t
  run shapes_workload "$BIN" workload "$DIR/shapes.sql"
  run shapes_plan "$BIN" plan --schema "$DIR/t.sql" --queries "$DIR/shapes.sql" --out "$DIR/shapes-plan"
}

tables() { # tables NAME N: N tables, each referencing the one before by naming, one query
  local name=$1 n=$2
  gen "$DIR/$name.sql" "
import sys
with open(sys.argv[1], 'w') as f:
    for i in range($n):
        ref = ', e%d_id bigint' % (i - 1) if i else ''
        f.write('CREATE TABLE e%ds (id bigint PRIMARY KEY, name text%s);\\n' % (i, ref))"
  printf 'SELECT name FROM e5s WHERE id = 1;\n' > "$DIR/tables-q.sql"
  run "${name}_plan" "$BIN" plan --schema "$DIR/$name.sql" --queries "$DIR/tables-q.sql" --out "$DIR/$name-plan"
}
case_tables2k() { tables tables2k 2000; }
case_tables5k() { tables tables5k 5000; }
case_tables20k() { tables tables20k 20000; }

case_and80k() {
  gen "$DIR/and80k.sql" '
import sys
with open(sys.argv[1], "w") as f:
    f.write("SELECT id FROM t WHERE id = 1")
    for i in range(80000):
        f.write(" AND c%d = %d" % (i % 30, i))
    f.write(";\n")'
  schema_t
  run and80k_workload "$BIN" workload "$DIR/and80k.sql"
  run and80k_analyze "$BIN" analyze --schema "$DIR/t.sql" --queries "$DIR/and80k.sql"
}

cases=("$@")
((${#cases[@]})) || cases=(sql_gz log_line insert20 shapes tables2k tables5k tables20k and80k)
: > "$DIR/results.txt"
echo "== run (case, wall time, peak RSS)"
for c in "${cases[@]}"; do "case_$c"; done
# Growth against the 2k-table baseline of this run: 10x the tables, ~10x the time when linear.
while read -r name ratio; do
  verdict=ok
  if [[ "$ratio" == "-" ]]; then
    verdict="tables2k_plan took no measurable time: no ratio"
    MISSED+=("$name: $verdict")
  elif [[ "$name" == tables20k_plan ]] && ! awk -v r="$ratio" -v m="$MAX_GROWTH" 'BEGIN { exit !(r <= m) }'; then
    verdict="OVER ${MAX_GROWTH}x"
    MISSED+=("$name: ${ratio}x the time of tables2k_plan, $verdict")
  fi
  printf '%-22s %9sx the time of tables2k_plan  %s\n' "$name" "$ratio" "$verdict"
done < <(awk '$1 == "tables2k_plan" { base = $2; has = 1 } $1 ~ /^tables[0-9]+k_plan$/ { t[$1] = $2 }
  END { if (has) for (k in t) if (k != "tables2k_plan")
    print k, (base > 0 ? sprintf("%.1f", t[k] / base) : "-") }' "$DIR/results.txt")
if ((${#MISSED[@]} > 0)); then
  printf 'bench/large.sh: target missed: %s\n' "${MISSED[@]}" >&2
  exit 1
fi
echo "bench/large.sh: every target met"
