"""Nothing lost, nothing written where it must not be.

A run directory is made read-only (``chmod -R a-w``) and hashed; loading, validating and the
report CLI must leave every byte and every name in it unchanged (tests may run as root, where
the mode bits do not stop writes, so the hashes and the file list are what is checked). Outputs
are written atomically, and a second report run gives the same table bytes.

The report CLI is slow (a notebook per run), so it runs twice per session only, on one run that
is both read-only and hostile: its folder name holds quotes, a newline, ``{}``, ``$``, ``;`` and
HTML, its data ``<script>`` tags. :func:`report_twice` is shared with ``test_security.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from rich.console import Console

from dabench_analysis import export
from dabench_analysis.export import _tables as export_tables
from dabench_analysis.load import load_run
from dabench_analysis.report import safe_name
from dabench_analysis.report._cli import validate_command
from dabench_analysis.synthetic import generate_run
from dabench_analysis.validate import validate_run
from dabench_analysis.validate.summaries import health_section


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root``: (sha256 of a file's bytes or 'dir', mode bits)."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        out[str(p.relative_to(root))] = (digest, stat.S_IMODE(st.st_mode))
    return out


def _set_writable(root: Path, writable: bool) -> None:
    for p in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The installed ``dabench-analysis`` console script (else ``python -m``)."""
    script = Path(sys.executable).with_name("dabench-analysis")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "dabench_analysis.report._cli"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "MPLBACKEND": "Agg"})


HOSTILE_NAME = ('run"; import os; os.system("touch PWNED") #{x}$(touch PWNED2);\n'
                '<img src=x onerror=alert(1)>')
SCRIPT = "<script>alert(1)</script>"


def _make_hostile(run: Path) -> Path:
    tm = pd.read_csv(run / "task_metrics.csv", dtype=str, keep_default_na=False)
    tm["run_id"] = SCRIPT
    tm.loc[tm["root_cause"] != "", "root_cause"] = f"{SCRIPT} | `rm -rf /` $(touch PWNED3)"
    tm.to_csv(run / "task_metrics.csv", index=False, lineterminator="\n")
    for side in ("trajectory.csv", "tool_calls.csv"):  # one run_id in every file
        frame = pd.read_csv(run / side, dtype=str, keep_default_na=False)
        frame["run_id"] = SCRIPT
        frame.to_csv(run / side, index=False, lineterminator="\n")
    causes = dict(zip(tm["task_id"], tm["root_cause"], strict=True))
    for replay in run.glob("task_*/task_replay.json"):  # the replays agree with task_metrics
        data = json.loads(replay.read_text())
        data["run_id"] = SCRIPT
        if data.get("failure_attribution"):
            data["failure_attribution"]["root_cause"] = causes[data["task_id"]]
        if replay.parent.name == "task_1":
            data["question"] = SCRIPT + "\"; import os; os.system('touch PWNED4') #"
        replay.write_text(json.dumps(data))
    return run.rename(run.with_name(HOSTILE_NAME))


def report_twice(built_once) -> dict:
    """A read-only hostile run, hashed, then the report CLI run twice on it into the same --out
    (from an empty working directory): once per test session, shared by the xdist workers
    (conftest.built_once; test_security uses it too). The tables and summaries of the first run
    are kept in a copy of its --out. The run stays read-only: pytest's clean-up of its
    temporary folders removes read-only ones."""
    def make(folder: Path) -> dict:
        root, work = folder / "ro", folder / "cwd"
        root.mkdir()
        work.mkdir()
        run = _make_hostile(generate_run(root, run_id="ro_run", n_tasks=12, seed=4))
        _set_writable(run, False)
        before = snapshot(run)
        out = work / "out"
        first = cli("report", str(run), "--out", str(out), cwd=work)
        shutil.copytree(out, folder / "first_out", symlinks=True)
        second = cli("report", str(run), "--out", str(out), cwd=work)
        return {"run": str(run), "before": before, "work": str(work), "out": str(out),
                "root": str(root), "first_out": str(folder / "first_out"),
                **{k: {"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
                   for k, p in (("first", first), ("second", second))}}

    _, got = built_once("report_twice_read_only", make)
    first_out = Path(got["first_out"])
    return {**{k: Path(got[k]) for k in ("run", "work", "out", "root")},
            "before": {k: tuple(v) for k, v in got["before"].items()},
            "first": SimpleNamespace(**got["first"]), "second": SimpleNamespace(**got["second"]),
            "tables_1": {p.relative_to(first_out): p.read_bytes()
                         for p in sorted(first_out.rglob("tables/*"))},
            "summaries_1": {p.relative_to(first_out): p.read_bytes()
                            for p in first_out.rglob("summary.json")}}


@pytest.fixture(scope="module")
def reports(built_once):
    return report_twice(built_once)


@pytest.fixture(scope="module")
def ro_run(tmp_path_factory):
    run = generate_run(tmp_path_factory.mktemp("ro_plain"), run_id="ro_plain", n_tasks=12,
                       seed=4)
    _set_writable(run, False)
    before = snapshot(run)
    assert all(mode & 0o222 == 0 for _, mode in before.values())
    yield run, before
    _set_writable(run, True)


def test_load_and_validate_leave_the_run_untouched(ro_run):
    run, before = ro_run
    loaded = load_run(run, include_text=True)
    assert len(loaded.tasks) == 12 and len(loaded.trajectory) and len(loaded.tool_calls)
    assert all(isinstance(loaded.replay(t), dict) for t in loaded.replays)
    rep = validate_run(run)
    assert rep.ok
    health_section(rep)
    assert validate_command([run], console=Console(file=io.StringIO())) == 0
    assert snapshot(run) == before


def test_report_cli_succeeds_on_a_read_only_run(reports):
    for res in (reports["first"], reports["second"]):
        assert res.returncode == 0, res.stdout + res.stderr
    assert all(mode & 0o222 == 0 for _, mode in reports["before"].values())
    out = reports["out"]
    folder = out / safe_name(HOSTILE_NAME)
    assert (out / "index.html").is_file() and (folder / "report.html").is_file()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["run_id"] == SCRIPT and summary["validation_errors"] == 0


def test_report_cli_leaves_every_input_byte_unchanged(reports):
    assert snapshot(reports["run"]) == reports["before"]


def test_report_cli_writes_only_under_out(reports):
    work = reports["work"]
    assert sorted(p.name for p in work.iterdir()) == ["out"]
    left = [p for p in reports["out"].rglob("*")
            if p.name.endswith(".tmp") or p.name.startswith(".papermill-")
            or p.name.endswith(".failed.ipynb")]
    assert left == []


def test_rerun_gives_the_same_table_bytes(reports):
    out = reports["out"]
    tables_2 = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("tables/*"))}
    assert tables_2 == reports["tables_1"] and len(tables_2) >= 6
    summaries_2 = {p.relative_to(out): p.read_bytes() for p in out.rglob("summary.json")}
    assert summaries_2.keys() == reports["summaries_1"].keys()
    for name, text in summaries_2.items():  # the same bytes but for the manifest's time stamp
        first, second = json.loads(reports["summaries_1"][name]), json.loads(text)
        assert first["manifest"].pop("time_utc") <= second["manifest"].pop("time_utc")
        assert first == second and len(second["manifest"]["files"]) > 0


# --- atomic writes ------------------------------------------------------------------------------

def _no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_atomic_write_keeps_the_previous_file_on_error(tmp_path):
    dest = tmp_path / "table.csv"
    dest.write_text("previous\n")
    with pytest.raises(RuntimeError, match="disk full"):
        with export.atomic_write(dest) as fh:
            fh.write("half a new ta")
            raise RuntimeError("disk full")
    assert dest.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_save_table_failing_midway_leaves_old_files_and_no_temp_files(tmp_path, monkeypatch):
    df = pd.DataFrame({"metric": ["final_score"], "mean": [0.5]})
    written = export.save_table(df, tmp_path / "main")
    old = {p.name: p.read_bytes() for p in written}

    def broken(*args, **kwargs):
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(export_tables, "_markdown", broken)  # what save_table writes .md with
    with pytest.raises(RuntimeError, match="renderer failed"):
        export.save_table(df.assign(mean=0.75), tmp_path / "main")
    assert (tmp_path / "main.md").read_bytes() == old["main.md"]
    assert (tmp_path / "main.csv").read_text().endswith("0.75\n")  # written before the failure
    assert _no_temp_files(tmp_path)


def test_write_json_of_unserialisable_data_leaves_the_previous_file(tmp_path):
    dest = export.write_json({"a": 1}, tmp_path / "summary.json")
    with pytest.raises(TypeError):
        export.write_json({"a": object()}, dest)
    assert json.loads(dest.read_text()) == {"a": 1}
    assert _no_temp_files(tmp_path)


def test_save_table_is_idempotent(tmp_path):
    df = pd.DataFrame({"difficulty": ["Easy", "Hard"], "n": [2, 2], "mean": [1 / 3, 0.5]})
    first = {p: p.read_bytes() for p in export.save_table(df, tmp_path / "t")}
    second = {p: p.read_bytes() for p in export.save_table(df, tmp_path / "t")}
    assert first == second
