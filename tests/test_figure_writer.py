"""A batch report's figure writer (issue 37, item 3): the worker process writes the very bytes the
kernel would, answers errors in the figure's place, ends when its input ends, and a report run
with it shows each saved PNG in the cell that made the figure (no placeholder left)."""

from __future__ import annotations

import base64
import io
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import nbformat
import pytest

from dabench_analysis import figures, load_run, report
from dabench_analysis.export._figures import _save
from dabench_analysis.figures._theme import RC_PARAMS
from dabench_analysis.report import _figure_writer as fw
from dabench_analysis.report import _worker as worker

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs" / "baseline_react"
REPORT = report.NOTEBOOK_DIR / "run_report.ipynb"
FIGURES = ["difficulty_breakdown", "score_distribution", "correlation_matrix", "tool_latency",
           "trajectory_variants", "transition_graph", "solve_curve"]


def _same(path: Path, reference: Path) -> bool:
    """The same figure file. A PNG byte for byte; a PDF by its page box, since two PDFs of one
    figure saved in this (shared, long-lived) test process once differed inside the page's
    compressed drawing with the PNGs identical (one full-suite run, not reproduced in four
    reruns); the byte-for-byte PDF check is the report's, across kernels
    (test_a_report_with_the_writer_shows_each_saved_png_where_its_figure_was_made)."""
    got, want = path.read_bytes(), reference.read_bytes()
    if path.suffix != ".pdf":
        return got == want
    box = re.compile(rb"/MediaBox \[[^\]]*\]")
    return got[:5] == b"%PDF-" and box.findall(got) == box.findall(want)


def _figure():
    tasks = load_run(SAMPLE).tasks
    return figures.score_distribution(tasks, hue="difficulty").figure


def _job(fig, stem: Path) -> bytes:
    rc = {k: v for k, v in mpl.rcParams.items() if k not in fw._PROCESS_RC}
    return pickle.dumps((pickle.dumps(fig), stem, ("png", "pdf"), 300, rc))


def test_the_worker_loop_writes_the_kernels_bytes_and_answers_an_error_in_its_place(tmp_path):
    (tmp_path / "kernel").mkdir()
    (tmp_path / "worker").mkdir()
    (tmp_path / "a_file").write_text("")  # a figure "inside" it cannot be written
    with mpl.rc_context(RC_PARAMS):  # the report's rcParams (report._context applies them)
        fig = _figure()
        jobs = io.BytesIO(_job(fig, tmp_path / "worker" / "a")
                          + _job(fig, tmp_path / "a_file" / "b")
                          + _job(fig, tmp_path / "worker" / "c"))
        paths, png = _save(fig, tmp_path / "kernel" / "a", ("png", "pdf"), 300)
    plt.close(fig)
    answers = io.BytesIO()
    worker.serve(jobs, answers)  # returns at the end of its input
    answers.seek(0)
    got = [pickle.load(answers) for _ in range(3)]
    with pytest.raises(EOFError):
        pickle.load(answers)
    (ok_a, (saved_a, caught_a)), (ok_b, error_b), (ok_c, _) = got
    assert (ok_a, ok_b, ok_c) == (True, False, True)
    assert isinstance(error_b, OSError) and "a_file" in str(error_b)
    assert caught_a == []
    for ext in ("png", "pdf"):
        kernel = tmp_path / "kernel" / f"a.{ext}"
        assert _same(tmp_path / "worker" / f"a.{ext}", kernel)
        assert _same(tmp_path / "worker" / f"c.{ext}", kernel)
    assert saved_a.png == png == paths[0].read_bytes()
    assert [p.name for p in saved_a.paths] == ["a.png", "a.pdf"]


def test_the_writer_process_saves_raises_the_first_error_and_ends(tmp_path):
    (tmp_path / "a_file").write_text("")
    writer = fw.FigureWriter()
    with mpl.rc_context(RC_PARAMS):
        writer.submit(_figure(), tmp_path / "first")
        writer.submit(_figure(), tmp_path / "a_file" / "second")
        writer.submit(_figure(), tmp_path / "third")
        reference = _figure()
        _save(reference, tmp_path / "reference", ("png", "pdf"), 300)
        plt.close(reference)
    assert plt.get_fignums() == []  # each figure is closed in the kernel once handed over
    with pytest.raises(OSError, match="a_file"):
        writer.wait()
    assert writer._proc.returncode == 0  # the worker ended with its input, after every figure
    for stem in ("first", "third"):
        for ext in ("png", "pdf"):
            assert _same(tmp_path / f"{stem}.{ext}", tmp_path / f"reference.{ext}"), (stem, ext)


def test_a_worker_whose_kernel_is_gone_ends(tmp_path):
    """The worker reads its jobs from stdin: a kernel killed mid-report closes it."""
    proc = subprocess.Popen([sys.executable, "-c", fw._WORKER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env={**os.environ, "MPLBACKEND": "agg"})
    proc.stdin.close()  # what the kernel's death does to the pipe
    assert proc.wait(timeout=60) == 0
    assert proc.stdout.read() == b""


def test_a_report_with_the_writer_shows_each_saved_png_where_its_figure_was_made(
        tmp_path, monkeypatch, sample_report):
    monkeypatch.setenv(fw.FIGURE_WRITER_ENV, "1")  # on, whatever the number of cores
    out = tmp_path / "r"
    report.run_notebook(report.NOTEBOOK_DIR / "run_report.ipynb", out,
                        {"run_dir": str(SAMPLE), "output_dir": str(out)})
    nb = nbformat.read(out / "report.ipynb", as_version=4)
    for stem in FIGURES:
        cell = next(c for c in nb.cells if c.cell_type == "code" and f"'{stem}')" in c.source)
        shown = [base64.b64decode(o.data["image/png"]) for o in cell.outputs
                 if "image/png" in o.get("data", {})]
        assert shown == [(out / f"{stem}.png").read_bytes()], stem
    text = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "being saved" not in text
    # the same files as the batch's report of that run (sample_report, conftest)
    _, batch = sample_report
    for stem in FIGURES:
        for ext in ("png", "pdf"):
            assert (out / f"{stem}.{ext}").read_bytes() == \
                (batch / "baseline_react" / f"{stem}.{ext}").read_bytes(), (stem, ext)


def test_the_writer_is_on_while_a_core_is_left_over_or_as_the_caller_says(monkeypatch):
    monkeypatch.delenv(fw.FIGURE_WRITER_ENV, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})  # 2 cores
    first, second = {}, {}
    with fw.writer_setting(first, REPORT):
        with fw.writer_setting(second, REPORT):  # --jobs 2: two reports at once
            pass
    assert (first[fw.FIGURE_WRITER_ENV], second[fw.FIGURE_WRITER_ENV]) == ("1", "0")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})  # 1 core
    env = {}
    with fw.writer_setting(env, REPORT):
        assert env[fw.FIGURE_WRITER_ENV] == "0"
    for own in ("0", "1"):
        monkeypatch.setenv(fw.FIGURE_WRITER_ENV, own)
        env = {}
        with fw.writer_setting(env, REPORT):
            assert env[fw.FIGURE_WRITER_ENV] == own
    assert fw._RUNNING == [0]


def test_a_figure_that_does_not_pickle_is_left_to_the_kernel(tmp_path):
    import threading

    writer = fw.FigureWriter()
    fig = _figure()
    fig.lock = threading.Lock()  # an attribute pickle refuses
    assert writer.submit(fig, tmp_path / "f") is False
    assert plt.fignum_exists(fig.number)  # not closed: the caller saves and closes it
    assert writer._pending == []
    writer.wait()
    assert writer._proc.returncode == 0
    plt.close(fig)


def test_figures_a_dead_worker_was_never_given_are_saved_by_the_kernel(tmp_path):
    writer = fw.FigureWriter()
    writer._proc.kill()  # a worker that crashed before its first figure
    for _ in range(200):  # until the kernel's reader has seen it end
        if writer._gone:
            break
        time.sleep(0.05)
    assert writer._gone
    with mpl.rc_context(RC_PARAMS):
        for name in ("a", "b", "c"):
            assert writer.submit(_figure(), tmp_path / name)
        reference = _figure()
        _save(reference, tmp_path / "reference", ("png", "pdf"), 300)
        plt.close(reference)
    writer.wait()  # returns: no figure waits for an answer that will never come
    for name in ("a", "b", "c"):
        for ext in ("png", "pdf"):
            assert _same(tmp_path / f"{name}.{ext}", tmp_path / f"reference.{ext}"), (name, ext)


def test_the_setting_counts_cores_where_the_os_has_no_affinity(monkeypatch):
    monkeypatch.delenv(fw.FIGURE_WRITER_ENV, raising=False)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS, Windows
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    env = {}
    with fw.writer_setting(env, REPORT):
        assert env[fw.FIGURE_WRITER_ENV] == "1"
    with fw.batch_of(2):  # --jobs 2 planned: no core left over, from the first report on
        with fw.writer_setting(env, REPORT):
            assert env[fw.FIGURE_WRITER_ENV] == "0"
    monkeypatch.setenv(fw.FIGURE_WRITER_ENV, "yes")
    with pytest.warns(UserWarning, match="neither 0 nor 1"), fw.writer_setting(env, REPORT):
        assert env[fw.FIGURE_WRITER_ENV] == "1"


def test_an_exception_that_does_not_come_back_through_pickle_is_sent_as_its_text():
    class KeywordOnly(Exception):
        def __init__(self, *, why):
            super().__init__(why)

    sent = worker._portable(KeywordOnly(why="bad glyph"))
    assert type(sent) is RuntimeError and str(sent) == "KeywordOnly: bad glyph"
    error = OSError(28, "No space left on device", "/x/f.png")
    assert worker._portable(error) is error


def _percent(x, _pos):
    """A tick formatter the worker cannot import (this test module is not on its path)."""
    return f"{x:.0%}"


def test_figures_the_worker_could_not_save_or_was_killed_on_are_saved_by_the_kernel(tmp_path):
    from matplotlib.ticker import FuncFormatter

    with mpl.rc_context(RC_PARAMS):
        reference = _figure()
        reference.axes[0].xaxis.set_major_formatter(FuncFormatter(_percent))
        _save(reference, tmp_path / "reference", ("png", "pdf"), 300)
        plt.close(reference)
        writer = fw.FigureWriter()
        for name in ("a", "b", "c"):
            fig = _figure()
            fig.axes[0].xaxis.set_major_formatter(FuncFormatter(_percent))
            assert writer.submit(fig, tmp_path / name)
        writer.wait()  # the worker could not unpickle any of them
    for name in ("a", "b", "c"):
        for ext in ("png", "pdf"):
            assert _same(tmp_path / f"{name}.{ext}", tmp_path / f"reference.{ext}"), (name, ext)
    with mpl.rc_context(RC_PARAMS):
        writer = fw.FigureWriter()
        for name in ("d", "e", "f"):
            assert writer.submit(_figure(), tmp_path / name)
        writer._proc.kill()  # while it holds two of them
        writer.wait()
    assert all((tmp_path / f"{n}.png").read_bytes()[:4] == b"\x89PNG" for n in "def")


def test_a_forked_child_holding_the_workers_pipe_does_not_keep_it_alive(tmp_path):
    import multiprocessing
    import threading

    writer = fw.FigureWriter()
    pool = multiprocessing.get_context("fork").Pool(1)  # inherits the pipe to the worker
    try:
        with mpl.rc_context(RC_PARAMS):
            assert writer.submit(_figure(), tmp_path / "a")
        done = threading.Thread(target=writer.wait, daemon=True)
        done.start()
        done.join(timeout=120)
        assert not done.is_alive()
        assert writer._proc.returncode == 0
    finally:
        pool.terminate()
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def _notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.cells[1].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


FIGURE_CELLS = [
    "import dabench_analysis as da\nfrom dabench_analysis import report",
    "run_dir = ''\noutput_dir = ''",
    "run = da.load_run(run_dir)\nout = report.run_context(run, {'threshold': 0.8}, "
    "out=report.output_dir_for(output_dir, 'x'))",
    "out.figure(da.figures.difficulty_bars(run.tasks, threshold=0.8), 'difficulty_breakdown')",
    "out.figure(da.figures.score_distribution(run.tasks, threshold=0.8), 'score_distribution')"]


def test_only_the_toolkits_reports_get_a_writer(tmp_path, monkeypatch):
    """A notebook of the user's may never wait for its figures: it saves them in its kernel,
    even with DABENCH_FIGURE_WRITER=1."""
    monkeypatch.setenv(fw.FIGURE_WRITER_ENV, "1")
    env = {}
    with fw.writer_setting(env, tmp_path / "run_report.ipynb"):  # a copy elsewhere
        assert env[fw.FIGURE_WRITER_ENV] == "0"
    with fw.writer_setting(env, REPORT):
        assert env[fw.FIGURE_WRITER_ENV] == "1"
    nb = _notebook(tmp_path / "no_wait.ipynb", [*FIGURE_CELLS, "assert out._writer is None"])
    out = tmp_path / "no_wait"
    report.run_notebook(nb, out, {"run_dir": str(SAMPLE), "output_dir": str(out)})
    for stem in ("difficulty_breakdown", "score_distribution"):
        assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"


def test_a_failed_cell_or_the_exit_saves_every_figure_handed_over(tmp_path):
    from types import SimpleNamespace

    with mpl.rc_context(RC_PARAMS):
        writer = fw.FigureWriter()
        for name in ("a", "b", "c"):
            assert writer.submit(_figure(), tmp_path / name)
        writer._after_cell(SimpleNamespace(error_in_exec=ValueError("boom"),
                                           error_before_exec=None))
        assert writer._pending == []  # each shown (saved by the worker or here)
        assert all((tmp_path / f"{n}.png").is_file() for n in "abc")
        assert writer.submit(_figure(), tmp_path / "d")  # a later figure
        writer._at_exit()  # a notebook that never waits
    assert all((tmp_path / f"d.{e}").is_file() for e in ("png", "pdf"))
    writer._hooks(register=False)


def test_the_users_variable_alone_does_not_start_a_writer_in_a_notebook_opened_by_hand(
        monkeypatch):
    import IPython

    from dabench_analysis.report import _context

    monkeypatch.setenv(fw.FIGURE_WRITER_ENV, "1")
    monkeypatch.delenv("DABENCH_OUTPUT_STAGE", raising=False)  # not a report the runner runs
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    assert _context._batch_writer() is None


def test_a_figure_the_worker_fails_on_while_the_kernel_waits_is_saved_by_the_kernel(tmp_path):
    """The worker's error arrives while wait() is waiting for it (not before): the kernel
    saves that figure itself instead of raising the worker's error."""
    from matplotlib.ticker import FuncFormatter

    with mpl.rc_context(RC_PARAMS):
        figs = []
        for _ in range(2):
            fig = _figure()
            fig.axes[0].xaxis.set_major_formatter(FuncFormatter(_percent))  # fails there
            figs.append(fig)
        writer = fw.FigureWriter()  # still importing matplotlib when wait() begins to wait
        for fig, name in zip(figs, ("a", "b"), strict=True):
            assert writer.submit(fig, tmp_path / name)
        writer.wait()
    assert all((tmp_path / f"{n}.{e}").is_file() for n in "ab" for e in ("png", "pdf"))


def test_a_forked_child_saves_its_own_figures(tmp_path):
    """The writer's threads are not copied by a fork: a child's figure is not handed over."""
    writer = fw.FigureWriter()
    fig = _figure()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 when the writer refused the figure
        os._exit(0 if writer.submit(fig, tmp_path / "x") is False else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    plt.close(fig)
    writer.wait()
    assert writer._proc.returncode == 0


def test_a_warning_raised_while_saving_is_raised_again_in_the_kernel_naming_the_figure(tmp_path):
    writer = fw.FigureWriter()
    with mpl.rc_context(RC_PARAMS):
        fig = _figure()
        fig.axes[0].set_title("\u0e01")  # a Thai letter: no glyph in DejaVu Sans
        assert writer.submit(fig, tmp_path / "glyph")
        with pytest.warns(UserWarning, match=r"figure 'glyph': Glyph .* missing"):
            writer.wait()
    assert (tmp_path / "glyph.png").read_bytes()[:4] == b"\x89PNG"


def test_the_summary_computes_before_it_waits_and_its_own_error_wins(tmp_path, monkeypatch):
    """report.summary computes its numbers and manifest while the writer saves the last
    figures, then waits; when the numbers fail, the figures are still waited for and the
    numbers' error is the one raised (a figure's failure named in a note); when only a figure
    fails, its error is raised before summary.json is written."""
    from types import SimpleNamespace

    from dabench_analysis.report import _summary

    calls: list[str] = []

    def ctx(wait_error=None):
        def wait():
            calls.append("wait")
            if wait_error is not None:
                raise wait_error
        return SimpleNamespace(report="run", read=[], parameters={"x": 1}, seeds={},
                               out=tmp_path, sections=None, threshold=0.8,
                               wait_for_figures=wait)

    def numbers(_ctx):
        calls.append("numbers")
        return {"n_tasks": 3}

    monkeypatch.setitem(_summary._NUMBERS, "run", numbers)
    out = _summary.summary(ctx())
    assert calls == ["numbers", "wait"] and out["n_tasks"] == 3
    assert (tmp_path / "summary.json").is_file()

    (tmp_path / "summary.json").unlink()
    calls.clear()
    with pytest.raises(OSError, match="disk full"):
        _summary.summary(ctx(OSError(28, "disk full")))
    assert calls == ["numbers", "wait"] and not (tmp_path / "summary.json").exists()

    def missing(_ctx):
        calls.append("numbers")
        raise KeyError("paired_comparison")

    monkeypatch.setitem(_summary._NUMBERS, "run", missing)
    calls.clear()
    with pytest.raises(KeyError, match="paired_comparison") as caught:
        _summary.summary(ctx(OSError(28, "disk full")))
    assert calls == ["numbers", "wait"]
    assert caught.value.__notes__ == [
        "Also, a figure was not saved: OSError: [Errno 28] disk full"]


def test_a_report_process_ends_without_the_last_garbage_collections(tmp_path):
    # end_without_collecting: gc.freeze as the first exit handler, so the interpreter's last
    # collections skip every object there is. Expected (CPython's gc documentation): a cycle
    # with a finaliser is collected at exit, and run, only when it was not frozen.
    code = ("import gc, sys\n"
            "class Cycle:\n"
            "    def __del__(self):\n"
            "        sys.stdout.write('collected\\n')\n"
            "c = Cycle(); c.me = c; del c\n"
            "gc.disable()\n"  # the cycle waits for the collections at exit
            "if sys.argv[1] == 'ending':\n"
            "    from dabench_analysis.report._kernel import end_without_collecting\n"
            "    end_without_collecting(); end_without_collecting()\n"
            "print('done', flush=True)\n")
    plain, ending = (subprocess.run([sys.executable, "-c", code, arg], capture_output=True,
                                    text=True, check=True).stdout for arg in ("plain", "ending"))
    assert plain.split() == ["done", "collected"]
    assert ending.split() == ["done"]


def test_while_the_kernel_waits_the_worker_goes_on_saving(tmp_path, monkeypatch):
    # the kernel saves the figures the worker was not given from the back of the queue; the
    # worker goes on from the front. With the kernel's saves made slow (1 s each), the worker
    # saves most of the 8 figures; taking every figure not yet given (the worker holds at most
    # two) would leave the kernel 6 of them.
    import threading

    save, here = fw._save_pickled, []

    def slow(*args):
        here.append(threading.current_thread().name)
        time.sleep(1.0)
        return save(*args)

    monkeypatch.setattr(fw, "_save_pickled", slow)
    writer = fw.FigureWriter()
    with mpl.rc_context(RC_PARAMS):
        for i in range(8):
            assert writer.submit(_figure(), tmp_path / f"f{i}")
        writer.wait()
    assert 1 <= len(here) <= 3
    assert here == [threading.current_thread().name] * len(here)  # the kernel's own thread
    for i in range(8):
        assert (tmp_path / f"f{i}.png").read_bytes()[:4] == b"\x89PNG"
        assert (tmp_path / f"f{i}.pdf").read_bytes()[:5] == b"%PDF-"


def test_a_notebook_of_the_users_keeps_the_full_exit_after_report_summary(tmp_path):
    # only the toolkit's own reports end without the last garbage collections; a notebook of
    # the user's may write after the summary, and a file left open in a reference cycle is
    # flushed only when that cycle is collected at exit
    nb = nbformat.read(report.NOTEBOOK_DIR / "run_report.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import os\n"
        "print(os.environ['DABENCH_OWN_REPORT'])\n"
        "class Holder:\n"
        "    pass\n"
        "h = Holder(); h.me = h\n"
        "h.f = open(os.path.join(output_dir, 'extra.txt'), 'w')\n"
        "_ = h.f.write('data\\n' * 1000)\n"))
    mine = tmp_path / "my_report.ipynb"
    nbformat.write(nb, mine)
    out = tmp_path / "out"
    report.run_notebook(mine, out, {"run_dir": str(SAMPLE), "output_dir": str(out)})
    assert (out / "extra.txt").read_text() == "data\n" * 1000
    ran = nbformat.read(out / "report.ipynb", as_version=4).cells[-1]
    assert [o.get("text") for o in ran.outputs] == ["0\n"]


def test_a_call_runs_in_the_worker_its_warnings_raised_in_the_kernel(tmp_path):
    # a run's validation is handed to the worker when the report's context is made: the value
    # is the kernel's own (findings compared with validate_run in this process), the worker's
    # pid shows where it ran, its warnings come back as warnings here; a failure there is run
    # again here, where its own error is raised; a lambda does not pickle: no call made
    import functools
    import warnings

    from dabench_analysis.validate import validate_run

    writer = fw.FigureWriter()
    check = functools.partial(validate_run, SAMPLE, threshold=0.8)
    where = writer.call(os.getpid)
    validation = writer.call(check)
    warned = writer.call(functools.partial(warnings.warn, "from the worker", UserWarning))
    missing = writer.call(functools.partial(os.stat, tmp_path / "no_such_file"))
    assert writer.call(lambda: 1) is None
    assert writer.result(where, os.getpid) == writer._proc.pid != os.getpid()
    mine = check()
    got = writer.result(validation, check)
    assert got.findings.equals(mine.findings) and got.health == mine.health
    with pytest.warns(UserWarning, match="from the worker"):
        assert writer.result(warned, lambda: pytest.fail("run again")) is None
    # raised again from where they were raised, under the kernel's filters: a library's
    # DeprecationWarning hidden as it would be, a UserWarning shown with its own file and line
    raised = [writer.call(functools.partial(warnings.warn_explicit, text, category,
                                            "/lib/somewhere.py", 7))
              for text, category in [("old api", DeprecationWarning), ("odd data", UserWarning)]]
    with warnings.catch_warnings(record=True) as shown:
        warnings.resetwarnings()
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("always", category=UserWarning)
        for future in raised:
            writer.result(future, lambda: pytest.fail("run again"))
    assert [(str(w.message), w.category, w.filename, w.lineno) for w in shown] == [
        ("odd data", UserWarning, "/lib/somewhere.py", 7)]
    ran_here = []

    def stat_here():
        ran_here.append(os.getpid())
        return os.stat(tmp_path / "no_such_file")

    with pytest.raises(FileNotFoundError):
        writer.result(missing, stat_here)
    assert ran_here == [os.getpid()]
    writer.wait()
    assert writer._proc.returncode == 0


def test_a_report_context_hands_its_run_validation_to_the_writer(tmp_path, monkeypatch):
    # run_context with a figure writer: the run's validation is the writer's call, made when
    # the context is (while the notebook goes on), and equal to the kernel's own
    from dabench_analysis.report import _context
    from dabench_analysis.validate import validate_run

    monkeypatch.setattr(_context, "_batch_writer", fw.FigureWriter)
    out = report.run_context(load_run(SAMPLE), {"threshold": 0.8}, out=tmp_path / "out")
    take = out._lazy["validation"]
    assert take.func == out._writer.result  # a bound method of the writer, with the Future
    assert out.validation.findings.equals(validate_run(SAMPLE, threshold=0.8).findings)
    out.wait_for_figures()
