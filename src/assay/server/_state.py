"""What every request handler shares: the store, the token, limits, the studio config file.

The store is opened on first use when the app was given a location, so building the app (for
its OpenAPI document, say) never touches a database.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request

from assay.store import Store

__all__ = ["AppState", "StoreDep", "state_of"]


@dataclass
class AppState:
    """The server's settings and its store (opened lazily from `location`)."""

    location: str | Path | None
    token: str | None
    max_upload_bytes: int
    config_path: Path
    store: Store | None = None
    owns_store: bool = False
    """Whether the app opened the store (and closes it on shutdown)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get_store(self) -> Store:
        """The store, opened now if this is its first use."""
        if self.store is None:
            with self._lock:
                if self.store is None:
                    from assay.config import project_store
                    from assay.store import open_store

                    self.store = open_store(self.location, fallback=project_store())
                    self.owns_store = True
        return self.store

    def close(self) -> None:
        """Close the store if the app opened it."""
        if self.owns_store and self.store is not None:
            self.store.close()
            self.store = None
            self.owns_store = False


def state_of(request: Request) -> AppState:
    """The app's shared state."""
    state: AppState = request.app.state.assay
    return state


def _store(request: Request) -> Store:
    return state_of(request).get_store()


StoreDep = Annotated[Store, Depends(_store)]
"""A handler parameter receiving the run store."""
