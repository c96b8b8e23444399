#!/usr/bin/env bash
# The large robustness cases of issue 14 (../shared/robustness-cases/README.md), generated here
# (never stored), each run with the release binary under GNU time: wall time and peak RSS.
# Target: every case under 200 MB peak RSS; 20k tables and 80k AND terms in seconds.
#
#   bench/large.sh              # all cases
#   bench/large.sh sql_gz and80k  # some of them
#
# Cases (in $BENCH_DIR, default /tmp/remodel-large, reused when present):
#   sql_gz     a 100 MB .sql.gz of one-line SELECTs (SQL files stream like logs)
#   log_line   a .log.gz holding one 1 GB statement line (skipped: over the 16 MiB limit)
#   insert20   a 20 MB INSERT (skipped: over the limit) next to a 10 MB one (one row kept)
#   shapes     100k distinct query shapes (different column lists), workload and plan
#   tables20k  20k tables, one query: plan (foreign keys inferred from naming); tables2k and
#              tables5k are the same at 2k and 5k tables (near-linear: 20k costs ~10x 2k)
#   and80k     one SELECT with 80k AND terms: workload and analyze
# Needs: cargo, python3, GNU time (/usr/bin/time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-large}"
mkdir -p "$DIR"
[[ -x /usr/bin/time ]] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p remodel)
BIN="$ROOT/target/release/remodel"

gen() { # gen FILE PYTHON: writes FILE with the python program unless it exists
  [[ -s "$1" ]] || { echo "   generating $(basename "$1")"; python3 -c "$2" "$1"; }
}

# run NAME CMD…: prints wall seconds and peak RSS of CMD; keeps its output in $DIR/NAME.out
run() {
  local name=$1; shift
  local t="$DIR/$name.time"
  /usr/bin/time -v -o "$t" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" || true
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$t")
  rss=$(awk -F': ' '/Maximum resident/ { printf "%d", $2 / 1024 }' "$t")
  local verdict="ok"
  ((rss < 200)) || verdict="OVER 200 MB"
  printf '%-22s %9.2f s  %6d MB  %s\n' "$name" "$wall" "$rss" "$verdict"
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
awk '$1 == "tables2k_plan" { base = $2 } $1 ~ /^tables[0-9]+k_plan$/ { t[$1] = $2 }
  END { if (base > 0) for (k in t) if (k != "tables2k_plan")
    printf "%-22s %9.1fx the time of tables2k_plan\n", k, t[k] / base }' "$DIR/results.txt"
