"""The sweep report: planned by ``report --sweep``, linked from index.html, and the notebook run
end to end twice (the CLI on the sample runs; run_notebook on generated runs with different task
sets and declared configurations), each checked against values computed here from the files."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from dabench_analysis import report
from dabench_analysis.report._cli import app
from dabench_analysis.report._jobs import Job, JobResult, execute_job
from dabench_analysis.synthetic import generate_run

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs"
SWEEP_TABLES = ["task_counts", "leaderboard", "pairwise", "flip_counts", "flips", "items", "planning"]
SWEEP_FIGURES = ["leaderboard_forest", "pairwise_heatmap", "item_difficulty"]


def _scores(run_dir: Path) -> dict[str, float]:
    """task_id -> final_score, read with the standard library (the reference)."""
    with (run_dir / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        return {r["task_id"]: float(r["final_score"]) for r in csv.DictReader(fh)}


def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- planning, index, CLI options (no notebook) ---------------------------------------------

def test_plan_sweep_with_and_without_run_reports(tmp_path):
    runs = [SAMPLE / "baseline_react", SAMPLE / "proposed_aat", SAMPLE / "pending_run"]
    jobs = report.plan_jobs(runs, tmp_path, baseline=runs[0], sweep=True)
    assert [(j.kind, j.name) for j in jobs] == [
        ("run", "baseline_react"), ("run", "proposed_aat"), ("run", "pending_run"),
        ("compare", "compare_baseline_react_vs_proposed_aat"), ("sweep", "sweep")]
    sweep = jobs[-1]
    assert sweep.out_dir == (tmp_path / "sweep").resolve()
    assert sweep.notebook.name == "sweep.ipynb"
    assert sweep.parameters == {"run_dirs": [str(r.resolve()) for r in runs],
                                "output_dir": str((tmp_path / "sweep").resolve())}
    alone = report.plan_jobs(runs, tmp_path, sweep=True, run_reports=False)
    assert [j.kind for j in alone] == ["sweep"]


def test_plan_sweep_refusals(tmp_path):
    with pytest.raises(report.ReportError, match="at least two evaluated runs .* got 1 of 2"):
        report.plan_jobs([SAMPLE / "proposed_aat", SAMPLE / "pending_run"], tmp_path, sweep=True)
    named = generate_run(tmp_path / "runs", run_id="sweep", n_tasks=4, replays=False,
                         trajectories=False)
    other = generate_run(tmp_path / "runs", run_id="other", n_tasks=4, replays=False,
                         trajectories=False)
    with pytest.raises(report.ReportError, match="would both write to"):
        report.plan_jobs([named, other], tmp_path / "out", sweep=True)


def test_sweep_job_with_a_vanished_run_fails_in_one_line(tmp_path):
    job = Job("sweep", "sweep", ROOT / "notebooks/sweep.ipynb",
              {"run_dirs": [str(SAMPLE / "proposed_aat"), str(tmp_path / "gone")],
               "output_dir": str(tmp_path / "sweep")}, tmp_path / "sweep")
    res = execute_job(job)
    assert (res.state, res.reason) == ("failed", f"{tmp_path / 'gone'} is not a directory")


def _same_run_id_twice(root: Path) -> tuple[Path, Path, Path]:
    """runs/oldver and runs/baseline_react both carry run_id 'baseline_react'."""
    dirs = []
    for name, src in (("oldver", "baseline_react"), ("baseline_react", "baseline_react"),
                      ("proposed_aat", "proposed_aat")):
        (root / "runs" / name).mkdir(parents=True)
        shutil.copy(SAMPLE / src / "task_metrics.csv", root / "runs" / name)
        dirs.append(root / "runs" / name)
    return tuple(dirs)


def test_sweep_with_one_run_id_in_two_folders_fails_naming_both(tmp_path):
    old, new, prop = _same_run_id_twice(tmp_path)
    job = Job("sweep", "sweep", ROOT / "notebooks/sweep.ipynb",
              {"run_dirs": [str(old), str(new), str(prop)], "output_dir": str(tmp_path / "out")},
              tmp_path / "out")
    res = execute_job(job)
    assert res.state == "failed"
    assert res.reason.endswith(f"ValueError: run_id 'baseline_react' is in two run folders, "
                               f"{old} and {new}: a sweep ranks runs by run_id; give each run "
                               "folder its own run_id")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_sweep_with_fewer_than_two_loadable_runs_fails(tmp_path):
    job = Job("sweep", "sweep", ROOT / "notebooks/sweep.ipynb",
              {"run_dirs": [str(SAMPLE / "proposed_aat"), str(SAMPLE / "pending_run")],
               "output_dir": str(tmp_path / "out")}, tmp_path / "out")
    res = execute_job(job)
    assert res.state == "failed"
    assert "ValueError: a sweep needs at least 2 loadable runs; loaded 1 (proposed_aat); " \
           f"not loaded: {SAMPLE / 'pending_run'} (not evaluated" in res.reason


def test_index_links_the_sweep_above_the_table(tmp_path):
    out = tmp_path
    sweep = Job("sweep", "sweep", Path("sweep.ipynb"), {}, (out / "sweep").resolve())
    run = Job("run", "r<1>", Path("run_report.ipynb"), {}, (out / "r_1").resolve())
    page = report.write_index(
        [JobResult(run, "evaluated", summary={"n_tasks": 5}),
         JobResult(sweep, "evaluated", summary={"n_runs": 3, "n_shared_tasks": 70})],
        out).read_text()
    head, table = page.split("<table>", 1)
    assert '<a href="sweep/report.html">leaderboard, pairwise comparisons' in head
    assert "(3 runs, 70 shared tasks)" in head and "r&lt;1&gt;" in table
    assert '<td><a href="sweep/report.html">sweep</a></td>' in table
    failed = report.write_index([JobResult(sweep, "failed", "boom")], out).read_text()
    assert failed.split("<table>", 1)[0].endswith("<h1>dabench-analysis reports</h1>")


def test_cli_help_documents_the_sweep():
    result = CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "--sweep" in result.output and "--no-run-reports" in result.output
    assert "OUT/sweep/" in result.output


# --- the notebook, through the CLI on the sample runs ---------------------------------------

@pytest.fixture(scope="module")
def cli_sweep(sample_report):
    """The batch CLI with --sweep over the sample runs (one not evaluated), built once per
    session with the run and comparison reports (conftest.sample_report)."""
    return sample_report


def test_cli_sweep_output_tree(cli_sweep):
    proc, out = cli_sweep
    assert proc.returncode == 0, proc.stderr
    sweep = out / "sweep"
    for name in ["report.ipynb", "report.html", "summary.json"]:
        assert (sweep / name).stat().st_size > 0, name
    for table in SWEEP_TABLES:
        for ext in ("csv", "md", "tex"):
            assert (sweep / "tables" / f"{table}.{ext}").is_file(), (table, ext)
    for fig in SWEEP_FIGURES:
        assert (sweep / f"{fig}.png").read_bytes()[:4] == b"\x89PNG", fig
    assert not (sweep / "tables" / "repetitions.csv").exists()  # no run declares a config
    assert json.loads((sweep / "summary.json").read_text())["success_threshold"] == 0.8
    assert "<strong>Success threshold: 0.8</strong>" in (sweep / "report.html").read_text()


def test_cli_sweep_numbers_and_notes(cli_sweep):
    _, out = cli_sweep
    summary = json.loads((out / "sweep" / "summary.json").read_text())
    base, prop = _scores(SAMPLE / "baseline_react"), _scores(SAMPLE / "proposed_aat")
    assert summary["report"] == "sweep" and summary["n_runs"] == 2
    assert summary["n_shared_tasks"] == len(base.keys() & prop.keys()) == 80
    assert summary["not_in_sweep"] == [str(SAMPLE / "pending_run")]
    assert [s["section"] for s in summary["skipped"]] == ["repetitions", "pass_k_runs"]
    board = pd.read_csv(out / "sweep" / "tables" / "leaderboard.csv")
    # mean final score on the shared tasks, from the CSV files themselves
    means = {"baseline_react": sum(base.values()) / 80, "proposed_aat": sum(prop.values()) / 80}
    assert dict(zip(board["run_id"], board["mean_score"], strict=True)) == pytest.approx(means,
                                                                                     abs=1e-12)
    acc = {"baseline_react": sum(v >= 0.8 for v in base.values()) / 80,
           "proposed_aat": sum(v >= 0.8 for v in prop.values()) / 80}
    assert dict(zip(board["run_id"], board["answer_accuracy"], strict=True)) == acc
    html = (out / "sweep" / "report.html").read_text(encoding="utf-8")
    assert "Skipped: repetitions" in html and "<h3>Manifest</h3>" in html


def test_cli_sweep_lists_the_flips_of_the_top_two_runs_by_default(cli_sweep):
    _, out = cli_sweep
    base, prop = _scores(SAMPLE / "baseline_react"), _scores(SAMPLE / "proposed_aat")
    assert sum(prop.values()) > sum(base.values())  # same 80 tasks: proposed_aat ranks first
    want = {t: "solved by proposed_aat only" if prop[t] >= 0.8 else
            "solved by baseline_react only" for t in prop if (prop[t] >= 0.8) != (base[t] >= 0.8)}
    flips = pd.read_csv(out / "sweep" / "tables" / "flips.csv")
    assert dict(zip(flips["task_id"], flips["flip"], strict=True)) == want
    summary = json.loads((out / "sweep" / "summary.json").read_text())
    assert summary["flip_pair"] == ["proposed_aat", "baseline_react"]
    assert summary["n_flips"] == len(want)
    html = (out / "sweep" / "report.html").read_text(encoding="utf-8")
    assert ("No <code>flip_pair</code> given: the two top runs of the leaderboard, "
            "<code>proposed_aat</code> (run a) and <code>baseline_react</code> (run b): "
            f"{len(want)} task(s) are solved by one of them only") in html


def test_cli_sweep_tables_state_parameters_once(cli_sweep):
    _, out = cli_sweep
    md = (out / "sweep" / "tables" / "leaderboard.md").read_text(encoding="utf-8")
    header = md.splitlines()[0]
    assert "Seed" not in header and "Threshold" not in header and "Level" not in header
    assert "| Rank | Rank (low) | Rank (high) |" in header
    # the defaults of the notebook: threshold 0.8, 95% intervals, 2000 draws, seed 0
    assert "\nMetric: Final score; threshold: 0.8; level: 0.95; bootstrap: 2000 draws, " \
           "seed 0\n" in md
    csv_header = (out / "sweep" / "tables" / "leaderboard.csv").read_text().splitlines()[0]
    assert csv_header.endswith("threshold,ci,n_boot,boot_seed,accuracy_method,score_method,"
                               "cost_method,rank_method")
    tex = (out / "sweep" / "tables" / "flips.tex").read_text(encoding="utf-8")
    # the direction in words with the runs' names (issue 25); escaped, ASCII for pdflatex
    assert tex.isascii() and "solved by proposed\\_aat only" in tex


def test_cli_sweep_manifest_hashes_are_the_files(cli_sweep):
    _, out = cli_sweep
    m = json.loads((out / "sweep" / "summary.json").read_text())["manifest"]
    # run by run: the task file, then the step files its trajectory table read (issue 23)
    want = [SAMPLE / r / f for r in ("baseline_react", "proposed_aat")
            for f in ("task_metrics.csv", "trajectory.csv", "tool_calls.csv")]
    assert [f["path"] for f in m["files"]] == [p.resolve().as_posix() for p in want]
    for f in m["files"]:
        assert f["sha256"] == _sha256(f["path"]) and f["bytes"] == Path(f["path"]).stat().st_size
    assert m["seeds"] == {"bootstrap": 0} and m["parameters"]["n_boot"] == 2000
    assert m["parameters"]["run_dirs"][2] == str(SAMPLE / "pending_run")


def test_cli_sweep_index_links_it(cli_sweep):
    _, out = cli_sweep
    page = (out / "index.html").read_text()
    head = page.split("<table>", 1)[0]
    assert '<a href="sweep/report.html">' in head and "(2 runs, 80 shared tasks" in head


# --- the notebook on generated runs: different task sets, declared configurations ------------

def _configured_sweep(root: Path) -> dict:
    runs = {}
    for config, skill in (("react", 0.0), ("aat", 0.8)):
        for seed in (1, 2):
            run = generate_run(root / "runs", run_id=f"{config}_s{seed}", n_tasks=12,
                               seed=seed * 10 + int(skill * 10), skill=skill, replays=False,
                               trajectories=False)
            (run / "run_config.json").write_text(json.dumps({"config": config, "seed": seed}))
            runs[run.name] = str(run)
    path = Path(runs["aat_s2"]) / "task_metrics.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-2]), encoding="utf-8")  # drop the last two tasks
    out = root / "out"
    report.run_notebook(ROOT / "notebooks" / "sweep.ipynb", out,
                        {"run_dirs": list(runs.values()), "output_dir": str(out),
                         "n_boot": 200, "flip_pair": ["react_s1", "aat_s1"]}, html_export=False)
    return runs


@pytest.fixture(scope="module")
def configured_sweep(built_once):
    """Four runs outside the repository, two configurations x two seeds; one run lacks two
    tasks. The sweep notebook runs over them with a flip pair (once per session)."""
    root, runs = built_once("configured_sweep", _configured_sweep)
    return {name: Path(p) for name, p in runs.items()}, root / "out"


def test_different_task_sets_are_compared_on_their_intersection(configured_sweep):
    runs, out = configured_sweep
    scores = {name: _scores(p) for name, p in runs.items()}
    shared = set.intersection(*(set(s) for s in scores.values()))
    assert len(shared) == 10
    counts = pd.read_csv(out / "tables" / "task_counts.csv")
    assert dict(zip(counts["run_id"], counts["n_own"], strict=True)) == {
        "react_s1": 12, "react_s2": 12, "aat_s1": 12, "aat_s2": 10}
    assert set(counts["n_shared"]) == {10}
    board = pd.read_csv(out / "tables" / "leaderboard.csv").set_index("run_id")
    for name, s in scores.items():
        assert board.loc[name, "mean_score"] == pytest.approx(
            sum(s[t] for t in shared) / 10, abs=1e-12)
    pairs = pd.read_csv(out / "tables" / "pairwise.csv")
    n = {frozenset((a, b)): k for a, b, k in pairs[["run_a", "run_b", "n_shared"]].values}
    assert len(n) == 6  # k(k - 1)/2 pairs
    for a in runs:
        for b in runs:
            if a < b:
                assert n[frozenset((a, b))] == len(scores[a].keys() & scores[b].keys())


def test_flips_of_the_requested_pair(configured_sweep):
    runs, out = configured_sweep
    a, b = _scores(runs["react_s1"]), _scores(runs["aat_s1"])
    want = sorted(t for t in a.keys() & b.keys() if (a[t] >= 0.8) != (b[t] >= 0.8))
    flips = pd.read_csv(out / "tables" / "flips.csv")
    assert sorted(flips["task_id"]) == want
    direction = {t: "solved by react_s1 only" if a[t] >= 0.8 else "solved by aat_s1 only"
                 for t in want}
    assert dict(zip(flips["task_id"], flips["flip"], strict=True)) == direction


def test_declared_configurations_give_the_repetition_tables(configured_sweep):
    runs, out = configured_sweep
    summary = json.loads((out / "summary.json").read_text())
    assert summary["skipped"] == [] and summary["n_configs"] == 2
    configs = pd.read_csv(out / "tables" / "run_configs.csv")
    assert configs[["run_id", "config", "seed"]].values.tolist() == [
        ["react_s1", "react", 1], ["react_s2", "react", 2], ["aat_s1", "aat", 1],
        ["aat_s2", "aat", 2]]
    rep = pd.read_csv(out / "tables" / "repetitions.csv").set_index("config")
    assert rep.loc[["aat", "react"], "n_runs"].tolist() == [2, 2]
    assert rep.loc[["aat", "react"], "n_seeds"].tolist() == [2, 2]
    # between-repetition variance of 'react' on the 10 shared tasks, from the formula
    # (Miller 2024, App. C): mean over tasks of the variance across the K = 2 repetitions
    s1, s2 = _scores(runs["react_s1"]), _scores(runs["react_s2"])
    shared = sorted(set.intersection(*(set(_scores(p)) for p in runs.values())))
    sigma2 = sum((s1[t] - s2[t]) ** 2 / 2 for t in shared) / len(shared)
    assert rep.loc["react", "var_between_repetitions"] == pytest.approx(sigma2, rel=1e-9)
    by_config = pd.read_csv(out / "tables" / "leaderboard_by_config.csv")
    assert sorted(by_config["config"]) == ["aat", "react"]
    assert (by_config["ci_low"] <= by_config["mean"]).all()
    assert (by_config["mean"] <= by_config["ci_high"]).all()
    files = [Path(f["path"]).name for f in summary["manifest"]["files"]]
    assert files == ["task_metrics.csv", "run_config.json"] * 4


@pytest.mark.filterwarnings("ignore:trials needed:UserWarning")
def test_cli_sweep_planning_against_the_top_run_and_tie_groups_shown(cli_sweep):
    import dabench_analysis as da

    _, out = cli_sweep
    board = pd.read_csv(out / "sweep" / "tables" / "leaderboard.csv")
    assert board["tie_group"].tolist() == [1, 2]  # McNemar-Holm separates the two sample runs
    assert "Tie group" in (out / "sweep" / "report.html").read_text()  # the column is shown
    written = pd.read_csv(out / "sweep" / "tables" / "planning.csv")
    runs = da.load_runs([SAMPLE / "baseline_react", SAMPLE / "proposed_aat"], progress=False)
    direct = da.tables.planning(runs, baseline=board["run_id"].iloc[0], threshold=0.8)
    assert written["run_a"].tolist() == direct["run_a"].tolist() == ["proposed_aat"]
    num = [c for c in direct if pd.api.types.is_numeric_dtype(direct[c])]
    assert written[num].to_numpy(float) == pytest.approx(direct[num].to_numpy(float),
                                                         rel=1e-12, nan_ok=True)
    base, prop = _scores(SAMPLE / "baseline_react"), _scores(SAMPLE / "proposed_aat")
    diff = [(prop[t] >= 0.8) - (base[t] >= 0.8) for t in base]  # paired, a - b
    assert written.at[0, "diff"] == pytest.approx(sum(diff) / len(diff)) == pytest.approx(0.1375)
    assert written.at[0, "tasks_needed"] == 84
