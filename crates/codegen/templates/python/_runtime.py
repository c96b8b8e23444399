"""SQL's semantics for the generated access layer (written by `remodel codegen`; do not edit).

plan.json states values as expressions with the meaning Postgres gives them: NULL (None)
propagates through operators and functions, a filter keeps a row only when it is TRUE, AND and
OR are three-valued. These helpers evaluate them so; the generated functions call them and
nothing else computes a value the plan does not state.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import types
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc
UTC_ZONE = ZoneInfo("UTC")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DATE = dt.date(1970, 1, 1)

Row = dict[str, Any]
"""A row read, by source column (`trips.city`) and by target column (`@trips_by_id.city`)."""


class NotExecutable(Exception):
    """A value the plan leaves to the application (a hook it did not provide)."""


# ---------------------------------------------------------------- three-valued logic


def is_true(v: object) -> bool:
    """A filter's verdict: only TRUE keeps a row (NULL does not)."""
    return v is True


def and_(a: bool | None, b: bool | None) -> bool | None:
    """SQL's AND: FALSE wins, then NULL."""
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or_(a: bool | None, b: bool | None) -> bool | None:
    """SQL's OR: TRUE wins, then NULL."""
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def not_(a: bool | None) -> bool | None:
    """SQL's NOT (NOT NULL is NULL)."""
    return None if a is None else not a


def is_null(v: object, negated: bool = False) -> bool:
    """`v IS [NOT] NULL`."""
    return (v is not None) if negated else (v is None)


# ---------------------------------------------------------------- comparison


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    # A date compared with an instant is that date's midnight (Postgres casts the date up).
    if isinstance(a, dt.datetime) and not isinstance(b, dt.datetime) and isinstance(b, dt.date):
        b = dt.datetime(b.year, b.month, b.day, tzinfo=a.tzinfo)
    elif isinstance(b, dt.datetime) and not isinstance(a, dt.datetime) and isinstance(a, dt.date):
        a = dt.datetime(a.year, a.month, a.day, tzinfo=b.tzinfo)
    return a, b


def compare(op: str, a: Any, b: Any) -> bool | None:
    """`a op b` for `eq ne lt le gt ge`; rows (tuples) item by item, as SQL compares them."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return _compare_rows(op, a, b)
    if a is None or b is None:
        return None
    a, b = _comparable(a, b)
    if op == "eq":
        return bool(a == b)
    if op == "ne":
        return bool(a != b)
    if op == "lt":
        return bool(a < b)
    if op == "le":
        return bool(a <= b)
    if op == "gt":
        return bool(a > b)
    if op == "ge":
        return bool(a >= b)
    raise ValueError(f"comparison {op!r}")


def _compare_rows(op: str, a: tuple[Any, ...], b: tuple[Any, ...]) -> bool | None:
    # The first pair that is not equal decides; a NULL before the decision makes it NULL.
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            return None
        if compare("eq", x, y) is not True:
            if op in ("eq", "ne"):
                return op == "ne"
            return compare(op, x, y)
    return op in ("eq", "le", "ge")


def in_list(v: Any, items: Iterable[Any], negated: bool = False) -> bool | None:
    """`v [NOT] IN (items)`: NULL when not found and an item (or `v`) is NULL."""
    values = list(items)
    if v is None:
        return None
    hit = any(compare("eq", v, x) is True for x in values if x is not None)
    found: bool | None = True if hit else (None if any(x is None for x in values) else False)
    return not_(found) if negated else found


def flatten(items: Iterable[Any]) -> list[Any]:
    """The values of an IN list whose items may be lists (a parameter sent as a list)."""
    out: list[Any] = []
    for x in items:
        if isinstance(x, (list, tuple, set, frozenset)):
            out.extend(x)
        else:
            out.append(x)
    return out


def like(s: str | None, pattern: str | None, case_insensitive: bool = False) -> bool | None:
    """`s LIKE pattern` (`%` any run, `_` one character, `\\` escapes the next)."""
    if s is None or pattern is None:
        return None
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    flags = re.S | (re.I if case_insensitive else 0)
    return re.fullmatch("".join(out), s, flags) is not None


# ---------------------------------------------------------------- arithmetic


def neg(a: Any) -> Any:
    """`-a`."""
    return None if a is None else -a


def add(a: Any, b: Any) -> Any:
    """`a + b` (numbers; an instant or a date plus an interval; a date plus days)."""
    if a is None or b is None:
        return None
    if isinstance(b, Interval):
        return b.added_to(a, 1)
    if isinstance(a, Interval):
        return a.added_to(b, 1)
    if isinstance(a, dt.date) and not isinstance(a, dt.datetime) and isinstance(b, int):
        return a + dt.timedelta(days=b)
    return a + b


def sub(a: Any, b: Any) -> Any:
    """`a - b` (numbers; an instant minus an interval; a date minus a date is days)."""
    if a is None or b is None:
        return None
    if isinstance(b, Interval):
        return b.added_to(a, -1)
    both_dates = all(isinstance(x, dt.date) and not isinstance(x, dt.datetime) for x in (a, b))
    if both_dates:
        return (a - b).days
    if isinstance(a, dt.date) and not isinstance(a, dt.datetime) and isinstance(b, int):
        return a - dt.timedelta(days=b)
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        d = a - b
        return Interval(0, d.days, d.seconds * 1_000_000 + d.microseconds)
    return a - b


def mul(a: Any, b: Any) -> Any:
    """`a * b`."""
    return None if a is None or b is None else a * b


def div(a: Any, b: Any) -> Any:
    """`a / b`: integers truncate toward zero, as Postgres divides them."""
    if a is None or b is None:
        return None
    if b == 0:
        raise ZeroDivisionError("division by zero")
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def mod(a: Any, b: Any) -> Any:
    """`a % b`: the sign of the dividend, as Postgres computes it."""
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return int(math.fmod(a, b))
    return decimal.Decimal(a) % decimal.Decimal(b)


def concat(a: Any, b: Any) -> str | None:
    """`a || b` (NULL when either is)."""
    return None if a is None or b is None else f"{text(a)}{text(b)}"


# ---------------------------------------------------------------- intervals


class Interval:
    """Postgres' interval: months, days and microseconds kept apart (`1 month` is not 30 days)."""

    __slots__ = ("months", "days", "micros")

    def __init__(self, months: int, days: int, micros: int) -> None:
        self.months = months
        self.days = days
        self.micros = micros

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Interval):
            return NotImplemented
        return (self.months, self.days, self.micros) == (other.months, other.days, other.micros)

    def __hash__(self) -> int:
        return hash((self.months, self.days, self.micros))

    def __repr__(self) -> str:
        return f"Interval({self.months}, {self.days}, {self.micros})"

    def added_to(self, v: Any, sign: int, zone: ZoneInfo | None = None) -> Any:
        """`v + sign * self`: months first (clamped to the month's last day), then days, then
        the microseconds."""
        if isinstance(v, dt.datetime):
            local = v.astimezone(zone) if (zone and v.tzinfo) else v
            local = _add_months(local, sign * self.months) + dt.timedelta(days=sign * self.days)
            return local + dt.timedelta(microseconds=sign * self.micros)
        if isinstance(v, dt.date):
            start = dt.datetime(v.year, v.month, v.day)
            return self.added_to(start, sign, zone)
        raise TypeError(f"an interval added to {v!r}")


_INTERVAL_UNITS: dict[str, tuple[int, int, int]] = {
    # unit -> (months, days, microseconds) of one
    "millennium": (12000, 0, 0),
    "century": (1200, 0, 0),
    "decade": (120, 0, 0),
    "year": (12, 0, 0),
    "mon": (1, 0, 0),
    "month": (1, 0, 0),
    "week": (0, 7, 0),
    "day": (0, 1, 0),
    "hour": (0, 0, 3_600_000_000),
    "minute": (0, 0, 60_000_000),
    "min": (0, 0, 60_000_000),
    "second": (0, 0, 1_000_000),
    "sec": (0, 0, 1_000_000),
    "millisecond": (0, 0, 1_000),
    "msec": (0, 0, 1_000),
    "microsecond": (0, 0, 1),
    "usec": (0, 0, 1),
}
_UNIT_ABBREVIATIONS = {
    "y": "year",
    "yr": "year",
    "d": "day",
    "h": "hour",
    "hr": "hour",
    "m": "minute",
    "s": "second",
    "ms": "msec",
    "us": "usec",
}
_INTERVAL_TOKEN = re.compile(
    r"\s*(?:(?P<clock>[+-]?\d+:\d+(?::\d+(?:\.\d+)?)?)|(?P<n>[+-]?\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+))"
)


def interval_from_text(s: str) -> Interval:
    """An interval written as Postgres reads or writes it in its default style (`14 days`,
    `1 year 2 mons -3 days +04:05:06.5`, `2 hours ago`)."""
    text_ = s.strip().lower().removeprefix("@").strip()
    sign = 1
    if text_.endswith(" ago"):
        sign, text_ = -1, text_[: -len(" ago")]
    months = days = 0
    micros = decimal.Decimal(0)
    pos = 0
    while pos < len(text_):
        m = _INTERVAL_TOKEN.match(text_, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"an interval {s!r}")
        pos = m.end()
        if m.group("clock"):
            micros += _clock_micros(m.group("clock"))
            continue
        written = m.group("unit")
        unit = _UNIT_ABBREVIATIONS.get(written) or written.removesuffix("s")
        unit = _UNIT_ABBREVIATIONS.get(unit, unit)
        if unit not in _INTERVAL_UNITS:
            raise ValueError(f"an interval {s!r}: unit {m.group('unit')!r}")
        n = decimal.Decimal(m.group("n"))
        um, ud, uu = _INTERVAL_UNITS[unit]
        whole_months = int(n * um)
        days_part = n * ud + (n * um - whole_months) * 30
        whole_days = int(days_part)
        months += whole_months
        days += whole_days
        micros += n * uu + (days_part - whole_days) * 86_400_000_000
    return Interval(sign * months, sign * days, sign * int(micros.to_integral_value(decimal.ROUND_HALF_EVEN)))


def _clock_micros(clock: str) -> decimal.Decimal:
    """`[+-]HH:MM[:SS[.ffffff]]` in microseconds."""
    negative = clock.startswith("-")
    parts = clock.lstrip("+-").split(":")
    hours, minutes = int(parts[0]), int(parts[1])
    seconds = decimal.Decimal(parts[2]) if len(parts) > 2 else decimal.Decimal(0)
    total = (hours * 3600 + minutes * 60) * 1_000_000 + seconds * 1_000_000
    return -total if negative else total


def _add_months(v: dt.datetime, months: int) -> dt.datetime:
    total = v.year * 12 + (v.month - 1) + months
    year, month = divmod(total, 12)
    month += 1
    last = _days_in_month(year, month)
    return v.replace(year=year, month=month, day=min(v.day, last))


def _days_in_month(year: int, month: int) -> int:
    following = dt.date(year + (month == 12), month % 12 + 1, 1)
    return (following - dt.timedelta(days=1)).day


# ---------------------------------------------------------------- functions


def text(v: Any) -> str:
    """A value as Postgres' text output writes it (what `||` and a cast to text give)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    return str(v)


def lower(v: str | None) -> str | None:
    """`lower(text)`."""
    return None if v is None else v.lower()


def upper(v: str | None) -> str | None:
    """`upper(text)`."""
    return None if v is None else v.upper()


def length(v: str | None) -> int | None:
    """`length(text)` in characters."""
    return None if v is None else len(v)


def btrim(v: str | None) -> str | None:
    """`btrim(text)`: spaces off both ends."""
    return None if v is None else v.strip(" ")


def substr(v: str | None, start: int | None, count: int | None = None) -> str | None:
    """`substr(text, from [, count])`, 1-based; a start before 1 eats into the count."""
    if v is None or start is None:
        return None
    end = None if count is None else start + count
    lo = max(start, 1) - 1
    if end is None:
        return v[lo:]
    return v[lo : max(end - 1, lo)]


def abs_(v: Any) -> Any:
    """`abs(n)`."""
    return None if v is None else abs(v)


def round_(v: Any, digits: int | None = 0) -> Any:
    """`round(n [, digits])`: half away from zero for numeric."""
    if v is None or digits is None:
        return None
    q = decimal.Decimal(1).scaleb(-digits)
    r = decimal.Decimal(v).quantize(q, rounding=decimal.ROUND_HALF_UP)
    return float(r) if isinstance(v, float) else r


def floor(v: Any) -> Any:
    """`floor(n)`."""
    if v is None:
        return None
    return decimal.Decimal(math.floor(v)) if isinstance(v, decimal.Decimal) else math.floor(v)


def ceil(v: Any) -> Any:
    """`ceil(n)`."""
    if v is None:
        return None
    return decimal.Decimal(math.ceil(v)) if isinstance(v, decimal.Decimal) else math.ceil(v)


def coalesce(*args: Any) -> Any:
    """`coalesce(a, b, …)`: the first value that is not NULL."""
    return next((a for a in args if a is not None), None)


def nullif(a: Any, b: Any) -> Any:
    """`nullif(a, b)`."""
    return None if compare("eq", a, b) is True else a


def greatest(*args: Any) -> Any:
    """`greatest(a, b, …)` (NULLs ignored)."""
    vals = [a for a in args if a is not None]
    return max(vals) if vals else None


def least(*args: Any) -> Any:
    """`least(a, b, …)` (NULLs ignored)."""
    vals = [a for a in args if a is not None]
    return min(vals) if vals else None


_TRUNC = ("microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
          "quarter", "year")


def date_trunc(unit: str | None, v: Any, zone: ZoneInfo) -> Any:
    """`date_trunc('unit', v)`: an instant is truncated on the calendar of `zone`."""
    if unit is None or v is None:
        return None
    u = unit.lower()
    if u not in _TRUNC:
        raise ValueError(f"date_trunc unit {unit!r}")
    aware = isinstance(v, dt.datetime) and v.tzinfo is not None
    t = v.astimezone(zone) if aware else v
    if not isinstance(t, dt.datetime):
        t = dt.datetime(t.year, t.month, t.day)
    if u == "milliseconds":
        t = t.replace(microsecond=t.microsecond // 1000 * 1000)
    keep = _TRUNC.index(u)
    if keep >= _TRUNC.index("second"):
        t = t.replace(microsecond=0)
    if keep >= _TRUNC.index("minute"):
        t = t.replace(second=0)
    if keep >= _TRUNC.index("hour"):
        t = t.replace(minute=0)
    if keep >= _TRUNC.index("day"):
        t = t.replace(hour=0)
    if u == "week":
        t = t - dt.timedelta(days=t.weekday())
    if keep >= _TRUNC.index("month"):
        t = t.replace(day=1)
    if u == "quarter":
        t = t.replace(month=(t.month - 1) // 3 * 3 + 1)
    if u == "year":
        t = t.replace(month=1)
    if aware:
        return t.replace(tzinfo=None).replace(tzinfo=zone).astimezone(UTC)
    return t


def date_part(field: str | None, v: Any, zone: ZoneInfo) -> decimal.Decimal | None:
    """`EXTRACT(field FROM v)` (numeric): an instant is read on the calendar of `zone`."""
    if field is None or v is None:
        return None
    t = v.astimezone(zone) if isinstance(v, dt.datetime) and v.tzinfo else v
    f = field.lower()
    simple = {"year": "year", "month": "month", "day": "day", "hour": "hour", "minute": "minute"}
    if f in simple:
        return decimal.Decimal(getattr(t, simple[f]))
    if f == "second":
        return decimal.Decimal(t.second) + decimal.Decimal(t.microsecond).scaleb(-6)
    if f == "dow":
        return decimal.Decimal((t.weekday() + 1) % 7)
    if f == "isodow":
        return decimal.Decimal(t.isoweekday())
    if f == "doy":
        return decimal.Decimal(t.timetuple().tm_yday)
    if f == "quarter":
        return decimal.Decimal((t.month - 1) // 3 + 1)
    if f == "epoch":
        if isinstance(v, dt.datetime):
            aware = v if v.tzinfo else v.replace(tzinfo=UTC)
            return decimal.Decimal(epoch_micros(aware) or 0).scaleb(-6)
    raise ValueError(f"EXTRACT field {field!r}")


# ---------------------------------------------------------------- casts


def cast(v: Any, to: str, zone: ZoneInfo) -> Any:
    """`CAST(v AS to)`, `to` as Postgres names the type; dates and instants are converted on
    the calendar of `zone`."""
    if v is None:
        return None
    if to in ("smallint", "integer", "bigint"):
        if isinstance(v, (decimal.Decimal, float)):
            return int(decimal.Decimal(v).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP))
        return int(v)
    if to == "numeric":
        return decimal.Decimal(str(v)) if isinstance(v, float) else decimal.Decimal(v)
    if to in ("real", "double precision"):
        return float(v)
    if to == "text":
        return text(v)
    if to == "boolean":
        return v if isinstance(v, bool) else str(v).strip().lower() in ("t", "true", "y", "yes", "on", "1")
    if to == "uuid":
        return v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))
    if to == "date":
        if isinstance(v, dt.datetime):
            return (v.astimezone(zone) if v.tzinfo else v).date()
        return v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v))
    if to == "timestamptz":
        if isinstance(v, dt.datetime):
            return v if v.tzinfo else v.replace(tzinfo=zone)
        if isinstance(v, dt.date):
            return dt.datetime(v.year, v.month, v.day, tzinfo=zone)
        return timestamptz_from_text(str(v), zone)
    if to == "timestamp":
        if isinstance(v, dt.datetime):
            return v.astimezone(zone).replace(tzinfo=None) if v.tzinfo else v
        if isinstance(v, dt.date):
            return dt.datetime(v.year, v.month, v.day)
        return dt.datetime.fromisoformat(str(v))
    if to == "interval":
        return v if isinstance(v, Interval) else interval_from_text(str(v))
    if to == "time":
        return v if isinstance(v, dt.time) else dt.time.fromisoformat(str(v))
    if to == "bytea":
        return v if isinstance(v, bytes) else str(v).encode()
    if to == "jsonb":
        return text(v)
    raise ValueError(f"CAST of {v!r} to {to}")


def timestamptz_from_text(s: str, zone: ZoneInfo) -> dt.datetime:
    """An instant written as ISO 8601; without an offset it is read in `zone`."""
    t = dt.datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=zone)


# ---------------------------------------------------------------- stored forms


def epoch_micros(v: dt.datetime | dt.date | None, zone: ZoneInfo = UTC_ZONE) -> int | None:
    """An instant as microseconds since 1970-01-01 00:00 UTC (a timestamp without time zone is
    read as UTC; a date is its midnight in `zone`, the plan's, as Postgres compares a date with
    an instant): the bind of a column whose encoding is `epoch_micros`."""
    if v is None:
        return None
    if not isinstance(v, dt.datetime):
        v = dt.datetime(v.year, v.month, v.day, tzinfo=zone)
    aware = v if v.tzinfo else v.replace(tzinfo=UTC)
    return (aware - EPOCH) // dt.timedelta(microseconds=1)


NULL_MICROS = 2**63 - 1
"""What a column whose encoding is `epoch_micros_null_last` stores for NULL (the largest
bigint: where SQL's default puts NULLs, last ascending, first descending)."""


def epoch_micros_null_last(v: dt.datetime | dt.date | None, zone: ZoneInfo = UTC_ZONE) -> int:
    """The bind of a column whose encoding is `epoch_micros_null_last`: NULL as `NULL_MICROS`."""
    us = epoch_micros(v, zone)
    return NULL_MICROS if us is None else us


NULL_FIRST = -(2**63)
"""What a column whose encoding ends in `_null_first` stores for NULL (the smallest bigint)."""


def encoded(v: Any, encoding: str, zone: ZoneInfo = UTC_ZONE) -> int:
    """The bind of a key column kept as a bigint that stores NULL (`encoding`: `epoch_micros_`,
    `integer_` or `epoch_days_` with `null_last` or `null_first`): the value in that form, NULL
    as the largest (smallest) bigint, a value equal to it one nearer the others."""
    plain: int | None
    if v is None:
        plain = None
    elif encoding.startswith("epoch_micros"):
        plain = epoch_micros(v, zone)
    elif encoding.startswith("epoch_days"):
        day = stored_date(v)
        plain = None if day is None else (day - EPOCH_DATE).days
    else:
        plain = int(v)
    last = encoding.endswith("_null_last")
    null = NULL_MICROS if last else NULL_FIRST
    if plain is None:
        return null
    if plain == null:
        return plain - 1 if last else plain + 1
    return plain


def from_epoch_micros(v: int | None, aware: bool = True) -> dt.datetime | None:
    """A stored `epoch_micros` bigint back to its instant (for a timestamp without time zone,
    its UTC wall time)."""
    if v is None:
        return None
    t = EPOCH + dt.timedelta(microseconds=v)
    return t if aware else t.replace(tzinfo=None)


def stored_timestamp(v: Any, aware: bool = True) -> dt.datetime | None:
    """A CQL `timestamp` as the driver returns it (naive, UTC) as the source's value."""
    if v is None:
        return None
    if not isinstance(v, dt.datetime):
        raise TypeError(f"a timestamp expected, {v!r} read")
    t = v if v.tzinfo else v.replace(tzinfo=UTC)
    return t if aware else t.astimezone(UTC).replace(tzinfo=None)


def stored_date(v: Any) -> dt.date | None:
    """A CQL `date` as the driver returns it (`cassandra.util.Date`) as a `datetime.date`."""
    if v is None or (isinstance(v, dt.date) and not isinstance(v, dt.datetime)):
        return v
    date = getattr(v, "date", None)
    if callable(date):
        d = date()
        if isinstance(d, dt.date):
            return d
    raise TypeError(f"a date expected, {v!r} read")


def stored_time(v: Any) -> dt.time | None:
    """A CQL `time` as the driver returns it (`cassandra.util.Time`) as a `datetime.time`."""
    if v is None or isinstance(v, dt.time):
        return v
    t = getattr(v, "time", None)
    if callable(t):
        out = t()
        if isinstance(out, dt.time):
            return out
    raise TypeError(f"a time expected, {v!r} read")


def cql_timestamp(v: Any) -> dt.datetime | None:
    """An instant bound to a CQL `timestamp` marker (a timestamp without time zone as UTC)."""
    if v is None:
        return None
    if not isinstance(v, dt.datetime):
        raise TypeError(f"a timestamp expected for a CQL timestamp, {v!r} given")
    return v.astimezone(UTC) if v.tzinfo else v.replace(tzinfo=UTC)


def cql_date(v: Any) -> dt.date | None:
    """A date bound to a CQL `date` marker."""
    if v is None:
        return None
    if isinstance(v, dt.datetime) or not isinstance(v, dt.date):
        raise TypeError(f"a date expected for a CQL date, {v!r} given")
    return v


def cql_int(v: Any) -> int | None:
    """An integer bound to a CQL integer marker (a numeric value must be whole)."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise TypeError(f"an integer expected, {v!r} given")
    i = int(v)
    if i != v:
        raise ValueError(f"{v!r} is not whole")
    return i


def cql_decimal(v: Any) -> decimal.Decimal | None:
    """A number bound to a CQL `decimal` marker."""
    if v is None:
        return None
    return decimal.Decimal(str(v)) if isinstance(v, float) else decimal.Decimal(v)


def cql_uuid(v: Any) -> uuid.UUID | None:
    """A UUID bound to a CQL `uuid`/`timeuuid` marker."""
    if v is None:
        return None
    return v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))


def entry(fields: dict[str, Any]) -> Any:
    """An embedded child row as a collection entry (a user type's value: the driver reads each
    field by its name)."""
    return types.SimpleNamespace(**fields)


def cql_list(v: Any, item: Callable[[Any], Any]) -> list[Any] | None:
    """A list bound to a CQL `list<T>` marker (an IN list): NULL items match no row, dropped."""
    if v is None:
        return None
    return [item(x) for x in flatten([v]) if x is not None]


# ---------------------------------------------------------------- buckets and TTLs


def bucket(v: Any, width: str, zone: ZoneInfo) -> dt.date | dt.datetime | None:
    """The bucket `v` falls in, cut in `zone`: a date for `day` and `month` (the month's first
    day), the hour's first instant for `hour`. A timestamp without time zone (or a date) is
    read as its wall clock in UTC, as the backfill stores it."""
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        local = v.astimezone(zone) if v.tzinfo else v.replace(tzinfo=UTC).astimezone(zone)
    elif isinstance(v, dt.date):
        local = dt.datetime(v.year, v.month, v.day, tzinfo=UTC).astimezone(zone)
    else:
        raise TypeError(f"a bucket of {v!r}, which is no time")
    if width == "day":
        return local.date()
    if width == "month":
        return local.date().replace(day=1)
    if width == "hour":
        return local.replace(minute=0, second=0, microsecond=0).astimezone(UTC)
    raise ValueError(f"bucket width {width!r}")


def _bucket_start(b: dt.date | dt.datetime, zone: ZoneInfo) -> dt.datetime:
    if isinstance(b, dt.datetime):
        return b
    return dt.datetime(b.year, b.month, b.day, tzinfo=zone)


def _next_bucket(b: dt.date | dt.datetime, width: str, zone: ZoneInfo) -> dt.date | dt.datetime:
    if width == "day":
        return b + dt.timedelta(days=1)
    if width == "month":
        return (b.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    if isinstance(b, dt.datetime):
        # The next hour on the zone's clock (a day of 23 or 25 hours has 23 or 25 of them).
        return (b.astimezone(zone) + dt.timedelta(hours=1)).astimezone(UTC)
    raise TypeError(f"an hour bucket {b!r}")


def buckets(
    lower: Any, upper: Any, width: str, zone: ZoneInfo, upper_exclusive: bool
) -> list[dt.date | dt.datetime]:
    """Every bucket from the one `lower` falls in to the one `upper` falls in, ascending; with
    `upper_exclusive`, not the upper one when `upper` is its first instant. None when a bound
    is NULL (the window holds no row)."""
    first, last = bucket(lower, width, zone), bucket(upper, width, zone)
    if first is None or last is None:
        return []
    if upper_exclusive:
        hi = upper if isinstance(upper, dt.datetime) else _bucket_start(upper, zone)
        hi = hi if hi.tzinfo else hi.replace(tzinfo=UTC)
        if _bucket_start(last, zone) == hi:
            out: list[dt.date | dt.datetime] = []
            x = first
            while _bucket_start(x, zone) < _bucket_start(last, zone):
                out.append(x)
                x = _next_bucket(x, width, zone)
            return out
    out = []
    x = first
    while _bucket_start(x, zone) <= _bucket_start(last, zone):
        out.append(x)
        x = _next_bucket(x, width, zone)
    return out


def seconds_until(instant: Any, now: dt.datetime, least_: int, most: int) -> int:
    """A row's TTL: whole seconds from `now` until `instant`, rounded up, at least `least_`; 0
    (CQL's no TTL) for NULL or beyond `most`."""
    if instant is None:
        return 0
    if not isinstance(instant, dt.datetime):
        raise TypeError(f"a TTL until {instant!r}, which is no timestamp")
    aware = instant if instant.tzinfo else instant.replace(tzinfo=UTC)
    us = (aware - now) // dt.timedelta(microseconds=1)
    secs = -(-us // 1_000_000)
    return 0 if secs > most else max(secs, least_)


# ---------------------------------------------------------------- the client's work


def count(v: Any) -> int | None:
    """An OFFSET or LIMIT (NULL: none)."""
    if v is None:
        return None
    return max(int(v), 0)


def sort_rows(rows: list[Row], keys: Sequence[tuple[str, bool, bool]]) -> list[Row]:
    """Rows sorted by `(field, desc, nulls_first)` keys, the first deciding (stable: rows equal
    on every key keep their order, which SQL leaves free)."""
    for field, desc, nulls_first in reversed(keys):
        nulls = [r for r in rows if r.get(field) is None]
        values = [r for r in rows if r.get(field) is not None]
        values.sort(key=lambda r: sort_key(r[field]), reverse=desc)
        rows = nulls + values if nulls_first else values + nulls
    return rows


def sort_key(v: Any) -> Any:
    """A value as it orders (an instant and a UUID by their own order)."""
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, dt.datetime) and v.tzinfo is None:
        return v.replace(tzinfo=UTC)
    return v


def distinct(rows: list[Row]) -> list[Row]:
    """One row of each set of equal rows, the first."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Row] = []
    for r in rows:
        k = tuple(sorted((f, _hashable(v)) for f, v in r.items()))
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def _hashable(v: Any) -> Any:
    if isinstance(v, (list, set, frozenset)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((_hashable(k), _hashable(x)) for k, x in v.items()))
    return v


def group(
    rows: list[Row],
    by: Sequence[str],
    aggregates: Sequence[tuple[str, str, str | None, bool]],
    whole: bool,
) -> list[Row]:
    """One row per group of equal `by` values (NULLs one group; no `by`: one row, also for no
    rows), each `(field, function, column, distinct)` aggregate computed over it; `whole` keeps
    a group's first row whole (a GROUP BY without aggregates)."""
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        groups.setdefault(tuple(_hashable(r.get(f)) for f in by), []).append(r)
    if not groups and not by:
        groups[()] = []
    out: list[Row] = []
    for members in groups.values():
        g: Row = dict(members[0]) if (whole and members) else {}
        for f in by:
            g[f] = members[0].get(f) if members else None
        for field, function, column, distinct_ in aggregates:
            g[field] = aggregate(function, column, distinct_, members)
        out.append(g)
    return out


def aggregate(function: str, column: str | None, distinct_: bool, rows: list[Row]) -> Any:
    """`count`, `sum`, `min`, `max` or `avg` of `column` (no column: `count(*)`) over `rows`."""
    if column is None:
        if function != "count":
            raise ValueError(f"{function}(*)")
        return len(rows)
    vals = [r.get(column) for r in rows]
    present = [v for v in vals if v is not None]
    if distinct_:
        unique: list[Any] = []
        for v in present:
            if all(compare("eq", v, u) is not True for u in unique):
                unique.append(v)
        present = unique
    if function == "count":
        return len(present)
    if not present:
        return None
    if function == "sum":
        return sum(present[1:], present[0])
    if function == "min":
        return min(present, key=sort_key)
    if function == "max":
        return max(present, key=sort_key)
    if function == "avg":
        total = sum((decimal.Decimal(v) for v in present), decimal.Decimal(0))
        return total / len(present)
    raise ValueError(f"aggregate {function!r}")


def unnest(
    rows: list[Row], collection: str, fields: Sequence[str], linked: Sequence[tuple[str, str]]
) -> list[Row]:
    """The rows of an embedded child table read from the `collection` of each row: one per
    entry (a map's values, a list's items), the entry type's i-th field under `fields[i]`, each
    `(child, parent)` of `linked` the row's value of `parent`; an empty collection, none."""
    out: list[Row] = []
    for r in rows:
        c: Any = r.get(collection)
        if c is None:
            continue
        entries = list(c.values()) if hasattr(c, "values") else list(c)
        for e in entries:
            child = dict(r)
            for i, f in enumerate(fields):
                child[f] = e[i] if isinstance(e, tuple) else getattr(e, f.rsplit(".", 1)[1], None)
            for key, parent in linked:
                child[key] = r.get(parent)
            out.append(child)
    return out


def counter_rows(rows: list[Row], count_key: str, grouped: bool, keys: Sequence[str]) -> list[Row]:
    """A counter table's rows as the read's result: a group whose count is 0 has no source row
    (dropped); without GROUP BY and no group left, one row of count 0 and NULL sums."""
    out = [r for r in rows if (r.get(count_key) or 0) != 0]
    if out or grouped:
        return out
    return [{k: (0 if k == count_key else None) for k in keys}]


def need(row: Row, key: str) -> Any:
    """The value `row` holds for `key`; the plan states a value no read returned otherwise."""
    try:
        return row[key]
    except KeyError:
        raise NotExecutable(f"{key} is not in the rows read") from None


# ---------------------------------------------------------------- rows read from Cassandra

Decoder = Callable[[Any], Any] | None
"""How a stored value becomes the source's (None: as the driver returns it)."""

Columns = dict[str, tuple[str, str | None, Decoder]]
"""A table's columns: CQL name → (target key, source key or None, decoder)."""


def decode_rows(result: Iterable[Any], names: Sequence[str], columns: Columns) -> list[Row]:
    """The rows of one CQL result (all pages), each value under its target key (`@t.c`) and
    its source column's key (`t.c`), decoded as the table's column states."""
    out: list[Row] = []
    for raw in result:
        values = list(raw.values()) if isinstance(raw, dict) else list(raw)
        r: Row = {}
        for i, (name, v) in enumerate(zip(names, values, strict=True)):
            col = columns.get(name)
            if col is None:
                # A value no column of the table holds (an aggregate the CQL computes): also
                # under its place from the last column (`#-1` the last).
                r[f"@{name}"] = v
                r[f"#-{len(values) - i}"] = v
                continue
            target, source, decoder = col
            value = decoder(v) if decoder is not None and v is not None else v
            r[target] = value
            if source is not None:
                r[source] = value
        out.append(r)
    return out


def epoch_micros_tz(v: Any) -> dt.datetime | None:
    """An `epoch_micros` column of a `timestamptz`."""
    return from_epoch_micros(v, True)


def epoch_micros_naive(v: Any) -> dt.datetime | None:
    """An `epoch_micros` column of a `timestamp` without time zone."""
    return from_epoch_micros(v, False)


def epoch_micros_null_last_tz(v: Any) -> dt.datetime | None:
    """An `epoch_micros_null_last` column of a `timestamptz` (`NULL_MICROS` is NULL)."""
    return None if v == NULL_MICROS else from_epoch_micros(v, True)


def epoch_micros_null_last_naive(v: Any) -> dt.datetime | None:
    """An `epoch_micros_null_last` column of a `timestamp` without time zone."""
    return None if v == NULL_MICROS else from_epoch_micros(v, False)


def epoch_micros_null_first_tz(v: Any) -> dt.datetime | None:
    """An `epoch_micros_null_first` column of a `timestamptz` (`NULL_FIRST` is NULL)."""
    return None if v == NULL_FIRST else from_epoch_micros(v, True)


def epoch_micros_null_first_naive(v: Any) -> dt.datetime | None:
    """An `epoch_micros_null_first` column of a `timestamp` without time zone."""
    return None if v == NULL_FIRST else from_epoch_micros(v, False)


def integer_null_last(v: Any) -> int | None:
    """An `integer_null_last` column (`NULL_MICROS`, the largest bigint, is NULL)."""
    return None if v == NULL_MICROS else int(v)


def integer_null_first(v: Any) -> int | None:
    """An `integer_null_first` column (`NULL_FIRST` is NULL)."""
    return None if v == NULL_FIRST else int(v)


def epoch_days_null_last(v: Any) -> dt.date | None:
    """An `epoch_days_null_last` column: days since 1970-01-01 (the largest bigint is NULL)."""
    return None if v == NULL_MICROS else EPOCH_DATE + dt.timedelta(days=int(v))


def epoch_days_null_first(v: Any) -> dt.date | None:
    """An `epoch_days_null_first` column (`NULL_FIRST` is NULL)."""
    return None if v == NULL_FIRST else EPOCH_DATE + dt.timedelta(days=int(v))


def timestamp_tz(v: Any) -> dt.datetime | None:
    """A CQL `timestamp` of a `timestamptz`."""
    return stored_timestamp(v, True)


def timestamp_naive(v: Any) -> dt.datetime | None:
    """A CQL `timestamp` of a `timestamp` without time zone."""
    return stored_timestamp(v, False)


def limit_bind(v: int | None) -> int:
    """A LIMIT's `?` (CQL int): NULL is no limit."""
    return 2_147_483_647 if v is None else int(v)


def same(v: Any) -> Any:
    """A value bound as it is."""
    return v


def cql_float(v: Any) -> float | None:
    """A number bound to a CQL `float`/`double` marker."""
    return None if v is None else float(v)


# ---------------------------------------------------------------- write paths


class WriteState:
    """The values one execution of a write path binds, as plan.json defines them.

    `current(c)` is the written row's value before the write: from the row a `for_each`
    statement runs for, else the statement's `WHERE c = …`, else the first read before write
    (not of the new parent, not of many rows) that returned it. `new(c)` is its value after:
    the `DO UPDATE SET` of an upsert that met its row (else the row's own value), the
    statement's new value (`values`; NULL for an INSERT that gives the column none), else the
    value a read of the new parent returned, else the current value.
    """

    def __init__(self, insert: bool, key: Row) -> None:
        self.insert = insert
        self.key = key
        self.values: dict[str, Callable[[Row | None], Any]] = {}
        self.reads: list[tuple[list[Row], bool, bool]] = []
        self.steps: dict[str, Row] = {}
        self.existing: Row | None = None
        self.update_set: dict[str, Callable[[Row | None], Any]] | None = None

    def read(self, rows: list[Row], reads_new: bool, many: bool) -> list[Row]:
        """Records the rows a read before write returned (after its filter)."""
        self.reads.append((rows, reads_new, many))
        return rows

    def current(self, column: str, row: Row | None = None) -> Any:
        """`cur(column)`."""
        if row is not None and column in row:
            return row[column]
        if column in self.key:
            return self.key[column]
        for rows, reads_new, many in self.reads:
            if reads_new or many or not rows:
                continue
            if column in rows[0]:
                return rows[0][column]
        raise NotExecutable(f"cur({column}): no read before write returned it")

    def new(self, column: str, own: bool, row: Row | None = None) -> Any:
        """`new(column)`; `own` when the column is the written table's."""
        if own and self.values:
            if self.existing is not None and self.update_set is not None:
                if column in self.update_set:
                    return self.update_set[column](self.existing)
                return self.existing.get(column)
            if column in self.values:
                return self.values[column](row)
            if self.insert:
                return None
        for rows, reads_new, _ in self.reads:
            if reads_new and rows and column in rows[0]:
                return rows[0][column]
        return self.current(column, row)

    def excluded(self, column: str) -> Any:
        """`EXCLUDED.column`: the value the upsert proposed (NULL when it gives none)."""
        compute = self.values.get(column)
        return None if compute is None else compute(None)

    def row_id(self, table: str, made: uuid.UUID, own: bool, row: Row | None = None) -> Any:
        """`row_id(table)`: the id of the row a statement runs for, the one made for this call
        (an INSERT into the table), else the one read first."""
        key = f"rowid:{table}"
        if row is not None and key in row:
            return row[key]
        if self.insert and own:
            return made
        for rows, _, many in self.reads:
            if not many and rows and key in rows[0]:
                return rows[0][key]
        raise NotExecutable(f"row_id({table}): no row read before holds it")


def changed(a: Any, b: Any, stored: str) -> bool:
    """True when a key column's value moves: compared as the target holds it (`micros`: exact
    microseconds; `timestamp`: CQL's milliseconds)."""
    if stored == "timestamp":
        a, b = cql_timestamp(a), cql_timestamp(b)
        a = None if a is None else a.replace(microsecond=a.microsecond // 1000 * 1000)
        b = None if b is None else b.replace(microsecond=b.microsecond // 1000 * 1000)
    if a is None or b is None:
        return (a is None) != (b is None)
    return compare("ne", a, b) is True


# ---------------------------------------------------------------- JSON (the executor's protocol)


def from_json(v: Any, ty: str) -> Any:
    """A parameter as `remodel replay --executor` sends it (Postgres' `to_json` of the value)."""
    if v is None:
        return None
    if isinstance(v, list):
        return [from_json(x, ty) for x in v]
    if ty == "int":
        return int(v)
    if ty == "decimal":
        return decimal.Decimal(str(v))
    if ty == "float":
        return float(v)
    if ty == "timestamptz":
        return timestamptz_from_text(str(v), UTC_ZONE)
    if ty == "timestamp":
        return dt.datetime.fromisoformat(str(v)).replace(tzinfo=None)
    if ty == "date":
        return dt.date.fromisoformat(str(v))
    if ty == "time":
        return dt.time.fromisoformat(str(v))
    if ty == "uuid":
        return uuid.UUID(str(v))
    if ty == "bytes":
        return bytes.fromhex(str(v).removeprefix("\\x"))
    if ty == "interval":
        if isinstance(v, dict):
            return Interval(int(v.get("months", 0)), int(v.get("days", 0)), int(v.get("micros", 0)))
        return interval_from_text(str(v))
    return v


def to_json(v: Any) -> Any:
    """A result value as the executor answers it: numbers exact (a decimal as its text),
    instants in ISO 8601 with their offset, bytes as `\\x` hex."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, Interval):
        return {"months": v.months, "days": v.days, "micros": v.micros}
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(to_json(k)): to_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_json(x) for x in v]
    fields = getattr(v, "_fields", None)
    if fields is not None:
        return {f: to_json(getattr(v, f)) for f in fields}
    return str(v)
