"""The RAG bot under test: retrieve two documents, answer with their most relevant sentences.

It returns the passages it retrieved as `context`, so assay can grade the retrieval and the
answer's faithfulness to it. `metadata.hallucinate` makes it add an invented sentence, as an
LLM might, so that the suite shows a failing faithfulness check.
"""

from __future__ import annotations

import re
from typing import Any

from retriever import RETRIEVER, words

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def answer(case: dict[str, Any]) -> dict[str, Any]:
    """The assay `python` target: `{output, context}`."""
    question = str(case["input"])
    hits = RETRIEVER.search(question, k=2)
    if not hits:
        output = "I don't know; please contact customer support."
    else:
        wanted = set(words(question))
        sentences = [s for hit in hits for s in _SENTENCE.split(hit.text)]
        ranked = sorted(sentences, key=lambda s: -len(wanted & set(words(s))))
        output = " ".join(ranked[: int(case["metadata"].get("sentences", 1))])
    extra = case["metadata"].get("hallucinate")
    if extra:
        output = f"{output} {extra}"
    return {
        "output": output,
        "context": [{"id": h.id, "text": h.text, "score": h.score} for h in hits],
    }
