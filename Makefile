# Conveniences; each target is a plain command you can also run yourself.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup setup-test test demo docs lint typecheck bench clean

setup:            ## core install: Debian packages, npm assets, .venv
	bash scripts/setup.sh main

setup-test:       ## everything the tests need (all extras but gpu)
	bash scripts/setup.sh test

test:             ## the README's test command
	bash scripts/test.sh

demo:             ## the README's main job
	bash scripts/demo.sh

docs:             ## the documentation site, strict, into build/site (the docs extra)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

lint:
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

typecheck:
	$(VENV)/bin/mypy

bench:            ## speed tables (benchmarks/*.py), one run each
	@for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf demo-output .pytest_cache .mypy_cache .ruff_cache
