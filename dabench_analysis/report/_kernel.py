"""The kernel process of a report: how it is started (IPC sockets, its own working folder and
matplotlib backend, its log in a file, the staging folder in its environment), how it ends
(:func:`end_without_collecting`) and how its exit is told in words when it dies.

The kernels' IPC socket files live in one folder per process in the temporary folder
(:func:`socket_dir`, ``dabench-kernels-<pid>-<random>/``), locked while the process lives and
removed when it ends; a folder left by a process that was killed (``kill -9``) is removed by
the next process that starts a kernel, never one whose process still runs.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import tempfile
import threading
import uuid
from pathlib import Path
from typing import IO

from dabench_analysis.report._outputs import _lock

#: The kernel's matplotlib backend, even when the caller set MPLBACKEND=Agg (as headless
#: scripts and CI do): otherwise figures are not embedded in report.html.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
#: Prefix of the per-process folder of kernel sockets in the temporary folder.
SOCKET_PREFIX = "dabench-kernels-"
#: The longest path of a Unix socket (``sun_path`` holds 108 bytes with its final NUL), and
#: the longest name this module gives one inside its folder (``<12 hex>-ipc-<port>``).
SOCKET_PATH_MAX, SOCKET_NAME_MAX = 107, 22
_SOCKETS: dict[int, tuple[str, int]] = {}  # process id -> (its folder, the locked descriptor)
_SOCKETS_LOCK = threading.Lock()
_ENDING = []  # end_without_collecting has registered its exit handler in this process
#: Set to "1" in a kernel's environment by the runner when it runs one of the toolkit's report
#: notebooks (run, comparison, sweep: ``notebooks/`` itself), else "0": only those end without
#: the last garbage collections (:func:`end_without_collecting`).
OWN_REPORT_ENV = "DABENCH_OWN_REPORT"


def end_without_collecting() -> None:
    """Have this process skip the interpreter's last garbage collections when it exits.

    A report's kernel spent 0.45-0.5 s of its exit, after its exit handlers ran, in the
    interpreter's last garbage collections over what it imported and made (pandas, SciPy,
    matplotlib, IPython; ``perf``: ``gc_collect_main``), while the runner waited for it
    (bench/README, "The report's CPU"). ``gc.freeze()`` as the
    first exit handler (handlers run last registered first) puts every object there is into the
    permanent generation, which those collections skip; the handlers that follow run as
    before. What is not collected is freed with the process, but never finalised: a file left
    open in a reference cycle would lose its buffered writes. So it is called only where every
    file is written and closed (:func:`dabench_analysis._atomic.atomic_write`): by
    ``report.summary`` in the kernel of one of the toolkit's report notebooks, as the runner
    runs it (:data:`OWN_REPORT_ENV`; a notebook of the user's, which may write files of its
    own after the summary, keeps the full exit), and by the figure writer's worker. Idempotent.
    """
    import gc

    if not _ENDING:
        _ENDING.append(True)
        atexit.register(gc.freeze)


def _remove_stale_socket_dirs(tmp: Path) -> None:
    """Remove the socket folders of processes that ended without removing theirs."""
    for entry in tmp.glob(f"{SOCKET_PREFIX}*"):
        with contextlib.suppress(OSError):
            if entry.is_symlink() or not entry.is_dir() or entry.stat().st_uid != os.getuid():
                continue
            fd = os.open(entry, os.O_RDONLY)
            try:
                if _lock(fd, wait=False):  # its process is gone: nobody holds it
                    shutil.rmtree(entry, ignore_errors=True)
            finally:
                os.close(fd)


def _remove_socket_dir(pid: int) -> None:
    folder, fd = _SOCKETS.pop(pid, (None, -1))
    if folder is not None and pid == os.getpid():
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)


def socket_dir() -> str:
    """This process's folder of kernel sockets, made (and stale ones removed) on first use.

    Returns
    -------
    str
        ``<temporary folder>/dabench-kernels-<pid>-<random>``, locked while this process
        lives, removed when it exits.

    Examples
    --------
    >>> import os
    >>> socket_dir() == socket_dir() and os.path.isdir(socket_dir())
    True
    """
    pid = os.getpid()
    with _SOCKETS_LOCK:
        if pid not in _SOCKETS:
            tmp = Path(tempfile.gettempdir())
            _remove_stale_socket_dirs(tmp)
            while True:
                folder = tempfile.mkdtemp(prefix=f"{SOCKET_PREFIX}{pid}-", dir=tmp)
                fd = os.open(folder, os.O_RDONLY)
                _lock(fd, wait=False)
                with contextlib.suppress(OSError):  # not removed by another process's clean-up
                    if os.path.samestat(os.fstat(fd), os.stat(folder)):
                        break
                os.close(fd)
            _SOCKETS[pid] = (folder, fd)
            atexit.register(_remove_socket_dir, pid)
        return _SOCKETS[pid][0]


def _kernel_manager(log: IO[bytes] | None = None, cwd: str | None = None,
                    env: dict[str, str] | None = None) -> dict:
    """nbclient's kernel manager: IPC sockets on POSIX, the kernel's output into ``log``, its
    working folder ``cwd``, :data:`INLINE_BACKEND` and the variables of ``env`` (the staging
    folder of :mod:`dabench_analysis.report._outputs`).

    The folder and the backend are the kernel's own (``start_kernel`` passes ``cwd`` and
    ``env`` to the process), never the caller's: papermill's ``cwd=`` changes the working
    folder of the whole process, which two reports run at once (``--jobs 2``, one thread each)
    would undo for each other.

    With TCP, jupyter_client picks five free ports and the kernel binds them a moment later;
    two kernels started at once (``--jobs 2``) can pick the same port, and one fails with
    "Address already in use" after a 60 s start timeout (seen in ``bench/run_bench.py``).
    IPC sockets are files named after each kernel's own connection file, so they cannot
    collide (and the kernel's "running over TCP without encryption" warning goes away).

    The kernel process inherits the caller's terminal otherwise, and writes its own log there:
    jupyter_client 8 interrupts (SIGINT) a kernel before asking it to shut down, and when the
    signal lands while ipykernel is still in a message handler it logs "KeyboardInterrupt
    caught in kernel"; after a timeout it logs a ZMQ traceback. ``log`` receives both streams
    (``start_kernel`` passes Popen keywords through). The class lists the processes it
    started in ``launched``, so that a dead kernel's exit status can be reported.
    """
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class ReportKernelManager(AsyncKernelManager):
        launched: list = []  # a new class, so a new list, for every run

        if os.name == "posix":
            @default("transport")
            def _transport_default(self) -> str:
                return "ipc"

            @default("ip")
            def _ip_default(self) -> str:
                # jupyter_client's default ("kernel-ipc" in the working directory when the
                # connection file is not named yet) is shared by kernels started in one folder;
                # the sockets are this path + "-<port>"
                return os.path.join(socket_dir(), f"{uuid.uuid4().hex[:12]}-ipc")

        async def start_kernel(self, **kw) -> None:
            kw["env"] = {**kw.get("env", os.environ), **(env or {}),
                         "MPLBACKEND": INLINE_BACKEND}
            if cwd is not None:
                kw.setdefault("cwd", cwd)
            if log is not None:
                kw.setdefault("stdout", log)
                kw.setdefault("stderr", log)
            await super().start_kernel(**kw)
            if getattr(self.provisioner, "process", None) is not None:
                type(self).launched.append(self.provisioner.process)

    return {"kernel_manager_class": ReportKernelManager}


def _exit_status(launched: list) -> str:
    code = launched[-1].poll() if launched else None
    if code is None:
        return "exit status unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-code).name
            return f"killed by {name}" + (", often the out-of-memory killer"
                                          if name == "SIGKILL" else "")
        return f"killed by signal {-code}"
    return f"exit code {code}"
