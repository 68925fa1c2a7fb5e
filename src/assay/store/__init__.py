"""Run storage: the Store protocol, the SQLite store and an in-memory sink."""

from assay.store._memory import MemorySink
from assay.store._open import DEFAULT_DB_PATH, open_store
from assay.store._protocol import ResultSink, Store
from assay.store._snapshot import RawJSON
from assay.store._sqlite import SQLiteStore

__all__ = [
    "DEFAULT_DB_PATH",
    "MemorySink",
    "RawJSON",
    "ResultSink",
    "SQLiteStore",
    "Store",
    "open_store",
]
