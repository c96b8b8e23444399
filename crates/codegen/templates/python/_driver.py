"""The driver's side of the generated access layer (written by `remodel codegen`; do not edit):
statements prepared once at the plan's consistency level, results decoded page by page,
a write path's statements sent as its plan says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.query import BatchStatement, BatchType

from . import _runtime as rt

Statement = Any
"""A statement the driver prepared (`cassandra.query.PreparedStatement`)."""

_BATCH_TYPES = {
    "logged": BatchType.LOGGED,
    "unlogged": BatchType.UNLOGGED,
    "counter": BatchType.COUNTER,
}


class Driver:
    """A `cassandra.cluster.Session` (connected to the plan's keyspace, or a scratch one) as the
    generated functions use it."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def prepare(self, cql: str, consistency: str) -> Statement:
        """`cql` prepared once, run at `consistency` (`LOCAL_QUORUM`)."""
        statement = self.session.prepare(cql)
        statement.consistency_level = getattr(ConsistencyLevel, consistency)
        return statement

    def run(self, statement: Statement, values: Sequence[Any], columns: rt.Columns) -> list[rt.Row]:
        """Every row of one request (a scan's pages included), decoded by `columns`."""
        result = self.session.execute(statement.bind(list(values)))
        names = list(result.column_names or [])
        return rt.decode_rows(result, names, columns)

    def send(
        self,
        statements: Sequence[tuple[Statement, list[Any]]],
        kind: str,
        consistency: str,
        max_statements: int | None = None,
    ) -> None:
        """The statements of a write path: one alone, several in one batch of `kind`
        (`logged`, `unlogged`, `counter`); with `max_statements` (a batch that could pass
        Cassandra's size limit), consecutive batches of at most that many. The driver retries
        no write that is not marked idempotent, so a counter update is sent once."""
        if not statements:
            return
        if max_statements is not None and len(statements) > max_statements:
            for start in range(0, len(statements), max_statements):
                self.send(statements[start : start + max_statements], kind, consistency)
            return
        if len(statements) == 1:
            statement, values = statements[0]
            self.session.execute(statement.bind(values))
            return
        batch = BatchStatement(
            batch_type=_BATCH_TYPES.get(kind, BatchType.LOGGED),
            consistency_level=getattr(ConsistencyLevel, consistency),
        )
        for statement, values in statements:
            batch.add(statement, values)
        self.session.execute(batch)
