import os
import shutil
import subprocess

import pytest

from cartoqa.testing.fake_openai import FakeOpenAIServer

# no model hub is reachable from tests: transformers must not try it
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def fake_server():
    """A real HTTP server on 127.0.0.1 speaking the OpenAI chat API (not a model)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a real small file system (tmpfs) of ``size`` ("2m") under ``tmp_path`` and give
    its folder, to fill up in full-disk tests; unmounted afterwards; root only."""
    mounted = []

    def mount(size: str):
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a small tmpfs needs root and mount(8)")
        mnt = tmp_path / f"disk{len(mounted)}"
        mnt.mkdir()
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)])
        if ok.returncode != 0:
            pytest.skip("cannot mount a tmpfs here (no permission to mount)")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", str(mnt)], capture_output=True)
