# The two commands of the README: `make serve` and `make test` (which runs `make lint`,
# then pytest). Each creates or reuses the virtual environment in .venv by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PY_DIRS := kvlake tests benchmarks scripts

.PHONY: serve test lint bench install mutations browser wrk

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	# uv resolves and installs in parallel: 40 s where pip took 2 min 20 s of CI's 15.
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	$(MAKE) browser
	touch $(STAMP)

# The UI's browser tests drive Debian's headless Chromium (tests/ui/conftest.py): installed
# here when missing (we run as root, CI too), the package lists refreshed first if needed.
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
		  { apt-get update -q >/dev/null && apt-get install -y -q chromium chromium-driver >/dev/null; }; }

install: $(STAMP)

# `make serve` installs what the server needs (and boto3 for a lake on S3), not the test
# tools: a production box gets no pytest, moto or Spark. `make install` adds them.
SERVE_STAMP := $(VENV)/.installed-serve
$(SERVE_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[s3]'
	touch $(SERVE_STAMP)

serve: $(SERVE_STAMP)
	$(BIN)/kvlake serve

# Lint first: a style or type error fails in seconds, before the minutes of pytest.
# pytest-xdist runs the tests on one worker more than there are cores, each stealing work
# from the others at the end: much of the suite waits on servers, S3, PostgreSQL and
# Spark rather than on a core (on 2 cores: 8 minutes, 11 on 2 workers, 15 serially).
# Temporary files (SQLite databases, local blockstores) go to a RAM disk where there is
# one: the code fsyncs what it writes, as for users' lakes, and on a disk those syncs were
# a quarter of the time.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
TEST_TMPDIR := $(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm)
test: lint
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR)) \
		$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# ruff check and ruff format --check on every Python folder; mypy --strict on kvlake and
# tests, benchmarks and scripts (the files, in pyproject.toml's [tool.mypy]).
lint: $(STAMP)
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)
	$(BIN)/mypy

# Remove each invariant's guarding line in a scratch copy and check a test fails (minutes).
mutations: $(STAMP)
	$(BIN)/python scripts/mutation_check.py

bench: $(STAMP)
	$(BIN)/python benchmarks/kv_bench.py

# benchmarks/api_bench.py drives the server with wrk (Debian's package), installed here
# like the browser: `make wrk` before the API benchmark on a fresh machine.
wrk:
	command -v wrk >/dev/null || apt-get install -y -q wrk >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null; }
