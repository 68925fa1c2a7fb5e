"""A code grader (AgentV v4 contract): the grading context on stdin, {score, hits, misses} out."""

import json
import sys

output = json.load(sys.stdin)["output"].lower()
sorry = any(word in output for word in ("sorry", "apolog"))
print(
    json.dumps(
        {
            "score": 1.0 if sorry else 0.0,
            "hits": ["apologises"] if sorry else [],
            "misses": [] if sorry else ["does not apologise"],
        }
    )
)
