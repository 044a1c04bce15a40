import os

import pytest

from cartoqa.testing.fake_openai import FakeOpenAIServer

# no model hub is reachable from tests: transformers must not try it
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def fake_server():
    """A real HTTP server on 127.0.0.1 speaking the OpenAI chat API (not a model)."""
    with FakeOpenAIServer() as server:
        yield server
