"""Fixtures shared by the scorer tests."""

from __future__ import annotations

import pytest

from cartoqa.records import Sample


@pytest.fixture(scope="session")
def every_task_samples() -> list[Sample]:
    """A sample of every map task and of each (GPS task, truth kind) the generators make
    (``test_hostile_answers``); made once a session, as the GPS generators take seconds."""
    from tests.evaluators.test_hostile_answers import _gps_samples, _map_samples

    return _map_samples() + _gps_samples()
