# autoheuristic-rs: one entry point for the common jobs. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

CARGO ?= cargo
# Pipeline knobs: `make pipeline NAME=pad_mm SAMPLES=2000 DEVICE=cuda`, or DATA=data/pad_mm_h100.txt
# to train on a shipped log instead of collecting.
NAME ?= pad_mm
SAMPLES ?= 400
DEVICE ?= auto
SEED ?= 0
DATA ?=
OUT ?= out/$(NAME)
HEURISTIC ?=
GENERATED ?= generated/ah-heuristics
MODEL ?=

export NAME SAMPLES DEVICE SEED DATA OUT HEURISTIC GENERATED MODEL CARGO

.PHONY: help build pipeline ship test tutorial-check ci lint size-audit fmt check-generated bench bench-train bench-codegen bench-core bench-runtime ref-venv deps gpu-build clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-18s %s\n", $$1, $$2}'

build: ## build every tool (release; ah-use with CUDA, as the pipeline uses it)
	$(CARGO) build --release --workspace --locked --features ah-use/cuda

pipeline: ## collect -> train -> codegen -> build -> use into out/NAME (GPU if present, else CPU); changes no tracked file
	bash scripts/pipeline.sh

ship: ## generate MODEL=out/NAME/H.model.json into generated/ah-heuristics and list what changed
	bash scripts/ship.sh

test: ## run the whole test suite (no GPU needed; GPU tests skip with a message)
	$(CARGO) test --workspace --locked
	bash scripts/test_python.sh
	bash scripts/tutorial_check.sh --verify
	$(MAKE) --no-print-directory check-generated

tutorial-check: ## run docs/tutorial.md (its code and commands) in a scratch copy; FULL=1 adds make test there
	FULL=$(FULL) bash scripts/tutorial_check.sh

check-generated: ## fail if the committed generated crates (heuristics, self-test fixtures) or docs/cli.md are stale
	bash scripts/check_generated.sh
	bash scripts/cli_docs.sh --check

lint: ## rustfmt, clippy, the size audit and the module cycles, as CI runs them
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	bash scripts/size_audit.sh --check
	python3 scripts/module_cycles.py

size-audit: ## list hand-written .rs and .py files over 800 lines and functions over 100 (scripts/size_audit.allow: the exceptions)
	bash scripts/size_audit.sh

fmt: ## format the workspace
	$(CARGO) fmt --all

ci: lint test ## what .ci/run runs

bench: bench-train bench-codegen bench-core bench-runtime ## every benchmark, printed as tables

bench-train: ## ah-train vs the Python reference on pad_mm_a100 (needs ../shared)
	bash scripts/bench_train.sh

bench-codegen: ## one generated Rust decision vs the Python artifact
	$(CARGO) bench -p ah-heuristics
	python3 scripts/bench_python_artifact.py

bench-core: ## the core's hot paths (log read, augment ops, model evaluation, pick cache)
	$(CARGO) run --release --quiet -p ah-runtime --example bench_core

bench-runtime: ## the reduction multi-kernel's first call with the learned heuristic (no GPU)
	CARGO=$(CARGO) bash scripts/bench_runtime.sh

ref-venv: ## Python reference trainer's venv (.venv-ref), for benchmarks and oracle checks
	python3 -m venv .venv-ref
	.venv-ref/bin/pip install --quiet pandas==2.3.3 scikit-learn==1.5.1 scipy numpy

deps: ## optional system packages (graphviz renders the tree to SVG in reports)
	apt-get update && apt-get install -y graphviz

gpu-build: ## release binaries into .gpu/ for the lent GPU machine (see docs/gpu.md)
	$(CARGO) build --release --workspace --locked --features ah-use/cuda
	mkdir -p .gpu && cp target/release/ah-collect target/release/ah-train target/release/ah-codegen target/release/ah-use .gpu/
	strip .gpu/ah-collect .gpu/ah-train .gpu/ah-codegen .gpu/ah-use   # the device tool carries 64 MiB at most
	cp scripts/*.py scripts/*.sh .gpu/ 2>/dev/null || true

clean: ## remove build outputs and pipeline outputs
	$(CARGO) clean
	rm -rf out .gpu
