"""Faults at the command line's edge and in the output folders (issue 24, the break-it pass's
findings), on copies of the sample data, through the real command line:

* ``validate --out`` writes its four files as one set whatever step is interrupted (every
  step in turn, and a real ``kill -9``): a reader sees the previous set or the new one, never
  a mix;
* a file the toolkit did not write is never overwritten or removed; one in the way of an
  output is a one-line error (exit 2) before any report runs;
* bad parameters are one line with exit 2 before any report runs: a run folder that does not
  exist, a ``--baseline`` that is not an evaluated run, a ``--judge-study`` or
  ``--research-eval`` folder without its files, a ``--worked-case`` without a verdict, a
  value of the wrong type for any option; a run folder given twice is one run;
* text from the data reaches the terminal with its control characters escaped; a closed
  standard output (``| head -1``) does not stop ``validate --out`` from writing its files;
* the kernels' socket files live in a folder per process that the next run removes when its
  process was killed; a refused or failed command leaves no empty folder behind.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_faults_outputs import (  # noqa: F401 - small_disk: a fixture
    CLI,
    ROOT,
    SAMPLE,
    _cli,
    _fill,
    _one_line_error,
    small_disk,
)
from typer.testing import CliRunner

from dabench_analysis.report import _cli as cli
from dabench_analysis.report import _kernel as kernel
from dabench_analysis.report import _outputs as outputs
from dabench_analysis.report._validation import (
    CURRENT,
    LINK_PREFIX,
    NAMES,
    SET_PREFIX,
    write_validation,
)
from dabench_analysis.validate import validate_run

JUDGE = ROOT / "data" / "judge_study"


def _view(out: Path) -> dict[str, bytes | None]:
    """What a reader of ``validate --out`` sees: each of its four names, or None."""
    return {n: (out / n).read_bytes() if (out / n).is_file() else None for n in NAMES}


def _hidden(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith("."))


def _run(*args: str) -> SimpleNamespace:
    """The command line in this process (no interpreter to start): exit code, stdout, stderr."""
    result = CliRunner().invoke(cli.app, list(args), prog_name="dabench-analysis")
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout,
                           stderr=result.stderr, stdout_bytes=result.stdout_bytes,
                           stderr_bytes=result.stderr_bytes)


# --- item 1: validate --out is one set, whatever step is interrupted ---------------------------

class Killed(BaseException):
    """Stands for the process dying at one step (nothing after it runs)."""


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    """Two validations with different findings and health, and the bytes of each set."""
    a, b = [validate_run(SAMPLE / "pending_run")], [validate_run(SAMPLE / "proposed_aat")]
    views = []
    for reports in (a, b):
        out = tmp_path_factory.mktemp("set")
        write_validation(reports, out)
        views.append(_view(out))
    assert all(views[0][n] != views[1][n] for n in NAMES)  # every file tells them apart
    return a, b, views


def _steps(monkeypatch, kill_at: int) -> dict:
    """Count the file-system steps that change names (and die at step ``kill_at``)."""
    count = {"n": 0}

    def wrap(fn):
        def step(*args, **kwargs):
            count["n"] += 1
            if count["n"] == kill_at:
                raise Killed
            return fn(*args, **kwargs)
        return step

    for name in ("replace", "rename", "symlink", "unlink", "rmdir", "chmod"):
        monkeypatch.setattr(os, name, wrap(getattr(os, name)))
    return count


@pytest.mark.parametrize("first", [True, False], ids=["into an empty folder", "over a set"])
def test_validate_out_is_never_a_mix_whatever_step_is_interrupted(two_sets, tmp_path,
                                                                   monkeypatch, first):
    a, b, (view_a, view_b) = two_sets
    none = dict.fromkeys(NAMES)
    with monkeypatch.context() as m:  # how many steps a whole run takes
        probe = tmp_path / "probe"
        write_validation(a, probe)
        steps = _steps(m, kill_at=0)
        write_validation(b, probe)
        n_steps = steps["n"]
    assert n_steps > 10
    for k in range(1, n_steps + 1):
        out = tmp_path / f"k{k}"
        if not first:
            write_validation(a, out)
        with monkeypatch.context() as m:
            _steps(m, kill_at=k)
            with pytest.raises(Killed):
                write_validation(b, out)
        seen = _view(out) if out.is_dir() else none
        assert seen in ((none if first else view_a), view_b), f"killed at step {k}: a mix"
    for k in range(1, n_steps + 1):  # the next run: the new set, nothing of the killed run left
        out = tmp_path / f"k{k}"
        write_validation(b, out)
        assert _view(out) == view_b
        sets = [n for n in _hidden(out) if n.startswith(SET_PREFIX)]
        assert len(sets) == 1 and os.readlink(out / CURRENT) == sets[0]
        assert not [n for n in _hidden(out) if n.startswith((LINK_PREFIX, ".papermill-"))]


def test_validate_out_killed_by_sigkill_leaves_one_whole_set(two_sets, tmp_path):
    """The break-it pass's case: ``kill -9`` while the new set is being put in place."""
    a, _, (before, after) = two_sets
    out = tmp_path / "out"
    for attempt in range(2):
        shutil.rmtree(out, ignore_errors=True)
        write_validation(a, out)
        proc = subprocess.Popen([*CLI, "validate", str(SAMPLE / "proposed_aat"), "--out",
                                 str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while proc.poll() is None and not list(out.glob(".papermill-*/health.json")):
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert _view(out) in (before, after), f"attempt {attempt}: a mix of two sets"
    assert _run("validate", str(SAMPLE / "proposed_aat"), "--out", str(out)).returncode == 0
    assert _view(out) == after
    assert not [n for n in _hidden(out) if n.startswith((".papermill-", LINK_PREFIX))]
    assert len([n for n in _hidden(out) if n.startswith(SET_PREFIX)]) == 1


def test_validate_out_on_a_full_disk_names_the_folder_and_leaves_no_folder(small_disk):  # noqa: F811
    _fill(small_disk)
    proc = _run("validate", str(SAMPLE / "proposed_aat"), "--out", str(small_disk / "new"))
    assert proc.returncode == 2
    _one_line_error(proc, f"--out {small_disk / 'new'}", "No space left on device")
    assert not (small_disk / "new").exists()  # the folder made for the check is gone


# --- item 2: a file the toolkit did not write ---------------------------------------------------

def test_a_users_index_is_in_the_way_before_any_report_runs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("<h1>my page</h1>\n")
    proc = _run("report", str(SAMPLE / "pending_run"), "--out", str(out))
    assert proc.returncode == 2
    _one_line_error(proc, f"{out / 'index.html'} is in the way", "never overwrites it")
    assert [p.name for p in out.iterdir()] == ["index.html"]
    assert (out / "index.html").read_text() == "<h1>my page</h1>\n"


def test_a_folder_without_a_list_keeps_the_users_files(tmp_path):
    """The break-it pass's case: a folder named after a run, holding the user's report._html
    and summary.json, no list of the toolkit's files: refused, nothing removed; files of the
    user's that are not in the way stay beside the toolkit's."""
    run = tmp_path / "notrun"
    run.mkdir()
    out = tmp_path / "out"
    (out / "notrun").mkdir(parents=True)
    (out / "notrun" / "report.html").write_text("my notes\n")
    (out / "notrun" / "summary.json").write_text('{"mine": 1}\n')
    proc = _run("report", str(run), "--out", str(out))
    assert proc.returncode == 2
    _one_line_error(proc, f"{out / 'notrun' / 'report.html'} is in the way (and 1 more)")
    assert sorted(p.name for p in (out / "notrun").iterdir()) == ["report.html",
                                                                  "summary.json"]
    for name in ("report.html", "summary.json"):
        (out / "notrun" / name).rename(out / "notrun" / f"mine.{name}")
    proc = _run("report", str(run), "--out", str(out))
    assert proc.returncode == 0, proc.stderr  # not evaluated: nothing written for the run
    assert sorted(p.name for p in (out / "notrun").iterdir()) == ["mine.report.html",
                                                                  "mine.summary.json"]
    assert json.loads((out / ".dabench-index.json").read_text())["files"] == ["index.html"]
    proc = _run("report", str(run), "--out", str(out))  # the toolkit's own index: replaced
    assert proc.returncode == 0, proc.stderr


def test_install_never_overwrites_or_removes_a_file_it_did_not_write(tmp_path):
    out, src = tmp_path / "out", tmp_path / "src"
    (src / "tables").mkdir(parents=True)
    (src / "tables" / "main_results.csv").write_text("new\n")
    (src / "summary.json").write_text("{}\n")
    (out / "tables").mkdir(parents=True)
    (out / "tables" / "main_results.csv").write_text("mine\n")
    (out / "report.html").write_text("mine\n")
    assert outputs.install(None, out) == []  # no list: nothing of the toolkit's to remove
    with pytest.raises(outputs.InTheWay) as caught:
        outputs.install(src, out)
    assert caught.value.filename == str(out / "tables" / "main_results.csv")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "report.html", "tables/main_results.csv"]  # nothing changed, no list written
    assert [p.name for p in outputs.in_the_way(out, stems=["tables/main_results"])] == [
        "report.html", "main_results.csv"]


def test_validate_out_never_overwrites_a_users_file(tmp_path):
    out = tmp_path / "v"
    out.mkdir()
    (out / "health.json").write_text("mine\n")
    proc = _run("validate", str(SAMPLE / "pending_run"), "--out", str(out))
    assert proc.returncode == 2
    _one_line_error(proc, f"{out / 'health.json'} is in the way")
    assert [p.name for p in out.iterdir()] == ["health.json"]


# --- items 3, 4, 7, 8, 13: bad parameters, one line, exit 2, nothing written --------------------

def _damaged_judge_study(tmp_path: Path, case: str) -> Path:
    """A copy of the sample judge study whose ``case`` has no GT-as-code verdict."""
    study = Path(shutil.copytree(JUDGE, tmp_path / "judge"))
    with (study / "judge_verdicts.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    kept = [r for r in rows if not (r[0] == case and r[1] == "GT-as-code")]
    assert len(kept) == len(rows) - 1
    with (study / "judge_verdicts.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(kept)
    return study


def test_bad_parameters_are_one_line_before_any_report_runs(tmp_path):
    empty, a_file = tmp_path / "empty", tmp_path / "file.txt"
    empty.mkdir()
    a_file.write_text("x\n")
    run = str(SAMPLE / "pending_run")
    study = _damaged_judge_study(tmp_path, "tc002")
    cases = [
        (["report", "/nonexistent/run"], "run directory /nonexistent/run does not exist"),
        (["validate", "/nonexistent/run"], "run directory /nonexistent/run does not exist"),
        (["report", str(a_file)], f"run {a_file} is a file of no format this toolkit "
         "recognises: pass a run folder, or --format (inspect, tau-bench, atif, table, swe-agent, "
         "groupchat)"),
        (["report", run, "--baseline", str(empty)],
         f"--baseline {empty}: not a run to compare against: no task_metrics.csv"),
        (["report", run, "--kernel", "no-such-kernel"], "--kernel 'no-such-kernel': no such "
         "Jupyter kernel (installed: "),
        (["report", run, "--map", "final_score=nosuch"], "--map renames the columns of a "
         "per-task table (CSV, JSONL, Parquet), and none of the runs given is one"),
        (["report", run, "--judge-study", str(empty)], f"--judge-study {empty}: not a judge "
         "study: no cases.csv, judge_verdicts.csv, factoid_ratings.csv, dimension_ratings.csv"),
        (["report", run, "--research-eval", str(empty)], f"--research-eval {empty}: not a "
         "research-eval session: no summary.json, */artifacts/results.jsonl"),
        (["report", run, "--judge-study", str(study), "--worked-case", "tc002"],
         "--worked-case 'tc002': worked case 'tc002' has no verdict of configuration "
         "'GT-as-code'"),
    ]
    for args, message in cases:
        out = tmp_path / "new" / "out"
        proc = _run(*args, "--out", str(out))
        assert proc.returncode == 2, (args, proc.stderr)
        _one_line_error(proc, message)
        assert not (tmp_path / "new").exists(), args  # no report ran, no folder was made


@pytest.mark.parametrize("args, line", [
    (["report", "--success-threshold", "abc"], "error: --success-threshold: 'abc' is not a number"),
    (["validate", "--success-threshold", "abc", "x"],
     "error: --success-threshold: 'abc' is not a number"),
    (["report", "--jobs", "two"], "error: --jobs: 'two' is not a whole number"),
    (["report", "--cell-timeout", "1.5"], "error: --cell-timeout: '1.5' is not a whole number"),
    (["report", "--jobs", "0"], "error: --jobs: '0': should be greater than or equal to 1"),
    (["validate"], "error: Missing argument 'run_dirs' (`dabench-analysis validate --help` "
                   "shows the usage)"),
    (["report", "--outt", "x"], "error: No such option: --outt (Possible options: --out) "
                                "(`dabench-analysis report --help` shows the usage)"),
    (["cache", "bogus"], "error: No such command 'bogus' (`dabench-analysis cache --help` "
                         "shows the usage)"),
])
def test_a_usage_error_is_one_line(args, line):
    result = CliRunner().invoke(cli.app, args, prog_name="dabench-analysis")
    assert result.exit_code == 2
    assert result.output.splitlines() == [line]


def test_a_run_given_twice_is_one_run(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(SAMPLE / "pending_run", target_is_directory=True)
    proc = _run("validate", str(SAMPLE / "pending_run"), str(link))
    assert proc.returncode == 3
    assert proc.stdout.count("run pending_run (not evaluated") == 1
    assert "1 run(s) validated" in proc.stdout
    assert [ln for ln in proc.stderr.splitlines() if ln] == [
        f"note: {link} is {SAMPLE / 'pending_run'} again: one run"]
    proc = _run("report", str(SAMPLE / "pending_run"), str(link), str(SAMPLE / "pending_run"),
                "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if ln.startswith("note:")]) == 2
    assert (tmp_path / "out" / "index.html").read_text().count("<tr class=") == 1


# --- items 5, 6: the terminal ------------------------------------------------------------------

def test_control_characters_from_the_data_never_reach_the_terminal(tmp_path):
    run = Path(shutil.copytree(SAMPLE / "baseline_react", tmp_path / "esc"))
    with (run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("failure_reason")
    row = next(r for r in rows[1:] if r[col])
    row[col] = "X\x1b[7mINVERTED\x1b[0m\x00"
    with (run / "task_metrics.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    proc = _run("validate", str(run))
    assert proc.returncode == 1
    shown = proc.stdout_bytes + proc.stderr_bytes
    assert b"\x1b" not in shown and b"\x00" not in shown
    assert b"X\\x1b[7mINVERTED\\x1b[0m\\x00" in shown
    odd = tmp_path / "run\x1b[7m"  # a run folder's name, in report's lines
    odd.mkdir()
    proc = _run("report", str(odd), "--out", str(tmp_path / "o"))
    assert proc.returncode == 0
    shown = proc.stdout_bytes + proc.stderr_bytes
    assert b"\x1b" not in shown and b"run\\x1b[7m" in proc.stderr_bytes


def test_validate_out_piped_into_head_writes_its_files(tmp_path):
    out = tmp_path / "v"
    proc = subprocess.Popen([*CLI, "validate", str(SAMPLE / "baseline_react"), "--out",
                             str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0  # the command's own result: no error finding
    assert first.startswith(str(SAMPLE / "baseline_react").encode())
    assert err == b""
    assert all((out / n).is_file() for n in NAMES)


# --- item 11: the kernels' socket files ---------------------------------------------------------

@pytest.fixture
def own_sockets(tmp_path, monkeypatch):
    """A temporary folder of its own, and no socket folder made yet in this process."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp))
    monkeypatch.setattr(kernel, "_SOCKETS", {})
    yield tmp
    for _, fd in kernel._SOCKETS.values():
        os.close(fd)


def test_socket_folders_of_ended_processes_are_removed_never_a_live_ones(own_sockets):
    dead, live = own_sockets / "dabench-kernels-4194304-aaaa", own_sockets / "dabench-kernels-7-b"
    for folder in (dead, live):
        folder.mkdir()
        (folder / "0123456789ab-ipc-1").write_text("")  # as a killed kernel leaves them
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held as a running process holds its own
        ours = Path(kernel.socket_dir())
        assert not dead.exists() and live.is_dir()
    finally:
        os.close(fd)
    assert ours.parent == own_sockets and ours.name.startswith(f"dabench-kernels-{os.getpid()}-")
    ip = kernel._kernel_manager()["kernel_manager_class"](kernel_name="python3").ip
    assert Path(ip).parent == ours and len(f"{Path(ip).name}-5") <= kernel.SOCKET_NAME_MAX


# A killed report's sockets removed by the next run: test_faults_outputs, the kill test.


def test_a_temporary_folder_too_long_for_a_socket_is_one_line(tmp_path, monkeypatch):
    tmp = tmp_path / ("t" * (110 - len(str(tmp_path))))
    tmp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp))  # as TMPDIR=... sets it
    proc = _run("report", str(SAMPLE / "pending_run"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    _one_line_error(proc, f"temporary folder (TMPDIR) {tmp}: too long a path", "at most 107")


@pytest.mark.parametrize("command", [("cache", "info"), ("cache", "clear"),
                                     ("validate", str(SAMPLE / "proposed_aat"))])
def test_a_cache_folder_through_a_regular_file_is_exit_2(command, tmp_path, monkeypatch):
    """Issue 33, item 6: ``cache info`` gave exit 0 for DABENCH_CACHE_DIR=<file>/sub."""
    a_file = tmp_path / "f"
    a_file.write_text("mine\n")
    monkeypatch.setenv("DABENCH_CACHE_DIR", str(a_file / "sub"))
    proc = _run(*command)
    assert proc.returncode == 2
    _one_line_error(proc, f"DABENCH_CACHE_DIR={a_file / 'sub'}: not a folder",
                    f"({a_file} on its way is a file)")
    assert a_file.read_text() == "mine\n"


def test_the_user_cache_folder_through_a_regular_file_is_exit_2(tmp_path, monkeypatch):
    a_file = tmp_path / "f"
    a_file.write_text("")
    monkeypatch.delenv("DABENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(a_file))  # platformdirs' user cache folder
    proc = _run("cache", "info")
    assert proc.returncode == 2
    _one_line_error(proc, f"cache folder {a_file / 'dabench-analysis'}: not a folder",
                    f"({a_file} on its way is a file)", "set DABENCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a folder to be: usable
    assert _run("cache", "info").returncode == 0


def _table(folder: Path, suffix: str) -> Path:
    """results.<suffix>: columns sample_id, passed, tokens (tokens only in the second JSON
    record, a space around ' passed' in the CSV header, as the CSV reader strips it)."""
    path = folder / f"results{suffix}"
    if suffix == ".csv":
        path.write_text("sample_id, passed ,tokens\nq1,1,10\nq2,0,12\n")
    elif suffix == ".jsonl":
        path.write_text('{"sample_id": "q1", "passed": 1}\n\n'
                        '{"sample_id": "q2", "passed": 0, "tokens": 12}\n')
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"sample_id": ["q1", "q2"], "passed": [1, 0],
                                 "tokens": [10, 12]}), path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_mapped_column_the_table_lacks_is_exit_2_before_any_report(suffix, tmp_path):
    """Issue 33, item 6: ``--map final_score=nosuch`` failed late (exit 1, a failed report
    folder); now one line naming the file, the column and the columns the table has."""
    table = _table(tmp_path, suffix)
    out = tmp_path / "new" / "out"
    proc = _run("report", str(table), "--map", "task_id=sample_id", "--map",
                "final_score=nosuch", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    _one_line_error(proc, f"--map final_score=nosuch: {table} has no column 'nosuch' "
                          "(its columns: sample_id, passed, tokens)")
    assert not (tmp_path / "new").exists()  # refused before any report ran


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_mapped_columns_the_table_has_pass_the_check(suffix, tmp_path):
    from dabench_analysis.report._arguments import check_map, table_columns

    table = _table(tmp_path, suffix)
    assert table_columns(table) == ["sample_id", "passed", "tokens"]
    check_map({"task_id": "sample_id", "final_score": "passed", "total_tokens": "tokens"},
              [table, SAMPLE / "baseline_react"], None)
    (tmp_path / "bad.jsonl").write_text("{not json\n")  # unreadable: its report says why
    assert table_columns(tmp_path / "bad.jsonl") is None
    check_map({"final_score": "passed"}, [tmp_path / "bad.jsonl"], "table")


def test_docs_and_help_agree_on_the_map_check():
    page = (ROOT / "docs" / "guide" / "harnesses.md").read_text(encoding="utf-8")
    harnesses = " ".join(page.split("# Other harnesses", 1)[1].split("\n# ", 1)[0].split())
    assert "Every `--map` column must be in each table given" in harnesses
    assert "before any report starts" in harnesses and "is exit 2" in harnesses
    helptext = " ".join(CliRunner().invoke(cli.app, ["report", "--help"], terminal_width=400)
                        .output.split())
    assert "every COLUMN must be in each table given (exit 2 before any report runs)" \
        in helptext
