# Developer entry points. Everything runs from the project's own virtual
# environment in .venv, which `make install` creates on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

Q ?= What are the trade-offs between threads and processes?
CORPUS ?= samples/corpus
PYTEST_ARGS ?=
BENCH_ARGS ?=

# Single-quote a value for the shell (embedded ' become '\''), so a question may
# hold quotes, $ or backticks without the shell interpreting them.
shell_quote = '$(subst ','\'',$(1))'

.PHONY: install research up test bench clean

install: $(STAMP)

# Reinstalls only when pyproject.toml changed (or .venv is new): a second
# `make install` does nothing.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON)' not found; install Python 3.11 or newer, or run: make install PYTHON=/path/to/python3.11" >&2; exit 1; }
	@if [ ! -x $(BIN)/python ]; then \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	    echo "error: $(PYTHON) is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); this project needs 3.11 or newer." >&2; \
	    echo "       run: make install PYTHON=/path/to/python3.11" >&2; exit 1; }; \
	  echo "creating $(VENV) with $(PYTHON)"; \
	  $(PYTHON) -m venv $(VENV); \
	fi
	@$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(VENV) runs Python $$($(BIN)/python -c 'import platform; print(platform.python_version())'); this project needs 3.11 or newer." >&2; \
	  echo "       remove $(VENV) and run: make install PYTHON=/path/to/python3.11" >&2; exit 1; }
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	@touch $@

research: install
	$(BIN)/deepresearch ask $(call shell_quote,$(Q)) --corpus $(call shell_quote,$(CORPUS))

up: install
	$(BIN)/deepresearch up

test: install
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: install
	$(BIN)/python bench/pipeline.py $(BENCH_ARGS)

clean: install
	rm -rf .data
