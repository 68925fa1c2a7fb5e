"""The documents the example bot answers from: a small outdoor-gear shop's help pages."""

from __future__ import annotations

DOCUMENTS: dict[str, str] = {
    "refunds": (
        "Refunds are accepted within 30 days of delivery. Items must be unused and in their "
        "original packaging. The refund goes back to the original payment method within 5 "
        "business days."
    ),
    "shipping": (
        "Standard shipping takes 3 to 5 business days. Shipping is free on orders over 50 EUR. "
        "Express shipping costs 9 EUR and arrives the next business day."
    ),
    "warranty": (
        "All tents and backpacks carry a two-year warranty against manufacturing defects. "
        "The warranty does not cover wear and tear or damage from misuse."
    ),
    "support": (
        "Customer support is open Monday to Friday from 9:00 to 17:00 CET. "
        "You can reach support by email at help@northwind.example."
    ),
    "sizing": (
        "Hiking boots run small, so order half a size up. Jackets follow standard EU sizes."
    ),
    "stores": (
        "Northwind has stores in Lyon and Grenoble. Both stores are open Monday to Saturday "
        "from 10:00 to 19:00."
    ),
}
"""Document id → text."""
