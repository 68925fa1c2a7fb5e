"""A code grader in AgentV's v4 contract: the context on stdin, {score, hits, misses} out."""

import json
import sys

context = json.load(sys.stdin)
word = sys.argv[1]
found = word in context["output"]
print(
    json.dumps(
        {
            "score": 1.0 if found else 0.0,
            "hits": [f"mentions {word}"] if found else [],
            "misses": [] if found else [f"does not mention {word}"],
        }
    )
)
