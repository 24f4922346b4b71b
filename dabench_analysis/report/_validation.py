"""``validate --out``: the findings and the health breakdown of validated runs, written as one
set (all four files or none, whenever one looks), never into a run directory.

The four names in the output folder are symbolic links into the folder of the current set,
through one link that is switched by a single rename (atomic in POSIX)::

    OUT/findings.csv -> .dabench-validate/findings.csv        (findings.json, health.*: alike)
    OUT/.dabench-validate -> .dabench-validate-<id>            (the current set)
    OUT/.dabench-validate-<id>/findings.csv ...                (the four files)

A reader therefore sees the previous set or the new one, never a mix of both and never a part
of one: a ``validate`` killed at any moment (even ``kill -9``) leaves the previous set whole
(on the first run into a folder: links that lead nowhere, i.e. no file yet). What a killed
run leaves behind (its staging folder, a set never switched to) is removed by the next run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis.export import save_table, write_json
from dabench_analysis.report import _outputs as outputs
from dabench_analysis.report.runner import ReportError
from dabench_analysis.validate import findings_table, health_table, validate_run  # noqa: F401

#: What ``validate --out`` writes: its four names, the link to the current set, the prefix of
#: the set folders, and the kind of its list of files (``.dabench-validate.json``).
NAMES = ("findings.csv", "findings.json", "health.csv", "health.json")
CURRENT, SET_PREFIX, KIND = ".dabench-validate", ".dabench-validate-", "validate"
#: A link being made (then renamed into place); one left by a killed run is removed.
LINK_PREFIX = ".dabench-link-"


def check_out_dir(out: str | os.PathLike[str], run_dirs: Sequence[str | os.PathLike[str]]
                  ) -> Path:
    """Refuse an output folder that is a run directory or inside one (links resolved).

    Parameters
    ----------
    out : path-like
        The ``--out`` folder (need not exist).
    run_dirs : sequence of path-like
        The run directories being read.

    Returns
    -------
    Path
        ``out``, resolved.

    Raises
    ------
    ReportError
        If ``out`` would write into one of ``run_dirs``.

    Examples
    --------
    >>> check_out_dir("data/sample_runs/proposed_aat/x", ["data/sample_runs/proposed_aat"])
    Traceback (most recent call last):
    ...
    dabench_analysis.report.runner.ReportError: --out data/sample_runs/proposed_aat/x would \
write into the run directory data/sample_runs/proposed_aat; choose a folder outside it
    """
    dest = Path(out).resolve()
    for r in run_dirs:
        if dest.is_relative_to(Path(r).resolve()):
            raise ReportError(f"--out {out} would write into the run directory {r}; "
                                  "choose a folder outside it")
    return dest


def write_validation(reports: Sequence, out: str | os.PathLike[str]) -> list[Path]:
    """Write the findings and the health breakdown of validated runs into ``out`` as one set.

    Parameters
    ----------
    reports : sequence of ValidationReport
    out : path-like
        Output folder (created); never a run directory (see :func:`check_out_dir`).

    Returns
    -------
    list of Path
        ``findings.csv``, ``findings.json`` (:func:`dabench_analysis.validate.findings_table`
        of every run, one record per row) and ``health.csv``, ``health.json``
        (:func:`dabench_analysis.validate.health_table`), each with a leading ``run_id``.

    Raises
    ------
    InTheWay
        One of the four names holds a file the toolkit did not write (never overwritten).
    OSError
        If ``out`` cannot be created or written (a full disk, say): then the previous set
        stays as it was.

    Notes
    -----
    Files go through :func:`dabench_analysis.export.save_table` and
    :func:`~dabench_analysis.export.write_json` (JSON keys sorted, NaN as null) into a staging
    folder in ``out`` (:func:`dabench_analysis.report._outputs.stage`), which becomes the set
    folder the four names link to by one rename of the ``.dabench-validate`` link (the module
    docstring). Call :func:`check_out_dir` first: this function does not know which folders
    are runs.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> paths = write_validation([validate_run("data/sample_runs/pending_run")], out)
    >>> [p.name for p in paths], paths[0].is_symlink(), paths[0].is_file()
    (['findings.csv', 'findings.json', 'health.csv', 'health.json'], True, True)
    """
    out = Path(out)
    with outputs.stage(out) as staging:  # all four files, or none (a full disk, say)
        for name, fn in (("findings", findings_table), ("health", health_table)):
            frame = pd.concat([fn(r) for r in reports], ignore_index=True)
            save_table(frame, staging / name, formats=("csv",))
            write_json(frame, staging / f"{name}.json")
        _switch(staging, out)
    return [out / n for n in NAMES]


def _link(target: str, link: Path) -> None:
    """Make ``link`` a symbolic link to ``target``, replacing what is there in one rename."""
    tmp = link.with_name(f"{LINK_PREFIX}{os.urandom(6).hex()}.tmp")
    os.symlink(target, tmp)
    try:
        os.replace(tmp, link)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _switch(staging: Path, out: Path) -> None:
    """Make the files in ``staging`` the current set of ``out`` (the module docstring)."""
    with outputs._folder_lock(out):
        ours = outputs.written(out, KIND)
        for name in NAMES:
            link = out / name
            if os.path.lexists(link) and name not in ours:
                raise outputs.InTheWay(link)
        for tmp in out.glob(f"{LINK_PREFIX}*.tmp"):  # of a run killed while it made links
            if tmp.is_symlink():
                tmp.unlink()
        outputs._write_ledger(out, KIND, NAMES)
        for name in NAMES:  # before the switch: they lead to the previous set, or nowhere
            target = f"{CURRENT}/{name}"
            if not ((out / name).is_symlink() and os.readlink(out / name) == target):
                _link(target, out / name)
        folder = out / f"{SET_PREFIX}{os.urandom(8).hex()}"
        os.chmod(staging, 0o755)  # readable as the files in it (a staging folder is private)
        os.rename(staging, folder)
        _link(folder.name, out / CURRENT)  # the switch: one rename
        _sync(out)
        for old in out.glob(f"{SET_PREFIX}*"):
            if old.name != folder.name and old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)


def _sync(folder: Path) -> None:
    """Flush ``folder``'s entries (the switch) to disk, where the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
