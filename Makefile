# Two commands on a fresh machine: `make test` and `make demo`. Both create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lint bench clean sample

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check mas_eval tests benchmarks
	$(BIN)/python -m pytest -q

demo: $(STAMP)
	$(BIN)/mas-eval demo --out reports/demo

lint: $(STAMP)
	$(BIN)/ruff check mas_eval tests benchmarks
	$(BIN)/ruff format --check mas_eval tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_simulate.py
	$(BIN)/python benchmarks/bench_decision.py
	$(BIN)/python benchmarks/bench_compare.py
	$(BIN)/python benchmarks/bench_ingest.py 100000 300000 1000000
	$(BIN)/python benchmarks/readme_table.py

# Regenerates the bundled sample (fixed seeds); the result is committed.
sample: $(STAMP)
	$(BIN)/python -m mas_eval.sample data

clean:
	rm -rf $(VENV) reports/demo
