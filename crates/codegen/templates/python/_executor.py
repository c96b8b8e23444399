"""The protocol of `remodel replay --executor` (written by `remodel codegen`; do not edit).

One JSON request a line on stdin, one answer a line on stdout:

    {"pattern": "q1", "params": [...], "now": "...", "drawn": {...}, "computed": [...]}
    -> {"rows": [[...], ...]} | {"done": true} | {"error": "..."}

`params` are the statement's `$1…` as Postgres' `to_json` writes them; `now` is the execution's
clock, `drawn` the values Postgres drew for an inserted row (a sequence's, a random UUID) and
`computed` the application-computed values: what an application supplies through `Hooks`.
`executor.py` holds the table of the generated functions; `python -m PACKAGE.executor` serves it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import os
import sys
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from . import _runtime as rt
from .hooks import Hooks
from .queries import Queries

Call = Callable[[Queries, list[Any]], dict[str, Any]]
"""One generated function called with a request's parameters, answering its JSON."""


class ReplayHooks(Hooks):
    """The application's values of one request, as replay sends them."""

    def __init__(self) -> None:
        super().__init__(node=0)
        self.request: dict[str, Any] = {}

    def now(self) -> dt.datetime:
        return rt.timestamptz_from_text(str(self.request["now"]), rt.UTC_ZONE)

    def nextval(self, sequence: str, column: str, strategy: str) -> int:
        drawn = self.request.get("drawn") or {}
        if column not in drawn:
            raise rt.NotExecutable(f"{column}: replay sent no value for nextval({sequence!r})")
        return int(drawn[column])

    def random_uuid(self, column: str) -> uuid.UUID:
        drawn = self.request.get("drawn") or {}
        return uuid.UUID(str(drawn[column])) if column in drawn else uuid.uuid4()

    def computed(self, sql: str, args: tuple[Any, ...]) -> Any:
        for c in self.request.get("computed") or []:
            if c.get("sql") == sql:
                return rt.from_json(c.get("value"), str(c.get("type") or "any"))
        raise rt.NotExecutable(f"replay sent no value of `{sql}`")


def answer(calls: Mapping[str, Call], q: Queries, hooks: ReplayHooks, line: str) -> dict[str, Any]:
    """The answer to one request line."""
    try:
        request = json.loads(line, parse_float=decimal.Decimal)
        hooks.request = request
        call = calls.get(str(request.get("pattern")))
        if call is None:
            return {"error": f"no generated function for pattern {request.get('pattern')!r}"}
        return call(q, list(request.get("params") or []))
    except Exception as e:  # the function failed: the sample's difference, not the run's end
        return {"error": f"{type(e).__name__}: {e}"}


def serve(calls: Mapping[str, Call], keyspace: str, argv: list[str] | None = None) -> int:
    """Serves requests until stdin ends."""
    ap = argparse.ArgumentParser(description="the generated functions behind replay --executor")
    ap.add_argument("--cql", default=os.environ.get("REMODEL_CQL", "127.0.0.1:9042"))
    ap.add_argument("--keyspace", default=os.environ.get("REMODEL_KEYSPACE", keyspace))
    a = ap.parse_args(argv)
    from cassandra.cluster import Cluster

    host, _, port = str(a.cql).rpartition(":")
    cluster = Cluster([host or "127.0.0.1"], port=int(port or 9042))
    session = cluster.connect(a.keyspace)
    # A loaded test machine answers a logged batch slower than the driver's 10 s default.
    session.default_timeout = 60.0
    hooks = ReplayHooks()
    q = Queries(session, hooks)
    try:
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(answer(calls, q, hooks, line)), flush=True)
    finally:
        cluster.shutdown()
    return 0
