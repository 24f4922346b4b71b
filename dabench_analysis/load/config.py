"""Which configuration a run is a repetition of: ``run_config.json`` in the run folder, or constant
``config``/``seed`` columns in task_metrics.csv. eval-v2 writes neither; this module defines them.

The file (optional, UTF-8 JSON, read only, never written by the toolkit)::

    {"config": "gpt-x / react / temperature 0.7", "seed": 3}

``config`` (a string) names the configuration; runs with the same ``config`` are repetitions of
it, told apart by ``seed`` (a whole number; optional). Other keys are ignored. Without the file,
columns ``config`` and ``seed`` in task_metrics.csv, each holding one value for the whole run,
say the same. A run with neither declares no configuration (``config`` missing).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis.load.findings import RunLoadError
from dabench_analysis.load.loader import load_run
from dabench_analysis.schema.files import CONFIG_FILE

_MAX_BYTES = 1 << 20
_COLUMNS = ["run_id", "config", "seed", "source"]


def _reject_constant(token: str):
    raise ValueError(f"{token} is not JSON")


def read_run_config(path: str | os.PathLike[str]) -> dict:
    """Read one ``run_config.json``: ``{"config": str or None, "seed": int or None}``.

    Parameters
    ----------
    path : path-like
        The JSON file (UTF-8, at most 1 MiB).

    Returns
    -------
    dict
        ``config`` (stripped; None if absent, null or blank) and ``seed`` (int or None).

    Raises
    ------
    ValueError
        Naming the file: unreadable, not UTF-8, not JSON (``NaN``/``Infinity`` included), not
        an object, ``config`` not a string, ``seed`` not a whole number (``true``, ``"3"`` and
        ``3.5`` are refused; ``3.0`` is read as 3).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / CONFIG_FILE
    >>> _ = p.write_text('{"config": " react-t0.7 ", "seed": 3, "note": "ignored"}')
    >>> read_run_config(p)
    {'config': 'react-t0.7', 'seed': 3}
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
        if len(raw) > _MAX_BYTES:
            raise ValueError(f"{path}: larger than 1 MiB; a run config is a few keys")
        data = json.loads(raw.decode("utf-8-sig"), parse_constant=_reject_constant)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object such as "
                         f'{{"config": "name", "seed": 1}}, got {type(data).__name__}')
    return {"config": _config_value(data.get("config"), str(path)),
            "seed": _seed_value(data.get("seed"), str(path))}


def _config_value(value, where: str) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where}: 'config' must be a string, got {value!r}")
    return value.strip() or None


def _seed_value(value, where: str, *, text: bool = False) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if text and isinstance(value, str):  # task_metrics columns arrive as text
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f"{where}: 'seed' must be a whole number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{where}: 'seed' must be a whole number, got {value!r}")
    return int(value)


def _constant(tasks: pd.DataFrame, run_id: str, column: str):
    """The one value of ``column`` in the rows of ``run_id`` (None if absent or all missing)."""
    if tasks is None or column not in tasks:
        return None
    rows = tasks.loc[tasks["run_id"].astype(str) == run_id, column].dropna()
    values = pd.unique(rows.astype(str).str.strip())
    values = [v for v in values if v != ""]
    if len(values) > 1:
        raise ValueError(f"task_metrics of run {run_id!r}: column {column!r} must hold one "
                         f"value for the whole run, found {', '.join(map(repr, values[:5]))}")
    if not values:
        return None
    where = f"task_metrics of run {run_id!r}"
    return values[0] if column == "config" else _seed_value(values[0], where, text=True)


def _identify(item) -> tuple[str, Path]:
    """(run_id, folder) of a Run or of a run folder (run_id as :func:`load_run` gives it)."""
    if hasattr(item, "run_id") and hasattr(item, "path"):
        return str(item.run_id), Path(item.path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run's own load reports its problems
        run = load_run(item, columns=["run_id"], strict=False)
    return run.run_id, Path(item)


def run_configs(run_dirs: Sequence[str | os.PathLike[str]],
                tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """The configuration and seed each run declares (``run_config.json`` or task columns).

    Parameters
    ----------
    run_dirs : sequence of path-like (or of :class:`~dabench_analysis.load.Run`, or a ``Runs``)
        Run folders. A folder's ``run_id`` is the one :func:`~dabench_analysis.load.load_run`
        gives (task_metrics' ``run_id``, else the folder name); a folder that is not a
        loadable run is left out with a warning.
    tasks : DataFrame, optional
        Stacked task frames (``load_runs(...).tasks``) with ``run_id``; their ``config`` and
        ``seed`` columns are used for runs without ``run_config.json``.

    Returns
    -------
    DataFrame
        One row per run, in the order given: ``run_id`` (string), ``config`` (string, <NA> when
        the run declares none), ``seed`` (Int64, <NA> when not declared), ``source``
        (``"run_config.json"``, ``"task_metrics"`` or ``""``).

    Raises
    ------
    ValueError
        A bad ``run_config.json`` (named, see :func:`read_run_config`); ``config``/``seed``
        columns that vary within a run or hold a seed that is not a whole number; two folders
        with the same ``run_id``; ``tasks`` without ``run_id``.

    Notes
    -----
    The file wins over the columns; when both are present and disagree a warning says so. Files
    are only read (run directories are never written).

    Examples
    --------
    >>> import tempfile, pathlib, shutil
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "baseline_react"
    >>> _ = shutil.copytree("data/sample_runs/baseline_react", d)
    >>> _ = (d / CONFIG_FILE).write_text('{"config": "react", "seed": 7}')
    >>> out = run_configs([d, "data/sample_runs/proposed_aat"])
    >>> out.astype(object).values.tolist()
    [['baseline_react', 'react', 7, 'run_config.json'], ['proposed_aat', <NA>, <NA>, '']]
    """
    if isinstance(run_dirs, str | os.PathLike):
        run_dirs = [run_dirs]
    if tasks is not None and "run_id" not in tasks:
        raise ValueError("tasks has no 'run_id' column; pass load_runs(...).tasks")
    rows, seen = [], {}
    for item in run_dirs:
        try:
            run_id, folder = _identify(item)
        except RunLoadError as exc:
            warnings.warn(f"{item}: not a loadable run, left out of the configurations "
                          f"({str(exc).splitlines()[0]})", stacklevel=2)
            continue
        if run_id in seen:
            raise ValueError(f"run_id {run_id!r} is given twice: {seen[run_id]} and {folder}")
        seen[run_id] = folder
        rows.append(_declared(run_id, folder, tasks))
    return pd.DataFrame(rows, columns=_COLUMNS).astype(
        {"run_id": "string", "config": "string", "seed": "Int64", "source": "string"})


def _declared(run_id: str, folder: Path, tasks: pd.DataFrame | None) -> dict:
    cols = {"config": _constant(tasks, run_id, "config"), "seed": _constant(tasks, run_id, "seed")}
    file = folder / CONFIG_FILE
    if not file.is_file():
        has = cols["config"] is not None or cols["seed"] is not None
        return {"run_id": run_id, **cols, "source": "task_metrics" if has else ""}
    declared = read_run_config(file)
    clash = [k for k in ("config", "seed") if cols[k] is not None and cols[k] != declared[k]]
    if clash:
        warnings.warn(f"{file}: {' and '.join(clash)} differ(s) from the task_metrics column(s) "
                      f"({', '.join(f'{k}={cols[k]!r}' for k in clash)}); the file is used",
                      stacklevel=3)
    return {"run_id": run_id, **declared, "source": CONFIG_FILE}
