# Two commands on a fresh machine: `make test` and `make demo`. Both create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.browser-installed
# apt-get needs root: sudo when not root and sudo exists.
SUDO := $(shell [ "$$(id -u)" -ne 0 ] && command -v sudo)

.PHONY: test test-browser demo lint bench clean sample

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,distributed]"
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check mas_eval tests tests_browser benchmarks
	$(BIN)/python -m pytest -q

# Chromium and its driver from Debian's packages, selenium from PyPI: the HTML report is
# opened in a real headless browser (.ci/run calls this after `make test`).
$(BROWSER_STAMP): $(STAMP)
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-driver; }
	$(BIN)/python -m pip install --quiet -e ".[dev,distributed,browser]"
	touch $(BROWSER_STAMP)

test-browser: $(BROWSER_STAMP)
	$(BIN)/mas-eval demo --out reports/demo
	$(BIN)/python -m pytest -q tests_browser

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
	$(BIN)/python benchmarks/bench_ddx.py
	$(BIN)/python benchmarks/bench_items.py
	$(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/readme_table.py

# Regenerates the bundled sample (fixed seeds); the result is committed.
sample: $(STAMP)
	$(BIN)/python -m mas_eval.simulation.sample data

clean:
	rm -rf $(VENV) reports/demo
