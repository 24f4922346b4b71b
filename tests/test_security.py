"""Hostile names and text: no code injection into the papermill parameters, no writes outside
--out, text from the data escaped in HTML and Markdown, replays parsed as JSON only.

The real CLI run on a hostile run folder is shared with ``test_readonly.py``
(:func:`test_readonly.report_twice`), which runs the slow report CLI once per session.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook
from test_readonly import HOSTILE_NAME, SCRIPT, report_twice

from dabench_analysis import export
from dabench_analysis import report as rep
from dabench_analysis.load import RunLoadError, load_run, read_replay
from dabench_analysis.report import runner
from dabench_analysis.synthetic import generate_run
from dabench_analysis.validate import validate_run

HOSTILE = [
    HOSTILE_NAME, "../etc/passwd", "..", ".", "...", "a/../../b", "run'; import os #",
    "{run_id}", "$(touch PWNED)", "`id`", "run\nimport os", "run\x00x", "<script>x</script>",
    " ", "", "-rf", ".hidden", "ü" * 200,
]


# --- folder names -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", HOSTILE)
def test_safe_name_stays_a_plain_folder_name(name, tmp_path):
    safe = rep.safe_name(name)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", safe) and not safe.startswith(".")
    assert ".." not in safe and len(safe) <= 120
    assert (tmp_path / safe).resolve().parent == tmp_path.resolve()


def test_plan_jobs_never_points_outside_out(tmp_path):
    runs = []
    for name in ("ok", "...", "$(touch PWNED)", "run'; import os #"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        runs.append(tmp_path / "runs" / name)
    runs.append(tmp_path / "runs" / "ok" / ".." / ".." / "runs")  # resolves to runs/
    out = tmp_path / "out"
    jobs = rep.plan_jobs(runs, out, baseline=runs[0])
    assert jobs
    for job in jobs:
        assert job.out_dir.parent == out.resolve()
        assert job.parameters["output_dir"] == str(job.out_dir)


# --- the parameters cell ----------------------------------------------------------------------

def _notebook(params_src: str | None) -> nbformat.NotebookNode:
    """A two-cell notebook, loaded the way report.run_notebook loads one."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params_src or "run_dir = 'x'")
    cell.metadata["tags"] = ["parameters"] if params_src is not None else []
    show = nbformat.v4.new_code_cell("print(run_dir)")
    show.metadata["tags"] = []
    nb.cells = [cell, show]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    with tempfile.TemporaryDirectory() as tmp:
        nbformat.write(nb, Path(tmp) / "nb.ipynb")
        return load_notebook_node(str(Path(tmp) / "nb.ipynb"))


def test_check_notebook_refuses_untagged_and_unknown_parameters():
    with pytest.raises(rep.ReportError, match="no cell tagged 'parameters'"):
        rep.check_notebook(_notebook(None), {"run_dir": "x"}, name="nb")
    with pytest.raises(rep.ReportError, match="not assigned"):
        rep.check_notebook(_notebook("run_dir = 'x'"), {"output_dir": "y"}, name="nb")
    rep.check_notebook(_notebook("run_dir: str = 'x'"), {"run_dir": "y"}, name="nb")


@pytest.mark.parametrize("value", HOSTILE + ['"""', "\\", "x\\'; import os; '", "\r\n"])
def test_papermill_injects_hostile_strings_as_literals(value):
    params = {"run_dir": value, "output_dir": "/tmp/" + value}
    nb = parameterize_notebook(_notebook("run_dir = 'x'\noutput_dir = 'y'"), params,
                               kernel_name="python3")
    runner._check_injected(nb, params, "nb")  # plain assignments of exactly these literals
    cell = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    tree = ast.parse(cell.source)
    assert all(isinstance(s, ast.Assign) for s in tree.body)
    assert {s.targets[0].id: ast.literal_eval(s.value) for s in tree.body} == params


@pytest.mark.parametrize("source", [
    'run_dir = "x"\nimport os\n',
    'run_dir = "x"; __import__("os").system("touch PWNED")\n',
    'run_dir = __import__("os").getcwd()\n',
    'run_dir = "y"\n',
])
def test_check_injected_refuses_code_and_changed_values(source):
    nb = _notebook("run_dir = 'x'")
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(1, cell)
    with pytest.raises((rep.ReportError, ValueError)):
        runner._check_injected(nb, {"run_dir": "x"}, "nb")


# --- the real CLI run on a hostile folder -------------------------------------------------------

@pytest.fixture(scope="module")
def hostile(built_once):
    return report_twice(built_once)


def test_cli_on_hostile_folder_runs_without_injection(hostile):
    assert hostile["first"].returncode == 0, hostile["first"].stderr
    for root in (hostile["work"], hostile["root"]):
        assert not list(root.rglob("PWNED*")), root
    for folder in (Path.cwd(), Path.cwd() / "notebooks", Path.home(), Path("/tmp")):
        assert not list(folder.glob("PWNED*")), folder  # the kernel's and the CLI's cwd
    folder = hostile["out"] / rep.safe_name(HOSTILE_NAME)
    # the index, the list saying the toolkit wrote it (.dabench-index.json) and the report
    assert sorted(p.name for p in hostile["out"].iterdir()) == [".dabench-index.json",
                                                                "index.html", folder.name]
    nb = nbformat.read(folder / "report.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    values = {s.targets[0].id: ast.literal_eval(s.value) for s in ast.parse(cell.source).body}
    assert values["run_dir"] == str(hostile["run"])  # the exact name, as a string literal


def test_cli_escapes_data_in_html(hostile):
    index = (hostile["out"] / "index.html").read_text()
    page = (hostile["out"] / rep.safe_name(HOSTILE_NAME) / "report.html").read_text()
    for html in (index, page):
        assert SCRIPT not in html
        assert "<img src=x onerror" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in index
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the run id, shown as text


# --- escaping in output files -------------------------------------------------------------------

def _gfm_delimiters(line: str) -> int:
    """Cell delimiters of a GFM table row: a backslash escapes the next character."""
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == "|"
        i += 1
    return n


def test_markdown_tables_escape_html_pipes_and_newlines():
    df = pd.DataFrame({"root_cause": [SCRIPT, "a|b", "line1\nline2", "<img src=x onerror=1>"],
                       "n": [1, 2, 3, 4]})
    md = export.to_markdown(df)
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", md)  # a tag's "<" is escaped: no renderer reads HTML
    assert "\\<script>alert(1)\\</script>" in md and "a\\|b" in md and "&lt;" not in md
    lines = md.splitlines()
    assert len(lines) == 2 + len(df)
    assert all(_gfm_delimiters(line) == 3 for line in lines)


def test_markdown_tables_keep_backslash_pipe_text_in_one_cell():
    md = export.to_markdown(pd.DataFrame({"error_message": ["C:\\tmp\\|x", "ok"], "n": [1, 2]}))
    assert all(_gfm_delimiters(line) == 3 for line in md.splitlines())


def test_latex_tables_escape_commands():
    tex = export.to_latex(pd.DataFrame({"x": ["\\input{/etc/passwd}", "50% & $x$ #1 _a_ ~^"]}))
    assert "\\input{" not in tex
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in tex
    assert "50\\% \\& \\$x\\$ \\#1 \\_a\\_" in tex


def test_index_page_escapes_names_and_reasons(tmp_path):
    out = tmp_path / "out"
    job = rep.Job("run", SCRIPT, Path("nb.ipynb"), {}, (out / "x").resolve())
    results = [rep.JobResult(job, "evaluated"),
               rep.JobResult(job, "failed", reason="<img src=x onerror=alert(1)>")]
    html = rep.write_index(results, out).read_text()
    assert SCRIPT not in html and "<img src=x" not in html
    assert 'href="x/report.html"' in html


# --- replays: JSON only, inside the run -----------------------------------------------------------

@pytest.fixture
def run6(tmp_path):
    return generate_run(tmp_path, run_id="r6", n_tasks=6, seed=9)


def test_replay_code_is_data_never_executed(run6, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = run6 / "task_2" / "task_replay.json"
    data = json.loads(p.read_text())
    code = "__import__('os').system('touch PWNED')"
    data["execution_attempts"][0]["code_executed"] = code
    data["final_answer_csv"] = code
    p.write_text(json.dumps(data))
    got = load_run(run6).replay("task_2")
    assert got["execution_attempts"][0]["code_executed"] == code
    assert validate_run(run6).ok
    assert not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize("payload", [
    b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94.",  # a pickle
    b"!!python/object/apply:os.system ['touch PWNED']",  # YAML
    b"__import__('os').system('touch PWNED')",  # Python
    b"{'task_id': 'task_2'}",  # a Python dict literal is not JSON either
])
def test_non_json_replays_are_refused(payload, run6, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = run6 / "task_2" / "task_replay.json"
    p.write_bytes(payload)
    with pytest.raises(RunLoadError, match="task_2/task_replay.json"):
        read_replay(p)
    assert "replay_unreadable" in set(validate_run(run6).findings["check"])
    assert not list(tmp_path.rglob("PWNED"))


def test_task_id_cannot_reach_a_replay_outside_the_run(run6, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(run6 / "task_1" / "task_replay.json", outside / "task_replay.json")
    tm = pd.read_csv(run6 / "task_metrics.csv", dtype=str, keep_default_na=False)
    tm.loc[0, "task_id"] = "../outside"
    tm.to_csv(run6 / "task_metrics.csv", index=False)
    run = load_run(run6)
    assert pd.isna(run.tasks.loc[0, "replay_path"])
    assert "../outside" not in run.replays
    assert any(f.check == "task_id_path" for f in run.findings)
    assert all(Path(p).resolve().is_relative_to(run6.resolve())
               for p in run.tasks["replay_path"].dropna())
