# dabench-analysis — the two commands: `make report` and `make test`.
# Both create the virtual environment, install the package with its dependencies and register
# the Jupyter kernel first; re-running them reinstalls only when pyproject.toml or setup.py
# changed. `make wheel-check` (run by .ci/run after the tests) checks the package as users get it.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= figures
# wheel-check works in a fresh folder under here (outside the repository), removed afterwards.
WHEEL_TMP ?= $(or $(TMPDIR),/tmp)

.PHONY: venv report test docs wheel-check lint data bench clean compiled

# uv (installed into the venv by the venv's own pip) resolves and installs the package and its
# ~200 dependencies: about 50 s on a clean machine against pip's 90-125 s. --compile-bytecode: the
# installed modules are byte-compiled, as pip does (without it, each process would compile
# pandas, SciPy, matplotlib ... again wherever PYTHONDONTWRITEBYTECODE is set).
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'uv>=0.5'
	$(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode -e '.[test,lab,dask,explore,inspect,docs]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dabench-analysis)" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

# The package's own modules byte-compiled (pip does this for what it installs, not for an
# editable install's sources; with PYTHONDONTWRITEBYTECODE set, Python never caches them), so
# that every process the commands start (the CLI, each report's kernel) does not compile them
# again: about 0.4 s each. Only changed files are recompiled; __pycache__ is git-ignored.
compiled: $(STAMP)
	$(PY) -m compileall -q dabench_analysis tests/notebook_runs.py >/dev/null

## report: every paper table and figure for the sample runs in data/, into $(OUT)/
report: compiled
	$(VENV)/bin/dabench-analysis report --out $(OUT) --jobs 2 --sweep

## test: the layers contract, then the whole test suite (unit, reference values, notebooks end to end)
## --dist worksteal: a worker that runs out of tests takes the other's queued ones, so that
## neither waits idle at the end while the other works through the tests handed to it in
## advance (pytest-xdist's default hands out chunks a worker keeps): 409 s of pytest against
## 439 s with the default, on a fresh clone, 2026-12-07.
test: compiled
	$(VENV)/bin/lint-imports --no-cache
	MPLBACKEND=Agg $(PY) -m pytest -q -n 2 --dist worksteal --durations=20

## docs: the documentation site (Sphinx, offline: no intersphinx, notebooks not executed) into
## docs/_build/html; warnings are errors. The report figures in the gallery are those of the
## last `make report` (figures/); without them the gallery says so.
SPHINXOPTS ?= -W --keep-going
docs: compiled
	MPLBACKEND=Agg $(VENV)/bin/sphinx-build -b html -q $(SPHINXOPTS) docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

## wheel-check: build sdist and wheel, install the wheel into a fresh venv outside the repository
## and run one report there, from a folder outside it, on a copy of a sample run (the bare wheel:
## the core dependencies only; a run report needs none of the extras)
wheel-check: $(STAMP)
	@set -eu; start=$$(date +%s); \
	tmp=$$(mktemp -d "$(WHEEL_TMP)/dabench-wheel-check.XXXXXX"); trap 'rm -rf "$$tmp"' EXIT; \
	echo "wheel-check: building in $$tmp"; \
	$(PY) -m build --outdir "$$tmp/dist" . >"$$tmp/build.log" 2>&1 || { cat "$$tmp/build.log"; exit 1; }; \
	whl=$$(ls "$$tmp"/dist/*.whl); \
	$(PY) -c 'import sys, zipfile; names = set(zipfile.ZipFile(sys.argv[1]).namelist()); \
	missing = [f for f in sys.argv[2:] if f not in names]; \
	sys.exit(f"wheel-check: not in the wheel: {missing}" if missing else 0)' "$$whl" \
	  dabench_analysis/py.typed $$(cd notebooks && printf 'dabench_analysis/notebooks/%s ' *.ipynb); \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/python" -m pip install --quiet --upgrade pip; \
	"$$tmp/venv/bin/python" -m pip install --quiet "$$whl"; \
	cp -R data/sample_runs/baseline_react "$$tmp/baseline_react"; \
	mkdir "$$tmp/elsewhere"; cd "$$tmp/elsewhere"; \
	"$$tmp/venv/bin/dabench-analysis" report "$$tmp/baseline_react" --out "$$tmp/out"; \
	for f in report.html summary.json; do \
	  test -s "$$tmp/out/baseline_react/$$f" || { echo "wheel-check: no $$f"; ls -R "$$tmp/out"; exit 1; }; \
	done; \
	echo "wheel-check: ok ($$(( $$(date +%s) - start )) s): the installed wheel wrote report.html and summary.json"

lint: $(STAMP)
	$(VENV)/bin/ruff check dabench_analysis tests bench

## data: regenerate the committed sample data (byte for byte)
data: $(STAMP)
	$(PY) -m dabench_analysis.synthetic data/sample_runs
	$(PY) -m dabench_analysis.synthetic.judge data/judge_study
	$(PY) -m dabench_analysis.synthetic.research_eval data/research_eval

bench: $(STAMP)
	$(PY) bench/run_bench.py

clean:
	rm -rf $(VENV) *.egg-info
