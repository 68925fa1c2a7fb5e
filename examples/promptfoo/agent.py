"""The offline stand-in for the model, so the converted suite runs without an API key."""

REPLIES = {
    "How long do I have to return an item?": "You can return any item within 30 days for a refund.",
    "When are you open?": "We are open 9am to 5pm, Monday to Friday.",
}


def answer(case: dict) -> str:
    question = case["input"].split("Customer: ", 1)[-1]
    if "JSON" in question:
        return '{"order": 7, "status": "shipped"}'
    return REPLIES.get(question, "I don't know.")
