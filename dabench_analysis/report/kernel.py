"""The kernel process of a report: how it is started (IPC sockets, its own working folder and
matplotlib backend, its log in a file, the staging folder in its environment) and how its exit
is told in words when it dies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import uuid
from typing import IO

#: The kernel's matplotlib backend, even when the caller set MPLBACKEND=Agg (as headless
#: scripts and CI do): otherwise figures are not embedded in report.html.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def _kernel_manager(log: IO[bytes] | None = None, cwd: str | None = None,
                    env: dict[str, str] | None = None) -> dict:
    """nbclient's kernel manager: IPC sockets on POSIX, the kernel's output into ``log``, its
    working folder ``cwd``, :data:`INLINE_BACKEND` and the variables of ``env`` (the staging
    folder of :mod:`dabench_analysis.report.outputs`).

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
                # connection file is not named yet) is shared by kernels started in one folder
                return os.path.join(tempfile.gettempdir(),
                                    f"dabench-kernel-{uuid.uuid4().hex}-ipc")

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
