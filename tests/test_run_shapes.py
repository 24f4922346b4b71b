"""Run directories our generator did not write: the run-shape matrix through the notebooks, and a
property test on the run report's tables over random subsets of optional columns.

Shapes come from the column catalogue, not from a hand-written list: the sample run with each schema
group's optional columns removed, with each optional file removed, and one run written "by another
eval-v2 version" (columns reordered, two renamed to the names other versions use, an extra column,
flags spelled True/False). Expected tables come from the complete run; a shape's table must equal
it cell for cell, or, for the sections that run on fewer optional columns (listed in REDUCED), the
complete run's table restricted to what the shape holds.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_runs import report_shape, sections_of

import dabench_analysis as da
from dabench_analysis import load_run, schema, stats
from dabench_analysis.schema.columns import ANNOTATION_COLUMNS
from dabench_analysis.schema.needs import collect_reduced, skips

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs"
NOTEBOOKS = ROOT / "notebooks"
#: The section cells of the run and comparison notebooks (the reports' one home).
SECTIONS = {"run": sections_of(NOTEBOOKS / "run_report.ipynb"),
            "compare": sections_of(NOTEBOOKS / "compare_runs.ipynb")}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def optional_groups() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for col in schema.TASK_COLUMNS.values():
        if not col.required:
            out.setdefault(col.group, []).append(col.name)
    return out


#: shape name -> (columns removed, files removed)
SHAPES: dict[str, tuple[set[str], set[str]]] = {
    **{f"no_{slug(g)}": (set(cols), set()) for g, cols in optional_groups().items()},
    **{f"no_{slug(f)}": (set(), {f}) for f in schema._files.OPTIONAL_FILES},
}
OTHER_VERSION_DROPPED = {"outcome_error_type", "confidence_score", "specialist_participation",
                         "failure_stage", "verification_triggered", "trace_id"}
#: Sections computed on fewer optional columns when some are absent: (table, how to compare;
#: "na:<prefixes>": the columns that are then <NA>).
REDUCED = {"main_results": "rows", "task_type_breakdown": "columns",
           "specialist_participation": "columns", "paired_comparison": "rows",
           "mas_effectiveness": "na:n_recovered_after_", "root_causes": "columns",
           "trajectory_variants": "pooled,na:mean_runtime_s", "tool_fit": "rows",
           "trajectory_loop_tasks": "na:plan_reentries|execute_reentries|difficulty",
           # without difficulty a trajectory table is the complete run's pooled rows
           **dict.fromkeys(["trajectory_conformance", "trajectory_transitions",
                            "trajectory_loops", "trajectory_recovery", "first_failure_counts",
                            "first_failure_agreement", "step_latency", "step_latency_tools",
                            "solve_curve", "trajectory_comparison",
                            "trajectory_variant_changes"], "pooled"),
           "first_failures": "na:difficulty"}
#: Optional files a trajectory table reads when present (the catalogue lists only the files a
#: section needs): file -> {table: the columns that differ without it (None: it lacks them)}.
READ_WHEN_PRESENT = {
    "task_*/task_replay.json": {
        "first_failures": ["evidence_step_ids", "in_evidence"],
        "first_failure_agreement": ["n_compared", "n_agree", "agreement", "agreement_ci_low",
                                    "agreement_ci_high"]},
    "tool_calls.csv": {"first_failures": ["error_type", "error_message"],
                       "step_latency_tools": None}}
#: The section that writes each table.
SECTION_OF = {stem.removeprefix("tables/"): sec["name"] for secs in SECTIONS.values()
              for sec in secs for stem in sec["stems"] if stem.startswith("tables/")}


def _remove(run_dir: Path, files: set[str]) -> None:
    for f in files:
        for p in (run_dir.glob(f) if "*" in f else [run_dir / f]):
            p.unlink()


def _other_version(run_dir: Path, drop_columns) -> None:
    """Another harness version: absent columns, aliases, an extra one, reordered, True/False."""
    drop_columns(run_dir, OTHER_VERSION_DROPPED,
                 rename={"execution_stage_calls": "execution_calls",
                         "schema_agent_used": "schema_agent_called"})
    frame = pd.read_csv(run_dir / "task_metrics.csv", dtype=str, keep_default_na=False)
    flags = [c for c in frame if schema.TASK_COLUMNS.get(schema.ALIASES.get(c, c)) is not None
             and schema.TASK_COLUMNS[schema.ALIASES.get(c, c)].kind == "flag"]
    frame[flags] = frame[flags].replace({"1": "True", "0": "False"})
    frame = frame.assign(harness_build="v1.9")
    frame[list(reversed(frame.columns))].to_csv(run_dir / "task_metrics.csv", index=False)


def _build_matrix(base: Path, drop_columns) -> dict:
    """Every shape and the complete run, each through notebooks/run_report.ipynb and, against the
    sample baseline, notebooks/compare_runs.ipynb (their code cells, without a kernel, figures
    drawn but not rendered: notebook_runs.report_shape)."""
    runs = {}
    for name, (cols, files) in [("complete", (set(), set())), *SHAPES.items()]:
        runs[name] = base / "runs" / name
        shutil.copytree(SAMPLE / "proposed_aat", runs[name])
        if cols:
            drop_columns(runs[name], cols)
        _remove(runs[name], files)
    runs["other_version"] = base / "runs" / "other_version"
    shutil.copytree(SAMPLE / "proposed_aat", runs["other_version"])
    _other_version(runs["other_version"], drop_columns)
    baseline, out = SAMPLE / "baseline_react", base / "out"
    # two processes: the other xdist worker may be waiting for this matrix
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = pool.map(report_shape, runs, map(str, runs.values()),
                        [str(baseline)] * len(runs), [str(out)] * len(runs))
        assert sorted(done) == sorted(runs)
    return {name: str(path) for name, path in runs.items()}


@pytest.fixture(scope="module")
def matrix(built_once, drop_columns):
    """The shapes' run and comparison reports, built once per test session."""
    base, runs = built_once("run_shapes", lambda folder: _build_matrix(folder, drop_columns))
    return {name: Path(p) for name, p in runs.items()}, base / "out"


def _summary(out: Path, name: str) -> dict:
    return json.loads((out / name / "summary.json").read_text())


def _tables(folder: Path) -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p) for p in sorted((folder / "tables").glob("*.csv"))}


#: Sections skipped by what the data hold, not by a declared column: the sample run has no
#: errored trial, one trial per task and no condition, so its reliability profile and
#: risk-coverage curve stand on its confidence alone. section -> (skipped when, what it lacks)
DATA_SKIPS = {"reliability": (lambda cols: "confidence_score" in cols,
                              {"repeated trials", "confidence_score", "condition"}),
              "risk_coverage": (lambda cols: "confidence_score" in cols, {"confidence_score"}),
              "failure_bounds": (lambda cols: True, {"an errored trial"})}


def _expected_skips(cols: set[str], files: set[str], report: str) -> list[str]:
    columns = set(schema.TASK_COLUMNS) - cols - set(ANNOTATION_COLUMNS)  # no labels
    present = set(schema._files.OPTIONAL_FILES) - files
    return [s["name"] for s in SECTIONS[report]  # eval-v2 runs: one trial per task
            if any(f.needs.missing(columns, present) or f.needs.trials == "several"
                   for f, _ in s["functions"])
            or (s["name"] in DATA_SKIPS and DATA_SKIPS[s["name"]][0](cols))]


def test_every_shape_is_reported(matrix):
    runs, out = matrix
    for name in runs:
        for folder, report in ((name, "run"), (f"compare_baseline_vs_{name}", "compare")):
            summary = _summary(out, folder)
            assert summary["schema_version"] == 1 and summary["report"] == report
            assert summary["success_threshold"] == 0.8  # the notebooks' default


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_skips_exactly_what_it_lacks(matrix, shape):
    _, out = matrix
    cols, files = SHAPES[shape]
    for report, folder in (("run", shape), ("compare", f"compare_baseline_vs_{shape}")):
        skipped = _summary(out, folder)["skipped"]
        assert [s["section"] for s in skipped] == _expected_skips(cols, files, report)
        for entry in skipped:
            data = DATA_SKIPS.get(entry["section"], (None, set()))[1]
            assert entry["missing"] and set(entry["missing"]) <= cols | files | {
                m for m in entry["missing"] if m.startswith("one of:")} | {"repeated trials"} | \
                data | set(ANNOTATION_COLUMNS)
        stems = {s["name"]: s["stems"] for s in SECTIONS[report]}
        for sec in skipped:  # nothing of a skipped section is written
            for output in stems[sec["section"]]:
                assert not list((out / folder).glob(output + ".*")), output


def _same(shape_table: pd.DataFrame, full: pd.DataFrame, how) -> None:
    if isinstance(how, str) and how.startswith("pooled"):
        how = how.removeprefix("pooled").lstrip(",") or None
        if set(shape_table["difficulty"]) == {"all"} < set(full["difficulty"]):
            full = full[full["difficulty"] == "all"].reset_index(drop=True)  # no difficulty
        if how and not any(shape_table[c].isna().all() and not full[c].isna().all()
                           for c in shape_table):
            how = None  # the columns of this rule are all there
    if isinstance(how, list):  # columns from an absent optional file differ
        pd.testing.assert_frame_equal(shape_table.drop(columns=how), full.drop(columns=how))
    elif how == "rows":  # one row per metric present; Holm's adjustment depends on how many
        key = shape_table.columns[0]
        full = full[full[key].isin(shape_table[key])].reset_index(drop=True)
        drop = [c for c in ("p_adjusted",) if c in full]
        pd.testing.assert_frame_equal(shape_table.drop(columns=drop), full.drop(columns=drop))
    elif how and how.startswith("na:"):  # these columns <NA>, the rest as on the complete run
        na = [c for c in shape_table if shape_table[c].isna().all() and not full[c].isna().all()]
        assert na and all(c.startswith(tuple(how[3:].split("|"))) for c in na), na
        pd.testing.assert_frame_equal(shape_table.drop(columns=na), full.drop(columns=na))
    elif how == "columns":
        pd.testing.assert_frame_equal(shape_table, full[list(shape_table.columns)])
    else:
        pd.testing.assert_frame_equal(shape_table, full)


@pytest.mark.parametrize("shape", sorted(SHAPES) + ["other_version"])
def test_every_table_a_shape_writes_equals_the_complete_runs(matrix, shape):
    _, out = matrix
    for folder, ref in ((shape, "complete"),
                        (f"compare_baseline_vs_{shape}", "compare_baseline_vs_complete")):
        reduced = {r["section"] for r in _summary(out, folder)["reduced"]}
        full = _tables(out / ref)
        got = _tables(out / folder)
        assert got, folder
        files = SHAPES[shape][1] if shape in SHAPES else set()
        for name, table in got.items():
            if name == "health":  # the findings differ by construction
                continue
            how = REDUCED.get(name) if SECTION_OF.get(name, name) in reduced else None
            for f in files & set(READ_WHEN_PRESENT):
                if name in READ_WHEN_PRESENT[f]:
                    how = READ_WHEN_PRESENT[f][name] or "columns"
            if name in ("reliability", "risk_coverage") and shape in SHAPES and \
                    "run_id" in SHAPES[shape][0]:
                how = ["run_id"]  # without a run_id column the run is named by its folder
            _same(table, full[name], how)


def test_the_other_version_reads_aliases_extra_columns_and_true_false(matrix):
    runs, out = matrix
    run = load_run(runs["other_version"])
    checks = {(f.check, f.column) for f in run.findings}
    assert ("unknown_column", "harness_build") in checks
    assert {("column_alias", "execution_calls"), ("column_alias", "schema_agent_called")} <= checks
    assert run.tasks["harness_build"].eq("v1.9").all()
    assert "execution_stage_calls" in run.tasks and "schema_agent_used" in run.tasks
    full = load_run(runs["complete"]).tasks
    assert run.tasks["execution_success"].equals(full["execution_success"])
    skipped = [s["section"] for s in _summary(out, "other_version")["skipped"]]
    assert skipped == ["specialist_participation", "failure_stages", "outcome_error_types",
                       "calibration", "reliability", "risk_coverage", "failure_bounds",
                       "ablation_verification", "pass_k", "flakiness", "mistake_agreement"]


def test_the_new_tables_equal_a_direct_call(matrix):
    """The reliability profile, risk-coverage and planning tables the reports write are the
    functions' own, at full precision; the values recomputed from task_metrics.csv."""
    runs, out = matrix
    run = load_run(runs["complete"])
    tables = _tables(out / "complete")
    for stem, direct in (("reliability", da.tables.reliability(run, threshold=0.8)),
                         ("risk_coverage", da.tables.risk_coverage(run, threshold=0.8))):
        written = tables[stem]
        for col in direct:
            if pd.api.types.is_numeric_dtype(direct[col]):
                assert written[col].to_numpy(float) == pytest.approx(
                    direct[col].to_numpy(float), rel=1e-12, nan_ok=True), (stem, col)
            else:
                assert written[col].fillna("").astype(str).tolist() == \
                    direct[col].fillna("").astype(str).tolist(), (stem, col)
    raw = pd.read_csv(runs["complete"] / "task_metrics.csv")
    ok = (raw["final_score"] >= 0.8).to_numpy(float)
    conf = raw["confidence_score"].to_numpy(float)
    order = np.argsort(-conf, kind="stable")  # AuRC without ties: mean risk over coverages
    risk = np.cumsum(1 - ok[order]) / np.arange(1, len(ok) + 1)
    aurc = tables["reliability"].set_index("metric").loc["aurc", "value"]
    if len(set(conf)) == len(conf):
        assert aurc == pytest.approx(risk.mean())
    assert aurc == pytest.approx(tables["risk_coverage"]["risk"].mean()) == pytest.approx(
        0.0256, abs=5e-5)
    base = pd.read_csv(SAMPLE / "baseline_react" / "task_metrics.csv").set_index("task_id")
    pair = base.reset_index().merge(raw, on="task_id", suffixes=("_b", "_p"))
    d = (pair["final_score_b"] >= 0.8).astype(float) - (pair["final_score_p"] >= 0.8)
    plan = _tables(out / "compare_baseline_vs_complete")["planning"].iloc[0]
    assert (plan["design"], plan["run_a"], plan["run_b"]) == ("paired", "baseline", "proposed")
    assert plan["n_tasks"] == len(d) == 80
    assert plan["diff"] == pytest.approx(d.mean()) == pytest.approx(-0.1375)
    assert plan["var_between"] == pytest.approx(d.var(ddof=1))
    assert plan["detectable_diff"] == pytest.approx(0.140, abs=5e-4)


# --- property test on the API -------------------------------------------------------------------

def _first_table_call(sec: dict):
    """The declared function and call of a section's first table computed from ``run.tasks``."""
    import ast

    for func, node in sec["functions"]:
        if node.args and ast.unparse(node.args[0]) == "run.tasks" and \
                func.__module__.startswith(("dabench_analysis.tables", "dabench_analysis.stats")):
            return func, node
    return None


#: The run report's tables computed from task_metrics alone, as its notebook cells call them.
TABLES = {s["name"]: c for s in SECTIONS["run"] if (c := _first_table_call(s)) is not None}


def _api(t: pd.DataFrame) -> dict:
    """Each table of TABLES as (function, args, keyword arguments), the arguments evaluated as
    the notebook cell writes them on the tasks ``t``; the correlation matrix (a figure) as the
    numbers it draws."""
    import ast
    from types import SimpleNamespace

    ns = {"run": SimpleNamespace(tasks=t), "threshold": schema.SUCCESS_THRESHOLD}

    def value(node):
        return eval(compile(ast.Expression(node), "<cell>", "eval"), ns)  # noqa: S307

    out = {name: (func, [value(a) for a in node.args], {k.arg: value(k.value)
                                                         for k in node.keywords})
           for name, (func, node) in TABLES.items()}
    out["correlation_matrix"] = (da.figures.correlation_matrix, [t], {})
    return out


def _compute(name, func, args, kw):
    if name == "correlation_matrix":
        return stats.correlation(args[0], [c for c in schema.columns.CORRELATION_METRICS if c in args[0]])
    return func(*args, **kw)


FULL = load_run(SAMPLE / "proposed_aat").tasks
OPTIONAL = [c for c in schema._declared.optional_columns() if c in FULL]
FULL_TABLES = {k: _compute(k, *v) for k, v in _api(FULL).items()}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.filterwarnings("ignore::UserWarning")
@given(st.sets(st.sampled_from(OPTIONAL), min_size=1, max_size=40))
def test_any_subset_of_optional_columns_computes_or_skips(dropped):
    t = FULL.drop(columns=sorted(dropped))
    assert len(TABLES) == 18
    for name, (func, args, kw) in _api(t).items():
        if missing := skips(func, *args):  # the declaration says it cannot run: it really cannot
            # a named column is "not in tasks"; a table needing one of two: "neither is in tasks";
            # a declared column (the @needs declaration alone checks it) read anyway: its KeyError
            with pytest.raises((ValueError, KeyError), match="|".join(
                    ["(not|neither is) in tasks", *(re.escape(m) for m in missing)])):
                _compute(name, func.__wrapped__, args, kw)
            continue
        with collect_reduced() as absent:
            got = _compute(name, func, args, kw)
        full = FULL_TABLES[name]
        if name == "correlation_matrix":
            keep = full["x"].isin(t.columns) & full["y"].isin(t.columns)
            pd.testing.assert_frame_equal(got, full[keep].reset_index(drop=True))
        elif name in REDUCED and (absent or func.needs.absent_uses(t.columns)):
            _same(got, full, REDUCED[name])
        else:
            pd.testing.assert_frame_equal(got, full)
