# deskpilot — one command per job. `make demo` and `make test` do all set-up on a fresh Debian 12.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_SYS := $(VENV)/.system-packages
STAMP_PY := $(VENV)/.installed
STAMP_TS := tests/ts/node_modules/.installed

.PHONY: demo test test-fast test-eval check bench safety setup clean desktop-like app-probe

setup: $(STAMP_SYS) $(STAMP_PY) $(STAMP_TS)

$(STAMP_SYS): scripts/apt-packages.txt scripts/setup-system.sh
	scripts/setup-system.sh
	@mkdir -p $(VENV) && touch $@

$(BIN)/python: | $(STAMP_SYS)
	$(PYTHON) -m venv $(VENV)

$(STAMP_PY): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

$(STAMP_TS): tests/ts/package.json tests/ts/package-lock.json scripts/setup-node.sh | $(STAMP_SYS)
	scripts/setup-node.sh
	@touch $@

demo: setup
	$(BIN)/python -m deskpilot.demo

# Test tiers by cost (tests/tiers.py, docs/testing.md). Bytecode is cached (Python's default,
# even where the environment turns it off): recompiling every module is most of a short run.
TEST_ENV := PYTHONDONTWRITEBYTECODE=

# everything, as CI runs it; the slowest tests and the time per cost marker at the end
test: setup
	$(TEST_ENV) $(BIN)/python -m pytest -q --durations=25 --durations-min=2

# the one-minute loop: no sandbox, no app, no browser, no eval trial; fails past its budget
test-fast: setup
	$(TEST_ENV) $(BIN)/python -m pytest -q --tier fast

# the eval trials (deskpilot eval processes, each with its own sandbox)
test-eval: setup
	$(TEST_ENV) $(BIN)/python -m pytest -q --tier eval --durations=10

check: setup
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

# every benchmark, each in its own process; one that fails does not stop the rest: the table at
# the end names the failures and why, and the exit status is non-zero (bench/__main__.py)
bench: setup
	$(BIN)/python -m bench

# how well everyday apps read (scripts/app_probe.py, docs/apps.md): each installed app of its
# list opened on a sandbox, its read against what it exposes; APPS="kcalc evince" for some
app-probe: setup
	$(BIN)/python scripts/app_probe.py $(APPS)

# the "user-like" desktop package set (~300 packages with recommends; docs/testing.md): to try
# the suite and the benchmarks on a machine that looks like a user's rather than like CI's
desktop-like:
	scripts/setup-system.sh scripts/apt-desktop-like.txt --install-recommends

# the safety suite's cases (also run by `make test`), with more fuzzing; prints the figures
safety: setup
	$(BIN)/python -m pytest -q -m safety --fuzz-examples=1000 --safety-json=bench/results/safety.json

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache tests/ts/node_modules
