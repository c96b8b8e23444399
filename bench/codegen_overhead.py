"""Per-call overhead of the generated Python access layer (bench/codegen.sh runs it).

Each case calls a function of the generated package and, in turn, the same CQL issued by hand
with the same driver on the same session (one `session.execute` of a statement prepared once,
its rows listed): the baseline, measured in the same run. Calls alternate (generated, hand, hand,
generated, ...) so that both see the same node. Prints, per case, the median and p99 of each side
in microseconds and their ratios; exits 1 when a ratio misses its target.

usage: codegen_overhead.py --cql HOST:PORT --keyspace KS --package-dir DIR [--calls N]
       [--median-target R] [--p99-target R]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import importlib
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, BatchType

KM = decimal.Decimal("3.5")
FARE = decimal.Decimal("12.25")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def measure(gen: Callable[[int], Any], hand: Callable[[int], Any], calls: int) -> tuple[list[float], list[float]]:
    """`calls` timed calls of each (after a warm-up of a tenth), interleaved; microseconds."""
    for i in range(max(50, calls // 10)):
        gen(i)
        hand(i)
    g: list[float] = []
    h: list[float] = []
    for i in range(calls):
        order = ((gen, g), (hand, h)) if i % 2 == 0 else ((hand, h), (gen, g))
        for f, out in order:
            t = time.perf_counter_ns()
            f(i)
            out.append((time.perf_counter_ns() - t) / 1000)
    return g, h


# The hand-written side's statements, each prepared once, as an application would.
BY_HAND = {
    "by_driver": "SELECT started_at, city, distance_km, fare_usd FROM trips_by_driver "
    "WHERE driver_id = ? ORDER BY started_at DESC LIMIT ?",
    "by_id": "SELECT trip_id, driver_id, city, started_at, distance_km, fare_usd, status "
    "FROM trips_by_id WHERE trip_id = ?",
    "driver": "SELECT full_name, rating, country FROM drivers_by_id WHERE driver_id = ?",
    "by_city": "SELECT started_at, driver_id, fare_usd FROM trips_by_city_date "
    "WHERE city = ? AND trip_date = ? AND started_at >= ? AND started_at < ? "
    "ORDER BY started_at DESC LIMIT ?",
    "rating": "UPDATE drivers_by_id SET rating = ? WHERE driver_id = ?",
    "insert_0": "INSERT INTO trips_by_driver (driver_id, started_at, trip_id, city, distance_km, fare_usd) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "insert_1": "INSERT INTO trips_by_id (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)",
    "insert_2": "INSERT INTO trips_by_city_date (city, trip_date, started_at, trip_id, driver_id, fare_usd) "
    "VALUES (?, ?, ?, ?, ?, ?)",
}

Case = tuple[str, Callable[[int], Any], Callable[[int], Any]]


def micros(t: dt.datetime) -> int:
    return (t - EPOCH) // dt.timedelta(microseconds=1)


def cases(q: Any, session: Any, drivers: list[str], trips: list[Any]) -> list[Case]:
    """Each case: its name, the generated call, the same CQL by hand (the i-th call's keys)."""
    st = {name: session.prepare(cql) for name, cql in BY_HAND.items()}
    for s in st.values():
        s.consistency_level = ConsistencyLevel.LOCAL_QUORUM  # as the plan states

    def driver(i: int) -> str:
        return drivers[i % len(drivers)]

    def day_of(i: int) -> tuple[str, dt.datetime, dt.datetime]:
        t = trips[i % len(trips)]
        # trips_by_id keeps the instant as epoch microseconds (or as a timestamp).
        if isinstance(t.started_at, int):
            start = EPOCH + dt.timedelta(microseconds=t.started_at)
        else:
            start = t.started_at.replace(tzinfo=dt.UTC)
        day = dt.datetime(start.year, start.month, start.day, tzinfo=dt.UTC)
        return t.city, day, day + dt.timedelta(days=1)

    def city_by_hand(i: int) -> list[Any]:
        c, lo, hi = day_of(i)
        return list(session.execute(st["by_city"].bind([c, lo.date(), micros(lo), micros(hi), 50])))

    def new_trip(i: int) -> tuple[uuid.UUID, str, str, dt.datetime]:
        start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i)
        return uuid.uuid4(), driver(i), trips[i % len(trips)].city, start

    def insert_by_hand(i: int) -> None:
        tid, d, city, start = new_trip(i)
        b = BatchStatement(batch_type=BatchType.LOGGED, consistency_level=ConsistencyLevel.LOCAL_QUORUM)
        b.add(st["insert_0"], [d, micros(start), tid, city, KM, FARE])
        b.add(st["insert_1"], [tid, d, city, micros(start), KM, FARE, "completed"])
        b.add(st["insert_2"], [city, start.date(), micros(start), tid, d, FARE])
        session.execute(b)

    def rows(name: str, *values: Any) -> list[Any]:
        return list(session.execute(st[name].bind(list(values))))

    rating = decimal.Decimal("4.5")
    return [
        (
            "q1 trips_by_driver_id (LIMIT 20)",
            lambda i: q.trips_by_driver_id(driver(i), 20),
            lambda i: rows("by_driver", driver(i), 20),
        ),
        (
            "q3 trips_by_trip_id",
            lambda i: q.trips_by_trip_id(trips[i % len(trips)].trip_id),
            lambda i: rows("by_id", trips[i % len(trips)].trip_id),
        ),
        (
            "q4 drivers_by_driver_id",
            lambda i: q.drivers_by_driver_id(driver(i)),
            lambda i: rows("driver", driver(i)),
        ),
        (
            "q2 trips_by_city_and_started_at (1 day)",
            lambda i: q.trips_by_city_and_started_at(*day_of(i), 50),
            city_by_hand,
        ),
        (
            "q7 update_drivers_rating_by_driver_id",
            lambda i: q.update_drivers_rating_by_driver_id(rating, driver(i)),
            lambda i: session.execute(st["rating"].bind([rating, driver(i)])),
        ),
        (
            "q5 insert_trips (3 copies, logged batch)",
            lambda i: q.insert_trips(*new_trip(i), KM, FARE, "completed"),
            insert_by_hand,
        ),
    ]


def run(all_cases: list[Case], calls: int, median_target: float, p99_target: float) -> list[str]:
    """Measures and prints every case; returns the targets it missed."""
    missed = []
    heads = ["gen p50", "hand p50", "ratio", "+p50", "gen p99", "hand p99", "ratio"]
    widths = [8, 9, 6, 5, 8, 9, 6]
    print(f"{'case':<44} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)) + "  (µs)")
    for name, gen, hand in all_cases:
        g, h = measure(gen, hand, calls // 2 if "insert" in name else calls)
        gm, hm = statistics.median(g), statistics.median(h)
        g99, h99 = percentile(g, 0.99), percentile(h, 0.99)
        rm, r99 = gm / hm, g99 / h99
        print(f"{name:<44} {gm:8.0f} {hm:9.0f} {rm:6.2f} {gm - hm:5.0f} {g99:8.0f} {h99:9.0f} {r99:6.2f}")
        if rm > median_target:
            missed.append(f"{name}: median ratio {rm:.2f} > {median_target}")
        if r99 > p99_target:
            missed.append(f"{name}: p99 ratio {r99:.2f} > {p99_target}")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cql", required=True)
    ap.add_argument("--keyspace", required=True)
    ap.add_argument("--package-dir", required=True)
    ap.add_argument("--package", default="rideshare_dal")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--median-target", type=float, default=1.25)
    ap.add_argument("--p99-target", type=float, default=2.0)
    a = ap.parse_args()
    sys.path.insert(0, a.package_dir)
    dal = importlib.import_module(a.package)
    host, port = a.cql.rsplit(":", 1)
    cluster = Cluster([host], port=int(port))
    session = cluster.connect(a.keyspace)
    # Keys that exist: the bench reads rows, not misses.
    drivers = [r.driver_id for r in session.execute("SELECT driver_id FROM drivers_by_id LIMIT 200")]
    trips = list(session.execute("SELECT trip_id, city, started_at FROM trips_by_id LIMIT 200"))
    if not drivers or not trips:
        print("bench: the keyspace has no rows (was the backfill run?)", file=sys.stderr)
        return 1
    all_cases = cases(dal.Queries(session), session, drivers, trips)
    missed = run(all_cases, a.calls, a.median_target, a.p99_target)
    cluster.shutdown()
    for m in missed:
        print("target missed: " + m)
    if not missed:
        print(f"targets met: every median ratio <= {a.median_target}, every p99 ratio <= {a.p99_target}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
