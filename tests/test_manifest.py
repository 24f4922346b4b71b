"""report.manifest: every input file's SHA-256 (checked against hashlib over the files
themselves), the versions as importlib.metadata reports them, the git revision, the time."""

from __future__ import annotations

import hashlib
import importlib
import json
import platform
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis import export, report
from dabench_analysis.synthetic import generate_run

ROOT = Path(__file__).resolve().parents[1]
M = importlib.import_module("dabench_analysis.report._provenance")


def _expected(paths) -> list[dict]:
    """The reference: each file's bytes hashed whole by hashlib, its size from the OS."""
    return [{"path": p.resolve().as_posix(), "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
             "bytes": p.stat().st_size} for p in paths]


@pytest.fixture
def run_outside(tmp_path):
    """A generated run in a temporary folder (outside the repository) with a run_config.json."""
    run = generate_run(tmp_path, run_id="outside", n_tasks=5, seed=3)
    (run / "run_config.json").write_text('{"config": "react-gpt", "seed": 1}\n')
    return run


def test_run_files_and_hashes_equal_hashlib(run_outside):
    """A run report reads the task file, trajectories, tool calls and replays (validation)."""
    run = da.load_run(run_outside)
    m = report.manifest(inputs=[run], parameters={"run_dir": run_outside}, seeds={"boot": 7})
    replays = sorted(run_outside.glob("task_*/task_replay.json"), key=lambda p: p.parent.name)
    assert len(replays) == 5
    want = _expected([run_outside / "task_metrics.csv", run_outside / "trajectory.csv",
                      run_outside / "tool_calls.csv", *replays])
    assert m["files"] == want
    assert not str(run_outside.resolve()).startswith(str(ROOT))
    assert m["n_files"] == 8 and m["total_bytes"] == sum(f["bytes"] for f in want)
    # in the folder but not read by a run report: the legacy file, run_config.json
    assert not any(f["path"].endswith(("comprehensive_evaluation.csv", "run_config.json"))
                   for f in m["files"])
    assert report.manifest(inputs=[run_outside], parameters={})["files"] == want
    assert m["parameters"] == {"run_dir": str(run_outside)} and m["seeds"] == {"boot": 7}


def test_versions_equal_importlib_metadata():
    m = report.manifest(inputs=[], parameters={})
    libs = ["pandas", "numpy", "scipy", "statsmodels", "matplotlib", "seaborn", "papermill"]
    assert m["versions"] == {"python": platform.python_version(),
                             "dabench-analysis": version("dabench-analysis"),
                             **{lib: version(lib) for lib in libs}}
    assert m["toolkit"]["version"] == version("dabench-analysis")
    assert m["manifest_version"] == 1 and m["files"] == [] and m["seeds"] == {}


def test_time_is_utc_iso8601_now():
    before = datetime.now(UTC).replace(microsecond=0)
    m = report.manifest(inputs=[], parameters={})
    t = datetime.fromisoformat(m["time_utc"])
    assert t.utcoffset() == timedelta(0)
    assert before <= t <= datetime.now(UTC) + timedelta(seconds=1)


def test_git_revision_is_the_checkouts_head():
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    tk = report.manifest(inputs=[], parameters={})["toolkit"]
    assert tk["git_revision"] == head.stdout.strip() and len(tk["git_revision"]) == 40
    assert isinstance(tk["git_dirty"], bool)


def test_git_failure_is_silent(monkeypatch):
    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    M._git.cache_clear()
    monkeypatch.setattr(M.subprocess, "run", no_git)
    try:
        tk = report.manifest(inputs=[], parameters={})["toolkit"]
    finally:
        M._git.cache_clear()
    assert tk["git_revision"] is None and tk["git_dirty"] is None


def test_sweep_lists_task_files_and_side_tables_only_once_read(run_outside, tmp_path):
    other = generate_run(tmp_path, run_id="other", n_tasks=5, seed=4)
    runs = da.load_runs([run_outside, other], progress=False)
    m = report.manifest(inputs=[runs], parameters={})
    assert m["files"] == _expected([run_outside / "task_metrics.csv",
                                    run_outside / "run_config.json", other / "task_metrics.csv"])
    runs.trajectory  # noqa: B018 - the sweep now reads the trajectories
    names = [Path(f["path"]).relative_to(tmp_path.resolve()).as_posix()
             for f in report.manifest(inputs=[runs], parameters={})["files"]]
    assert names == ["outside/task_metrics.csv", "outside/run_config.json",
                     "outside/trajectory.csv", "other/task_metrics.csv", "other/trajectory.csv"]


def test_folder_inputs_and_duplicates(tmp_path):
    study = tmp_path / "study"
    shutil.copytree(ROOT / "data/judge_study", study)
    (study / ".hidden").write_text("not read")
    m = report.manifest(inputs=[study, study / "cases.csv"], parameters={})
    want = sorted(p for p in study.iterdir() if not p.name.startswith("."))
    assert m["files"] == _expected(want)  # the repeated file is listed once


def test_legacy_run_folder_lists_the_file_read(tmp_path):
    run = generate_run(tmp_path, run_id="legacy", n_tasks=4, replays=False, trajectories=False)
    (run / "task_metrics.csv").unlink()
    with pytest.warns(UserWarning, match="only the legacy comprehensive_evaluation.csv"):
        loaded = da.load_run(run)
    m = report.manifest(inputs=[loaded], parameters={})
    assert m["files"] == _expected([run / "comprehensive_evaluation.csv"])
    assert report.manifest(inputs=[run], parameters={})["files"] == m["files"]


def test_changed_file_gets_its_new_hash(tmp_path):
    f = tmp_path / "a.csv"
    f.write_bytes(b"x,y\n1,2\n")
    first = report.input_files([f])[0]["sha256"]
    f.write_bytes(b"x,y\n1,3\n")  # same size, possibly the same mtime
    assert report.input_files([f])[0]["sha256"] == hashlib.sha256(b"x,y\n1,3\n").hexdigest() \
        != first


def test_many_files_hashed_in_threads_keep_their_order(tmp_path):
    files = []
    for i in range(40):
        files.append(tmp_path / f"f{i:02d}.txt")
        files[-1].write_bytes(bytes([i]) * (i * 1000 + 1))
    assert report.input_files(files) == _expected(files)


def test_bad_inputs_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="'nowhere' is neither a file nor a folder"):
        report.manifest(inputs=["nowhere"], parameters={})
    with pytest.raises(TypeError, match="not one path"):
        report.manifest(inputs=str(tmp_path), parameters={})
    with pytest.raises(TypeError, match="must be paths, Run, Runs, JudgeStudy or ResearchEval, got int"):
        report.manifest(inputs=[3], parameters={})
    with pytest.raises(TypeError, match="parameters must be a dict"):
        report.manifest(inputs=[], parameters=[("a", 1)])
    with pytest.raises(TypeError, match=r"parameters\['f'\] has type object"):
        report.manifest(inputs=[], parameters={"f": object()})


def test_written_and_read_back_unchanged(run_outside, tmp_path):
    m = report.manifest(inputs=[run_outside], parameters={"pair": ("a", "b"), "n": 2},
                        seeds={"bootstrap": 0})
    back = json.loads(export.write_json({"manifest": m}, tmp_path / "s.json").read_text())
    assert back["manifest"] == m and m["parameters"]["pair"] == ["a", "b"]


def test_show_manifest_escapes_and_shortens():
    files = [{"path": f"/x/<f{i}>.csv", "sha256": "0" * 64, "bytes": 1000 + i}
             for i in range(M.SHOWN_FILES + 3)]
    m = {"time_utc": "2026-05-01T10:00:00+00:00", "files": files, "n_files": len(files),
         "total_bytes": 23_000, "parameters": {"run_dirs": ["<b>"]}, "seeds": {"bootstrap": 0},
         "toolkit": {"name": "dabench-analysis", "version": "0.1.0", "git_revision": "abc",
                     "git_dirty": True}, "versions": {"pandas": "3.0"}}
    view = report.show_manifest(m)
    page = view._repr_html_()
    assert "<b>" not in page and "&lt;b&gt;" in page and "/x/&lt;f0&gt;.csv" in page
    assert page.count("<code>/x/") == M.SHOWN_FILES and "… and 3 more files" in page
    # byte counts as integers, as "input files 13 (23000 bytes)" says them (the number rule)
    assert "git abc (with uncommitted changes)" in page and "<td>1000</td>" in page
    assert "1,000" not in page and "(23000 bytes)" in page
    md = view._repr_markdown_()
    # parameters one per row and seeds as words: no Python literal (issue 25)
    assert "| pandas | 3.0 |" in md and "| seeds | bootstrap 0 |" in md
    assert "| parameter run_dirs | <b> |" in md and "=" not in md.split("| seeds")[0][-40:]
    assert repr(view).splitlines()[0] == "created (UTC): 2026-05-01T10:00:00+00:00"
    with pytest.raises(TypeError, match="needs the manifest dict"):
        report.show_manifest([1])


@pytest.mark.parametrize("file", ["task_metrics.csv", "trajectory.csv"])
def test_a_file_rewritten_after_it_was_parsed_fails_the_manifest(run_outside, file):
    # the numbers come from the bytes parsed; a manifest of other bytes would lie about them
    run = da.load_run(run_outside)
    run.trajectory  # noqa: B018 - parsed now
    path = run_outside / file
    text = path.read_text()
    path.write_text(text.replace("0.", "1.", 1))  # same size, other bytes
    with pytest.raises(M.InputChanged, match=f"{file} changed while the report ran"):
        report.manifest(inputs=[run], parameters={})
    path.write_text(text)  # the bytes parsed again: the manifest agrees with them
    files = {Path(f["path"]).name: f["sha256"]
             for f in report.manifest(inputs=[run], parameters={})["files"]}
    assert files[file] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_side_file_read_again_after_a_rewrite_is_an_error(run_outside):
    # Run.select re-reads a side file for a column the loaded frame leaves out: a rewrite in
    # between would mix two versions of the file in one report
    run = da.load_run(run_outside)
    run.trajectory  # noqa: B018 - parsed now, without the free-text columns
    path = run_outside / "trajectory.csv"
    path.write_text(path.read_text().replace("0.", "1.", 1))
    with pytest.raises(da.RunLoadError, match="trajectory.csv changed after it was first read"):
        run.select("trajectory", ["action_input"])


def test_a_replay_rewritten_after_it_was_read_fails_the_manifest(run_outside):
    run = da.load_run(run_outside)
    task = next(iter(run.replays))
    run.replays[task]  # noqa: B018 - read now
    path = run_outside / task / "task_replay.json"
    path.write_text(path.read_text().replace('"', "'", 0) + " ")  # other bytes, same JSON
    with pytest.raises(M.InputChanged, match=f"{task}/task_replay.json changed while the"):
        report.manifest(inputs=[run], parameters={})


@pytest.mark.parametrize("kind", ["judge study", "research eval"])
def test_a_study_file_rewritten_after_it_was_read_fails_the_manifest(tmp_path, kind):
    from dabench_analysis.judge import read_judge_study
    from dabench_analysis.research_eval import load_research_eval

    root = Path(__file__).resolve().parents[1] / "data"
    if kind == "judge study":
        folder = Path(shutil.copytree(root / "judge_study", tmp_path / "s"))
        loaded, changed = read_judge_study(folder), folder / "judge_verdicts.csv"
    else:
        folder = Path(shutil.copytree(root / "research_eval", tmp_path / "s"))
        changed = next(folder.glob("*/artifacts/results.jsonl"))
        loaded = load_research_eval(folder)
    assert report.manifest(inputs=[loaded], parameters={})["n_files"] > 1
    changed.write_bytes(changed.read_bytes() + b"\n")
    with pytest.raises(M.InputChanged, match=f"{changed.name} changed while the report ran"):
        report.manifest(inputs=[loaded], parameters={})


def test_manifest_view_shows_a_mapping_parameter_without_a_python_literal():
    from dabench_analysis.report._provenance import ManifestView

    view = ManifestView({"parameters": {"column_map": {}, "other_map": {"task_id": "sample"},
                                        "flip_pair": None}})
    page = view._repr_html_()
    assert "{}" not in page and "{&#x27;" not in page  # no dict literal, empty or not
    rows = dict(view._rows())
    assert rows["parameter column_map"] == "none"
    assert rows["parameter other_map"] == "task_id = sample"
    assert rows["parameter flip_pair"] == "none"
    # a long value (the 40 folders of a sweep) opens on a click, whole
    many = ManifestView({"parameters": {"run_dirs": [f"/data/run-{i:02d}" for i in range(40)]}})
    cell = many._repr_html_().split("parameter run_dirs</th><td>")[1].split("</td>")[0]
    assert cell.startswith("<details><summary>/data/run-00, ") and "/data/run-39" in cell
