# dabench-analysis — the two commands: `make report` and `make test`.
# Both create the virtual environment, install the package with its dependencies and register
# the Jupyter kernel first; re-running them reinstalls only when pyproject.toml changed.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= figures
# irrCAC 0.4.4 pins scipy==1.12 and pandas<3 although it runs on current releases; it is
# installed without its pins (see README, "Dependencies").
IRRCAC := irrCAC==0.4.4

.PHONY: venv report test lint data bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps '$(IRRCAC)'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dabench-analysis)" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

## report: every paper table and figure for the sample runs in data/, into $(OUT)/
report: $(STAMP)
	$(VENV)/bin/dabench-analysis report --out $(OUT) --jobs 2

## test: the layers contract, then the whole test suite (unit, reference values, notebooks end to end)
test: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	MPLBACKEND=Agg $(PY) -m pytest -q -n 2

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
