"""Faults at the output side (issue 24 items 2 and 4), on copies of the sample runs, through the
real command line in subprocesses:

* a report folder reflects one run of one report: a report killed with ``kill -9`` leaves no
  file under a success name and nothing outside its staging folder; the next run removes that
  folder and every file a previous run wrote, never a file the toolkit did not write, so a
  section the new run skips has no table left;
* ``validate --out`` writes its four files as a set: on a full disk the previous set stays
  (interrupted at any step: test_faults_edge);
* every error at the edge is one line with its exit code (2: an unusable output or cache
  folder, a bad parameter; 1: a failed report), never a traceback unless ``--debug``.

The tests run as root in CI, where ``chmod`` does not make a folder read-only: a read-only bind
mount and a small tmpfs stand for a read-only and a full disk; they are skipped with a message
where mounting is not allowed.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs"
CLI = [sys.executable, "-m", "dabench_analysis.report._cli"]
SUCCESS = ("report.ipynb", "summary.json", "report.html")
LEDGER = ".dabench-report.json"


def _cli(*args: str, timeout: int = 900, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, **env})


def _one_line_error(proc: subprocess.CompletedProcess, *parts: str) -> str:
    """The error of a command: one line on stderr naming ``parts``; no traceback anywhere."""
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def _drop_column(run: Path, column: str) -> None:
    with (run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    k = rows[0].index(column)
    with (run / "task_metrics.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([r[:k] + r[k + 1:] for r in rows])


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


# --- mounts ---------------------------------------------------------------------------------

def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip(f"mounting is not allowed here (mount {' '.join(args)}: "
                    f"{proc.stderr.strip()}); a read-only or full folder cannot be made")


@pytest.fixture
def read_only(tmp_path):
    """A read-only folder (bind mount) holding one file."""
    src, dest = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    dest.mkdir()
    (src / "keep.txt").write_text("mine\n")
    _mount("--bind", str(src), str(dest))
    try:
        _mount("-o", "remount,ro,bind", str(dest))
        yield dest
    finally:
        subprocess.run(["umount", str(dest)], check=False)


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs: a disk that fills up."""
    dest = tmp_path / "full"
    dest.mkdir()
    _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(dest))
    try:
        yield dest
    finally:
        subprocess.run(["umount", str(dest)], check=False)


def _fill(disk: Path, leave: int = 0) -> None:
    """Write one file until the disk is full, then give back ``leave`` bytes."""
    with (disk / "filler").open("wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"x" * 1024)
    if leave:
        size = (disk / "filler").stat().st_size
        os.truncate(disk / "filler", max(0, size - leave))


# --- item 2: never stale, never half-written ---------------------------------------------------

@pytest.fixture(scope="module")
def run_copy(tmp_path_factory) -> Path:
    return Path(shutil.copytree(SAMPLE / "baseline_react",
                                tmp_path_factory.mktemp("runs") / "baseline_react"))


def _kill_midway(run: Path, out: Path, **env: str) -> Path:
    """Start a report, wait until its notebook has written a few tables, kill -9 it (and its
    kernel)."""
    proc = subprocess.Popen([*CLI, "report", str(run), "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, **env})
    folder = out / run.name
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            staged = list(folder.glob(".papermill-*/out/tables/*.csv"))
            if len(staged) >= 3:
                break
            assert proc.poll() is None, "the report ended before it could be killed"
            time.sleep(0.2)
        else:
            pytest.fail("the report wrote no table within 600 s")
        os.kill(proc.pid, signal.SIGKILL)  # the command itself, as the OOM killer would
        proc.wait(timeout=30)
        # its kernel notices that its parent is gone (ipykernel's parent poller) and exits
        for _ in range(100):
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # only the processes this test started
    return folder


def test_killed_report_leaves_no_success_name_and_the_rerun_no_stale_file(run_copy, tmp_path,
                                                                           request):
    out = tmp_path / "out"
    # the temporary folder of both runs, for the kernels' sockets (a short path: a socket's
    # path has at most 107 bytes)
    tmp = Path(tempfile.mkdtemp(prefix="dabench-test-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    folder = _kill_midway(run_copy, out, TMPDIR=str(tmp))
    assert [p for p in tmp.iterdir() if p.name.startswith("dabench-kernel")]  # the killed
    # kernel's socket files, in the folder of the killed process
    assert not any((folder / n).exists() for n in SUCCESS)
    assert {p.name for p in folder.iterdir()} <= {p.name for p in folder.glob(".papermill-*")}
    assert list(folder.glob(".papermill-*"))  # the killed run's staging folder, and only that
    (folder / "my_notes.txt").write_text("not the toolkit's\n")  # a file of the user's
    changed = Path(shutil.copytree(run_copy, tmp_path / "runs2" / run_copy.name))
    _drop_column(changed, "root_cause")  # the rerun skips Table 5 (root_causes)
    proc = _cli("report", str(changed), "--out", str(out), TMPDIR=str(tmp))
    assert proc.returncode == 0, proc.stderr
    assert not [p for p in tmp.iterdir() if p.name.startswith("dabench-kernel")]  # removed
    summary = json.loads((folder / "summary.json").read_text())
    assert "root_causes" in {s["section"] for s in summary["skipped"]}
    assert not list(folder.glob("tables/root_causes.*"))
    assert not list(folder.glob(".papermill-*"))  # the stale staging folder was removed
    listed = set(json.loads((folder / LEDGER).read_text())["files"])
    assert listed == _files(folder) - {LEDGER, "my_notes.txt"}
    assert (folder / "my_notes.txt").read_text() == "not the toolkit's\n"


@pytest.fixture
def first_report(sample_report, tmp_path) -> Path:
    """A finished report of the sample baseline in ``tmp_path/out``: a copy of the one the
    suite builds once (conftest.sample_report), as the first of two runs of a report."""
    proc, built = sample_report
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    shutil.copytree(built / "baseline_react", out / "baseline_react", symlinks=True)
    return out


def test_a_rerun_removes_the_tables_of_a_section_it_skips(run_copy, first_report):
    out = first_report
    folder = out / run_copy.name
    first = _files(folder)
    assert {"tables/root_causes.csv", "tables/root_causes.tex", "tables/root_causes.md"} <= first
    _drop_column(run_copy, "root_cause")
    try:
        assert _cli("report", str(run_copy), "--out", str(out)).returncode == 0
    finally:
        shutil.copy2(SAMPLE / "baseline_react" / "task_metrics.csv", run_copy)
    second = _files(folder)
    assert second == first - {"tables/root_causes.csv", "tables/root_causes.tex",
                              "tables/root_causes.md"}


def test_a_killed_rerun_keeps_the_previous_report_whole(run_copy, first_report):
    out = first_report
    folder = out / run_copy.name
    before = {f: (folder / f).read_bytes() for f in _files(folder)}
    _kill_midway(run_copy, out)
    staged = {p.name for p in folder.glob(".papermill-*")}
    after = {f: (folder / f).read_bytes() for f in _files(folder)
             if f.split("/")[0] not in staged}
    assert after == before  # one run of one report: the previous one, untouched


# --- validate --out: all four files or none ---------------------------------------------------

def test_validate_out_on_a_full_disk_keeps_the_previous_set(small_disk):
    first = _cli("validate", str(SAMPLE / "proposed_aat"), "--out", str(small_disk))
    assert first.returncode == 0, first.stderr
    names = ["findings.csv", "findings.json", "health.csv", "health.json"]
    before = {n: (small_disk / n).read_bytes() for n in names}
    _fill(small_disk, leave=6 * 1024)  # room for a probe and part of the new set, not all
    proc = _cli("validate", str(SAMPLE / "baseline_react"), "--out", str(small_disk))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _one_line_error(proc, f"--out {small_disk}: cannot write there", "No space left on device")
    assert {n: (small_disk / n).read_bytes() for n in names} == before
    assert not list(small_disk.glob(".papermill-*")) and not list(small_disk.glob("*.tmp"))


# --- item 4: one line at the edge -------------------------------------------------------------

def test_read_only_out_is_one_line_and_exit_2(read_only):
    for args in (["report", str(SAMPLE / "proposed_aat")], ["validate", str(SAMPLE / "proposed_aat")]):
        proc = _cli(*args, "--out", str(read_only / "x"))
        assert proc.returncode == 2, proc.stderr
        _one_line_error(proc, f"--out {read_only / 'x'}", "Read-only file system")
    assert sorted(p.name for p in read_only.iterdir()) == ["keep.txt"]


def test_full_out_is_exit_2_and_a_disk_filling_up_fails_the_report_in_one_line(small_disk):
    _fill(small_disk)
    proc = _cli("report", str(SAMPLE / "proposed_aat"), "--out", str(small_disk / "o"))
    assert proc.returncode == 2
    _one_line_error(proc, "--out", "No space left on device")
    (small_disk / "filler").unlink()  # 64 KiB free: less than one report
    proc = _cli("report", str(SAMPLE / "proposed_aat"), "--out", str(small_disk / "o"))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    failed = [ln for ln in proc.stderr.splitlines() if ln.startswith("failed proposed_aat")]
    assert len(failed) == 1 and "No space left on device" in failed[0], proc.stderr
    folder = small_disk / "o" / "proposed_aat"
    assert not any((folder / n).exists() for n in SUCCESS)
    assert not list(folder.glob(".papermill-*"))


def test_unusable_cache_folder_is_exit_2(read_only, tmp_path):
    proc = _cli("validate", str(SAMPLE / "proposed_aat"), DABENCH_CACHE_DIR=str(read_only))
    assert proc.returncode == 2
    _one_line_error(proc, f"DABENCH_CACHE_DIR {read_only}", "Read-only file system")
    proc = _cli("cache", "clear", DABENCH_CACHE_DIR=str(read_only))
    assert proc.returncode == 2
    _one_line_error(proc, "Read-only file system")
    a_file = tmp_path / "cache.txt"
    a_file.write_text("")
    proc = _cli("cache", "info", DABENCH_CACHE_DIR=str(a_file))
    assert proc.returncode == 2
    _one_line_error(proc, f"DABENCH_CACHE_DIR={a_file}: not a folder")


def test_unusable_jupyter_runtime_folder_is_exit_2(read_only):
    proc = _cli("report", str(SAMPLE / "proposed_aat"), "--out", "/tmp/dabench-never-written",
                JUPYTER_RUNTIME_DIR=str(read_only))
    assert proc.returncode == 2
    _one_line_error(proc, "JUPYTER_RUNTIME_DIR", "Read-only file system")
    assert not Path("/tmp/dabench-never-written").exists() or \
        not any(Path("/tmp/dabench-never-written").iterdir())


def test_bad_parameters_are_exit_2(tmp_path):
    proc = _cli("report", str(SAMPLE / "proposed_aat"), "--judge-study", str(tmp_path / "no"),
                "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    _one_line_error(proc, f"--judge-study {tmp_path / 'no'}: no such folder")
    proc = _cli("report", "--judge-study", str(ROOT / "data" / "judge_study"),
                "--worked-case", "tc999", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    _one_line_error(proc, "--worked-case 'tc999': not a test_case_id", "tc000")
    assert not (tmp_path / "o").exists()  # refused before anything is written


def test_a_missing_input_is_a_bad_parameter(tmp_path):
    proc = _cli("report", str(tmp_path / "nosuch"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2  # before any report runs, nothing written
    _one_line_error(proc, f"run directory {tmp_path / 'nosuch'} does not exist")
    assert not (tmp_path / "o").exists()


def test_debug_shows_the_traceback(read_only):
    args = ("validate", str(SAMPLE / "proposed_aat"), "--out", str(read_only / "x"))
    assert "Traceback" not in _cli(*args).stderr
    for proc in (_cli(*args, "--debug"), _cli(*args, DABENCH_DEBUG="1")):
        assert proc.returncode != 0 and "Traceback" in proc.stderr + proc.stdout


def test_a_bogus_matplotlib_backend_is_one_line():
    """A command that draws nothing never imports matplotlib (lazy namespaces), so it says
    nothing about the backend; what imports matplotlib says it in one line."""
    proc = _cli("validate", str(SAMPLE / "pending_run"), MPLBACKEND="bogus")
    assert proc.returncode == 3, proc.stderr  # not evaluated: the command still works
    assert "Traceback" not in proc.stderr and "bogus" not in proc.stderr
    for module in ("dabench_analysis.figures", "dabench_analysis.export._figures"):
        proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                              text=True, cwd=ROOT, env={**os.environ, "MPLBACKEND": "bogus"})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        lines = [ln for ln in proc.stderr.splitlines() if "bogus" in ln]
        assert lines == ["MPLBACKEND:0: UserWarning: 'bogus' is not a matplotlib backend (agg, "
                         "pdf, svg, module://..., tkagg, qtagg, ...); ignored, matplotlib picks "
                         "its default"]
