#!/usr/bin/env python3
"""The backfill of a remodel plan as a PySpark job (written by `remodel export spark`).

job.json, beside this file, holds every target table of the plan: its source_sql, columns with
CQL types, keys, bucket derivations and the driving table its reads are cut on. For each table
the job reads source_sql through Spark's JDBC source, one partition per ctid page range of the
driving table, every partition inside one snapshot that the driver exports and holds open for the
whole run; converts each value exactly as `remodel backfill` does (NUMERIC digit for digit, times
to UTC milliseconds, arrays and json-aggregated children to CQL collections and UDTs); writes the
rows with the Spark Cassandra Connector; and puts every row CQL cannot hold (a NULL key, a NaN
numeric, …) in OUT/rejects/<table>.jsonl with its source key and reason, as the Rust engine does.

No password is taken from the command line or written anywhere: the Postgres one comes from
REMODEL_SOURCE (a postgres:// URL) or REMODEL_SOURCE_PASSWORD / PGPASSWORD, the Cassandra one
from REMODEL_TARGET_PASSWORD.

Exit codes: 0 completed, 1 stopped (too many rejects, a database error), 2 unusable input.
"""

import argparse
import datetime
import ipaddress
import json
import os
import re
import sys
import time
import urllib.parse
import uuid as uuidlib

JOB_FORMAT_VERSION = 1
EXIT_STOPPED = 1
EXIT_UNUSABLE = 2


class Unusable(Exception):
    """Input the job cannot run with (exit 2)."""


class Stopped(Exception):
    """A run that stopped part-way (exit 1)."""


# ---------------------------------------------------------------- CQL types


def parse_cql_type(text, udts, keyspace_types=None, depth=0):
    """`map<text, frozen<addr>>` → ('map', K, V); natives → ('native', name); UDTs resolved."""
    tokens = re.findall(r'"(?:[^"]|"")*"|[<>,]|[^\s<>,]+', text)
    pos = [0]

    def unquote(word):
        if word.startswith('"') and word.endswith('"') and len(word) >= 2:
            return word[1:-1].replace('""', '"')
        return word.lower()

    def expect(tok):
        if pos[0] >= len(tokens) or tokens[pos[0]] != tok:
            raise Unusable("CQL type `%s`: expected `%s`" % (text, tok))
        pos[0] += 1

    def one(level):
        if level > 16:
            raise Unusable("CQL type `%s`: nested too deeply" % text)
        if pos[0] >= len(tokens):
            raise Unusable("CQL type `%s`: ends early" % text)
        word = tokens[pos[0]]
        pos[0] += 1
        name = unquote(word)

        def args(n):
            expect("<")
            out = [one(level + 1)]
            while pos[0] < len(tokens) and tokens[pos[0]] == ",":
                pos[0] += 1
                out.append(one(level + 1))
            expect(">")
            if n and len(out) != n:
                raise Unusable("CQL type `%s`: `%s` takes %d type argument(s)" % (text, name, n))
            return out

        if not word.startswith('"'):
            if name == "frozen":
                return args(1)[0]
            if name in ("list", "set"):
                return (name, args(1)[0])
            if name == "map":
                k, v = args(2)
                return ("map", k, v)
            if name == "tuple":
                return ("tuple", args(0))
            if name in NATIVES:
                return ("native", "text" if name == "varchar" else name)
        for udt in udts:
            if unquote(udt["name"]) == name:
                fields = [
                    (unquote(f), parse_cql_type(t, udts, depth=level + 1))
                    for f, t in udt["fields"]
                ]
                return ("udt", name, fields)
        raise Unusable(
            "CQL type `%s`: `%s` is neither a CQL type nor a user type of the plan" % (text, name)
        )

    t = one(depth)
    if pos[0] != len(tokens):
        raise Unusable("CQL type `%s`: unexpected `%s`" % (text, tokens[pos[0]]))
    return t


NATIVES = {
    "ascii", "text", "varchar", "boolean", "blob", "tinyint", "smallint", "int", "bigint",
    "varint", "decimal", "float", "double", "timestamp", "date", "time", "duration", "uuid",
    "timeuuid", "inet",
}

INT_RANGES = {
    "tinyint": (-(1 << 7), (1 << 7) - 1),
    "smallint": (-(1 << 15), (1 << 15) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "bigint": (-(1 << 63), (1 << 63) - 1),
    "varint": (-(1 << 63), (1 << 63) - 1),
}


def is_collection(t):
    return t[0] in ("list", "set", "map")


def spark_type(t):
    """The Spark type a value of CQL type `t` is handed to the connector as (exact forms)."""
    from pyspark.sql import types as T

    kind = t[0]
    if kind == "native":
        return {
            "ascii": T.StringType(), "text": T.StringType(), "boolean": T.BooleanType(),
            "blob": T.BinaryType(), "tinyint": T.LongType(), "smallint": T.LongType(),
            "int": T.LongType(), "bigint": T.LongType(), "varint": T.LongType(),
            # Decimal text goes to java.math.BigDecimal(String): every digit and the scale kept.
            "decimal": T.StringType(), "float": T.FloatType(), "double": T.DoubleType(),
            # Milliseconds since 1970 (UTC); nanoseconds since midnight.
            "timestamp": T.LongType(), "time": T.LongType(),
            "date": T.StringType(), "duration": T.StringType(), "uuid": T.StringType(),
            "timeuuid": T.StringType(), "inet": T.StringType(),
        }[t[1]]
    if kind in ("list", "set"):
        return T.ArrayType(spark_type(t[1]), containsNull=False)
    if kind == "map":
        return T.MapType(spark_type(t[1]), spark_type(t[2]), valueContainsNull=False)
    if kind == "udt":
        return T.StructType([T.StructField(f, spark_type(ft), True) for f, ft in t[2]])
    raise Unusable("CQL tuple columns are not supported by the Spark job (map them to text)")


# ---------------------------------------------------------------- JSON → CQL values
# The same rules as crates/backfill/src/json.rs: numbers are read from their JSON text, never
# through a float, so decimals keep every digit; a value CQL cannot hold is an error (a reject).


class ValueError_(Exception):
    """Why one value cannot be stored (the reject's reason)."""


class RawNumber(str):
    """A JSON number kept as its text."""


def _raw_constant(name):
    raise ValueError_("invalid JSON from source_sql: %s is not JSON" % name)


def _abbreviate(s):
    return s if len(s) <= 60 else s[:57] + "…"


def _show_json(v):
    if isinstance(v, RawNumber):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def _int(raw):
    if not isinstance(raw, RawNumber) or not re.fullmatch(r"-?\d+", raw):
        raise ValueError_("JSON %s is not an integer" % _abbreviate(_show_json(raw)))
    return int(raw)


def _narrow(v, cql):
    lo, hi = INT_RANGES[cql]
    if not lo <= v <= hi:
        raise ValueError_("%d does not fit CQL %s" % (v, cql))
    return v


def _string(raw):
    if not isinstance(raw, str) or isinstance(raw, RawNumber):
        raise ValueError_("JSON %s is not a string" % _abbreviate(_show_json(raw)))
    return raw


def decimal_text(text):
    """Decimal text as CQL stores it (the connector's BigDecimal(String)), or the reason."""
    t = text.strip()
    low = t.lower()
    if low == "nan":
        raise ValueError_("numeric NaN has no CQL decimal equivalent")
    if low in ("infinity", "+infinity", "inf"):
        raise ValueError_("numeric Infinity has no CQL decimal equivalent")
    if low in ("-infinity", "-inf"):
        raise ValueError_("numeric -Infinity has no CQL decimal equivalent")
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", t):
        raise ValueError_("`%s` is not a decimal number" % text)
    return t


def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)."""
    y = y - 1 if m <= 2 else y
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def _days_in_month(y, m):
    if m == 2:
        return 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_date(text):
    """`YYYY-MM-DD` → days since 1970-01-01, or None."""
    m = re.fullmatch(r"(\d{4})-(\d+)-(\d+)", text)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= mo <= 12 or not 1 <= d <= _days_in_month(y, mo):
        return None
    return days_from_civil(y, mo, d)


def iso_date(days):
    """The ISO text of a day count (signed years outside 0000–9999, as java.time reads them)."""
    y, m, d = civil_from_days(days)
    if 0 <= y <= 9999:
        return "%04d-%02d-%02d" % (y, m, d)
    return "%s%04d-%02d-%02d" % ("-" if y < 0 else "+", abs(y), m, d)


def parse_time(text):
    """`HH:MM:SS[.fffffffff]` → nanoseconds since midnight, or None."""
    hms, _, frac = text.partition(".")
    parts = hms.split(":")
    if len(parts) != 3 or not all(re.fullmatch(r"\d+", p) for p in parts):
        return None
    h, m, s = (int(p) for p in parts)
    if h > 24 or m > 59 or s > 60 or len(frac) > 9 or (frac and not frac.isdigit()):
        return None
    nanos = int(frac.ljust(9, "0")) if frac else 0
    return (h * 3600 + m * 60 + s) * 1_000_000_000 + nanos


def parse_timestamp_ms(text):
    """ISO-8601 as Postgres' JSON prints it → Unix milliseconds (sub-ms digits rounded down)."""
    m = re.fullmatch(r"(\d{4}-\d+-\d+)[T ](.*)", text)
    if not m:
        return None
    days = parse_date(m.group(1))
    rest = m.group(2)
    if days is None:
        return None
    offset = 0
    if rest.endswith("Z"):
        rest = rest[:-1]
    else:
        i = max(rest.rfind("+"), rest.rfind("-"))
        if i >= 0:
            sign = -1 if rest[i] == "-" else 1
            parts = rest[i + 1:].split(":")
            if not all(re.fullmatch(r"\d+", p) for p in parts) or len(parts) > 3:
                return None
            vals = [int(p) for p in parts] + [0, 0]
            offset = sign * (vals[0] * 3600 + vals[1] * 60 + vals[2])
            rest = rest[:i]
    nanos = parse_time(rest)
    if nanos is None:
        return None
    micros = days * 86_400_000_000 + nanos // 1000 - offset * 1_000_000
    return micros // 1000


def _hex_bytea(s):
    if not s.startswith("\\x") or len(s) % 2 != 0:
        return None
    try:
        return bytearray.fromhex(s[2:])
    except ValueError:
        return None


def json_native(raw, name):
    if name == "text":
        if isinstance(raw, str) and not isinstance(raw, RawNumber):
            return raw
        # A nested json/jsonb value stored as text keeps its JSON form.
        return _show_json(raw) if not isinstance(raw, (dict, list)) else json.dumps(
            raw, ensure_ascii=False, separators=(", ", ": ")
        )
    if name == "ascii":
        s = _string(raw)
        if not s.isascii():
            raise ValueError_("text is not ASCII (CQL ascii)")
        return s
    if name == "boolean":
        if not isinstance(raw, bool):
            raise ValueError_("JSON %s is not a boolean" % _abbreviate(_show_json(raw)))
        return raw
    if name in INT_RANGES:
        return _narrow(_int(raw), name)
    if name == "decimal":
        return decimal_text(str(raw) if isinstance(raw, str) else _show_json(raw))
    if name in ("float", "double"):
        if not isinstance(raw, RawNumber):
            raise ValueError_("JSON %s is not a number" % _abbreviate(_show_json(raw)))
        return float(raw)
    if name == "blob":
        s = _string(raw)
        b = _hex_bytea(s)
        if b is None:
            raise ValueError_("`%s` is not bytea hex (\\x…)" % _abbreviate(s))
        return b
    if name in ("uuid", "timeuuid"):
        s = _string(raw)
        try:
            u = uuidlib.UUID(s)
        except ValueError:
            raise ValueError_("`%s` is not a UUID" % _abbreviate(s))
        if name == "timeuuid" and u.version != 1:
            raise ValueError_("%s is not a version-1 UUID (CQL timeuuid)" % u)
        return str(u)
    if name == "timestamp":
        s = _string(raw)
        ms = parse_timestamp_ms(s)
        if ms is None:
            raise ValueError_("`%s` is not an ISO-8601 timestamp" % s)
        return ms
    if name == "date":
        s = _string(raw)
        days = parse_date(s)
        if days is None:
            raise ValueError_("`%s` is not a date" % s)
        return iso_date(days)
    if name == "time":
        s = _string(raw)
        ns = parse_time(s)
        if ns is None:
            raise ValueError_("`%s` is not a time" % s)
        return ns
    if name == "inet":
        s = _string(raw)
        try:
            return str(ipaddress.ip_address(s))
        except ValueError:
            raise ValueError_("`%s` is not an IP address without netmask" % s)
    if name == "duration":
        raise ValueError_("durations inside JSON are not supported (cast to text)")
    raise ValueError_("no conversion to CQL %s" % name)


def json_key(key, t):
    """A map key: JSON object keys are always strings, so the key's type is parsed from one."""
    if t[0] == "native" and t[1] in INT_RANGES:
        return json_native(RawNumber(key) if re.fullmatch(r"-?\d+", key) else key, t[1])
    if t[0] == "native" and t[1] in ("decimal", "float", "double"):
        return json_native(RawNumber(key), t[1])
    if t[0] == "native" and t[1] == "boolean":
        if key not in ("true", "false"):
            raise ValueError_("map key `%s` is not a boolean" % key)
        return key == "true"
    v = json_value(key, t)
    if v is None:
        raise ValueError_("null map key")
    return v


def json_value(raw, t):
    """A parsed JSON value → the Python value of CQL type `t` for Spark; None for JSON null."""
    if raw is None:
        return None
    kind = t[0]
    if kind == "native":
        return json_native(raw, t[1])
    if kind in ("list", "set"):
        if not isinstance(raw, list):
            raise ValueError_("JSON %s is not an array" % _abbreviate(_show_json(raw)))
        out = []
        for item in raw:
            v = json_value(item, t[1])
            if v is None:
                raise ValueError_("null element in a JSON array (CQL collections cannot hold null)")
            out.append(v)
        return out
    if kind == "map":
        if not isinstance(raw, dict):
            raise ValueError_("JSON %s is not an object" % _abbreviate(_show_json(raw)))
        out = {}
        for key in sorted(raw):
            k = json_key(key, t[1])
            v = json_value(raw[key], t[2])
            if v is None:
                raise ValueError_("null map value in JSON (CQL maps cannot hold null)")
            out[k] = v
        return out
    if kind == "udt":
        if not isinstance(raw, dict):
            raise ValueError_("JSON %s is not an object" % _abbreviate(_show_json(raw)))
        names = [f for f, _ in t[2]]
        extra = sorted(k for k in raw if k not in names)
        if extra:
            raise ValueError_("JSON field `%s` is not a field of type %s" % (extra[0], t[1]))
        return tuple(json_value(raw.get(f), ft) for f, ft in t[2])
    raise ValueError_("no conversion to a CQL tuple")


def from_json(text, t):
    """JSON text → (value, None) or (None, reason); SQL NULL → (None, None)."""
    if text is None:
        return (None, None)
    try:
        raw = json.loads(
            text, parse_float=RawNumber, parse_int=RawNumber, parse_constant=_raw_constant
        )
    except ValueError_ as e:
        return (None, str(e))
    except ValueError as e:
        return (None, "invalid JSON from source_sql: %s" % e)
    try:
        v = json_value(raw, t)
    except ValueError_ as e:
        return (None, str(e))
    if v is None:
        return (None, "JSON null where a value is needed")
    return (v, None)


# ---------------------------------------------------------------- Postgres


def pg_quote(ident):
    return '"%s"' % ident.replace('"', '""')


def sql_string(s):
    return "'%s'" % s.replace("'", "''")


class Source:
    """A Postgres URL split into what JDBC takes; the password stays in memory only."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("postgres", "postgresql"):
            raise Unusable(
                "source `%s`: expected a postgres://user@host:port/db URL" % redact(url)
            )
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        password = urllib.parse.unquote(parts.password) if parts.password else None
        for k, v in query:
            if k == "password":
                password = v
        password = password or os.environ.get("REMODEL_SOURCE_PASSWORD") or os.environ.get(
            "PGPASSWORD"
        )
        self.user = urllib.parse.unquote(parts.username or "") or os.environ.get("PGUSER", "")
        self.password = password
        host = parts.hostname or "localhost"
        if ":" in host:
            host = "[%s]" % host
        port = parts.port or 5432
        db = urllib.parse.unquote(parts.path.lstrip("/")) or self.user
        # Every other URL parameter (sslmode, options=-c search_path=…) is a pgjdbc one too.
        rest = [(k, v) for k, v in query if k not in ("password", "user")]
        self.jdbc_url = "jdbc:postgresql://%s:%d/%s" % (host, port, urllib.parse.quote(db))
        if rest:
            self.jdbc_url += "?" + urllib.parse.urlencode(rest, quote_via=urllib.parse.quote)
        self.display = redact(url)

    def properties(self):
        props = {"user": self.user, "driver": "org.postgresql.Driver"}
        if self.password is not None:
            props["password"] = self.password
        return props


def redact(url):
    """`postgres://user:secret@host/db?password=x` → `postgres://user@host/db`."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = userinfo.split(":", 1)[0] + "@" + host
    query = "&".join(
        kv for kv in parts.query.split("&") if kv and not kv.startswith("password=")
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact_text(text):
    """Any URL's password in a message masked (a driver may echo the URL it was given)."""
    return re.sub(r"(://[^:/@\s]+):[^@\s]*@", r"\1@", text)


# Settings every connection gets, as `remodel backfill` sets them: UTC for the JSON that embeds
# timestamps, ISO dates, a name that shows in pg_stat_activity.
SESSION_SETUP = [
    "SET TimeZone = 'UTC'",
    "SET DateStyle = 'ISO'",
    "SET IntervalStyle = 'postgres'",
    "SET extra_float_digits = 1",
    "SET application_name = 'remodel-spark'",
    "SET statement_timeout = 0",
]


class Snapshot:
    """The driver's connection: a REPEATABLE READ transaction whose snapshot every partition of
    every read imports, held open until the last table is written."""

    def __init__(self, spark, source):
        jvm = spark.sparkContext._jvm
        props = jvm.java.util.Properties()
        for k, v in source.properties().items():
            props.setProperty(k, v)
        # The driver class directly: DriverManager does not see jars added by --jars.
        self.conn = jvm.org.postgresql.Driver().connect(source.jdbc_url, props)
        if self.conn is None:
            raise Unusable("pgjdbc does not accept the URL %s" % source.display)
        self.conn.setAutoCommit(False)
        self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for s in SESSION_SETUP:
            self.execute(s)
        row = self.query_one(
            "SELECT pg_export_snapshot(), "
            "(extract(epoch FROM transaction_timestamp()) * 1000000)::int8"
        )
        self.id = row[0]
        self.micros = int(row[1])

    def execute(self, sql):
        st = self.conn.createStatement()
        try:
            st.execute(sql)
        finally:
            st.close()

    def query(self, sql, params=()):
        st = self.conn.prepareStatement(sql)
        try:
            for i, p in enumerate(params):
                st.setString(i + 1, p)
            rs = st.executeQuery()
            n = rs.getMetaData().getColumnCount()
            out = []
            while rs.next():
                out.append([rs.getString(i + 1) for i in range(n)])
            return out
        finally:
            st.close()

    def query_one(self, sql, params=()):
        rows = self.query(sql, params)
        if len(rows) != 1:
            raise Stopped("expected one row from: %s" % sql)
        return rows[0]

    def describe(self, sql):
        """The result columns of `sql`: (name, type oid) each."""
        st = self.conn.prepareStatement("SELECT * FROM (%s) s LIMIT 0" % sql)
        try:
            md = st.getMetaData()
            cols = []
            for i in range(1, md.getColumnCount() + 1):
                cols.append((md.getColumnLabel(i), md.getColumnTypeName(i)))
            return cols
        finally:
            st.close()

    def close(self):
        try:
            self.conn.rollback()
        finally:
            self.conn.close()


# The Postgres binary formats `remodel backfill` decodes (crates/backfill/src/convert.rs PgKind).
BASE_KINDS = {
    "bool": "bool", "int2": "int2", "int4": "int4", "int8": "int8", "oid": "oid",
    "float4": "float4", "float8": "float8", "numeric": "numeric", "text": "text",
    "varchar": "text", "bpchar": "bpchar", "name": "text", "unknown": "text", "citext": "text",
    "json": "json", "jsonb": "jsonb", "bytea": "bytea", "uuid": "uuid",
    "timestamp": "timestamp", "timestamptz": "timestamptz", "date": "date", "time": "time",
    "timetz": "timetz", "interval": "interval", "inet": "inet", "cidr": "inet",
}


class Kinds:
    """Postgres types to decoder kinds: enums read as text, domains as their base, arrays as
    arrays of their element's kind; None when the Rust engine has no decoder either."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.cache = {}

    def of_name(self, name):
        if name not in self.cache:
            row = self.snapshot.query("SELECT to_regtype(?)::oid::text", [name])
            oid = row[0][0] if row else None
            self.cache[name] = self.of_oid(oid) if oid else None
        return self.cache[name]

    def of_oid(self, oid, depth=0):
        if depth > 8:
            return None
        rows = self.snapshot.query(
            "SELECT typname, typtype::text, typbasetype::text, typelem::text, typcategory::text, "
            "typlen::text FROM pg_type WHERE oid = ?::text::oid",
            [oid],
        )
        if not rows:
            return None
        typname, typtype, base, elem, category, typlen = rows[0]
        if typtype == "e":
            return "text"
        if typtype == "d":
            return self.of_oid(base, depth + 1)
        if category == "A" and elem != "0" and typlen == "-1":
            inner = self.of_oid(elem, depth + 1)
            return ("array", inner) if inner else None
        return BASE_KINDS.get(typname)


def decodes_to(kind, t):
    """True when `remodel backfill` converts `kind` to CQL type `t` without a cast in SQL."""
    if kind in ("json", "jsonb"):
        return t[0] != "native" or t[1] in ("text", "ascii")
    if isinstance(kind, tuple):
        if t[0] not in ("list", "set"):
            return False
        inner = t[1]
        if not isinstance(kind[1], tuple) and inner[0] == "list":
            return decodes_to(kind[1], inner[1])
        return decodes_to(kind[1], inner)
    if t[0] != "native":
        return False
    n = t[1]
    ints = ("int2", "int4", "int8", "oid")
    return {
        "text": kind in ("text", "bpchar"), "ascii": kind in ("text", "bpchar"),
        "boolean": kind == "bool", "tinyint": kind in ints, "smallint": kind in ints,
        "int": kind in ints, "bigint": kind in ints, "varint": kind in ints,
        "decimal": kind in ints + ("numeric",), "float": kind == "float4",
        "double": kind in ("float4", "float8"), "blob": kind == "bytea",
        "uuid": kind == "uuid", "timeuuid": kind == "uuid",
        "timestamp": kind in ("timestamp", "timestamptz"), "date": kind == "date",
        "time": kind in ("time", "timetz"), "duration": kind == "interval", "inet": kind == "inet",
    }[n]


def canonical_cast(t):
    """The Postgres type a column is cast to when its own type has no direct decoder for `t`."""
    if t[0] == "native":
        return {
            "text": "text", "ascii": "text", "boolean": "bool", "tinyint": "int2",
            "smallint": "int2", "int": "int4", "bigint": "int8", "varint": "int8",
            "decimal": "numeric", "float": "float4", "double": "float8", "blob": "bytea",
            "uuid": "uuid", "timeuuid": "uuid", "timestamp": "timestamptz", "date": "date",
            "time": "time", "duration": "interval", "inet": "inet",
        }[t[1]]
    if t[0] in ("list", "set") and t[1][0] == "native":
        return canonical_cast(t[1]) + "[]"
    return "jsonb"


def cast_kind(cast):
    if cast.endswith("[]"):
        return ("array", BASE_KINDS[cast[:-2]])
    return BASE_KINDS[cast]


def depth_of(t):
    d = 0
    while t[0] in ("list", "set"):
        d += 1
        t = t[1]
    return d


def reason_sql(cond, reason):
    return "WHEN %s THEN %s" % (cond, reason)


def native_read(v, kind, name):
    """(value SQL, [(condition, reason SQL)], post) for one native column: the value in the form
    the connector takes exactly, the checks that make a row a reject (the Rust engine's reasons),
    and what Spark does to the value after the read."""
    if name in ("text", "ascii"):
        value = "textin(bpcharout(%s))" % v if kind == "bpchar" else "%s::text" % v
        checks = []
        if name == "ascii":
            checks.append(("%s !~ '^[\\x01-\\x7f]*$'" % value, "'text is not ASCII (CQL ascii)'"))
        return value, checks, None
    if name == "boolean":
        return v, [], None
    if name in INT_RANGES:
        value = "%s::int8" % v
        lo, hi = INT_RANGES[name]
        checks = []
        if name not in ("bigint", "varint"):
            checks.append(
                ("%s NOT BETWEEN %d AND %d" % (value, lo, hi),
                 "%s::text || ' does not fit CQL %s'" % (value, name))
            )
        return value, checks, None
    if name == "decimal":
        value = "%s::text" % v
        checks = []
        if kind == "numeric":
            for special in ("NaN", "Infinity", "-Infinity"):
                checks.append(
                    ("%s = '%s'" % (value, special),
                     "'numeric %s has no CQL decimal equivalent'" % special)
                )
        return value, checks, None
    if name == "float":
        return v, [], None
    if name == "double":
        return ("%s::float8" % v), [], None
    if name == "blob":
        return v, [], None
    if name in ("uuid", "timeuuid"):
        value = "%s::text" % v
        checks = []
        if name == "timeuuid":
            checks.append(
                ("substr(%s, 15, 1) <> '1'" % value,
                 "%s || ' is not a version-1 UUID (CQL timeuuid)'" % value)
            )
        return value, checks, None
    if name == "timestamp":
        # extract(epoch) is an exact numeric: microseconds, floored to milliseconds like the
        # binary path; a timestamp without time zone counts as UTC.
        value = "CASE WHEN isfinite(%s) THEN floor(extract(epoch FROM %s) * 1000)::int8 END" % (v, v)
        checks = [
            ("%s = 'infinity'" % v, "'timestamp ''infinity'' has no CQL equivalent'"),
            ("%s = '-infinity'" % v, "'timestamp ''-infinity'' has no CQL equivalent'"),
        ]
        return value, checks, None
    if name == "date":
        value = "CASE WHEN isfinite(%s) THEN %s - DATE '1970-01-01' END" % (v, v)
        checks = [
            ("%s = 'infinity'" % v, "'date ''infinity'' has no CQL equivalent'"),
            ("%s = '-infinity'" % v, "'date ''-infinity'' has no CQL equivalent'"),
        ]
        return value, checks, "date"
    if name == "time":
        ns = "(extract(epoch FROM %s) * 1000000000)" % v
        if kind == "timetz":
            # CQL time has no zone: the UTC time of day.
            day = "86400000000000"
            ns = "((%s %% %s + %s) %% %s)" % (ns, day, day, day)
        return "%s::int8" % ns, [], None
    if name == "duration":
        months = "(extract(year FROM %s) * 12 + extract(month FROM %s))" % (v, v)
        days = "extract(day FROM %s)" % v
        micros = (
            "(extract(hour FROM %s) * 3600000000 + extract(minute FROM %s) * 60000000 "
            "+ extract(microseconds FROM %s))" % (v, v, v)
        )
        negative = "(%s < 0 OR %s < 0 OR %s < 0)" % (months, days, micros)
        value = (
            "(CASE WHEN %s THEN '-' ELSE '' END) || abs(%s)::int8 || 'mo' || abs(%s)::int8 || 'd' "
            "|| (abs(%s) * 1000)::int8 || 'ns'" % (negative, months, days, micros)
        )
        mixed = "(sign(%s) * sign(%s) < 0 OR sign(%s) * sign(%s) < 0 OR sign(%s) * sign(%s) < 0)" % (
            months, days, days, micros, months, micros
        )
        checks = [
            ("abs(%s) > 9223372036854775" % micros, "'interval too long for CQL duration'"),
            (mixed,
             "'interval of ' || %s::int8 || ' months, ' || %s::int8 || ' days, ' || %s::int8 "
             "|| ' µs mixes signs (CQL duration cannot)'" % (months, days, micros)),
        ]
        return "CASE WHEN NOT %s AND abs(%s) <= 9223372036854775 THEN %s END" % (
            mixed, micros, value
        ), checks, None
    if name == "inet":
        full = "CASE family(%s) WHEN 4 THEN 32 ELSE 128 END" % v
        checks = [
            ("masklen(%s) <> %s" % (v, full),
             "host(%s) || '/' || masklen(%s) || ' has a netmask, which CQL inet cannot hold "
             "(map the column to text)'" % (v, v)),
        ]
        return "host(%s)" % v, checks, None
    raise Unusable("no conversion to CQL %s" % name)


class ColumnRead:
    """How one target column is read: its SQL value, the SQL reasons that make a row a reject,
    and the Spark step after the read (a date from its day count, JSON to a collection)."""

    def __init__(self, index, name, cql, value_sql, checks, post):
        self.index = index
        self.name = name
        self.cql = cql
        self.value_sql = value_sql
        self.checks = checks
        self.post = post

    @property
    def alias(self):
        return "c%d" % self.index

    @property
    def reason_alias(self):
        return "e%d" % self.index


def bucket_sql(value, tz, width, zone):
    """The bucket of `value` (a `timestamptz` when `tz`, else a `timestamp` or `date` read as its
    wall clock in UTC) cut in `zone`: the Rust `Bucket::pg_sql_of`, spelt the same (pinned by
    both sides' tests to the same text)."""
    def cut(v):
        return {
            "day": "%s::date" % v,
            "hour": "date_trunc('hour', %s)" % v,
            "month": "date_trunc('month', %s)" % v,
        }[width]
    if not zone or zone == "UTC":
        return cut("(%s AT TIME ZONE 'UTC')" % value) if tz else cut(value)
    instant = value if tz else "(%s::timestamp AT TIME ZONE 'UTC')" % value
    z = "'%s'" % zone.replace("'", "''")
    local = "(%s AT TIME ZONE %s)" % (instant, z)
    if width == "day":
        return "%s::date" % local
    return "(date_trunc('%s', %s) AT TIME ZONE %s)" % (width, local, z)


def column_read(index, col, cql, source_cols, kinds, table_name):
    """The read of one target column from the source_sql's result columns."""
    name = col["name"]
    # Names match exactly: the source_sql aliases each result column with the target column's
    # name, and `Name` beside `name` are two columns (a case-blind match could take the other).
    found = [c for c in source_cols if c[0] == name]
    if not found:
        bucket = col.get("bucket")
        if not bucket:
            have = ", ".join(c[0] for c in source_cols)
            raise Unusable(
                "the source_sql of %s returns no column `%s` (it returns: %s)"
                % (table_name, name, have)
            )
        src = [c for c in source_cols if c[0] == bucket["derived_from"]]
        if not src:
            raise Unusable(
                "table %s: bucket column %s is computed from %s, which the source_sql does "
                "not return (names match exactly)" % (table_name, name, bucket["derived_from"])
            )
        src_name, src_type = src[0]
        expr = bucket_sql(
            "s.%s" % pg_quote(src_name),
            kinds.of_name(src_type) == "timestamptz",
            bucket["bucket"],
            col.get("time_zone"),
        )
        kind = "date" if bucket["bucket"] == "day" else "timestamp"
        if not decodes_to(kind, cql):
            expr = "(%s)::%s" % (expr, canonical_cast(cql))
            kind = cast_kind(canonical_cast(cql))
    else:
        src_name, src_type = found[0]
        expr = "s.%s" % pg_quote(src_name)
        kind = kinds.of_name(src_type)
        if kind is None or not decodes_to(kind, cql):
            cast = canonical_cast(cql)
            expr = "%s::%s" % (expr, cast)
            kind = cast_kind(cast)
        if not decodes_to(kind, cql):
            raise Unusable(
                "table %s, column %s: Postgres type %s has no conversion to CQL %s"
                % (table_name, name, src_type, col["type"])
            )
    if cql[0] == "native":
        value, checks, post = native_read(expr, kind, cql[1])
        return ColumnRead(index, name, cql, value, checks, post)
    if isinstance(kind, tuple):
        # Arrays travel as JSON (exact numbers as text) and are built by the same rules as
        # json-aggregated children; NULL elements and missing dimensions are checked here with
        # the binary path's reasons.
        depth = depth_of(cql)
        checks = [
            ("EXISTS (SELECT 1 FROM unnest(%s) x WHERE x IS NULL)" % expr,
             "'array element is NULL (CQL collections cannot hold null)'"),
            ("array_ndims(%s) > %d" % (expr, depth),
             "'a ' || array_ndims(%s) || '-dimensional array cannot be stored in %s'"
             % (expr, col["type"].replace("'", "''"))),
            ("array_ndims(%s) < %d" % (expr, depth),
             "'array has fewer dimensions than the CQL type'"),
        ]
        return ColumnRead(index, name, cql, "array_to_json(%s)::text" % expr, checks, "json")
    return ColumnRead(index, name, cql, "%s::text" % expr, [], "json")


# ---------------------------------------------------------------- reading plan of a table


def split_pages(pages, rows, rows_per_range):
    """Pages [lo, hi) ranges of about rows_per_range rows; the last one open (as pg.rs)."""
    wanted = -(-int(rows) // max(rows_per_range, 1)) if rows > 0 else 0
    count = min(max(wanted, 1), max(pages, 1))
    per = max(-(-pages // count), 1)
    out = []
    lo = 0
    while lo + per < pages:
        out.append((lo, lo + per))
        lo += per
    out.append((lo, None))
    return out


class TableRead:
    """The read of one target table: its SELECT, JDBC predicates and Spark steps."""

    def __init__(self, table, udts, snapshot, kinds, rows_per_range, partitions):
        self.table = table
        self.name = table["name"]
        cqls = [parse_cql_type(c["type"], udts) for c in table["columns"]]
        for c, t in zip(table["columns"], cqls):
            spark_type(t)  # refuses what the connector cannot take, before any read
        self.split = table.get("split")
        inner = table["source_sql"].strip().rstrip(";")
        if self.split:
            inner = self.split["sql_with_ctid"]
        source_cols = [c for c in snapshot.describe(inner) if c[0] != CTID]
        self.columns = [
            column_read(i, c, t, source_cols, kinds, self.name)
            for i, (c, t) in enumerate(zip(table["columns"], cqls))
        ]
        select = ["%s AS %s" % (c.value_sql, c.alias) for c in self.columns]
        for c in self.columns:
            if c.checks:
                whens = " ".join(reason_sql(cond, r) for cond, r in c.checks)
                select.append("CASE %s END AS %s" % (whens, c.reason_alias))
        if self.split:
            select.append("s.%s" % CTID)
        self.sql = "(SELECT %s FROM (%s) s) q" % (", ".join(select), inner)
        self.predicates = None
        self.estimated_rows = table.get("estimated_rows") or 0
        if self.split:
            pages, rows = self.size(snapshot)
            self.estimated_rows = rows
            if partitions:
                per = max(-(-int(max(rows, 1)) // partitions), 1)
            else:
                per = rows_per_range
            self.predicates = [
                "%s >= '(%d,0)'::tid" % (CTID, lo)
                + ("" if hi is None else " AND %s < '(%d,0)'::tid" % (CTID, hi))
                for lo, hi in split_pages(pages, rows, per)
            ]

    def size(self, snapshot):
        """Pages and rows of the driving table (or of a partitioned table's leaves)."""
        row = snapshot.query_one(
            "WITH r AS (SELECT ?::text::regclass AS oid) "
            "SELECT coalesce(max(pg_relation_size(c.oid) / current_setting('block_size')::int8), 0)::text, "
            "coalesce(sum(c.reltuples) FILTER (WHERE c.reltuples > 0), -1)::text "
            "FROM pg_class c WHERE c.oid IN (SELECT relid FROM pg_partition_tree((SELECT oid FROM r)) "
            "WHERE isleaf UNION ALL SELECT oid FROM r)",
            [self.split["driving_table"]],
        )
        pages = int(row[0])
        tuples = float(row[1])
        # Never analyzed: assume narrow rows (about 60 a page), as the Rust engine does.
        return pages, (tuples if tuples >= 0 else pages * 60.0)

    @property
    def ranges(self):
        return len(self.predicates) if self.predicates else 1


CTID = "__remodel_ctid"


# ---------------------------------------------------------------- Spark side


# Bytes of the fixed-size CQL values in a request, their 4-byte length included (the Rust
# engine's `value_size`, crates/backfill/src/rows.rs).
FIXED_SIZES = {
    "boolean": 5, "tinyint": 5, "smallint": 6, "int": 8, "float": 8, "date": 8, "bigint": 12,
    "double": 12, "timestamp": 12, "time": 12, "counter": 12, "uuid": 20, "timeuuid": 20,
    "duration": 20,
}


def value_size(col, t):
    """A Spark expression of the bytes a non-NULL value of CQL type `t` takes in a request, as the
    Rust engine counts them (a decimal's unscaled integer from its digit count, within a byte)."""
    from pyspark.sql import functions as F

    kind = t[0]
    if kind == "native":
        name = t[1]
        if name in ("text", "ascii", "blob"):
            return F.octet_length(col) + 4
        if name in FIXED_SIZES:
            return F.lit(FIXED_SIZES[name])
        if name == "inet":
            return F.when(F.instr(col, ":") > 0, F.lit(20)).otherwise(F.lit(8))
        if name == "decimal":
            digits = F.length(F.regexp_replace(F.regexp_replace(col, "[^0-9]", ""), "^0+", ""))
            return F.floor(digits * 3.321928094887362 / 8) + 9
        if name == "varint":
            bytes_ = F.lit(8)
            for n in range(7, 0, -1):
                bound = 1 << (8 * n - 1)
                bytes_ = F.when((col >= -bound) & (col < bound), F.lit(n)).otherwise(bytes_)
            return bytes_ + 4
        return F.lit(20)
    if kind in ("list", "set"):
        return F.aggregate(col, F.lit(0).cast("long"), lambda acc, e: acc + value_size(e, t[1])) + 8
    if kind == "map":
        return F.aggregate(
            F.map_entries(col), F.lit(0).cast("long"),
            lambda acc, e: acc + value_size(e["key"], t[1]) + value_size(e["value"], t[2]),
        ) + 8
    if kind == "udt":
        fields = [sized(col[f], ft) for f, ft in t[2]]
        total = F.lit(4)
        for f in fields:
            total = total + f
        return total
    return F.lit(20)


def sized(col, t):
    """`value_size` of a value that may be NULL (4 bytes: its length, -1)."""
    from pyspark.sql import functions as F

    return F.when(col.isNull(), F.lit(4)).otherwise(value_size(col, t))


def converted(df, read, udf_of, max_row_bytes=16 << 20):
    """The read's columns in their final Spark form, with `_reject` (column, kind, reason) for
    rows CQL cannot hold: the first failing column in plan order, as the Rust engine reports, then
    a row over `max_row_bytes` (in a request, as the Rust engine counts it)."""
    from pyspark.sql import functions as F

    table = read.table
    pk = set(table["partition_key"])
    ck = set(table["clustering"])
    out = []
    errors = []
    sizes = []
    for c in read.columns:
        col = F.col(c.alias)
        err = F.col(c.reason_alias) if c.checks else None
        if c.post == "date":
            col = F.expr("date_from_unix_date(%s)" % c.alias)
        elif c.post == "json":
            conv = udf_of(c.cql)(F.col(c.alias))
            json_err = conv.getField("e")
            err = json_err if err is None else F.coalesce(err, json_err)
            col = conv.getField("v")
        if is_collection(c.cql):
            # CQL stores an empty collection as no value: leave it unset, as the Rust engine does.
            col = F.when(F.size(col) > 0, col)
        value_err = None
        if err is not None:
            value_err = F.when(err.isNotNull(), F.struct(
                F.lit(c.name).alias("column"), F.lit("value").alias("kind"), err.alias("reason")
            ))
        if c.name in pk or c.name in ck:
            where = "partition key column" if c.name in pk else "clustering column"
            null_err = F.when(F.col(c.alias).isNull(), F.struct(
                F.lit(c.name).alias("column"), F.lit("null_key").alias("kind"),
                F.lit("NULL in %s %s" % (where, c.name)).alias("reason"),
            ))
            value_err = null_err if value_err is None else F.coalesce(value_err, null_err)
        if value_err is not None:
            errors.append(value_err)
        out.append(col.alias(c.name))
        sizes.append(sized(col, c.cql))
    row_bytes = sizes[0]
    for size in sizes[1:]:
        row_bytes = row_bytes + size
    errors.append(F.when(row_bytes > max_row_bytes, F.struct(
        F.lit(None).cast("string").alias("column"), F.lit("too_large").alias("kind"),
        F.format_string(
            "row of %d bytes is over the limit of %d bytes (--max-row-bytes)",
            row_bytes, F.lit(max_row_bytes),
        ).alias("reason"),
    )))
    reject = F.coalesce(*errors) if len(errors) > 1 else errors[0]
    return df.select(*out, reject.alias("_reject"), F.spark_partition_id().alias("_range"))


def json_udf_factory():
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    cache = {}

    def udf_of(cql):
        key = repr(cql)
        if key not in cache:
            ret = T.StructType([
                T.StructField("v", spark_type(cql), True),
                T.StructField("e", T.StringType(), True),
            ])
            cache[key] = F.udf(lambda text, _t=cql: from_json(text, _t), ret)
        return cache[key]

    return udf_of


def one_row_per_partition(table):
    """True when the partition key holds the source row's whole key: sorting groups nothing."""
    key = table.get("source_key") or []
    return bool(table.get("split")) and bool(key) and all(k in table["partition_key"] for k in key)


def spark_col(name):
    """A column by its exact name (a dot or a backtick in it is no path)."""
    from pyspark.sql import functions as F

    return F.col("`%s`" % name.replace("`", "``"))


def show_value(v, cql):
    """A source key value as the Rust engine's rejects file shows it."""
    if v is None:
        return "NULL"
    name = cql[1] if cql[0] == "native" else None
    if name in ("text", "ascii"):
        return json.dumps(v, ensure_ascii=False)
    if name == "timestamp":
        days, rest = divmod(v, 86_400_000)
        secs, ms = divmod(rest, 1000)
        hms = "%02d:%02d:%02d" % (secs // 3600, secs // 60 % 60, secs % 60)
        return "%s %s%sZ" % (iso_date(days), hms, ".%03d" % ms if ms else "")
    if name == "boolean":
        return "true" if v else "false"
    if name == "blob":
        return "0x" + bytes(v).hex()
    return str(v)


# ---------------------------------------------------------------- the run


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(
        prog="backfill.py",
        description="Fill the target tables of a remodel plan from Postgres (a PySpark job of "
        "`remodel export spark`). Run it with spark-submit; see README.md beside it.",
    )
    p.add_argument("--job", default=os.path.join(here, "job.json"), help="the job file [%(default)s]")
    p.add_argument(
        "--source", help="Postgres URL postgres://user[:password]@host:port/db [$REMODEL_SOURCE, "
        "else job.json's]; the password may also come from REMODEL_SOURCE_PASSWORD or PGPASSWORD"
    )
    p.add_argument("--target", help="Cassandra contact point host:port [$REMODEL_TARGET, else job.json's]")
    p.add_argument("--target-user", help="Cassandra user; the password from REMODEL_TARGET_PASSWORD")
    p.add_argument("--tables", help="only these target tables (comma-separated)")
    p.add_argument("--out", help="folder for summary.json and rejects/ [runs/spark-<UTC time>]")
    p.add_argument("--create-schema", metavar="FILE", help="apply this CQL file (schema.cql) first")
    p.add_argument("--range-rows", type=int, default=50000, help="source rows per partition [%(default)s]")
    p.add_argument("--partitions", type=int, help="partitions per table (overrides --range-rows)")
    p.add_argument("--fetchsize", type=int, default=10000, help="JDBC fetch size, > 0 [%(default)s]")
    p.add_argument("--consistency", default="LOCAL_QUORUM", help="write consistency [%(default)s]")
    p.add_argument(
        "--batch-grouping", default="partition", choices=["none", "replica_set", "partition"],
        help="rows grouped into UNLOGGED batches by [%(default)s]",
    )
    p.add_argument("--batch-bytes", type=int, default=5120, help="bytes per batch at most [%(default)s]")
    # 32 per task: with two cores about the 64 requests in flight of `remodel backfill`.
    p.add_argument("--concurrent-writes", type=int, default=32, help="batches in flight per task [%(default)s]")
    p.add_argument("--throughput-mb-per-sec", type=float, help="write throughput limit per core [none]")
    p.add_argument(
        "--max-row-bytes", type=int, default=16 << 20,
        help="a row larger than this in a request is a reject, as in remodel backfill [%(default)s]",
    )
    p.add_argument("--max-errors", default="100", help="stop once more than N rows (or P%%) are rejected [%(default)s]")
    args = p.parse_args(argv)
    if args.fetchsize <= 0:
        p.error("--fetchsize must be > 0: a fetch size of 0 reads outside the snapshot's transaction")
    return args


def max_errors(text):
    t = text.strip()
    try:
        if t.endswith("%"):
            v = float(t[:-1])
            if not 0 <= v <= 100:
                raise ValueError
            return ("percent", v)
        return ("count", int(t))
    except ValueError:
        raise Unusable("--max-errors %s: expected N or P%% (e.g. 100 or 0.5%%)" % text)


def too_many(limit, rejected, read):
    kind, v = limit
    if kind == "count":
        return rejected > v
    return read > 0 and rejected > v / 100.0 * read


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def say(line):
    print(line, flush=True)


def cql_statements(text):
    """A schema.cql's statements (`;` at the end of a line ends one; `--` lines are comments)."""
    out, cur = [], []
    for line in text.splitlines():
        if line.strip().startswith("--"):
            continue
        cur.append(line)
        if line.rstrip().endswith(";"):
            stmt = "\n".join(cur).strip().rstrip(";").strip()
            if stmt:
                out.append(stmt)
            cur = []
    rest = "\n".join(cur).strip()
    if rest:
        out.append(rest)
    return out


def create_schema(spark, path):
    jvm = spark.sparkContext._jvm
    with open(path, encoding="utf-8") as f:
        statements = cql_statements(f.read())
    connector = jvm.com.datastax.spark.connector.cql.CassandraConnector.apply(
        spark.sparkContext._jsc.sc().getConf()
    )
    session = connector.openSession()
    try:
        for s in statements:
            session.execute(s)
    finally:
        session.close()
    say("schema: %d statements of %s applied" % (len(statements), path))


def run(args):
    try:
        with open(args.job, encoding="utf-8") as f:
            job = json.load(f)
    except OSError as e:
        raise Unusable("cannot read the job file %s: %s (export it with `remodel export spark`)"
                       % (args.job, e.strerror or e))
    except ValueError as e:
        raise Unusable("%s is not a job.json of `remodel export spark`: %s" % (args.job, e))
    version = job.get("format_version") if isinstance(job, dict) else None
    if version != JOB_FORMAT_VERSION:
        raise Unusable(
            "%s: job format %s, this job reads %d (export it again with this remodel)"
            % (args.job, version, JOB_FORMAT_VERSION)
        )
    limit = max_errors(args.max_errors)
    url = args.source or os.environ.get("REMODEL_SOURCE") or job["source"].get("url")
    if not url:
        raise Unusable("no source: give --source or REMODEL_SOURCE (or export with --source-url)")
    source = Source(url)
    target = args.target or os.environ.get("REMODEL_TARGET") or job["target"].get("node")
    if not target:
        raise Unusable("no target: give --target or REMODEL_TARGET (or export with --target)")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise Unusable("target `%s`: expected host:port" % target)
    tables = job["tables"]
    if args.tables:
        wanted = [t.strip() for t in args.tables.split(",") if t.strip()]
        known = [t["name"] for t in tables]
        for w in wanted:
            if w not in known:
                raise Unusable("no table `%s` in the job (it has: %s)" % (w, ", ".join(known)))
        tables = [t for t in tables if t["name"] in wanted]
    out_dir = args.out or os.path.join("runs", "spark-" + utc_now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.join(out_dir, "rejects"), exist_ok=True)

    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.appName("remodel backfill %s" % job["keyspace"])
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.cassandra.connection.host", host.strip("[]"))
        .config("spark.cassandra.connection.port", port)
        # A busy node answers late rather than never: wait, as `remodel backfill` retries.
        .config("spark.cassandra.connection.timeoutMS", "30000")
        .config("spark.cassandra.read.timeoutMS", "120000")
        .config("spark.cassandra.query.retry.count", "10")
        .config("spark.cassandra.output.consistency.level", args.consistency)
        .config("spark.cassandra.output.batch.grouping.key", args.batch_grouping)
        .config("spark.cassandra.output.batch.size.bytes", str(args.batch_bytes))
        .config("spark.cassandra.output.concurrent.writes", str(args.concurrent_writes))
        # NULL is left unset, as the Rust engine does: binding a null would write a tombstone.
        .config("spark.cassandra.output.ignoreNulls", "true")
    )
    if args.throughput_mb_per_sec:
        builder = builder.config(
            "spark.cassandra.output.throughputMBPerSec", str(args.throughput_mb_per_sec)
        )
    if args.target_user:
        password = os.environ.get("REMODEL_TARGET_PASSWORD")
        if password is None:
            raise Unusable("--target-user %s needs the password in REMODEL_TARGET_PASSWORD" % args.target_user)
        builder = builder.config("spark.cassandra.auth.username", args.target_user).config(
            "spark.cassandra.auth.password", password
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if args.create_schema:
        create_schema(spark, args.create_schema)

    started = utc_now()
    t_run = time.time()
    snapshot = Snapshot(spark, source)
    say(
        "backfill: %s → %s (keyspace %s), snapshot %s, output %s"
        % (source.display, target, job["keyspace"], snapshot.id, out_dir)
    )
    init = "; ".join(
        ["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY",
         "SET TRANSACTION SNAPSHOT %s" % sql_string(snapshot.id)] + SESSION_SETUP
    )
    props = source.properties()
    props["fetchsize"] = str(args.fetchsize)
    props["sessionInitStatement"] = init
    kinds = Kinds(snapshot)
    udf_of = json_udf_factory()
    # summary.json in the run-folder contract of remodel's model (RunSummary), so that the report
    # and `remodel verify --run-dir` read a Spark run as they read one of `remodel backfill`.
    summary = {
        "status": "stopped",
        "plan": job.get("plan"),
        "run_dir": out_dir,
        "attempt": 1,
        "started_at": rfc3339(started),
        "elapsed_seconds": 0.0,
        "retries": 0,
        "tables": [],
        "engine": "spark",
        "snapshot": snapshot.id,
    }
    read_total = rejected_total = 0
    say("%-24s %10s %10s %10s %10s %9s" % ("table", "read", "written", "rejected", "partitions", "seconds"))
    try:
        for table in tables:
            t0 = time.time()
            read = TableRead(table, job.get("types", []), snapshot, kinds, args.range_rows, args.partitions)
            say("%s: reading %d partition(s) of about %d rows" % (read.name, read.ranges, read.estimated_rows))
            df = spark.read.jdbc(source.jdbc_url, read.sql, predicates=read.predicates, properties=props)
            conv = converted(df, read, udf_of, args.max_row_bytes).persist()
            try:
                counts = conv.selectExpr("count(*) AS n", "count(_reject) AS r").collect()[0]
                t_read = time.time() - t0
                n_read, n_rejected = int(counts["n"]), int(counts["r"])
                read_total += n_read
                rejected_total += n_rejected
                rejects_file = None
                if n_rejected:
                    rejects_file = write_rejects(conv, read, out_dir, job)
                if too_many(limit, rejected_total, read_total):
                    raise Stopped(
                        "%d rows rejected (limit --max-errors %s); see %s"
                        % (rejected_total, args.max_errors, os.path.join(out_dir, "rejects"))
                    )
                good = conv.where("_reject IS NULL").select(*[spark_col(c["name"]) for c in table["columns"]])
                if not one_row_per_partition(table):
                    # A partition's rows side by side, so that the connector batches them
                    # together (the Rust engine sorts each range by partition key likewise).
                    good = good.sortWithinPartitions(*[spark_col(k) for k in table["partition_key"]])
                (
                    good.write.format("org.apache.spark.sql.cassandra")
                    .options(keyspace=job["keyspace"], table=read.name)
                    .mode("append")
                    .save()
                )
            finally:
                conv.unpersist()
            secs = time.time() - t0
            written = n_read - n_rejected
            summary["tables"].append({
                "name": read.name, "rows_read": n_read, "rows_written": written,
                "rows_rejected": n_rejected, "ranges_total": read.ranges,
                "ranges_done": read.ranges, "ranges_skipped": 0, "rows_read_this_run": n_read,
                "seconds": round(secs, 3),
                # The read (JDBC, conversion, counting) and the write, apart.
                "read_seconds": round(t_read, 3), "write_seconds": round(secs - t_read, 3),
                **({"rejects_file": rejects_file} if rejects_file else {}),
            })
            say("%-24s %10d %10d %10d %10d %9.1f" % (read.name, n_read, written, n_rejected, read.ranges, secs))
        summary["status"] = "completed"
    except BaseException as e:
        java = getattr(e, "java_exception", None)
        summary["error"] = redact_text(java.toString() if java is not None else str(e))
        raise
    finally:
        snapshot.close()
        summary["finished_at"] = rfc3339(utc_now())
        summary["elapsed_seconds"] = round(time.time() - t_run, 3)
        write_atomic(os.path.join(out_dir, "summary.json"), json.dumps(summary, indent=2) + "\n")
    say(
        "completed in %.1f s: %d rows read, %d rejected; output %s"
        % (time.time() - t_run, read_total, rejected_total, out_dir)
    )
    spark.stop()


def write_rejects(conv, read, out_dir, job):
    """OUT/rejects/<table>.jsonl in the Rust engine's format (verify --run-dir reads it)."""
    table = read.table
    by_name = {c.name: c for c in read.columns}
    key = [k for k in table.get("source_key", []) if k in by_name]
    rows = conv.where("_reject IS NOT NULL").select("_range", "_reject", *[spark_col(k) for k in key]).collect()
    rel = os.path.join("rejects", "%s.jsonl" % read.name)
    lines = []
    for r in rows:
        rec = {
            "table": read.name,
            "range": int(r["_range"]),
            "source_key": {k: show_value(r[k], by_name[k].cql) for k in key},
            "column": r["_reject"]["column"],
            "kind": r["_reject"]["kind"],
            "reason": r["_reject"]["reason"],
        }
        if rec["column"] is None:
            del rec["column"]
        lines.append(json.dumps(rec, ensure_ascii=False))
    write_atomic(os.path.join(out_dir, rel), "".join(l + "\n" for l in lines))
    return rel


def main(argv):
    try:
        args = parse_args(argv)
        run(args)
        return 0
    except Unusable as e:
        print("backfill.py: error: %s" % e, file=sys.stderr)
        return EXIT_UNUSABLE
    except Stopped as e:
        print("backfill.py: stopped: %s" % e, file=sys.stderr)
        return EXIT_STOPPED
    except Exception as e:  # noqa: BLE001 - a database or Spark failure: one line, not a trace
        java = getattr(e, "java_exception", None)
        text = java.toString() if java is not None else "%s: %s" % (type(e).__name__, e)
        print("backfill.py: stopped: %s" % redact_text(text), file=sys.stderr)
        return EXIT_STOPPED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
