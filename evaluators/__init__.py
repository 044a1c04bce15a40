"""Answer parsers and metrics, one module per task family.

``evaluators.numeric``: numbers with units out of free text, tolerance
accuracy and 1 - MAPE.  Later modules add the map tasks and the GPS tasks.
``evaluators.hedges``: the words that negate a value ("not 2", "E is wrong") or
hedge it ("A or B", "2 or 3"), which every parser reads.
``evaluators.metrics``: every metric, written once (accuracy, RMSE, MAE, MAPE,
1 - MAPE, r^2, precision/recall/F1, ``grouped``).
Every parser is bounded and linear in the answer's length (limits in
``evaluators.answers``): a hostile answer is unreadable, never a crash.
``evaluators.published``: the published CartoMapQA scorer's arithmetic, on its release's
records.

``READERS_VERSION`` is bumped whenever a reader many tasks share, or the published
arithmetic, changes what a score is: scores stored beside a run store under another are
computed afresh (``cartoqa score``).
"""

from .metrics import (
    accuracy,
    closeness,
    grouped,
    mae,
    mape,
    mean,
    precision_recall_f1,
    r_squared,
    rmse,
)
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

#: the version of the shared answer readers and the published arithmetic (2: issue 30's
#: end-of-turn tokens, hyphenated number words, emphasis, "no names" statements, colour
#: steps; the published arithmetic read from the published code)
READERS_VERSION = "2"

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_MAGNITUDE",
    "READERS_VERSION",
    "AnswerParseError",
    "NumberAnswer",
    "accuracy",
    "closeness",
    "final_answer_text",
    "grouped",
    "mae",
    "mape",
    "mean",
    "one_minus_mape",
    "parse_number",
    "precision_recall_f1",
    "r_squared",
    "rmse",
    "tolerance_accuracy",
    "within_tolerance",
]
