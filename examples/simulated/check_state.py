"""Code grader: the order database a conversation left behind (its case's `state/` file).

Reads the grading context on stdin; `metadata.expect` maps order ids to the status each must
end in. Prints the score and one Detail per order.
"""

import json
import sys
from pathlib import Path

context = json.load(sys.stdin)
state = Path(__file__).parent / "state" / f"{context['case_id']}.json"
orders = json.loads(state.read_text(encoding="utf-8"))
details = []
for order_id, status in context["metadata"]["expect"].items():
    actual = orders[order_id]["status"]
    details.append(
        {
            "check": f"order {order_id} status",
            "passed": actual == status,
            "expected": status,
            "actual": actual,
        }
    )
passed = sum(d["passed"] for d in details)
print(json.dumps({"score": passed / len(details), "details": details}))
