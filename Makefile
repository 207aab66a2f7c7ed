# The two commands of the README: `make serve` and `make test`. Each creates or
# reuses the virtual environment in .venv by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint bench install mutations

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/kvlake serve

test: $(STAMP)
	$(BIN)/ruff check kvlake tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest

# Remove each invariant's guarding line in a scratch copy and check a test fails (minutes).
mutations: $(STAMP)
	$(BIN)/python scripts/mutation_check.py

bench: $(STAMP)
	$(BIN)/python benchmarks/kv_bench.py
