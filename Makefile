# `make setup` creates .venv (if missing) and installs the pinned dependencies; `make demo` and
# `make test` run it first, so each works alone on a fresh clone.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN)/python)

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt -c constraints.txt 2>&1 | { grep -v 'is ignored: it is neither' || true; }
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: setup
	$(BIN)/lait demo --out out/demo --web out/sample-web

test: setup
	$(BIN)/python -m pytest -q tests

clean:
	rm -rf out build *.egg-info
