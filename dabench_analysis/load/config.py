"""Which configuration a run is a repetition of: ``run_config.json`` in the run folder, or constant
``config``/``seed`` columns in task_metrics.csv. eval-v2 writes neither; this module defines them.

The file (optional, UTF-8 JSON, read only, never written by the toolkit)::

    {"config": "gpt-x / react / temperature 0.7", "seed": 3}

``config`` (a string) names the configuration; runs with the same ``config`` are repetitions of
it, told apart by ``seed`` (optional: an integer in the 64-bit range, written without a
decimal point: ``3``, not ``3.0``). Other keys are ignored, but no key may hold ``NaN`` or
``Infinity`` (not JSON): each refused value is an error naming the file and the key. Without the file,
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
from dabench_analysis.schema.checks import CONTROL_CHARACTERS
from dabench_analysis.schema.files import CONFIG_FILE

_MAX_BYTES = 1 << 20
_COLUMNS = ["run_id", "config", "seed", "source"]


#: Range of a seed: a 64-bit signed integer (numpy, pandas Int64 and most RNGs take no more).
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1


class _Float(float):
    """A JSON number written with a fraction or an exponent (``3.0``, ``1e20``), or the
    non-JSON ``NaN`` / ``Infinity`` that Python's json would accept: kept with its text so that
    a field that needs a whole number can refuse it by name."""

    def __new__(cls, text: str) -> _Float:
        obj = super().__new__(cls, float(text))
        obj.text = text if len(text) <= 30 else f"{text[:12]}... ({len(text)} characters)"
        return obj


def _loads(text: str):
    return json.loads(text, parse_float=_Float, parse_constant=_Float)


def _not_finite(value, key: str = "") -> str | None:
    """The key path (``a.b[2]``) of the first NaN / Infinity / overflowing number, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return key or "(top level)"
    if isinstance(value, dict):
        items = ((f"{key}.{k}" if key else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{key}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((hit for k, v in items if (hit := _not_finite(v, k)) is not None), None)


def read_run_config(path: str | os.PathLike[str]) -> dict:
    """Read one ``run_config.json``: ``{"config": str or None, "seed": int or None}``.

    Parameters
    ----------
    path : path-like
        The JSON file (UTF-8, a BOM accepted, at most 1 MiB).

    Returns
    -------
    dict
        ``config`` (stripped; None if absent, null or blank) and ``seed`` (int or None).

    Raises
    ------
    ValueError
        Naming the file, and the key where a value is refused: unreadable, not UTF-8, not
        JSON, not an object; ``NaN``, ``Infinity`` or a number too large for a float (``1e400``)
        under any key (Python's json accepts them; they are not JSON); ``config`` not a
        string; ``seed`` not a whole number written as one: ``true``, ``"3"``, ``2.5``, and
        also ``3.0`` and ``1e20`` (a float in an integer field), or an integer outside the
        64-bit range [-2**63, 2**63 - 1] (``2**63`` itself).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / CONFIG_FILE
    >>> _ = p.write_text('{"config": " react-t0.7 ", "seed": 3, "note": "ignored"}')
    >>> read_run_config(p)
    {'config': 'react-t0.7', 'seed': 3}
    >>> _ = p.write_text('{"config": "a", "seed": 1e20}')
    >>> read_run_config(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...run_config.json: key 'seed': 1e20 is a float; a seed is a whole number written without a decimal point or exponent (e.g. 3)
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
        if len(raw) > _MAX_BYTES:
            raise ValueError(f"{path}: larger than 1 MiB; a run config is a few keys")
        data = _loads(raw.decode("utf-8-sig"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        if str(exc).startswith(str(path)):
            raise
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object such as "
                         f'{{"config": "name", "seed": 1}}, got {type(data).__name__}')
    bad = _not_finite(data)
    if bad is not None:
        raise ValueError(f"{path}: key {bad!r}: NaN, Infinity and numbers beyond the float "
                         "range are not JSON numbers; write null for a missing value")
    return {"config": _config_value(data.get("config"), str(path)),
            "seed": _seed_value(data.get("seed"), str(path))}


def _config_value(value, where: str) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where}: key 'config' must be a string, got {_text(value)}")
    if CONTROL_CHARACTERS.search(value):
        raise ValueError(f"{where}: key 'config' holds a control character or a lone "
                         f"surrogate ({value.encode('unicode_escape').decode()!r}); a "
                         "configuration's name must be plain text")
    return value.strip() or None


def _text(value) -> str:
    return getattr(value, "text", None) or repr(value)


def _seed_value(value, where: str, *, text: bool = False) -> int | None:
    """A seed: a whole number in the 64-bit range, written as an integer (file) or as the text
    of one (a task_metrics column: ``"3"``; ``"3.0"`` is refused as in the file)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if text and isinstance(value, str):  # task_metrics columns arrive as text
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"{where}: 'seed' must be a whole number written without a "
                             f"decimal point or exponent, got {value!r}") from None
    if isinstance(value, float):
        raise ValueError(f"{where}: key 'seed': {_text(value)} is a float; a seed is a whole "
                         "number written without a decimal point or exponent (e.g. 3)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: key 'seed' must be a whole number, got {_text(value)}")
    if not SEED_MIN <= value <= SEED_MAX:
        shown = str(value) if len(str(value)) <= 30 else f"an integer of {len(str(value))} digits"
        raise ValueError(f"{where}: key 'seed': {shown} is outside the 64-bit integer range "
                         f"[-2**63, 2**63 - 1]")
    return value


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
