"""The defaults of what plan.json leaves to the application (written by `remodel codegen`; do
not edit: subclass `hooks.Hooks` instead).

- `now()`: the clock. plan.json's `semantics.now` is `client_statement_start`: each method
  reads it once when it starts, and every `now()` of that execution is that instant; a TTL
  counts from it again as the statement is sent.
- `nextval(sequence, column, strategy)`: a serial or identity column's next value, made as
  plan.json's `design.ids` states for the column. Cassandra has no sequence: `time_ordered`
  is a 64-bit time-ordered id made here (`TimeOrderedIds`: milliseconds since 2020 in the high
  bits, then the process's node number and a counter), which keeps a `bigint` column's type and
  lies far above any value a source's sequence reached (about 9e17 at the end of 2026);
  `application` (a 16- or 32-bit column cannot hold one) raises: override `nextval` (keep the
  Postgres sequence through the cut-over, or allocate ids of your own).
- `random_uuid(column)`: `gen_random_uuid()`, a version 4 UUID.
- `timeuuid()`: the id of a row inserted into a table without a key (`row_id`).
- `computed(sql, args)`: an application-computed value, Postgres SQL over the statement's
  parameters that the application computes itself (each has a named method in `hooks.py`).
"""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
import uuid
from typing import Any

from . import _runtime as rt

# The time-ordered ids' epoch: 2020-01-01T00:00:00Z in milliseconds (41 bits of milliseconds:
# ids stay positive until 2089). The layout is plan.json's `time_ordered` strategy.
ID_EPOCH_MS = 1_577_836_800_000


class TimeOrderedIds:
    """64-bit ids, increasing in time: `(ms since ID_EPOCH_MS) << 22 | node << 12 | counter`,
    4,096 a millisecond for each of 1,024 nodes (a process that makes ids needs a node number
    of its own among those that write the same table)."""

    def __init__(self, node: int) -> None:
        self.node = node & 0x3FF
        self.ms = 0
        self.counter = 0
        self.lock = threading.Lock()

    def next(self) -> int:
        """The next id (greater than every id this instance made, even if the clock goes back)."""
        with self.lock:
            ms = max(time.time_ns() // 1_000_000 - ID_EPOCH_MS, self.ms)
            counter = self.counter + 1 if ms == self.ms else 0
            if counter > 0xFFF:
                ms, counter = ms + 1, 0
            self.ms, self.counter = ms, counter
            return ms << 22 | self.node << 12 | counter


class BaseHooks:
    """The application's side of a plan (see the module's documentation)."""

    def __init__(self, node: int | None = None) -> None:
        """`node`: this process's number (0 to 1023) in the ids `nextval` makes; random when
        not given."""
        self.ids = TimeOrderedIds(random.randrange(1024) if node is None else node)

    def now(self) -> dt.datetime:
        """The application's clock (UTC)."""
        return dt.datetime.now(rt.UTC)

    def nextval(self, sequence: str, column: str, strategy: str) -> int:
        """The next value of `sequence` for `column` (`table.column`) by the plan's `strategy`
        for it: a time-ordered id, or the application's (see the module's documentation)."""
        if strategy != "time_ordered":
            raise rt.NotExecutable(
                f"{column}: plan.json leaves the new values of nextval({sequence!r}) to the "
                "application (design.ids): override Hooks.nextval"
            )
        return self.ids.next()

    def random_uuid(self, column: str) -> uuid.UUID:
        """`gen_random_uuid()` for `column`."""
        return uuid.uuid4()

    def timeuuid(self) -> uuid.UUID:
        """A new time-based (version 1) UUID: a row id of a table without a key."""
        return uuid.uuid1()

    def computed(self, sql: str, args: tuple[Any, ...]) -> Any:
        """An application-computed value: `sql` (Postgres SQL of `$1`…) of `args`."""
        raise rt.NotExecutable(f"the application computes `{sql}` (Hooks.computed)")
