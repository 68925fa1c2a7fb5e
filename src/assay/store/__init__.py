"""Run storage: the Store protocol, the SQLite and PostgreSQL stores, and an in-memory sink.

Names are imported on first use (PEP 562): the SQL stores import SQLAlchemy (~0.1 s), and a
long `assay run` stores through its writer process, never opening the database itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.store._deferred import DeferredStore
    from assay.store._errors import (
        ConflictError,
        NotFoundError,
        StoreUnavailableError,
        resume_refusal,
    )
    from assay.store._finish import RunFinish
    from assay.store._location import DATABASE_URL_ENV, DEFAULT_DB_PATH, StoreLocation
    from assay.store._memory import MemorySink
    from assay.store._open import open_store
    from assay.store._owner import RunOwner
    from assay.store._pages import ResultFilter, ResultPage, ResultSort, RunFacets
    from assay.store._postgres import PostgresStore
    from assay.store._process_writer import StoreWriter, StoreWriterEnded, StoreWriterError
    from assay.store._protocol import ResultSink, Store
    from assay.store._snapshot import RawJSON
    from assay.store._sql import Baseline, SQLStore
    from assay.store._sqlite import SQLiteStore
    from assay.store._text import json_without_nul, without_nul

_MODULES = {
    "assay.store._deferred": ["DeferredStore"],
    "assay.store._errors": [
        "ConflictError",
        "NotFoundError",
        "StoreUnavailableError",
        "resume_refusal",
    ],
    "assay.store._finish": ["RunFinish"],
    "assay.store._location": ["DATABASE_URL_ENV", "DEFAULT_DB_PATH", "StoreLocation"],
    "assay.store._memory": ["MemorySink"],
    "assay.store._owner": ["RunOwner"],
    "assay.store._open": ["open_store"],
    "assay.store._pages": ["ResultFilter", "ResultPage", "ResultSort", "RunFacets"],
    "assay.store._postgres": ["PostgresStore"],
    "assay.store._process_writer": ["StoreWriter", "StoreWriterEnded", "StoreWriterError"],
    "assay.store._protocol": ["ResultSink", "Store"],
    "assay.store._snapshot": ["RawJSON"],
    "assay.store._sql": ["Baseline", "SQLStore"],
    "assay.store._sqlite": ["SQLiteStore"],
    "assay.store._text": ["json_without_nul", "without_nul"],
}

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_DB_PATH",
    "Baseline",
    "ConflictError",
    "DeferredStore",
    "MemorySink",
    "NotFoundError",
    "PostgresStore",
    "RawJSON",
    "ResultFilter",
    "ResultPage",
    "ResultSink",
    "ResultSort",
    "RunFacets",
    "RunFinish",
    "RunOwner",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "StoreLocation",
    "StoreUnavailableError",
    "StoreWriter",
    "StoreWriterEnded",
    "StoreWriterError",
    "json_without_nul",
    "open_store",
    "resume_refusal",
    "without_nul",
]

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
