#!/usr/bin/env bash
# Benchmark of the per-call overhead of the data-access layer `remodel codegen` generates, on the
# rideshare example: TRIPS generated trips backfilled into keyspace bench_codegen, the Python
# package and the Java module generated from the plan, then bench/codegen_overhead.py (Python)
# and bench/CodegenOverhead.java (Java) call each generated function (the rideshare reads q1, q2,
# q3, q4 and the writes q7, a single UPDATE, and q5, three copies in a logged batch) and, in
# turn, the same CQL issued by hand with the same driver and session (prepared once, executed,
# its rows listed): the baseline, measured in the same run, calls interleaved. Prints each side's
# median and p99 per call and their ratios, for each language.
# Exits 1 when a target is missed: generated / by hand <= MEDIAN_TARGET (1.25) at the median and
# <= P99_TARGET (2.0) at p99, for every case of both languages. (The tail of a call on a shared
# machine is the node's and the machine's hiccups, alike on both sides: 2 flags a systematic one,
# an extra request per call, and not a hiccup among the few calls a p99 rests on.)
#
# Needs: the databases of scripts/db running, psql, PyPI (the venv of tests/codegen/setup:
# cassandra-driver), a JDK 17 and Maven (tests/codegen/setup-java caches the Java driver);
# SKIP_JAVA=1 measures Python only.
# Settings: TRIPS (20000), CALLS (2000 per read; half for the batch), MEDIAN_TARGET,
# P99_TARGET, REMODEL_BIN (default target/release/remodel, built when missing), BENCH_DIR
# (/tmp/remodel-bench-codegen), TARGET (default scripts/db's node).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-codegen}"
TRIPS="${TRIPS:-20000}"
BIN="${REMODEL_BIN:-$ROOT/target/release/remodel}"
KS=bench_codegen
if [[ ! -x "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -q -p remodel --bin remodel)
fi
eval "$("$ROOT/scripts/db" env)"
TARGET="${TARGET:-$REMODEL_CQL_URL}"
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$KS"
PY="$("$ROOT/tests/codegen/setup")"
rm -rf "$DIR"; mkdir -p "$DIR"

echo "== rideshare, $TRIPS trips, backfilled into $KS"
psql "$REMODEL_PG_URL" -qc "DROP SCHEMA IF EXISTS $KS CASCADE; CREATE SCHEMA $KS" 2>/dev/null
"$BIN" example-data rideshare --source "$PG_URL" --trips "$TRIPS" >/dev/null
"$BIN" plan "$ROOT/examples/rideshare" --keyspace "$KS" --out "$DIR/plan" >/dev/null 2>&1
# A fresh keyspace: the backfill creates it.
"$PY" - "$TARGET" "$KS" <<'PY'
import sys
from cassandra.cluster import Cluster
host, port = sys.argv[1].rsplit(":", 1)
c = Cluster([host], port=int(port))
c.connect().execute(f"DROP KEYSPACE IF EXISTS {sys.argv[2]}", timeout=60)
c.shutdown()
PY
"$BIN" backfill --plan "$DIR/plan/plan.json" --source "$PG_URL" --target "$TARGET" \
  --create-schema --run-dir "$DIR/run" > "$DIR/backfill.out" 2>&1 ||
  { tail -n 20 "$DIR/backfill.out"; exit 1; }
"$BIN" codegen --plan "$DIR/plan/plan.json" --lang python --out "$DIR/python" \
  --package rideshare_dal >/dev/null

MEDIAN_TARGET="${MEDIAN_TARGET:-1.25}"
P99_TARGET="${P99_TARGET:-2.0}"
status=0
echo "== generated Python vs the same CQL by hand (cassandra-driver, one session)"
"$PY" "$ROOT/bench/codegen_overhead.py" --cql "$TARGET" --keyspace "$KS" \
  --package-dir "$DIR/python" --calls "${CALLS:-2000}" \
  --median-target "$MEDIAN_TARGET" --p99-target "$P99_TARGET" || status=1

if [[ "${SKIP_JAVA:-}" != 1 ]]; then
  echo "== generated Java vs the same CQL by hand (Java driver 4.x, one session)"
  "$ROOT/tests/codegen/setup-java" >/dev/null
  "$BIN" codegen --plan "$DIR/plan/plan.json" --lang java --out "$DIR/java" \
    --package rideshare_dal >/dev/null
  (cd "$DIR/java" && { mvn -q -B -o compile dependency:build-classpath -Dmdep.outputFile=cp.txt ||
    mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=cp.txt; } > "$DIR/mvn.log" 2>&1) ||
    { tail -n 20 "$DIR/mvn.log"; exit 1; }
  CP="$DIR/java/target/classes:$(cat "$DIR/java/cp.txt")"
  mkdir -p "$DIR/bench-classes"
  javac -d "$DIR/bench-classes" -cp "$CP" "$ROOT/bench/CodegenOverhead.java"
  # (The driver's logger is SLF4J's no-operation one: its three lines of notice are left out.)
  java -cp "$DIR/bench-classes:$CP" CodegenOverhead "$TARGET" "$KS" "${CALLS:-2000}" \
    "$MEDIAN_TARGET" "$P99_TARGET" 2> >(grep -v '^SLF4J' >&2) || status=1
fi
exit "$status"
