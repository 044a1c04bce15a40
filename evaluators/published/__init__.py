"""CartoMapQA's published arithmetic, task by task, on records in the release's layout.

Our own code, written from the published scorer's rules (``eval.py``, ``evaluate_*.py``,
``Parse/parse_response_*.py``, ``get_response_*.py`` of ungquanghuy-kddi/CartoMapQA): every
parsing quirk, substring match, dropped answer, macro or micro average, rounding and random
fall-back (drawn here from a seeded ``random.Random``, ``rng_for``) as it is.  Where the
published code raises, the item is still scored and marked ``crashed``.

Plain dicts in; one module per release task (``mfs``, ``stmf``, ``mtmf``, ``rle``, ``mml``,
``srn``), each with the published parser(s), ``item()`` (one stored record), ``table()`` (the
published aggregate) and ``evaluate()`` (records -> ``Evaluation``).
"""

from __future__ import annotations

from . import mfs, mml, mtmf, rle, srn, stmf
from ._result import Evaluation, Item, rng_for

__all__ = ["Evaluation", "Item", "mfs", "mml", "mtmf", "rle", "rng_for", "srn", "stmf"]
