"""Answer parsers and metrics, one module per task family.

``evaluators.numeric``: numbers with units out of free text, tolerance
accuracy and 1 - MAPE.  Later modules add the map tasks and the GPS tasks.
Every parser is bounded and linear in the answer's length (limits in
``evaluators.answers``): a hostile answer is unreadable, never a crash.
"""

from .numeric import (
    MAX_ANSWER_CHARS,
    MAX_MAGNITUDE,
    AnswerParseError,
    NumberAnswer,
    final_answer_text,
    one_minus_mape,
    parse_number,
    tolerance_accuracy,
    within_tolerance,
)

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_MAGNITUDE",
    "AnswerParseError",
    "NumberAnswer",
    "final_answer_text",
    "one_minus_mape",
    "parse_number",
    "tolerance_accuracy",
    "within_tolerance",
]
