"""Where the backfill and the mirror keep what they fetch: SQLite or PostgreSQL.

Everything that speaks SQL lives in this package: one description of every table
(``_schema``), one set of row builders (``_rows``), and the engines. The backfill
(:mod:`asyncsports.backfill`), the sharded workers, the mirror (:mod:`asyncsports.sync`) and
the Parquet export (:mod:`asyncsports.store.export`) are built on it.
"""

from __future__ import annotations

from asyncsports.store._pg import is_postgres, redact_url

__all__ = ["is_postgres", "redact_url"]
