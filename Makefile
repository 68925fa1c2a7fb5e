# The two commands a newcomer needs: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check --quiet

.PHONY: demo test lint typecheck unit provision schema docs clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Stamp files so a second `make` reinstalls only when pyproject.toml changed.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "== assay quickstart: a support agent (examples/quickstart/agent.py), graded offline =="
	$(BIN)/assay run examples/quickstart
	@echo ""
	@echo "The run is stored in .assay/assay.db. Next, try:"
	@echo "  $(BIN)/assay run examples/quickstart --threshold 0.9   # stricter: watch verdicts change"
	@echo "  $(BIN)/assay run examples/quickstart --json            # the machine-readable result"
	@echo "  $(BIN)/assay validate examples/quickstart              # check a suite without running it"
	@echo "  $(BIN)/assay report latest --format html -o report.html # a report to open in a browser"
	@echo "  $(BIN)/assay serve                                     # the studio: http://127.0.0.1:8321"
	@echo "  then edit examples/quickstart/support.eval.yaml and run it again."

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests examples benchmarks
	$(BIN)/ruff format --check src tests examples benchmarks
	$(BIN)/lint-imports

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# System packages the tests need (a PostgreSQL server for the store contract tests).
provision:
	scripts/provision-test-services

unit: $(VENV)/.installed-dev provision
	$(BIN)/pytest --cov --cov-report=term --cov-report=xml

test: lint typecheck unit

schema: $(VENV)/.installed
	$(BIN)/assay schema > schema/suite.schema.json

clean:
	rm -rf $(VENV) .assay .coverage coverage.xml .mypy_cache .ruff_cache .pytest_cache

docs: $(VENV)/.installed
	$(BIN)/python scripts/gen_cli_docs.py

# Every benchmark at issue #10's sizes (~3-4 min on 2 cores), then the targets table; exits 1
# when a target is not met. Options: make bench BENCH_ARGS='--quick' (--repeats K, --only NAME).
# The checkout is compiled to bytecode first, as pip compiles an installed assay: with
# PYTHONDONTWRITEBYTECODE set, an editable checkout would otherwise compile every module of
# assay from source in every process a benchmark starts.
bench: $(VENV)/.installed
	$(BIN)/python -m compileall -q src
	$(BIN)/python benchmarks/bench.py $(BENCH_ARGS)
