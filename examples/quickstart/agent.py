"""A tiny customer-support agent for the assay quickstart.

It needs no network and no API key: it routes each question to a "tool" (a lookup in the
tables below), records the tool calls like a real agent would, and phrases an answer. Some
answers are deliberately imperfect so the suite shows pass, borderline and fail verdicts.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

POLICIES = {
    "refunds": "Refunds are accepted within 30 days of purchase with a receipt.",
    "shipping": "Standard shipping takes 3-5 business days; express takes 1-2.",
    "hours": "Support is open Monday to Friday, 9am to 6pm CET.",
    "cancellation": "You can cancel any time from Settings > Billing.",
}

ORDERS = {
    "1042": {"order_id": "1042", "status": "shipped", "carrier": "DHL", "eta": "2026-11-25"},
    "2077": {"order_id": "2077", "status": "processing", "carrier": None, "eta": None},
}


def lookup_policy(topic: str) -> str:
    """Tool: the policy text for a topic."""
    return POLICIES.get(topic, "")


def get_order(order_id: str) -> dict[str, Any] | None:
    """Tool: an order record."""
    return ORDERS.get(order_id)


def _call(calls: list[dict[str, Any]], tool: str, args: dict[str, Any], fn: Any) -> Any:
    started = time.perf_counter()
    output = fn(**args)
    calls.append(
        {
            "tool": tool,
            "args": args,
            "output": output,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        }
    )
    return output


def _reply(question: str, calls: list[dict[str, Any]]) -> str:
    q = question.lower()
    order = re.search(r"\border\s+#?(\d+)", q)
    if order:
        record = _call(calls, "get_order", {"order_id": order.group(1)}, get_order)
        if record is None:
            return f"I could not find order {order.group(1)}. Could you check the number?"
        if "json" in q:
            return json.dumps(record)
        if record["status"] == "shipped":
            return (
                f"Order {record['order_id']} has shipped with {record['carrier']} and should "
                f"arrive by {record['eta']}."
            )
        return f"Order {record['order_id']} is still {record['status']}."
    if "refund" in q:
        return "Hello! " + _call(calls, "lookup_policy", {"topic": "refunds"}, lookup_policy)
    if "arrive" in q or "delivery" in q:
        policy = _call(calls, "lookup_policy", {"topic": "shipping"}, lookup_policy)
        # Deliberately overpromises: the suite's required no-guarantee check catches it.
        return policy + " We guarantee it arrives before the weekend."
    if "ship" in q:
        return _call(calls, "lookup_policy", {"topic": "shipping"}, lookup_policy)
    if "hours" in q or "open" in q:
        return _call(calls, "lookup_policy", {"topic": "hours"}, lookup_policy)
    if "cancel" in q:
        policy = _call(calls, "lookup_policy", {"topic": "cancellation"}, lookup_policy)
        return policy  # forgets to mention that refunds for the current month are prorated
    if "human" in q or "person" in q:
        return "Of course - I am handing you over to a human agent now."
    if "warranty" in q:
        return "I'm not sure about warranties, sorry."
    return "Hello! How can I help you today?"


def answer(case: dict[str, Any]) -> dict[str, Any]:
    """The assay `python` target entry point: receives the case, returns output and trace."""
    question = case["input"] if isinstance(case["input"], str) else case["messages"][-1]["content"]
    calls: list[dict[str, Any]] = []
    text = _reply(question, calls)
    return {
        "output": text,
        "tool_calls": calls,
        "messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": text},
        ],
        "token_usage": {"input": len(question.split()), "output": len(text.split())},
    }
