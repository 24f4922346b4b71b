# Over 400 lines (<= 500): the writer, its jobs and the runner's setting are one mechanism.
"""A batch report's figures saved in a second process while the kernel computes the next sections.

Saving is much of a report's time: each figure is laid out, measured, drawn into a 300-dpi PNG
and into a PDF with embedded font subsets (:func:`dabench_analysis.export._figures._save`,
about 0.3 s a figure, 14 figures in a run report). When the runner executes one of the
toolkit's reports (:data:`WAITING_NOTEBOOKS`: run, comparison, sweep) with a core left over
(it then sets :data:`FIGURE_WRITER_ENV` in the kernel's environment: one report at a time on 2
cores, not ``--jobs 2``), :class:`FigureWriter` pickles each finished figure (a few
milliseconds) and hands it to one worker process, which saves it with that same function and
the kernel's rcParams, so the files are byte for byte those the kernel would have written. The
notebook shows a placeholder where the figure goes; :meth:`FigureWriter.wait` (called by
``report.summary`` before ``summary.json`` is written) waits for every figure and replaces each
placeholder with the saved PNG through IPython's display update, which the notebook runner
applies to the cell that showed the placeholder. A figure the worker could not save is saved
again by the kernel, whose error, if any, is raised there. The writer also takes calls
(:meth:`FigureWriter.call`): a run report's validation is computed by the worker while the
kernel imports and shows the run, before the first figure reaches it.

The worker (:mod:`dabench_analysis.report._worker`) is a plain child process (``python -c``),
fed pickles on its stdin and answering on its stdout: it ends on an end message or when its
stdin closes (the kernel is gone), and it leaves no helper process behind (multiprocessing's
would: its resource tracker ignores the SIGTERM with which a kernel ends its children, so the
kernel's shutdown waited 2.5 s for the client to kill it). Interactive notebooks, the user's
own notebooks and reports with no core left over save figures in the kernel.
"""

from __future__ import annotations

import collections
import contextlib
import os
import pickle
import queue
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, MutableMapping
from concurrent import futures
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dabench_analysis._caller import outside_level
from dabench_analysis.report._worker import PARENT_ENV

#: Set to "1" in a report kernel's environment by the runner when a core is left over for a
#: figure writer, else "0". In the caller's environment, ``DABENCH_FIGURE_WRITER=0`` turns the
#: writer off (figures are then saved in the kernel, as in interactive use) and ``=1`` on.
FIGURE_WRITER_ENV = "DABENCH_FIGURE_WRITER"

#: rcParams not sent to the worker: the backend and interactive mode are the process's own.
_PROCESS_RC = ("backend", "backend_fallback", "interactive")

_WORKER = "from dabench_analysis.report._worker import serve; serve()"

#: The toolkit's report notebooks: each waits for its figures (``report.summary``), draws none
#: in another process, and is the only kind given a figure writer.
WAITING_NOTEBOOKS = ("run_report.ipynb", "compare_runs.ipynb", "sweep.ipynb")

_RUNNING = [0]  # reports the runner is executing in this process now
_PLANNED = [0]  # reports a batch (report.run_jobs) runs at once
_RUNNING_LOCK = threading.Lock()


def _cores() -> int:
    """The cores this process may use (its CPU affinity where the OS has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def _waits(notebook: Path | None) -> bool:
    """Whether ``notebook`` is one of the toolkit's reports that wait for their figures."""
    from dabench_analysis.report.runner import NOTEBOOK_DIR

    return notebook is not None and Path(notebook).name in WAITING_NOTEBOOKS \
        and Path(notebook).resolve().parent == NOTEBOOK_DIR.resolve()


@contextlib.contextmanager
def batch_of(n_jobs: int) -> Iterator[None]:
    """While a batch runs ``n_jobs`` reports at once in this process, count them all as running
    from the start, so that the batch's first report does not take a figure writer the next
    ones will want the core of.

    Parameters
    ----------
    n_jobs : int
        Reports the batch runs at once (``report.run_jobs``: ``min(n_jobs, len(jobs))``).
    """
    with _RUNNING_LOCK:
        _PLANNED[0] += n_jobs
    try:
        yield
    finally:
        with _RUNNING_LOCK:
            _PLANNED[0] -= n_jobs


@contextlib.contextmanager
def writer_setting(env: MutableMapping[str, str], notebook: Path | None = None) -> Iterator[None]:
    """While one more report runs in this process, set :data:`FIGURE_WRITER_ENV` in its
    kernel's environment ``env``.

    ``"0"`` unless ``notebook`` is one of the toolkit's reports that wait for their figures
    (:data:`WAITING_NOTEBOOKS` in ``notebooks/``: a notebook of the user's may never wait, or
    draw in a forked process). For those, the caller's own ``DABENCH_FIGURE_WRITER`` of ``"0"``
    or ``"1"`` is passed on (another value is ignored with a warning); otherwise ``"1"`` when
    fewer reports run here, this one included (or planned by :func:`batch_of`), than cores this
    process may use (``--jobs 2`` on 2 cores: ``"0"``).

    Parameters
    ----------
    env : mutable mapping of str to str
        The kernel's extra environment; :data:`FIGURE_WRITER_ENV` is set in it.
    notebook : Path, optional
        The notebook the kernel runs.

    Warns
    -----
    UserWarning
        ``DABENCH_FIGURE_WRITER`` set to something other than 0 or 1 (then ignored).
    """
    own = os.environ.get(FIGURE_WRITER_ENV, "")
    if own not in ("", "0", "1"):
        warnings.warn(f"{FIGURE_WRITER_ENV}={own!r} is neither 0 nor 1; ignored", UserWarning,
                      stacklevel=outside_level())
    with _RUNNING_LOCK:
        _RUNNING[0] += 1
        spare = max(_RUNNING[0], _PLANNED[0]) < _cores()
    env[FIGURE_WRITER_ENV] = "0" if not _waits(notebook) \
        else own if own in ("0", "1") else "1" if spare else "0"
    try:
        yield
    finally:
        with _RUNNING_LOCK:
            _RUNNING[0] -= 1


def _save_pickled(data: bytes, stem: Path, formats: tuple[str, ...], dpi: int,
                  rc: dict[str, Any]) -> tuple[Any, list[tuple[str, str]]]:
    """In the worker: unpickle a figure and save it (:func:`export._figures._save`) with ``rc``.

    Returns the :class:`~dabench_analysis.export._figures.SavedFigure` and the warnings the
    save raised, as (category, message) pairs, for the kernel to raise again.
    """
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from dabench_analysis.export._figures import SavedFigure, _save

    fig = pickle.loads(data)
    FigureCanvasAgg(fig)  # the kernel's figure had an Agg canvas; the unpickled one a base one
    try:
        with warnings.catch_warnings(record=True) as caught, mpl.rc_context(rc):
            warnings.simplefilter("always")
            paths, png = _save(fig, stem, formats, dpi)
    finally:
        plt.close(fig)
    return (SavedFigure(tuple(paths), png, dpi),
            [(w.category, str(w.message)) for w in caught])


@dataclass(frozen=True)
class _Call:
    """A job that is not a figure: ``fn()``, a picklable function of no arguments (e.g. a
    ``functools.partial`` of a module's function), run where the job is taken."""

    fn: Callable[[], Any]


def _run_job(job: Any) -> Any:
    """A job's answer, in the worker or in the kernel: a figure's (:func:`_save_pickled`) or a
    call's value with the warnings it raised, as the arguments of :func:`_warn_again`."""
    if isinstance(job, _Call):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # every one: the kernel's filters decide (_warn_again)
            value = job.fn()
        return value, [(w.category, str(w.message), w.filename, w.lineno, _module_of(w.filename))
                       for w in caught]
    return _save_pickled(*job)


def _module_of(filename: str) -> str | None:
    """The name of the imported module whose file is ``filename`` (None if there is none)."""
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == filename:
            return name
    return None


def _warn_again(category: type[Warning], message: str, filename: str, lineno: int,
                module: str | None) -> None:
    """Raise in the kernel a warning a call raised in the worker, from where it was raised, as
    ``warnings.warn`` there would: under the kernel's filters (a library's DeprecationWarning
    stays hidden) and once per place (the module's registry)."""
    scope = vars(sys.modules[module]) if module in sys.modules else None
    where = {} if scope is None else {  # (None given for these is not the same as none)
        "module": module, "registry": scope.setdefault("__warningregistry__", {}),
        "module_globals": scope}
    warnings.warn_explicit(message, category, filename, lineno, **where)


class FigureWriter:
    """One worker process that saves a report's figures; the kernel shows them when saved.

    Parameters
    ----------
    formats : tuple of str
        File types of every figure (``("png", "pdf")``).
    dpi : int
        Raster resolution (300).

    Notes
    -----
    Two threads of the kernel move the pickles, so that handing over a figure never waits for
    the worker. The worker is given at most two figures at a time (the one it saves and the
    next); when :meth:`wait` is called, the kernel, which has nothing else to do then, saves
    those it has not been given from the back of the queue while the worker goes on taking
    them from the front. A figure the worker could not save (one that does not
    unpickle there, a worker that ended) is saved again by the kernel, whose error, if any, is
    the one raised. At the end of each cell the figures saved so far are shown (all of them
    when the cell failed, so that a failed report shows what it drew); at the kernel's exit the
    figures still pending are saved, so that a notebook that never waits has every file.
    """

    def __init__(self, formats: tuple[str, ...] = ("png", "pdf"), dpi: int = 300) -> None:
        self.formats, self.dpi, self._pid = tuple(formats), dpi, os.getpid()
        self._proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE,
                                      env={**os.environ, "MPLBACKEND": "agg",
                                           PARENT_ENV: str(os.getpid())})
        self._ready = threading.Condition()
        self._todo: collections.deque[tuple[bytes, Future]] = collections.deque()
        self._given = 0  # figures given to the worker and not answered yet
        self._closed = False  # wait() has taken the figures not given to the worker
        self._gone = False  # the worker has ended: no more figures are given to it
        self._sent: queue.SimpleQueue[Future] = queue.SimpleQueue()  # in the worker's order
        self._pending: list[_Figure] = []
        threading.Thread(target=self._feed, daemon=True, name="figure-writer-feed").start()
        threading.Thread(target=self._read, daemon=True, name="figure-writer-read").start()
        self._hooks(register=True)

    def _hooks(self, *, register: bool) -> None:
        import atexit

        from IPython import get_ipython

        shell = get_ipython()
        if register:
            atexit.register(self._at_exit)
            if shell is not None:
                shell.events.register("post_run_cell", self._after_cell)
        else:
            atexit.unregister(self._at_exit)
            if shell is not None:
                with contextlib.suppress(ValueError):
                    shell.events.unregister("post_run_cell", self._after_cell)

    def _feed(self) -> None:
        stdin = self._proc.stdin
        try:
            while True:
                with self._ready:
                    self._ready.wait_for(lambda: self._closed or self._gone
                                         or (self._todo and self._given < 2))
                    if not self._todo or self._gone:
                        break
                    data, future = self._todo.popleft()
                    self._given += 1
                    self._sent.put(future)
                stdin.write(data)
                stdin.flush()
            stdin.write(pickle.dumps(None))  # the end: a forked child may hold the pipe open
            stdin.flush()
        except OSError:
            pass  # the worker is gone: _read fails its figures
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        while True:
            try:
                ok, value = pickle.load(self._proc.stdout)
            except EOFError:
                break
            except Exception:  # noqa: BLE001 - an answer that is not one: the worker is ended
                self._proc.kill()
                break
            future = self._sent.get()
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
            with self._ready:
                self._given -= 1
                self._ready.notify_all()
        code = self._proc.wait()
        with self._ready:  # _feed gives no more figures; those it gave are all in _sent now
            self._gone = True
            self._ready.notify_all()
        while True:  # the worker ended before answering these
            try:
                future = self._sent.get_nowait()
            except queue.Empty:
                return
            future.set_exception(RuntimeError(
                f"the figure writer process ended (exit code {code}) before saving this figure"))

    def submit(self, fig: Any, stem: Path) -> bool:
        """Show a placeholder for ``fig``, hand it to the worker, close it in the kernel.

        Returns
        -------
        bool
            False, with nothing done, for a figure that cannot be pickled (the caller saves
            it in the kernel instead).
        """
        import matplotlib as mpl
        import matplotlib.pyplot as plt
        from IPython.display import display

        if os.getpid() != self._pid:  # a forked child: the writer's threads are not here
            return False
        rc = {k: v for k, v in mpl.rcParams.items() if k not in _PROCESS_RC}
        try:
            data = pickle.dumps((pickle.dumps(fig), stem, self.formats, self.dpi, rc))
        except Exception:  # noqa: BLE001 - an artist that does not pickle: saved in the kernel
            return False
        future: Future = Future()
        with self._ready:
            self._todo.append((data, future))
            self._ready.notify_all()
        plt.close(fig)
        handle = display({"text/plain": f"<figure {stem.name}: being saved>"}, raw=True,
                         display_id=True)
        self._pending.append(_Figure(stem, data, future, handle))
        return True

    def _take_back(self, *, share: bool = False) -> None:
        """Stop giving figures to the worker; save those it was not given, here. ``share``: the
        worker goes on taking figures from the front of the queue while the kernel takes them
        from the back, one at a time, until none is left (both cores save to the end)."""
        while True:
            with self._ready:
                if not share or self._gone or len(self._todo) < 2:
                    left, self._closed = list(self._todo), True
                    self._todo.clear()
                    self._ready.notify_all()
                    break
                left = [self._todo.pop()]
            self._save_here(left)
        self._save_here(left)

    @staticmethod
    def _save_here(jobs: list[tuple[bytes, Future]]) -> None:
        for data, future in jobs:
            try:
                future.set_result(_run_job(pickle.loads(data)))
            except Exception as exc:  # noqa: BLE001 - raised by _settle, in the figures' order
                future.set_exception(exc)

    def call(self, fn: Callable[[], Any]) -> Future | None:
        """Hand ``fn()`` to the worker, ahead of the figures handed over after it (the worker
        does it while the kernel goes on); :meth:`result` takes its value.

        Returns
        -------
        Future or None
            None, with nothing done, when ``fn`` cannot be pickled or the writer has stopped
            taking jobs (the caller runs ``fn`` itself).
        """
        try:
            data = pickle.dumps(_Call(fn))
        except Exception:  # noqa: BLE001 - e.g. a lambda: run in the kernel
            return None
        future: Future = Future()
        with self._ready:
            if self._closed or os.getpid() != self._pid:
                return None
            self._todo.append((data, future))
            self._ready.notify_all()
        return future

    def result(self, future: Future, fn: Callable[[], Any]) -> Any:
        """The value of a :meth:`call`, waiting for the worker (for as long as it lives), with
        the warnings it raised there raised again here, from where they were raised
        (:func:`_warn_again`); ``fn()`` run here instead when the worker could not run it (then
        its own error, if any, is raised)."""
        if not self._done(future):
            with self._ready:  # not given to a worker that has ended: not run again at wait()
                self._todo = collections.deque(j for j in self._todo if j[1] is not future)
            return fn()
        value, caught = future.result()
        for args in caught:
            _warn_again(*args)
        return value

    def _done(self, future: Future) -> bool:
        """Wait for ``future`` for as long as the worker may still answer it; whether it came
        back with a result (False: the worker failed it, or ended without answering)."""
        while not future.done() and not (self._gone and self._sent.empty()):
            futures.wait([future], timeout=0.5)  # returns, done or not; never raises
        return future.done() and future.exception() is None

    def _settle(self, fig: _Figure) -> Any:
        """The figure's result, waiting for the worker (for as long as it lives); a figure the
        worker could not save is saved again here, and this one's error is raised."""
        if self._done(fig.future):
            return fig.future.result()
        try:
            return _save_pickled(*pickle.loads(fig.data))
        except Exception as exc:
            exc.add_note(f"while saving the figure {fig.stem.name!r} (shown at its section)")
            if fig.handle is not None:
                fig.handle.update({"text/plain": f"<figure {fig.stem.name}: not saved: "
                                                 f"{type(exc).__name__}: {exc}>"}, raw=True)
            raise

    def _show(self, fig: _Figure, result: Any) -> None:
        saved, caught = result
        for category, message in caught:
            warnings.warn(f"figure {fig.stem.name!r}: {message}", category,
                          stacklevel=outside_level())
        if fig.handle is not None:
            fig.handle.update(saved)

    def _after_cell(self, result: Any = None) -> None:
        """After each cell: show the figures saved by now (all, when the cell failed)."""
        failed = result is not None and (result.error_in_exec or result.error_before_exec)
        if failed:
            self._take_back()
        keep = []
        for fig in self._pending:
            if fig.future.done() and fig.future.exception() is None or failed:
                with contextlib.suppress(Exception):  # shown as can be; raised by wait()
                    self._show(fig, self._settle(fig))
                    continue
            keep.append(fig)
        self._pending = keep

    def _at_exit(self) -> None:
        """At the kernel's exit: every figure's files written, the worker ended."""
        with contextlib.suppress(Exception):
            self._take_back()
            for fig in self._pending:
                with contextlib.suppress(Exception):
                    self._settle(fig)
            self._proc.wait(timeout=60)

    def wait(self) -> None:
        """Wait for every figure; show each saved PNG in place of its placeholder; end the
        worker.

        Meanwhile the kernel saves the figures the worker has not been given, from the last
        one back, while the worker goes on with the first ones, by the same function
        (:func:`_save_pickled`) from the same pickle; so is one the worker could not save.

        Raises
        ------
        OSError, Exception
            The first error of a figure that could not be saved here either (e.g. a full
            disk), with a note naming the figure, after the figures before it are shown.
        """
        self._hooks(register=False)
        self._take_back(share=True)
        pending, self._pending = self._pending, []
        try:
            for fig in pending:
                self._show(fig, self._settle(fig))
        finally:
            self._proc.wait()


@dataclass
class _Figure:
    """A figure handed to the writer: where it goes, its pickle, its result, its placeholder."""

    stem: Path
    data: bytes
    future: Future
    handle: Any
