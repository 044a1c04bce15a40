"""Answer parsers and metrics, one module per task family.

``evaluators.numeric``: numbers with units out of free text, tolerance
accuracy and 1 - MAPE.  Later modules add the map tasks and the GPS tasks.
"""

from .numeric import (
    AnswerParseError,
    NumberAnswer,
    final_answer_text,
    one_minus_mape,
    parse_number,
    tolerance_accuracy,
    within_tolerance,
)

__all__ = [
    "AnswerParseError",
    "NumberAnswer",
    "final_answer_text",
    "one_minus_mape",
    "parse_number",
    "tolerance_accuracy",
    "within_tolerance",
]
