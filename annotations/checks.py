"""What a correction can break that the store does not refuse, said to the reviewer before
(the review tool) or after (the Label Studio import) it is stored.

    correction_warnings(truth)   # [] or ["the corrected steps are not connected ...: why"]

- a route whose corrected steps are not a drivable path from the blue to the
  red marker on the map's roads (the network the truth carries for scoring):
  the same check SRN's connectivity score makes (``evaluators.navigation.
  route_connected``), so the oracle's answer stays connected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["correction_warnings", "route_problem"]


def route_problem(truth: Mapping[str, Any]) -> str | None:
    """Why a route truth's steps are not connected on its own road network; None when they
    are, or when it is no route or carries no network (connectivity is then not scored)."""
    if truth.get("kind") != "route" or not truth.get("network"):
        return None
    from cartoqa.records import RoadNetwork
    from evaluators.navigation import route_connected

    ok, why = route_connected(
        list(truth.get("steps", [])), RoadNetwork.model_validate(truth["network"])
    )
    return None if ok else (why or "not connected")


def correction_warnings(truth: Mapping[str, Any]) -> list[str]:
    """What is wrong with a corrected truth that is still a valid truth (module docstring)."""
    why = route_problem(truth)
    if why is None:
        return []
    return [
        f"the corrected steps are not connected on the map's roads ({why}): the route's "
        "connectivity, and every answer scored against it, will say so"
    ]
