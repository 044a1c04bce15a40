"""The distribution installs five packages and its core needs no torch."""

import subprocess
import sys


def test_five_packages_import_and_core_pulls_no_torch():
    code = (
        "import sys, cartoqa, maps, symbols, annotations, evaluators\n"
        "import cartoqa.cli, cartoqa.demo, cartoqa.geodesy, cartoqa.stores, cartoqa.records\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'open_clip') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
        "print(cartoqa.__version__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() and out.stdout.strip() != "0.0.0+unknown"


def test_extras_declare_the_torch_pair():
    from importlib.metadata import requires

    reqs = requires("cartoqa") or []
    for extra in ("local", "symbols"):
        mine = [r for r in reqs if f'extra == "{extra}"' in r]
        assert any(r.startswith("torch==2.14.1") for r in mine), mine
        assert any(r.startswith("torchvision==0.29.1") for r in mine), mine
    core = [r for r in reqs if "extra ==" not in r]
    assert not any(r.startswith(("torch", "transformers", "open_clip")) for r in core), core


def test_the_wheel_ships_the_prompt_templates_and_the_review_pages(tmp_path):
    import shutil
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"  # a copy: the build leaves its build/ folder there, not here
    shutil.copytree(
        root,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "*.egg-info", "__pycache__", ".*cache"
        ),
    )
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("cartoqa-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("cartoqa/tasks/prompts/")}
    here = {
        f"cartoqa/tasks/prompts/{p.name}" for p in (root / "cartoqa/tasks/prompts").glob("*.toml")
    }
    assert here and shipped == here
    review = {n for n in names if n.startswith("annotations/") and not n.endswith(".py")}
    want = {
        str(p.relative_to(root))
        for folder in ("templates", "static")
        for p in (root / "annotations" / folder).iterdir()
    }
    assert want and review == want
    assert "cartoqa/reports/references.toml" in names
