"""The defaults of what plan.json leaves to the application (written by `remodel codegen`; do
not edit: subclass `hooks.Hooks` instead).

- `now()`: the clock. plan.json's `semantics.now` is `client_statement_start`: each method
  reads it once when it starts, and every `now()` of that execution is that instant; a TTL
  counts from it again as the statement is sent.
- `nextval(sequence, column)`: a serial or identity column's next value. Cassandra has no
  sequence: keep the Postgres sequence through the cut-over, or allocate ids of your own.
- `random_uuid(column)`: `gen_random_uuid()`, a version 4 UUID.
- `timeuuid()`: the id of a row inserted into a table without a key (`row_id`).
- `computed(sql, args)`: an application-computed value, Postgres SQL over the statement's
  parameters that the application computes itself (each has a named method in `hooks.py`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from . import _runtime as rt


class BaseHooks:
    """The application's side of a plan (see the module's documentation)."""

    def now(self) -> dt.datetime:
        """The application's clock (UTC)."""
        return dt.datetime.now(rt.UTC)

    def nextval(self, sequence: str, column: str) -> int:
        """The next value of `sequence` for `column` (`table.column`)."""
        raise rt.NotExecutable(
            f"{column}: nextval({sequence!r}) is the application's to allocate (Hooks.nextval)"
        )

    def random_uuid(self, column: str) -> uuid.UUID:
        """`gen_random_uuid()` for `column`."""
        return uuid.uuid4()

    def timeuuid(self) -> uuid.UUID:
        """A new time-based (version 1) UUID: a row id of a table without a key."""
        return uuid.uuid1()

    def computed(self, sql: str, args: tuple[Any, ...]) -> Any:
        """An application-computed value: `sql` (Postgres SQL of `$1`…) of `args`."""
        raise rt.NotExecutable(f"the application computes `{sql}` (Hooks.computed)")
