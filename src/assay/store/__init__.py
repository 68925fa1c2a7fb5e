"""Run storage: the Store protocol, the SQLite and PostgreSQL stores, and an in-memory sink."""

from assay.store._errors import ConflictError, NotFoundError
from assay.store._memory import MemorySink
from assay.store._open import DATABASE_URL_ENV, DEFAULT_DB_PATH, open_store
from assay.store._pages import ResultFilter, ResultPage, ResultSort, RunFacets
from assay.store._postgres import PostgresStore
from assay.store._process_writer import StoreWriter, StoreWriterEnded, StoreWriterError
from assay.store._protocol import ResultSink, Store
from assay.store._snapshot import RawJSON
from assay.store._sql import Baseline, SQLStore
from assay.store._sqlite import SQLiteStore

__all__ = [
    "DATABASE_URL_ENV",
    "DEFAULT_DB_PATH",
    "Baseline",
    "ConflictError",
    "MemorySink",
    "NotFoundError",
    "PostgresStore",
    "RawJSON",
    "ResultFilter",
    "ResultPage",
    "ResultSink",
    "ResultSort",
    "RunFacets",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "StoreWriter",
    "StoreWriterEnded",
    "StoreWriterError",
    "open_store",
]
