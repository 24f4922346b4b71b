"""The figure writer's worker process (:mod:`dabench_analysis.report._figure_writer`): its loop,
its warming up while it waits, its end with the kernel's.

The kernel starts it as ``python -c`` and feeds it pickled jobs on its stdin; it answers each on
its stdout, in order.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from pathlib import Path
from typing import BinaryIO

#: The kernel's pid, in the worker's environment.
PARENT_ENV = "DABENCH_FIGURE_WRITER_PARENT"


def _end_with_parent() -> None:
    """On Linux, have the kernel's death kill the worker at once (``PR_SET_PDEATHSIG``), so that
    no figure is written into a report's staging folder after a killed report's runner has
    removed it. Elsewhere the worker ends when its stdin closes, after the figure it is saving.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    parent = int(os.environ.get(PARENT_ENV, "0"))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if parent and os.getppid() != parent:  # the kernel died before the line above
        os._exit(1)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it comes back whole through pickle, else a RuntimeError naming it: an answer
    the kernel cannot unpickle would end its reader."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure to round-trip
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _warm_up() -> None:
    """Save a small figure with text and a legend as PNG and PDF into a temporary folder, the
    way every figure is saved, the first time the worker has no job waiting: its first figure
    otherwise pays matplotlib's first uses (its PNG and PDF backends, the font files, the PDF's
    font subset of :func:`~dabench_analysis.export._figures._save`: ~0.1 s on the sample run)
    after the kernel has handed it over (without it a report took 6.59 s against 6.32 s)."""
    import tempfile

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from dabench_analysis.export._figures import _save

    fig = Figure(figsize=(2, 1.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.set(xlabel="x", ylabel="y", title="t")
    ax.legend()
    with tempfile.TemporaryDirectory(prefix="dabench-warm-") as tmp:
        _save(fig, Path(tmp) / "warm", ("png", "pdf"), 300)


def _idle(jobs: BinaryIO) -> bool:
    """No job is waiting in the worker's input (its pipe is empty and nothing was read ahead:
    the kernel hands over one job at a time and the worker reads it whole)."""
    import select

    try:
        return not select.select([jobs.fileno()], [], [], 0)[0]
    except (OSError, ValueError, AttributeError):  # not a pipe (a test's stream)
        return False


def serve(jobs: BinaryIO | None = None, answers: BinaryIO | None = None) -> None:
    """The worker's loop: read pickled jobs until None or the end of the input, answer each in
    order.

    Each job is a figure's ``(data, stem, formats, dpi, rc)`` for
    :func:`~dabench_analysis.report._figure_writer._save_pickled` or a
    :class:`~dabench_analysis.report._figure_writer._Call`
    (:func:`~dabench_analysis.report._figure_writer._run_job`); each answer is
    ``(True, result)`` or ``(False, exception)``. Anything printed goes to stderr: stdout
    carries the answers only. The worker ignores SIGINT (a kernel's interrupt or shutdown
    reaches its whole process group); the kernel ends it with None, or by closing its input.
    The first time it has no job waiting, it warms up (:func:`_warm_up`).

    Parameters
    ----------
    jobs, answers : binary file, optional
        Where jobs are read and answers written; default the process's stdin and stdout (the
        worker), given in tests.
    """
    from dabench_analysis.report._figure_writer import _run_job

    warm = jobs is not None and answers is not None  # a test's streams: no warming up
    if not warm:
        import signal

        from dabench_analysis.report._kernel import end_without_collecting

        _end_with_parent()
        end_without_collecting()  # its files are closed when written; the kernel waits for it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        jobs = sys.stdin.buffer
    while True:
        if not warm and _idle(jobs):
            with contextlib.suppress(Exception):  # a figure that fails fails again in its job
                _warm_up()
            warm = True
        try:
            job = pickle.load(jobs)
        except EOFError:
            return
        if job is None:
            return
        try:
            answer = (True, _run_job(job))
        except Exception as exc:  # noqa: BLE001 - sent back; the kernel does the job itself
            answer = (False, _portable(exc))
        answers.write(pickle.dumps(answer))
        answers.flush()
