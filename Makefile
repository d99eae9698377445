# The README's two commands: `make demo` and `make test`. Both build .venv from nothing, with the
# versions pinned in requirements/dev.txt (the lock). `make lock` refreshes the lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LOCK := requirements/dev.txt
STAMP := $(VENV)/.installed
INSTALL_LOG := $(VENV)/install.log

.PHONY: demo test lint lock clean docs

# uv when it is on PATH or can be installed from PyPI into the new venv; plain pip otherwise.
# The editable install puts the repository on sys.path (editable_mode=compat) so a folder named
# surveys/ or models/ in the current directory (a study directory's surveys/) cannot shadow the
# packages.
$(STAMP): $(LOCK) pyproject.toml Makefile
	@echo "install: .venv from $(LOCK)"
	@set -e; \
	if [ ! -x $(BIN)/python ]; then $(PYTHON) -m venv $(VENV); fi; \
	: > $(INSTALL_LOG); \
	if command -v uv >/dev/null 2>&1; then UV=uv; \
	elif $(BIN)/python -m pip install -q uv >>$(INSTALL_LOG) 2>&1; then UV=$(BIN)/uv; \
	else UV=; fi; \
	if [ -n "$$UV" ]; then \
		echo "install: pinned packages with uv"; \
		$$UV pip install -q --compile-bytecode --python $(BIN)/python -r $(LOCK) >>$(INSTALL_LOG) 2>&1 \
			|| { cat $(INSTALL_LOG); exit 1; }; \
		echo "install: empathic-longitudinal (editable)"; \
		$$UV pip install -q --compile-bytecode --python $(BIN)/python --no-deps --reinstall-package empathic-longitudinal \
			-C editable_mode=compat -e . \
			>>$(INSTALL_LOG) 2>&1 \
			|| { cat $(INSTALL_LOG); exit 1; }; \
	else \
		echo "install: pinned packages with pip (uv not available)"; \
		$(BIN)/python -m pip install -q -r $(LOCK) >>$(INSTALL_LOG) 2>&1 \
			|| { cat $(INSTALL_LOG); exit 1; }; \
		echo "install: empathic-longitudinal (editable)"; \
		$(BIN)/python -m pip install -q --no-deps --config-settings editable_mode=compat -e . \
			>>$(INSTALL_LOG) 2>&1 \
			|| { cat $(INSTALL_LOG); exit 1; }; \
	fi
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/longitudinal demo --out demo-report --overwrite

lint: $(STAMP)
	$(BIN)/ruff check surveys models longitudinal tests benchmarks

# The suite on both cores (pytest-xdist: two workers, each on one BLAS/numba thread; see
# tests/conftest.py), then its cost: wall and CPU seconds of every process it started. A test
# file runs whole on one worker (--dist loadfile), so a report or study that its tests share is
# built once, not once per worker.
TEST_WORKERS ?= 2
test: $(STAMP) lint
	$(BIN)/python benchmarks/suite_cpu.py -n $(TEST_WORKERS) --dist loadfile

# The documentation site, from the lock: Sphinx with warnings as errors, one process, offline,
# the notebooks rendered as stored (tests/test_notebooks.py executes them), the gallery's demo
# report built into docs/_build/demo-report (docs/_ext/demo_gallery.py); then the checks of
# tests/test_docs.py (internal links, nothing loaded from the network, the gallery, the API
# entry of every public name, a browser where Chromium is installed) on the site just built.
# `make test` builds and checks it too.
docs: $(STAMP)
	rm -rf docs/_build
	$(BIN)/python -m sphinx -W --keep-going -q -j 1 -b html -d docs/_build/doctrees docs docs/_build/html
	EMPATHIC_DOCS_SITE=docs/_build/html $(BIN)/python -m pytest -q -n 0 -p no:cacheprovider tests/test_docs.py
	@echo "docs: open docs/_build/html/index.html"

# Re-resolve the lock from pyproject.toml. Run after changing a dependency or its range (add
# UPGRADE= to keep every other pin as it is), or to take new releases on purpose (plain
# `make lock`); then run `make test` and commit requirements/.
UPGRADE ?= --upgrade
lock:
	@command -v uv >/dev/null 2>&1 || { echo "make lock needs uv: pip install uv"; exit 1; }
	uv pip compile pyproject.toml -q --universal --python-version 3.11 --prerelease disallow \
		$(UPGRADE) --extra test --extra fast --extra docs -o $(LOCK)
	@for set in core readers fast test docs; do \
		extra=$$( [ $$set = core ] || echo "--extra $$set" ); \
		uv pip compile pyproject.toml -q --universal --python-version 3.11 --prerelease disallow \
			$$extra -c $(LOCK) -o requirements/$$set.txt; \
	done

clean:
	rm -rf $(VENV) demo-report .pytest_cache docs/_build
