# The README's two commands: `make demo` and `make test`. Both build .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,fast]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/longitudinal demo --out demo-report --overwrite

lint: $(STAMP)
	$(BIN)/ruff check surveys models longitudinal tests benchmarks

test: $(STAMP) lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) demo-report .pytest_cache
