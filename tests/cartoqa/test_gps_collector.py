"""Making a GPS set pauses Python's cycle collector and gives it back as it found it, even
when a task fails part way."""

from __future__ import annotations

import gc

import pytest

from cartoqa.errors import CartoqaError
from cartoqa.tasks.gps import generate_gps


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(tmp_path, enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        generate_gps(tmp_path / "gps", per_task=10, seed=1, tasks=["distance"])
        assert gc.isenabled() is enabled
        with pytest.raises(CartoqaError):
            generate_gps(tmp_path / "gps2", per_task=10, seed=1, tasks=["no_such_task"])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
