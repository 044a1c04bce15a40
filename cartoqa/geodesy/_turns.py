"""Turn directions from headings: the rule CartoMapQA's navigation task is written in."""

from __future__ import annotations

__all__ = ["TURN_ACTIONS", "turn_action"]

STRAIGHT = "continue straight"
U_TURN = "make a U-turn and continue straight"
LEFT = "turn left"
RIGHT = "turn right"
#: the four actions, exactly as route answers write them
TURN_ACTIONS = (STRAIGHT, U_TURN, LEFT, RIGHT)


def turn_action(old_heading_deg: float, new_heading_deg: float) -> str:
    """The action for a change of heading: the difference, clockwise from the old heading to
    the new one, is "continue straight" under 40 or over 320 degrees, "turn right" under 140,
    "turn left" over 220, and "make a U-turn and continue straight" otherwise."""
    diff = (new_heading_deg - old_heading_deg) % 360.0
    if diff < 40 or diff > 320:
        return STRAIGHT
    if diff < 140:
        return RIGHT
    if diff > 220:
        return LEFT
    return U_TURN
