"""``validate --out``: the findings and the health breakdown of validated runs, written as one
set (all four files or none), never into a run directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis.export import save_table, write_json
from dabench_analysis.report import outputs
from dabench_analysis.report.runner import ReportError
from dabench_analysis.validate import findings_table, health_table, validate_run  # noqa: F401


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
    """Write the findings and the health breakdown of validated runs into ``out``, atomically.

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
    OSError
        If ``out`` cannot be created or written: then none of the four files is written or
        changed (a previous set stays as it was).

    Notes
    -----
    Files go through :func:`dabench_analysis.export.save_table` and
    :func:`~dabench_analysis.export.write_json` (JSON keys sorted, NaN as null) into a staging
    folder in ``out``, then are moved in together
    (:func:`dabench_analysis.report.outputs.install`, with its own list of what ``validate``
    wrote there). Call :func:`check_out_dir` first: this function does not know which folders
    are runs.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> paths = write_validation([validate_run("data/sample_runs/pending_run")], out)
    >>> [p.name for p in paths]
    ['findings.csv', 'findings.json', 'health.csv', 'health.json']
    """
    out = Path(out)
    with outputs.stage(out) as staging:  # all four files, or none (a full disk, say)
        for name, fn in (("findings", findings_table), ("health", health_table)):
            frame = pd.concat([fn(r) for r in reports], ignore_index=True)
            save_table(frame, staging / name, formats=("csv",))
            write_json(frame, staging / f"{name}.json")
        return [out / f for f in outputs.install(staging, out, kind="validate")]
