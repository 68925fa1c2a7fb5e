"""A small BM25 retriever over `corpus.DOCUMENTS`: enough retrieval to be graded.

Words are lower-cased, a few function words dropped and a plural `s` folded, then each
document is scored with Okapi BM25 (k1 = 1.2, b = 0.75) against the query's words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from corpus import DOCUMENTS

K1 = 1.2
B = 0.75
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS_TEXT = """a an and are at by can do does for from how i in is it my of on or the to
    what when where which who will with you your"""
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def words(text: str) -> list[str]:
    """The words of `text` as compared: lower case, no function words, plural `s` folded."""
    found = []
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        plural = len(word) > 3 and word.endswith("s") and not word.endswith("ss")
        found.append(word[:-1] if plural else word)
    return found


@dataclass(frozen=True)
class Hit:
    """One retrieved document and its BM25 score."""

    id: str
    text: str
    score: float


class Retriever:
    """BM25 over a fixed set of documents."""

    def __init__(self, documents: dict[str, str]) -> None:
        self.documents = documents
        self.terms = {doc_id: Counter(words(text)) for doc_id, text in documents.items()}
        self.lengths = {doc_id: sum(c.values()) for doc_id, c in self.terms.items()}
        self.average = sum(self.lengths.values()) / len(self.lengths)
        frequency: Counter[str] = Counter()
        for counts in self.terms.values():
            frequency.update(counts.keys())
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def search(self, query: str, k: int = 2) -> list[Hit]:
        """The `k` best documents with a positive score, best first (ties by id)."""
        scored = []
        for doc_id, counts in self.terms.items():
            norm = K1 * (1 - B + B * self.lengths[doc_id] / self.average)
            score = sum(
                self.idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm)
                for t in set(words(query))
                if t in counts
            )
            if score > 0:
                scored.append((round(score, 4), doc_id))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [Hit(doc_id, self.documents[doc_id], score) for score, doc_id in scored[:k]]


RETRIEVER = Retriever(DOCUMENTS)
