#!/usr/bin/env python3
"""An independent executor of plan.json (format 4): runs every read of a plan on Cassandra
exactly as plan.json states it and compares the rows with the original SQL on Postgres.

It reads ONLY plan.json (no remodel code, no notes). Whatever the plan does not state well
enough to execute is reported as NOT EXECUTABLE: that is a gap in the contract.

usage: executor.py PLAN.json --pg URL --cql HOST:PORT [--samples N] [--seed S]
Exit: 0 every read matched; 1 a mismatch or a read it could not execute; 2 usage/connection.
"""

import argparse
import datetime as dt
import decimal
import random
import re
import sys
import uuid
import zoneinfo

import psycopg
from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster

UTC = dt.timezone.utc


class Gap(Exception):
    """plan.json does not state something this executor needs: a contract gap."""


class Ctx:
    """One execution of a pattern: its parameters, its clock and the row at hand."""

    def __init__(self, params, semantics, pg=None):
        self.params = params
        self.pg = pg  # evaluates application-computed values, as Postgres does
        self.zone = zoneinfo.ZoneInfo(semantics.get("time_zone", "UTC"))
        if semantics.get("now", "client_statement_start") != "client_statement_start":
            raise Gap(f"semantics.now = {semantics.get('now')!r} is not one this executor knows")
        self.now = dt.datetime.now(UTC)  # read once per execution, as semantics.now says
        self.row = None  # {(table, column): value}


# ---------------------------------------------------------------- expressions

def literal(v):
    t, x = v.get("type"), v.get("value")
    if t in ("integer", "bigint", "smallint", "int", "text", "boolean", "bool"):
        return x
    if t == "null":
        return None
    if t in ("numeric", "decimal"):
        return decimal.Decimal(str(x))
    if t == "date":
        return dt.date.fromisoformat(x)
    if t in ("timestamptz", "timestamp"):
        return dt.datetime.fromisoformat(x)
    if t == "interval":
        if v.get("months"):
            raise Gap("an interval literal with months: no fixed span to add")
        return dt.timedelta(days=v.get("days", 0), microseconds=v.get("micros", 0))
    raise Gap(f"literal type {t!r} unknown to this executor: {v}")


def cmp(op, a, b):
    if isinstance(a, tuple) and isinstance(b, tuple):
        return cmp_rows(op, a, b)
    if a is None or b is None:
        return None
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def cmp_rows(op, a, b):
    """Rows compared as SQL compares them: item by item, the first pair not equal deciding;
    NULL when a pair before the decision is NULL."""
    for x, y in zip(a, b):
        if x is None or y is None:
            return None
        if x != y:
            return cmp(op, x, y) if op not in ("eq", "ne") else op == "ne"
    return op in ("eq", "le", "ge")


def binary(op, a, b):
    if op == "and":
        if a is False or b is False:
            return False
        return None if a is None or b is None else True
    if op == "or":
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return cmp(op, a, b)
    if a is None or b is None:
        return None
    ops = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
           "div": lambda: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
           "mod": lambda: a % b, "concat": lambda: f"{a}{b}"}
    if op not in ops:
        raise Gap(f"binary op {op!r} unknown")
    return ops[op]()


def like(s, pattern, ci=False):
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, s, re.S | (re.I if ci else 0)) is not None


def cast(v, to, ctx):
    if v is None:
        return None
    to = to.lower()
    if to == "interval":
        if isinstance(v, dt.timedelta):
            return v
        raise Gap(f"cast of {v!r} to interval")
    if to in ("integer", "int", "bigint", "smallint"):
        return int(v)
    if to in ("text", "varchar"):
        return str(v)
    if to in ("numeric", "decimal"):
        return decimal.Decimal(str(v))
    if to == "date":
        return v.astimezone(ctx.zone).date() if isinstance(v, dt.datetime) else v
    if to in ("timestamptz", "timestamp"):
        return v
    raise Gap(f"cast to {to!r} unknown")


CALLS = {
    "lower": lambda a: a[0].lower() if a[0] is not None else None,
    "upper": lambda a: a[0].upper() if a[0] is not None else None,
    "coalesce": lambda a: next((x for x in a if x is not None), None),
    "abs": lambda a: abs(a[0]) if a[0] is not None else None,
    "length": lambda a: len(a[0]) if a[0] is not None else None,
}


def ev(e, ctx):
    """Evaluates a model expression (SQL semantics: NULL propagates)."""
    k = e.get("kind")
    if k == "param":
        return ctx.params[e["n"] - 1]
    if k == "literal":
        return literal(e["value"])
    if k == "column":
        key = (e["column"]["table"], e["column"]["column"])
        if ctx.row is None or key not in ctx.row:
            raise Gap(f"column {key} is not in the row at hand")
        return ctx.row[key]
    if k == "now":
        return ctx.now
    if k == "current_date":
        return ctx.now.astimezone(ctx.zone).date()
    if k == "unary":
        v = ev(e["arg"], ctx)
        if v is None:
            return None
        return (not v) if e["op"] == "not" else -v
    if k == "binary":
        return binary(e["op"], ev(e["left"], ctx), ev(e["right"], ctx))
    if k == "is_null":
        v = ev(e["arg"], ctx) is None
        return (not v) if e.get("negated") else v
    if k == "in_list":
        v = ev(e["arg"], ctx)
        items = []
        for it in e["list"]:
            x = ev(it, ctx)
            items.extend(x if isinstance(x, (list, tuple)) else [x])
        if v is None:
            return None
        hit = v in [x for x in items if x is not None]
        r = hit if hit or None not in items else None
        return (not r if r is not None else None) if e.get("negated") else r
    if k == "like":
        v, p = ev(e["arg"], ctx), ev(e["pattern"], ctx)
        if v is None or p is None:
            return None
        r = like(v, p, e.get("case_insensitive", False))
        return (not r) if e.get("negated") else r
    if k == "cast":
        return cast(ev(e["arg"], ctx), e["to"], ctx)
    if k == "call":
        f = e["function"]
        if f not in CALLS:
            raise Gap(f"function {f!r} unknown to this executor")
        return CALLS[f]([ev(a, ctx) for a in e.get("args", [])])
    if k == "row":
        return tuple(ev(x, ctx) for x in e["items"])
    if k == "computed":
        # The application's own computation over the parameters: Postgres SQL, evaluated there.
        if ctx.pg is None:
            raise Gap("an application-computed value needs the Postgres connection")
        args = []

        def placeholder(m):
            args.append(ctx.params[int(m.group(1)) - 1])
            return "%s"

        sql = re.sub(r"\$(\d+)", placeholder, e["sql"].replace("%", "%%"))
        return ctx.pg.execute(f"SELECT ({sql})", args).fetchone()[0]
    if k == "case":
        # CASE [operand] WHEN … THEN … ELSE otherwise END: with an operand, a branch is taken
        # when operand = when is TRUE.
        base = ev(e["operand"], ctx) if e.get("operand") else None
        for br in e.get("branches", []):
            w = ev(br["when"], ctx)
            hit = cmp("eq", base, w) if e.get("operand") else w
            if hit is True:
                return ev(br["then"], ctx)
        return ev(e["otherwise"], ctx) if e.get("otherwise") else None
    raise Gap(f"expression kind {k!r} unknown: {e}")


# ---------------------------------------------------------------- binds and partitions

def bucket_of(v, width, zone):
    """The bucket (a date for day/month, a timestamp for hour) that instant `v` falls in."""
    if isinstance(v, dt.datetime):
        local = v.astimezone(zone) if v.tzinfo else v.replace(tzinfo=zone)
    elif isinstance(v, dt.date):
        local = dt.datetime(v.year, v.month, v.day, tzinfo=zone)
    else:
        raise Gap(f"a bucket of {v!r}, which is no time")
    if width == "day":
        return local.date()
    if width == "month":
        return local.date().replace(day=1)
    if width == "hour":
        return local.replace(minute=0, second=0, microsecond=0)
    raise Gap(f"bucket width {width!r} unknown")


def next_bucket(b, width):
    if width == "day":
        return b + dt.timedelta(days=1)
    if width == "month":
        return (b.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return b + dt.timedelta(hours=1)


def bucket_start(b, width, zone):
    if isinstance(b, dt.datetime):
        return b
    return dt.datetime(b.year, b.month, b.day, tzinfo=zone)


def bind_value(b, ctx):
    """The value of one bind; a Python list for a list-valued bind (buckets, `list`)."""
    f = b.get("from")
    if f == "expr":
        return ev(b["expr"], ctx)
    if f == "literal":
        return literal(b["value"])
    if f == "list":
        out = []
        for it in b["items"]:
            x = ev(it, ctx)
            out.extend(x if isinstance(x, (list, tuple)) else [x])
        return out
    if f == "bucket":
        zone = zoneinfo.ZoneInfo(b.get("time_zone", "UTC"))
        return bucket_of(bind_value(b["of"], ctx), b["bucket"], zone)
    if f == "buckets":
        zone = zoneinfo.ZoneInfo(b.get("time_zone", "UTC"))
        lo, hi = bind_value(b["lower"], ctx), bind_value(b["upper"], ctx)
        first, last = bucket_of(lo, b["bucket"], zone), bucket_of(hi, b["bucket"], zone)
        if b.get("upper_exclusive") and bucket_start(last, b["bucket"], zone) == hi:
            last = None if last == first else last
            out, x = [], first
            while last is not None and x < last:
                out.append(x)
                x = next_bucket(x, b["bucket"])
            return out
        out, x = [], first
        while x <= last:
            out.append(x)
            x = next_bucket(x, b["bucket"])
        return out
    if f == "epoch_micros":
        # A time stored as a bigint of microseconds since 1970-01-01 UTC (a column whose
        # `encoding` is epoch_micros): CQL's timestamp holds milliseconds only.
        us = epoch_micros(bind_value(b["of"], ctx))
        if b.get("null_last"):
            # NULL stored as the largest bigint, infinity one below (epoch_micros_null_last).
            return NULL_MICROS if us is None else (NULL_MICROS - 1 if us == NULL_MICROS else us)
        return us
    if f == "encoded":
        # A key column kept as a bigint that stores NULL (`encoding`: the form, then where NULL
        # sorts): NULL as the largest (null_last) or smallest (null_first) bigint, a value equal
        # to it one nearer the others.
        return encoded(b["encoding"], bind_value(b["of"], ctx))
    if f == "seconds_until":
        # `USING TTL ?` of a write: seconds from the sender's clock to the instant.
        if b.get("clock") != "sent":
            raise Gap(f"seconds_until with clock {b.get('clock')!r}")
        return seconds_until(bind_value(b["of"], ctx), dt.datetime.now(UTC), b["min"], b["max"])
    if f == "current":
        key = (b["column"]["table"], b["column"]["column"])
        if ctx.row is None or key not in ctx.row:
            raise Gap(f"bind from current {key}: no such column in the row read before")
        return ctx.row[key]
    raise Gap(f"bind from {f!r} is not one a read can use")


EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def seconds_until(instant, now, lo, hi):
    """A row's TTL as plan.json's seconds_until states it: whole seconds until `instant`,
    rounded up, at least `lo`; 0 (CQL's "no TTL") for NULL or beyond `hi`."""
    if instant is None:
        return 0
    if not isinstance(instant, dt.datetime):
        raise Gap(f"seconds_until of {instant!r}, which is no timestamp")
    instant = instant if instant.tzinfo else instant.replace(tzinfo=UTC)
    us = (instant - now) // dt.timedelta(microseconds=1)
    secs = -(-us // 1_000_000)
    return 0 if secs > hi else max(secs, lo)


NULL_MICROS = 9223372036854775807  # the bigint an epoch_micros_null_last column stores for NULL


def epoch_micros(v):
    if v is None:
        return None
    if not isinstance(v, dt.datetime):
        raise Gap(f"epoch_micros of {v!r}, which is no timestamp")
    v = v if v.tzinfo else v.replace(tzinfo=UTC)
    return (v - EPOCH) // dt.timedelta(microseconds=1)


NULL_FIRST = -9223372036854775808  # the bigint a `*_null_first` column stores for NULL


def encoded(enc, v):
    """The bigint a column kept in `enc` stores for `v`."""
    if v is None:
        plain = None
    elif enc.startswith("epoch_micros_"):
        plain = epoch_micros(v)
    elif enc.startswith("epoch_days_"):
        if not isinstance(v, dt.date) or isinstance(v, dt.datetime):
            raise Gap(f"{enc} of {v!r}, which is no date")
        plain = (v - dt.date(1970, 1, 1)).days
    elif enc.startswith("integer_"):
        plain = int(v)
    else:
        raise Gap(f"encoding {enc!r} unknown to this executor")
    null = NULL_MICROS if enc.endswith("_null_last") else NULL_FIRST
    if plain is None:
        return null
    if plain == null:
        return plain - 1 if null == NULL_MICROS else plain + 1
    return plain


def decode(column, v):
    """A stored value as the source's: an epoch_micros bigint back to its instant."""
    enc = column.get("encoding")
    if enc is None or v is None:
        return v
    if enc == "epoch_micros":
        return EPOCH + dt.timedelta(microseconds=v)
    if enc.endswith("_null_last") or enc.endswith("_null_first"):
        if v == (NULL_MICROS if enc.endswith("_null_last") else NULL_FIRST):
            return None
        if enc.startswith("epoch_micros_"):
            return EPOCH + dt.timedelta(microseconds=v)
        if enc.startswith("epoch_days_"):
            return dt.date(1970, 1, 1) + dt.timedelta(days=v)
        if enc.startswith("integer_"):
            return v
    raise Gap(f"column {column.get('name')}: encoding {enc!r} unknown to this executor")


INTS = ("tinyint", "smallint", "int", "bigint", "varint", "counter")


def to_cql(v, cql_type):
    """A Python value as the driver binds it for the marker's CQL type (the bind's `type`)."""
    if v is None:
        return None
    t = cql_type.strip().lower()
    if t.startswith(("list<", "set<")):
        inner = t[t.index("<") + 1:-1]
        return [to_cql(x, inner) for x in v]
    if t in INTS:
        return int(v)
    if t in ("text", "varchar", "ascii"):
        return str(v)
    if t == "timestamp":
        if not isinstance(v, dt.datetime):
            raise Gap(f"a {type(v).__name__} bound as timestamp")
        return v.astimezone(UTC) if v.tzinfo else v.replace(tzinfo=UTC)
    if t == "date":
        if isinstance(v, dt.datetime) or not isinstance(v, dt.date):
            raise Gap(f"a {type(v).__name__} bound as date")
        return v
    if t == "decimal":
        return decimal.Decimal(str(v))
    if t in ("double", "float"):
        return float(v)
    if t == "boolean":
        return bool(v)
    if t in ("uuid", "timeuuid"):
        return v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))
    raise Gap(f"CQL type {cql_type!r} unknown to this executor")


def statements(cql, binds, partitions, ctx):
    """(cql, values) per request the partitions spec asks for; each value sent as its bind's
    CQL `type` (a list-valued bind of `partitions: each` sends each value as that type)."""
    values = []
    for b in binds:
        if not b.get("type"):
            raise Gap(f"bind {b.get('column')!r} states no CQL type")
        values.append((bind_value(b["value"], ctx), b["type"]))
    kind = (partitions or {}).get("kind", "one")
    if kind in ("one", "scan"):
        return [[to_cql(v, t) for v, t in values]], kind
    if kind == "each":
        i = partitions["bind"]
        listed, t = values[i]
        if not isinstance(listed, list):
            raise Gap(f"partitions each bind {i} is not list-valued")
        if t.lower().startswith("list<"):
            return [[to_cql(v, tt) for v, tt in values]], kind  # one `IN ?` request
        out = []
        for x in listed:
            row = [None if j == i else to_cql(v, tt) for j, (v, tt) in enumerate(values)]
            row[i] = to_cql(x, t)
            out.append(row)
        return out, kind
    raise Gap(f"partitions kind {kind!r} unknown")


PREPARED = {}


def prepare(session, cql, binds):
    """The plan's CQL prepared as it stands (`?` markers); each bind's stated `type` must be
    the type Cassandra prepares its marker with."""
    if cql not in PREPARED:
        ps = session.prepare(cql)
        markers = [m.type.cql_parameterized_type() for m in ps.column_metadata]
        stated = [b.get("type") for b in binds]
        if len(markers) != len(stated):
            raise Gap(f"{len(stated)} binds for {len(markers)} markers: {cql}")
        for i, (m, t) in enumerate(zip(markers, stated)):
            if cql_type_text(m) != cql_type_text(t or ""):
                raise Gap(f"bind {i} ({binds[i].get('column')}) is typed {t!r} in plan.json; "
                          f"Cassandra prepares the marker as {m!r}: {cql}")
        PREPARED[cql] = ps
    return PREPARED[cql]


def cql_type_text(t):
    """A CQL type's text compared loosely: no spaces, lower case, `varchar` as its alias `text`,
    `frozen<>` unwrapped (the protocol's metadata does not say frozen)."""
    t = re.sub(r"\bvarchar\b", "text", t.replace(" ", "").lower())
    while "frozen<" in t:
        i = t.index("frozen<")
        depth, j = 0, i + len("frozen")
        for j in range(i + len("frozen"), len(t)):
            depth += {"<": 1, ">": -1}.get(t[j], 0)
            if depth == 0:
                break
        t = t[:i] + t[i + len("frozen") + 1:j] + t[j + 1:]
    return t


def run_cql(session, cql, binds, vals, consistency):
    """Runs one request of the plan's CQL at its consistency level."""
    st = prepare(session, cql, binds).bind(vals)
    st.consistency_level = getattr(ConsistencyLevel, consistency or "LOCAL_QUORUM")
    st.fetch_size = 1000  # a scan is paged; iterating the result fetches every page
    return list(session.execute(st))


def source_rows(rows, table):
    """Each CQL row as {(source table, source column): value} (what filters, sorts and `current`
    binds name, decoded per the table column's `encoding`) and {("cql", table, column): the
    value as stored} (what a read's `columns` name)."""
    out = []
    for r in rows:
        d = {}
        for c in table["columns"]:
            if not hasattr(r, c["name"]):
                continue
            d[("cql", table["name"], c["name"])] = getattr(r, c["name"])
            if c.get("source"):
                d[(c["source"]["table"], c["source"]["column"])] = decode(c, getattr(r, c["name"]))
        out.append(d)
    return out


def read(session, plan, q, params, pg=None):
    """Executes read mapping `q` with `params` as plan.json states it; the source-keyed rows."""
    if not q.get("cql"):
        raise Gap(f"no CQL: {q.get('unsupported')}")
    tables = {t["name"]: t for t in plan["design"]["tables"]}
    ctx = Ctx(params, plan.get("semantics", {}), pg)
    level = (q.get("consistency") or {}).get("level")
    table = tables[q["table"]]
    binds = q.get("binds", [])
    prepare(session, q["cql"], binds)
    reqs, _ = statements(q["cql"], binds, q.get("partitions"), ctx)
    rows = []
    for vals in reqs:
        rows.extend(source_rows(run_cql(session, q["cql"], binds, vals, level), table))
    for step in q.get("then") or []:
        rows = then_step(session, tables, step, rows, ctx, level)
    if q.get("counter"):
        rows = counter_rows(table, q, rows)
    return client(q.get("client") or {}, rows, ctx)


def counter_rows(table, q, rows):
    """A counter table's rows as plan.json's `counter` says: groups whose count is 0 hold no
    row; without GROUP BY the read returns one row always, 0 for the count and NULL for a sum of
    no rows."""
    k = q["counter"]
    n = ("cql", table["name"], k["count_column"])
    rows = [r for r in rows if (r.get(n) or 0) != 0]
    if rows or k["grouped"]:
        return rows
    return [{("cql", table["name"], c["cql_column"]): 0 if c["cql_column"] == k["count_column"]
             else None for c in q.get("columns", []) if c.get("cql_column")}]


def then_step(session, tables, step, rows, ctx, level):
    """A read after the first, once per row read before; its rows joined onto that row."""
    if "table" not in step or "cql" not in step:
        raise Gap(f"then step without table/cql: {sorted(step)}")
    table = tables[step["table"]]
    prepare(session, step["cql"], step.get("binds", []))
    out = []
    for r in rows:
        ctx.row = r
        try:
            reqs, _ = statements(step["cql"], step.get("binds", []), step.get("partitions"), ctx)
        finally:
            ctx.row = None
        if any(v is None for vals in reqs for v in vals):
            continue  # a NULL key finds nothing: dropped, as an inner join
        for vals in reqs:
            got = run_cql(session, step["cql"], step.get("binds", []), vals, level)
            for s in source_rows(got, table):
                out.append({**r, **s})
    return out


# ---------------------------------------------------------------- the client's work

def sort_column(k):
    by = k["by"]
    if by.get("kind") != "column":
        raise Gap(f"sort by {by.get('kind')!r}: this executor sorts by columns only")
    return (by["column"]["table"], by["column"]["column"])


def client(work, rows, ctx):
    if work.get("unnest"):
        raise Gap("client unnest is not executed by this executor")
    for flt in work.get("filters", []):
        kept = []
        for r in rows:
            ctx.row = r
            if ev(flt, ctx) is True:
                kept.append(r)
        ctx.row = None
        rows = kept
    if work.get("group_by") or work.get("aggregates") or work.get("group_row"):
        raise Gap("client group_by/aggregates: not executed by this executor")
    if work.get("distinct"):
        seen, kept = set(), []
        for r in rows:
            k = tuple(sorted(r.items()))
            if k not in seen:
                seen.add(k)
                kept.append(r)
        rows = kept
    for k in reversed(work.get("sort", [])):  # stable sorts, last key first
        key = sort_column(k)
        nulls = [r for r in rows if r.get(key) is None]
        vals = sorted([r for r in rows if r.get(key) is not None], key=lambda r: r[key],
                      reverse=k.get("desc", False))
        rows = nulls + vals if k["nulls_first"] else vals + nulls
    if work.get("offset") is not None:
        rows = rows[int(ev(work["offset"], ctx)):]
    if work.get("limit") is not None:
        rows = rows[:int(ev(work["limit"], ctx))]
    return rows


# ---------------------------------------------------------------- parameters, Postgres, comparison

def param_columns(pattern):
    """{n: (table, column)} for each parameter the pattern compares with a column."""
    out = {}
    for e in pattern.get("equality", []):
        x = e.get("expr") or {}
        if x.get("kind") == "param":
            out[x["n"]] = (e["column"]["table"], e["column"]["column"])
    return out


def sample_params(pg, pattern, samples, rng):
    """Parameter lists drawn from real source rows: equality parameters from one joined row
    (or, every other set, each from another row),
    window bounds around a row's time, the rest from the example's literal."""
    cols = param_columns(pattern)
    ranges = {}
    for rg in pattern.get("ranges", []):
        for side in ("lower", "upper"):
            x = ((rg.get(side) or {}).get("expr")) or {}
            if x.get("kind") == "param":
                ranges[x["n"]] = (side, (rg["column"]["table"], rg["column"]["column"]))
    wanted = sorted(set(cols.values()) | {c for _, c in ranges.values()})
    # A window is drawn around a row's value: rows whose value is NULL have no window.
    bounded = sorted({c for _, c in ranges.values()})
    rows = draw_rows(pg, pattern, wanted, samples, bounded) if wanted else [{}] * samples
    out = []
    for i, row in enumerate(rows):
        ps = []
        for p in pattern.get("params", []):
            n = p["n"]
            if n in cols:
                # Every other set mixes rows (each parameter from another row): combinations
                # that match nothing, so a dropped filter shows.
                mixed = rows[(i + n) % len(rows)] if i % 2 else row
                ps.append(mixed[cols[n]])
            elif n in ranges:
                side, col = ranges[n]
                hours = [4, 12, 30][i % 3]  # windows within a day and across midnight
                d = dt.timedelta(hours=hours if side == "upper" else -hours)
                ps.append(row[col] + d)
            elif p.get("replaced_literal"):
                ps.append(pg_value(pg, p["replaced_literal"], p["type"]))
            elif p["type"] in ("bigint", "integer"):
                ps.append(rng.choice([1, 3, 10, 50]))  # a LIMIT/OFFSET with no example
            else:
                raise Gap(f"{pattern['id']} ${n}: no column, window or example to draw it from")
        out.append(ps)
    return out


def pg_value(pg, sql_literal, sql_type):
    return pg.execute(f"SELECT ({sql_literal})::{sql_type}").fetchone()[0]


def draw_rows(pg, pattern, wanted, samples, not_null=()):
    tables = pattern["tables"]
    alias = {t: f"t{i}" for i, t in enumerate(tables)}
    sql = f"SELECT {', '.join(f'{alias[t]}.{c}' for t, c in wanted)} FROM {tables[0]} {alias[tables[0]]}"
    for j in pattern.get("join_path", []):
        on = " AND ".join(f"{alias[j['left_table']]}.{a} = {alias[j['right_table']]}.{b}"
                          for a, b in zip(j["left_columns"], j["right_columns"]))
        sql += f" JOIN {j['right_table']} {alias[j['right_table']]} ON {on}"
    if not_null:
        sql += " WHERE " + " AND ".join(f"{alias[t]}.{c} IS NOT NULL" for t, c in not_null)
    sql += f" ORDER BY random() LIMIT {samples}"
    return [dict(zip(wanted, r)) for r in pg.execute(sql).fetchall()]


def norm(v):
    """One comparable form for values of both drivers."""
    if isinstance(v, dt.datetime):
        v = v if v.tzinfo else v.replace(tzinfo=UTC)
        return ("ts", (v - EPOCH) // dt.timedelta(microseconds=1))
    if isinstance(v, decimal.Decimal):
        return ("num", str(v.normalize()))
    if isinstance(v, float):
        return ("num", str(decimal.Decimal(repr(v)).normalize()))
    if isinstance(v, uuid.UUID):
        return ("uuid", str(v))
    if hasattr(v, "date") and type(v).__name__ == "Date":  # cassandra.util.Date
        return ("date", str(v.date()))
    if isinstance(v, dt.date):
        return ("date", str(v))
    return ("v", v)


def as_stored(v, column):
    """A Postgres value as the result column's CQL type can hold it: a CQL `timestamp` keeps
    milliseconds (sub-millisecond digits rounded down, as the backfill and write paths store
    them); an `epoch_micros` column keeps microseconds."""
    if column.get("type") == "timestamp" and not column.get("encoding") and v[0] == "ts":
        return ("ts", v[1] // 1000 * 1000)
    return v


def result_row(r, columns):
    """One result row as the read's `columns` state it: each from its table's CQL column,
    decoded per its `encoding`."""
    out = []
    for c in columns:
        if not c.get("cql_column"):
            raise Gap(f"result column {c['name']!r} is held by no CQL column")
        if not c.get("table"):
            raise Gap(f"result column {c['name']!r}: an unnested entry field, not executed here")
        key = ("cql", c["table"], c["cql_column"])
        if key not in r:
            raise Gap(f"result column {c['name']!r}: {c['table']}.{c['cql_column']} not read")
        out.append(norm(decode(c, r[key])))
    return tuple(out)


def sort_columns(pattern, columns):
    """The result positions of the ORDER BY's columns; None when one is not returned."""
    out = []
    for o in pattern["order_by"]:
        want = (o["column"]["table"], o["column"]["column"])
        at = [i for i, c in enumerate(columns)
              if c.get("source") and (c["source"]["table"], c["source"]["column"]) == want]
        if not at:
            return None
        out.append(at[0])
    return out


def same_order(sql_rows, cql_rows, keys):
    """SQL's order holds up to ties: rows equal in every ORDER BY column may come in any order
    (SQL leaves it open), so the sort keys must come in the same sequence and each group of
    equal keys hold the same rows — but the last, which a LIMIT may cut anywhere. Without the
    keys among the result columns, the rows must come in the same order."""
    if keys is None or len(sql_rows) != len(cql_rows):
        return sql_rows == cql_rows
    key = lambda r: tuple(r[i] for i in keys)
    if [key(r) for r in sql_rows] != [key(r) for r in cql_rows]:
        return False
    groups = {}
    for side, rows in (("sql", sql_rows), ("cql", cql_rows)):
        for r in rows:
            groups.setdefault(key(r), {"sql": [], "cql": []})[side].append(repr(r))
    last = key(sql_rows[-1]) if sql_rows else None
    return all(sorted(g["sql"]) == sorted(g["cql"]) for k, g in groups.items() if k != last)


def check(pg, session, plan, pattern, q, params):
    """(None, rows compared) when the read matches, else (the difference, 0)."""
    columns = q.get("columns")
    if not columns:
        raise Gap(f"{q['pattern']}: the read states no result columns")
    sql_rows = [tuple(as_stored(norm(v), c) for v, c in zip(r, columns))
                for r in pg.execute(pattern["sql"], params).fetchall()]
    rows = read(session, plan, q, params, pg)
    cql_rows = [result_row(r, columns) for r in rows]
    if pattern.get("order_by"):
        if not same_order(sql_rows, cql_rows, sort_columns(pattern, columns)):
            return f"ordered rows differ:\n  SQL: {sql_rows}\n  CQL: {cql_rows}", 0
    elif sorted(map(repr, sql_rows)) != sorted(map(repr, cql_rows)):
        return f"row multisets differ:\n  SQL: {sql_rows}\n  CQL: {cql_rows}", 0
    return None, len(sql_rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan")
    ap.add_argument("--pg", required=True)
    ap.add_argument("--cql", required=True)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import json
    with open(a.plan) as f:
        plan = json.load(f)
    if plan.get("format_version") != 4:
        print(f"{a.plan}: format {plan.get('format_version')}, this executor reads format 4")
        return 2
    host, _, port = a.cql.removeprefix("cql://").rpartition(":")
    cluster = Cluster([host], port=int(port))
    session = cluster.connect()
    # RawCursor: the SQL keeps its own $n placeholders, bound by the server.
    pg = psycopg.connect(a.pg, autocommit=True, cursor_factory=psycopg.RawCursor)
    zone = plan.get("semantics", {}).get("time_zone", "UTC")
    pg.execute("SELECT set_config('TimeZone', $1, false)", [zone])
    patterns = {p["id"]: p for p in plan["workload"]["patterns"]}
    rng = random.Random(a.seed)
    ok = bad = gaps = 0
    for q in plan["design"]["queries"]:
        pattern = patterns[q["pattern"]]
        try:
            tried = compared = 0
            for params in sample_params(pg, pattern, a.samples, rng):
                diff, n = check(pg, session, plan, pattern, q, params)
                tried += 1
                compared += n
                if diff:
                    print(f"MISMATCH {q['pattern']} with {params}: {diff}")
                    bad += 1
                    break
            else:
                if compared == 0:
                    print(f"NOT EXECUTED {q['pattern']}: no parameter set returned a row")
                    gaps += 1
                else:
                    print(f"ok {q['pattern']} ({tried} parameter sets, {compared} rows matched)")
                    ok += 1
        except Gap as g:
            print(f"NOT EXECUTABLE {q['pattern']}: contract gap: {g}")
            gaps += 1
        except Exception as e:  # a value the driver or Cassandra refused: the read failed
            print(f"FAILED {q['pattern']}: {type(e).__name__}: {e}")
            bad += 1
    cluster.shutdown()
    print(f"contract executor: {ok} reads matched, {bad} mismatched, {gaps} not executable")
    return 0 if bad == 0 and gaps == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
