"""The runner when a notebook fails (pitfall P15: a kernel that dies, a cell that times out, a
cell that raises), a quiet terminal on success, and the index page for failed reports and for
reports with skipped sections."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dabench_analysis import report
from dabench_analysis.report.runner import ReportError

SCRIPT = "<script>alert(1)</script>"


def _nb(path: Path, *sources: str) -> Path:
    """A notebook: a tagged parameters cell ``x = 1``, then one code cell per source."""
    params = new_code_cell("x = 1")
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[params, *(new_code_cell(s) for s in sources)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def _run_failing(folder: Path, name: str, source: str, **kwargs) -> tuple[ReportError, Path]:
    nb = _nb(folder / f"{name}.ipynb", "print('before')", source, "print('after')")
    out = folder / "out" / name
    with pytest.raises(ReportError) as info:
        report.run_notebook(nb, out, {"x": 2}, **kwargs)
    return info.value, out


@pytest.fixture(scope="module")
def failures(tmp_path_factory):
    """One notebook whose kernel dies and one whose cell outlasts a 2 s timeout."""
    folder = tmp_path_factory.mktemp("failing")
    return {"dead": _run_failing(folder, "dead", "import os; os._exit(1)"),
            "slow": _run_failing(folder, "slow", "import time; time.sleep(60)", timeout=2),
            "root": folder / "out"}


def _failed_notebook(out: Path) -> nbformat.NotebookNode:
    assert not (out / "report.ipynb").exists()
    assert (out / "report.failed.html").stat().st_size > 0
    return nbformat.read(out / "report.failed.ipynb", as_version=4)


def _error_cell(nb: nbformat.NotebookNode):
    (cell,) = [c for c in nb.cells if any(o.output_type == "error" for o in c.get("outputs", []))]
    return cell


def test_dead_kernel_is_a_report_error_naming_the_cell(failures):
    exc, out = failures["dead"]
    # cells In [1] parameters, [2] injected parameters, [3] print, [4] the one that dies
    assert str(exc) == ("dead.ipynb failed in cell 4 `import os; os._exit(1)`: DeadKernelError: "
                        "the kernel died while running this cell (exit code 1)")
    nb = _failed_notebook(out)
    cell = _error_cell(nb)
    assert cell.source == "import os; os._exit(1)" and cell.execution_count == 4
    assert cell.outputs[-1].ename == "DeadKernelError"
    assert nb.cells[3].outputs[0].text == "before\n"  # the cells before it kept their output
    assert "DeadKernelError" in (out / "report.failed.html").read_text()


def test_cell_timeout_is_a_report_error_naming_the_cell(failures):
    exc, out = failures["slow"]
    assert str(exc) == ("slow.ipynb failed in cell 4 `import time; time.sleep(60)`: "
                        "CellTimeoutError: the cell was still running after the per-cell "
                        "timeout of 2 s")
    cell = _error_cell(_failed_notebook(out))
    # the KeyboardInterrupt of jupyter_client's interrupt at shutdown is not the reported error
    assert [o.ename for o in cell.outputs if o.output_type == "error"] == ["CellTimeoutError"]
    # the kernel's own log (its ZMQ traceback after the timeout) is kept beside, not printed
    assert (out / "report.failed.kernel.log").is_file()


def test_raising_cell_job_reason_and_index_links(failures, tmp_path):
    nb = _nb(tmp_path / "boom.ipynb", 'raise ValueError("boom")')
    out_root = failures["root"]
    job = report.Job("run", "boom", nb, {"x": 2}, (out_root / "boom").resolve())
    res = report.execute_job(job, cell_timeout=30)
    assert res.state == "failed"
    assert res.reason == 'boom.ipynb failed in cell 3 `raise ValueError("boom")`: ValueError: boom'
    assert (job.out_dir / "report.failed.ipynb").is_file()
    results = [res] + [report.JobResult(
        report.Job("run", name, Path(f"{name}.ipynb"), {}, failures[name][1].resolve()),
        "failed", str(failures[name][0])) for name in ("dead", "slow")]
    page = report.write_index(results, out_root).read_text()
    rows = _rows(page)
    # + the kernel's log when the kernel wrote one (a shutdown race under load can log there)
    log = (job.out_dir / "report.failed.kernel.log").is_file()
    assert rows["boom"]["hrefs"] == ["boom/report.failed.html", "boom/report.failed.ipynb"] + (
        ["boom/report.failed.kernel.log"] if log else [])
    assert rows["dead"]["hrefs"][:2] == ["dead/report.failed.html", "dead/report.failed.ipynb"]
    assert "slow/report.failed.kernel.log" in rows["slow"]["hrefs"]
    assert rows["boom"]["cells"][4] == res.reason.replace("`", "")  # the cell as <code>
    assert "<code>raise ValueError(&quot;boom&quot;)</code>" in page
    assert "DeadKernelError: the kernel died" in rows["dead"]["cells"][4]
    assert "CellTimeoutError" in rows["slow"]["cells"][4]


def test_successful_run_is_quiet_and_clears_old_failures(tmp_path, capfd):
    out = tmp_path / "out"
    out.mkdir()
    failed = ["report.failed.ipynb", "report.failed.html", "report.failed.kernel.log"]
    for name in failed:
        (out / name).write_text("stale")
    # as a failed run leaves them: listed as the toolkit's (a file it did not write stays)
    (out / ".dabench-report.json").write_text(json.dumps({"files": failed}))
    (out / "notes.txt").write_text("mine")
    # the kernel's log is where "KeyboardInterrupt caught in kernel" came from: jupyter_client
    # interrupts the kernel before shutting it down, and when the signal lands inside a message
    # handler ipykernel logs it to the stderr it inherited (intermittent; this cell is not)
    nb = _nb(tmp_path / "ok.ipynb", "y = x + 1", "import matplotlib.pyplot as plt\n"
             "plt.plot([1, 2]); plt.show()", "from ipykernel.kernelapp import IPKernelApp\n"
             "IPKernelApp.instance().log.error('KeyboardInterrupt caught in kernel.')")
    capfd.readouterr()
    report.run_notebook(nb, out, {"x": 2})
    text = "".join(capfd.readouterr())
    for noise in ("KeyboardInterrupt", "zmq", "Traceback", "IPKernelApp", "ERROR"):
        assert noise.lower() not in text.lower(), text
    # + the list of what the toolkit wrote there (report._outputs): the stale failures are gone
    assert sorted(p.name for p in out.iterdir()) == [".dabench-report.json", "notes.txt",
                                                     "report.html", "report.ipynb"]


# --- the index page: skipped sections ---------------------------------------------------------

class _Rows(HTMLParser):
    """Per table row: cell texts, link targets, the <summary> text and the <li> texts."""

    def __init__(self):
        super().__init__()
        self.rows, self._stack = [], []

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append({"cells": [], "hrefs": [], "summary": "", "items": []})
        elif self.rows and tag == "td":
            self.rows[-1]["cells"].append("")
        elif self.rows and tag == "a":
            self.rows[-1]["hrefs"].append(dict(attrs)["href"])
        elif self.rows and tag == "li":
            self.rows[-1]["items"].append("")
        self._stack.append(tag)

    def handle_endtag(self, tag):
        while self._stack and self._stack.pop() != tag:
            pass

    def handle_data(self, data):
        if not self.rows or not self.rows[-1]["cells"]:
            return
        row = self.rows[-1]
        row["cells"][-1] += data
        if "summary" in self._stack:
            row["summary"] += data
        if "li" in self._stack:
            row["items"][-1] += data


def _rows(page: str) -> dict[str, dict]:
    parser = _Rows()
    parser.feed(page)
    return {row["cells"][1].split("failed report")[0]: row for row in parser.rows if row["cells"]}


def _job(out: Path, name: str, summary: dict | None) -> report.Job:
    job = report.Job("run", name, Path("run_report.ipynb"), {}, (out / name).resolve())
    job.out_dir.mkdir(parents=True)
    if summary is not None:
        (job.out_dir / "summary.json").write_text(json.dumps(summary))
    return job


def test_index_lists_skipped_sections(tmp_path):
    out = tmp_path / "out"
    skipped = [{"section": "calibration", "title": "Calibration",
                "missing": ["confidence_score"]},
               {"section": SCRIPT, "missing": ["<img src=x onerror=alert(1)>", "tool_calls.csv"]}]
    results = [
        report.JobResult(_job(out, "two", {"n_tasks": 80, "skipped": skipped}), "evaluated"),
        report.JobResult(_job(out, "none", {"n_tasks": 80, "skipped": []}), "evaluated"),
        report.JobResult(_job(out, "absent", {"n_tasks": 80}), "evaluated"),
        report.JobResult(_job(out, "carried", None), "evaluated", summary={
            "n_tasks": 5, "skipped": [{"section": "tool_usage", "missing": ["tool_calls.csv"]}]}),
    ]
    page = report.write_index(results, out).read_text()
    assert SCRIPT not in page and "<img src=x" not in page
    rows = _rows(page)
    assert rows["two"]["summary"] == "evaluated — 2 sections skipped"
    assert rows["two"]["items"] == [
        "Calibration (calibration): needs confidence_score",
        f"{SCRIPT}: needs <img src=x onerror=alert(1)>, tool_calls.csv"]  # text, not markup
    assert rows["carried"]["summary"] == "evaluated — 1 section skipped"
    assert rows["carried"]["items"] == ["tool_usage: needs tool_calls.csv"]
    for name in ("none", "absent"):
        assert rows[name]["cells"][2] == "evaluated" and not rows[name]["items"]
        assert rows[name]["cells"][3] == "80 tasks"
    assert page.count("<details>") == 2
    assert re.search(r'href="two/report\.html"', page)


@pytest.mark.parametrize(("marker", "line"), [("\x1b[0;32m----> 3\x1b[0m x = 1 / 0", "x = 1 / 0"),
                                             ("---> 11 tables.sweep.check_sweep(runs)",
                                              "tables.sweep.check_sweep(runs)")])
def test_the_raising_line_is_found_before_and_after_line_ten(marker, line):
    """IPython's traceback marks the raising line '----> 3' but '---> 11' from line 10 on (the
    arrow shrinks as the number grows); both give the line, never the cell's first line."""
    from types import SimpleNamespace

    from dabench_analysis.report.runner import _raising_line

    exc = SimpleNamespace(traceback=["Traceback ...", f"Cell In[4], line 11\n      9 a = 1\n{marker}\n"])
    assert _raising_line(exc) == line


def test_importing_the_package_does_not_import_nbformat():
    # every report kernel imports the package; nbformat pulls in jsonschema's format checkers
    # (seconds with rfc3987-syntax installed), so it is imported only where a notebook is handled
    code = "import sys, dabench_analysis as da; da.report; print(sorted(m for m in " \
           "('nbformat', 'papermill', 'nbconvert', 'jsonschema') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_two_reports_at_once_each_kernel_in_its_notebook_folder(tmp_path, monkeypatch):
    """--jobs 2 drives two kernels from two threads of one process: each kernel starts in its
    notebook's folder with the inline backend, given to the kernel process alone; the caller's
    working folder and MPLBACKEND stay what they were (papermill's cwd= would change the
    folder of the whole process, under the other thread's feet)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("MPLBACKEND", "Agg")
    folders = [tmp_path / "a", tmp_path / "b"]
    probe = ("import os, time, json; time.sleep(1); "
             "print(json.dumps([os.getcwd(), os.environ.get('MPLBACKEND')]))")
    notebooks = []
    for folder in folders:
        folder.mkdir()
        notebooks.append(_nb(folder / "probe.ipynb", probe))
    before = os.getcwd()
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda nb: report.run_notebook(nb, nb.parent / "out", {"x": 2},
                                                            html_export=False), notebooks))
    assert os.getcwd() == before and os.environ["MPLBACKEND"] == "Agg"
    for folder, path in zip(folders, done, strict=True):
        out = nbformat.read(path, as_version=4).cells[-1].outputs[0]["text"]
        cwd, backend = json.loads(out.strip().splitlines()[-1])
        assert Path(cwd).resolve() == folder.resolve()
        assert backend == "module://matplotlib_inline.backend_inline"


def test_index_keeps_listing_the_reports_an_earlier_batch_wrote_into_the_folder(tmp_path):
    """Two `report` commands into one --out: the second index still links the first report
    (a folder with the toolkit's ledger and a summary.json of a known kind), after this batch's
    rows, without a time; a folder without the ledger (the user's) or of no known kind is not
    listed."""
    from dabench_analysis.report import _outputs as outputs

    out = tmp_path / "out"
    for name, kind in (("old", "run"), ("odd", "bogus")):
        with outputs.stage(out / name) as st:
            (st / "summary.json").write_text(json.dumps({"report": kind, "n_tasks": 7}))
            (st / "report.html").write_text("<p>old</p>")
            outputs.install(st, out / name)
    (out / "mine").mkdir()
    (out / "mine" / "summary.json").write_text(json.dumps({"report": "run", "n_tasks": 3}))
    new = report.JobResult(_job(out, "new", {"report": "run", "n_tasks": 5}), "evaluated",
                           seconds=2.0)
    rows = _rows(report.write_index([new], out).read_text())
    assert list(rows) == ["new", "old"]
    assert rows["old"]["hrefs"] == ["old/report.html"]
    assert rows["old"]["cells"][3] == "7 tasks"
    assert rows["old"]["cells"][4] == "written by an earlier batch into this folder"
    assert rows["old"]["cells"][5].strip() == "" and rows["new"]["cells"][5].strip() == "2.00 s"
    # the same folder in this batch again: listed once, as this batch's
    again = report.JobResult(report.Job("run", "old", Path("run_report.ipynb"), {},
                                        (out / "old").resolve()), "evaluated", seconds=1.0)
    rows = _rows(report.write_index([again], out).read_text())
    assert list(rows) == ["old"] and rows["old"]["cells"][4] == ""
