"""Known prices per million tokens, to print a run's cost.

Prices change; these are the list prices the providers published for
standard (non-batch) requests as of 2026-11.  A model not listed has no
cost line; give ``cartoqa run --price IN,OUT`` (dollars per million input
and output tokens) for it.
"""

from __future__ import annotations

__all__ = ["PRICES_PER_MTOK", "cost_usd", "price_for"]

#: model name (without provider prefix) -> (dollars per 1M input tokens, per 1M output tokens)
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "o3": (2.00, 8.00),
    "claude-3-7-sonnet-latest": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash": (0.30, 2.50),
}


def price_for(spec: str) -> tuple[float, float] | None:
    """The price of a model spec ("openai:gpt-4o"), or None when unknown or local."""
    provider, _, name = spec.partition(":")
    if provider not in ("openai", "anthropic", "google") or "@" in name:
        return None  # local servers and baselines cost nothing we know of
    return PRICES_PER_MTOK.get(name)


def cost_usd(price: tuple[float, float], input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * price[0] + output_tokens * price[1]) / 1e6
