#!/usr/bin/env bash
# Benchmark of the exported Spark job against `remodel backfill` on the rideshare example:
# TRIPS generated trips (default 1M) fill the plan's four tables (3 x TRIPS + TRIPS/200 rows),
# the same data, the same machine, the same run:
#
#   (a) remodel backfill (release build), wall time;
#   (b) `remodel export spark` + spark-submit --master local[CORES] of the job, wall time (JVM
#       start included) and the job's own time from its snapshot to its last write;
#
# then prints rows/s of each and the ratios b/a. Both write into fresh keyspaces (dropped after,
# with cqlsh from PyPI in a venv under $DIR).
#
# Targets (the script exits 1 when one is missed, after printing every figure): both keyspaces
# verify, and the job's own rows/s (b') is at least MIN_RATIO (default 0.4) of remodel backfill's
# (0.54 measured on the quiet 2-core machine, see book/src/spark.md).
#
# Needs: the databases of scripts/db running, `scripts/spark install`, psql, python3.
# Settings: TRIPS, CORES (2), RANGE_ROWS (50000, as remodel backfill), CONCURRENT_WRITES (the job's 32),
# MIN_RATIO (0.4), BENCH_DIR (default /tmp/remodel-bench-spark).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_DIR:-/tmp/remodel-bench-spark}"
TRIPS="${TRIPS:-1000000}"
CORES="${CORES:-2}"
RANGE_ROWS="${RANGE_ROWS:-50000}"
CONCURRENT_WRITES="${CONCURRENT_WRITES:-32}"
MIN_RATIO="${MIN_RATIO:-0.4}"
SCHEMA=bench_spark
KS_RUST=bench_spark_rust
KS_SPARK=bench_spark_job
mkdir -p "$DIR"

for tool in psql python3 bc; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 1; }
done
eval "$("$ROOT/scripts/db" env)"
eval "$("$ROOT/scripts/spark" env)" || { echo "bench: run scripts/spark install first" >&2; exit 1; }
PG_URL="$REMODEL_PG_URL?options=-c%20search_path%3D$SCHEMA"
NODE="$REMODEL_CQL_URL"

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p remodel --bin remodel)
BIN="$ROOT/target/release/remodel"

CQLSH="$DIR/venv/bin/cqlsh"
if [ ! -x "$CQLSH" ]; then
  echo "== install cqlsh (PyPI) into $DIR/venv (to drop the keyspaces)"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install -q cqlsh
fi
drop() { "$CQLSH" "${NODE%:*}" "${NODE##*:}" -e "DROP KEYSPACE IF EXISTS $1" >/dev/null; }

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
rate() { echo "scale=0; $1 / $2" | bc -l; }

echo "== load $TRIPS trips into Postgres schema $SCHEMA"
psql -q "$REMODEL_PG_URL" -c "CREATE SCHEMA IF NOT EXISTS $SCHEMA"
"$BIN" example-data rideshare --source "$PG_URL" --trips "$TRIPS" --replace
psql -q "$PG_URL" -c "ANALYZE cities; ANALYZE drivers; ANALYZE trips"
for ks in "$KS_RUST" "$KS_SPARK"; do
  drop "$ks"
  "$BIN" plan examples/rideshare --keyspace "$ks" --out "$DIR/plan-$ks" >/dev/null
done
ROWS=$((3 * TRIPS + TRIPS / 200))

echo "== (a) remodel backfill"
t0=$(now)
"$BIN" backfill --plan "$DIR/plan-$KS_RUST/plan.json" --source "$PG_URL" --target "$NODE" \
  --create-schema --run-dir "$DIR/run-rust" --progress none
t1=$(now)
RUST_S=$(secs "$t0" "$t1")

echo "== (b) the exported Spark job, local[$CORES]"
"$BIN" export spark --plan "$DIR/plan-$KS_SPARK/plan.json" --out "$DIR/job" --target "$NODE"
rm -rf "$DIR/run-spark"
t0=$(now)
REMODEL_SOURCE="$PG_URL" SPARK_LOCAL_IP=127.0.0.1 "$REMODEL_SPARK_SUBMIT" --master "local[$CORES]" \
  --jars "$REMODEL_SPARK_JARS" --driver-memory 4g \
  --driver-java-options "-Dlog4j2.configurationFile=$DIR/job/log4j2.properties" \
  "$DIR/job/backfill.py" --create-schema "$DIR/plan-$KS_SPARK/schema.cql" --out "$DIR/run-spark" \
  --range-rows "$RANGE_ROWS" --concurrent-writes "$CONCURRENT_WRITES" | tee "$DIR/spark.log"
t1=$(now)
SPARK_S=$(secs "$t0" "$t1")
JOB_S=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_seconds"])' "$DIR/run-spark/summary.json")

echo "== verify both"
"$BIN" verify --plan "$DIR/plan-$KS_RUST/plan.json" --source "$PG_URL" --target "$NODE" --sample 200 2>/dev/null | tail -1
"$BIN" verify --plan "$DIR/plan-$KS_SPARK/plan.json" --source "$PG_URL" --target "$NODE" --sample 200 \
  --run-dir "$DIR/run-spark" 2>/dev/null | tail -1

echo
echo "== results: $ROWS target rows from $TRIPS trips, $(nproc) cores"
printf '%-44s %9.1f s %9s rows/s\n' "(a) remodel backfill" "$RUST_S" "$(rate "$ROWS" "$RUST_S")"
printf '%-44s %9.1f s %9s rows/s\n' "(b) spark job, spark-submit to exit" "$SPARK_S" "$(rate "$ROWS" "$SPARK_S")"
printf '%-44s %9.1f s %9s rows/s\n' "(b') spark job, snapshot to last write" "$JOB_S" "$(rate "$ROWS" "$JOB_S")"
JOB_RATIO=$(echo "$RUST_S / $JOB_S" | bc -l)
printf 'ratio spark/backfill rows/s: %.2f (whole), %.2f (job only; target >= %s)\n' \
  "$(echo "$RUST_S / $SPARK_S" | bc -l)" "$JOB_RATIO" "$MIN_RATIO"
drop "$KS_RUST"
drop "$KS_SPARK"
psql -q "$REMODEL_PG_URL" -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE"
if ! awk -v r="$JOB_RATIO" -v m="$MIN_RATIO" 'BEGIN { exit !(r >= m) }'; then
  printf "bench/spark.sh: target missed: the job's rows/s are %.2f of remodel backfill's, under %s\n" \
    "$JOB_RATIO" "$MIN_RATIO" >&2
  exit 1
fi
echo "bench/spark.sh: every target met"
