"""Load errors that say where the problem is: the run folder of a side file's error in a sweep,
only the colliding column names, and a blank first line named as such (not "empty file").

Found by trying the batched loader with hand-broken runs; both paths (``load_run``,
``load_runs``) gave the same unclear message before.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from dabench_analysis.load import RunLoadError, load_run, load_runs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample_runs"


def _copy(tmp_path: Path, name: str, to: str) -> Path:
    return Path(shutil.copytree(SAMPLE / name, tmp_path / to))


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_side_file_error_in_a_sweep_names_the_run_folder(tmp_path):
    a, b = _copy(tmp_path, "baseline_react", "a"), _copy(tmp_path, "proposed_aat", "b")
    traj = b / "trajectory.csv"
    traj.write_bytes(traj.read_bytes().replace(b"\n", b"\r"))  # CR-only line ends
    runs = _quiet(lambda: load_runs([a, b], cache=False, progress=False))
    with pytest.raises(RunLoadError) as exc:
        _quiet(lambda: runs.trajectory)
    assert str(exc.value).startswith(f"{b}: trajectory.csv: the header line is not valid CSV")
    assert [f.check for f in exc.value.findings] == ["header"]
    with pytest.raises(RunLoadError, match=f"^{b}: trajectory.csv: "):
        _quiet(lambda: load_run(b, cache=False).trajectory)


def test_header_collision_names_only_the_colliding_columns(tmp_path):
    a = _copy(tmp_path, "baseline_react", "a")
    tm = a / "task_metrics.csv"
    lines = tm.read_text(encoding="utf-8").splitlines()
    lines = [lines[0] + ", final_score"] + [r + ",0.5" for r in lines[1:]]
    tm.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RunLoadError) as exc:
        _quiet(lambda: load_run(a, cache=False))
    first = str(exc.value).splitlines()[0]
    assert first.endswith("task_metrics.csv: column names collide once spaces are stripped and "
                          "aliases renamed: [' final_score', 'final_score'] -> 'final_score'")


@pytest.mark.parametrize("file", ["task_metrics.csv", "trajectory.csv"])
def test_blank_first_line_is_not_called_an_empty_file(tmp_path, file):
    a = _copy(tmp_path, "baseline_react", "a")
    (a / file).write_bytes(b"\n" + (a / file).read_bytes())
    with pytest.raises(RunLoadError) as exc:
        _quiet(lambda: load_run(a, cache=False).trajectory)
    assert f"{file}: the first line is blank; the header must be the first line" in str(exc.value)
    assert "empty" not in str(exc.value).splitlines()[0]


def test_a_file_of_blank_lines_is_still_empty(tmp_path):
    a = _copy(tmp_path, "baseline_react", "a")
    (a / "trajectory.csv").write_bytes(b"\n\n  \n")
    with pytest.raises(RunLoadError, match=r"trajectory\.csv: file is empty \(no header line\)"):
        _quiet(lambda: load_run(a, cache=False).trajectory)


@pytest.mark.parametrize("what", ["dangling link", "folder"])
def test_a_task_file_that_cannot_be_read_is_named_never_replaced_by_the_legacy_file(tmp_path,
                                                                                   what):
    # a task_metrics.csv that is a link to nothing (or a folder) beside the legacy
    # comprehensive_evaluation.csv: the legacy file is not silently read in its place
    run = _copy(tmp_path, "baseline_react", "run")
    (run / "task_metrics.csv").rename(run / "comprehensive_evaluation.csv")
    if what == "folder":
        (run / "task_metrics.csv").mkdir()
    else:
        (run / "task_metrics.csv").symlink_to(tmp_path / "nowhere.csv")
    with pytest.raises(RunLoadError, match=r"task_metrics\.csv: cannot read \((No such file "
                                           r"or directory|Is a directory)\)") as exc:
        load_run(run, cache=False)
    assert [(f.file, f.check) for f in exc.value.findings] == [("task_metrics.csv",
                                                                "unreadable")]
