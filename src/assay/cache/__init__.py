"""The on-disk response cache for model-backed target calls and judge calls (SPEC §5)."""

from assay.cache._cache import (
    DEFAULT_CACHE_PATH,
    CacheMiss,
    CacheMode,
    CacheStats,
    ResponseCache,
)
from assay.cache._key import CacheKey, cache_key

__all__ = [
    "DEFAULT_CACHE_PATH",
    "CacheKey",
    "CacheMiss",
    "CacheMode",
    "CacheStats",
    "ResponseCache",
    "cache_key",
]
