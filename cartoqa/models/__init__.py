"""Models: the ``Model`` protocol, adapters chosen by a spec string, and baselines.

    model = load_model("openai:gpt-4o")           # or hf:..., vllm:..., oracle, random, ...
    responses = model.generate([Request(id="q1", text="...", images=(path,))])

Adapters: ``openai`` (any OpenAI-compatible server), ``anthropic`` and
``google`` (the ``api`` extra), each also ``PROVIDER:MODEL@http://HOST:PORT``
for a server of that API (``SPEC_FORMS``); ``hf`` (transformers, the
``local`` extra), ``vllm`` (the ``gpu`` extra); baselines ``oracle``,
``random``, ``constant``, and ``FunctionModel`` for a Python function.
``cartoqa.runner`` runs a model over a dataset, resumably.

The hosted adapters retry by a ``RetryPolicy`` (a per-try ``timeout_s``, a
per-request ``deadline_s``, few retries for a refused connection), send only
the settings their installed SDK takes, and say what they left out in
``model.notes``.
"""

from ._retry import RetryPolicy
from ._spec import SPEC_FORMS, load_model
from ._types import GenerationSettings, Model, Request, Response
from .baselines import ConstantModel, FunctionModel, OracleModel, RandomModel, random_answer
from .prices import PRICES_PER_MTOK, price_for

__all__ = [
    "PRICES_PER_MTOK",
    "SPEC_FORMS",
    "ConstantModel",
    "FunctionModel",
    "GenerationSettings",
    "Model",
    "OracleModel",
    "RandomModel",
    "Request",
    "Response",
    "RetryPolicy",
    "load_model",
    "price_for",
    "random_answer",
]
