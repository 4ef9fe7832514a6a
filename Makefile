# Two commands on a fresh machine: `make test` and `make demo`. Both create .venv when missing.
# `make docs` builds the documentation site into site/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.browser-installed
# The versions the suite last passed with, as a pip constraints file: pip keeps installing,
# uv only writes it (`make lock`). Pinned for CPython 3.11 on x86_64 Linux, the project's machines.
LOCK := requirements/lock.txt
# -c pins what pip installs into .venv. It does not reach the isolated environment where pip
# builds mas_eval (setuptools, from [build-system] requires): since pip 26.2 neither -c nor
# PIP_CONSTRAINT does; only --build-constraint does.
PIP_LOCKED := -c $(LOCK) --build-constraint $(LOCK)
CHECK_LOCK := requirements/check_lock.py $(LOCK)
# apt-get needs root: sudo when not root and sudo exists.
SUDO := $(shell [ "$$(id -u)" -ne 0 ] && command -v sudo)

.PHONY: test test-fast test-browser test-latest lock demo docs lint bench clean sample inspect-sample

# The docs extra too: the suite builds the documentation (tests/docs/test_doc_pages.py).
# Reinstalls when the lock or pyproject.toml changes. The venv's own pip (from ensurepip) predates
# --build-constraint, so pip comes first; setuptools with it, to replace the one venv seeds.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c $(LOCK) --upgrade pip setuptools
	$(BIN)/python -m pip install --quiet $(PIP_LOCKED) -e ".[dev,distributed,inspect,docs]"
	$(BIN)/python $(CHECK_LOCK)
	touch $(STAMP)

# The suite runs in one process per core (pytest-xdist), at most 4: each loads Polars and its data.
PYTEST := -m pytest -q -n auto --maxprocesses 4

test: $(STAMP)
	$(BIN)/ruff check mas_eval tests tests_browser benchmarks
	$(BIN)/python $(PYTEST)

# The unit tests only, for the edit-test loop: no documentation build, notebook or README run
# (mark docs), no test that starts a Python process (subprocess), none marked slow. `make test`
# (CI's command) still runs everything.
FAST := not docs and not subprocess and not slow
test-fast: $(STAMP)
	$(BIN)/python $(PYTEST) -m "$(FAST)"

# Chromium and its driver from Debian's packages, selenium from PyPI: the HTML report is
# opened in a real headless browser (.ci/run calls this after `make test`).
$(BROWSER_STAMP): $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-driver; }
	$(BIN)/python -m pip install --quiet $(PIP_LOCKED) -e ".[dev,distributed,inspect,docs,browser]"
	$(BIN)/python $(CHECK_LOCK)
	touch $(BROWSER_STAMP)

test-browser: $(BROWSER_STAMP) docs
	$(BIN)/mas-eval demo --out reports/demo
	$(BIN)/python -m pytest -q tests_browser

# The documentation site, strict: a warning (a broken link, a missing reference, a notebook cell
# that raises) fails the build. Doctrees and the executed notebooks stay in build/docs/.
SPHINX := -m sphinx -W --keep-going -j auto -d build/docs/doctrees
docs: $(STAMP)
	rm -rf site build/docs  # fresh: the notebooks show what the code does now
	$(BIN)/python $(SPHINX) docs site

# The same checks on the newest releases pyproject.toml's ranges allow, in a venv of its own:
# users install against the ranges, not the lock. Upgrades on every run (no stamp), setuptools
# too as in .venv, then lists where the lock lags behind (`make lock UPGRADE=1` moves it).
LATEST := .venv-latest
test-latest:
	test -x $(LATEST)/bin/python || $(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip setuptools
	$(LATEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[dev,distributed,inspect,docs]"
	$(LATEST)/bin/python $(CHECK_LOCK) --report
	$(LATEST)/bin/ruff check mas_eval tests tests_browser benchmarks
	$(LATEST)/bin/python $(PYTEST)

# Regenerates the lock with uv (pinned here, in a venv of its own: a tool, not a dependency).
# uv keeps the lock's versions where pyproject.toml still allows them, so after a change to the
# ranges only what must move moves; UPGRADE=1 takes the newest release of everything.
UV_VERSION := 0.13.9
UV_VENV := .venv-uv
UV_COMPILE := uv pip compile pyproject.toml requirements/build.in --all-extras \
	--python-version 3.11 --python-platform x86_64-unknown-linux-gnu --no-header --quiet
define LOCK_HEADER
# The versions `make test` and `make test-browser` install (pip -c and --build-constraint),
# for CPython 3.11 on x86_64 Linux. Written by uv: do not edit. Regenerate with
#   make lock            (keeps these versions where pyproject.toml still allows them)
#   make lock UPGRADE=1  (the newest releases within pyproject.toml's ranges)
# which runs: $(UV_COMPILE) [--upgrade] -o $(LOCK)
endef
export LOCK_HEADER
lock:
	test -x $(UV_VENV)/bin/uv && $(UV_VENV)/bin/uv --version | grep -qx "uv $(UV_VERSION).*" || \
		{ $(PYTHON) -m venv $(UV_VENV) && $(UV_VENV)/bin/python -m pip install --quiet "uv==$(UV_VERSION)"; }
	$(UV_VENV)/bin/$(UV_COMPILE) $(if $(UPGRADE),--upgrade) -o $(LOCK)
	{ echo "$$LOCK_HEADER"; cat $(LOCK); } > $(LOCK).new && mv $(LOCK).new $(LOCK)

demo: $(STAMP)
	$(BIN)/mas-eval demo --out reports/demo

lint: $(STAMP)
	$(BIN)/ruff check mas_eval tests tests_browser benchmarks
	$(BIN)/ruff format --check mas_eval tests tests_browser benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_simulate.py
	$(BIN)/python benchmarks/bench_decision.py
	$(BIN)/python benchmarks/bench_compare.py
	$(BIN)/python benchmarks/bench_ingest.py 100000 300000 1000000
	$(BIN)/python benchmarks/bench_ingest_logs.py
	$(BIN)/python benchmarks/bench_ddx.py
	$(BIN)/python benchmarks/bench_process.py
	$(BIN)/python benchmarks/bench_items.py
	$(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/readme_table.py

# Regenerates the bundled sample (fixed seeds); the result is committed.
sample: $(STAMP)
	$(BIN)/python -m mas_eval.simulation.sample data

# The bundled inspect_ai logs (a debate and a single agent, written by inspect_ai's mock model).
inspect-sample: $(STAMP)
	$(BIN)/python -m tests.inspect_logs data/inspect

clean:
	rm -rf $(VENV) $(LATEST) $(UV_VENV) reports/demo site build/docs
