# Over 400 lines (<= 500): one reader of run_config.json (read_object: its JSON rules) and the config and seed rules of the file and of task_metrics.csv columns
"""Which configuration a run is a repetition of: ``run_config.json`` in the run folder, or constant
``config``/``seed`` columns in task_metrics.csv. eval-v2 writes neither; this module defines them.

The file (optional, UTF-8 JSON, read only, never written by the toolkit)::

    {"config": "gpt-x / react / temperature 0.7", "seed": 3}

``config`` (a string) names the configuration; runs with the same ``config`` are repetitions of
it, told apart by ``seed`` (optional: an integer in the 64-bit range, written without a
decimal point: ``3``, not ``3.0``; or a label some harnesses write, ``"baseline-a"``: kept as
text, with an info finding "seed is a label, not a number"). Other keys are ignored, but no key
may hold ``NaN`` or ``Infinity`` (not JSON): each refused value is an error naming the file and
the key. Without the file, columns ``config`` and ``seed`` in task_metrics.csv, each holding one
value for the whole run, say the same (a seed that reads as a whole number is one, other text a
label). A run with neither declares no configuration (``config`` missing).

:func:`declared_config` is the one check of a run's declaration, as findings: the sweep report
(:func:`run_configs`) raises its errors and warns its notes, ``validate`` lists them.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis._caller import outside_level
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._loader import load_run
from dabench_analysis.schema._files import CONFIG_FILE, TASK_FILE
from dabench_analysis.schema.checks import CONTROL_CHARACTERS

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
    """Read one ``run_config.json``: ``{"config": str or None, "seed": int, str or None}``.

    Parameters
    ----------
    path : path-like
        The JSON file (UTF-8, a BOM accepted, at most 1 MiB).

    Returns
    -------
    dict
        ``config`` (stripped; None if absent, null or blank) and ``seed`` (int; a JSON string
        is a label, kept stripped as a str; None if absent, null or blank).

    Raises
    ------
    ValueError
        Naming the file, and the key where a value is refused: unreadable, not UTF-8, not
        JSON, not an object; ``NaN``, ``Infinity`` or a number too large for a float (``1e400``)
        under any key (Python's json accepts them; they are not JSON); ``config`` not a
        string; ``seed`` neither a label nor a whole number written as one: ``true``, a list,
        ``2.5``, and also ``3.0`` and ``1e20`` (a float in an integer field), an integer
        outside the 64-bit range [-2**63, 2**63 - 1] (``2**63`` itself), a label holding a
        control character.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / CONFIG_FILE
    >>> _ = p.write_text('{"config": " react-t0.7 ", "seed": 3, "note": "ignored"}')
    >>> read_run_config(p)
    {'config': 'react-t0.7', 'seed': 3}
    >>> _ = p.write_text('{"config": "a", "seed": "baseline-a"}')
    >>> read_run_config(p)
    {'config': 'a', 'seed': 'baseline-a'}
    >>> _ = p.write_text('{"config": "a", "seed": 1e20}')
    >>> read_run_config(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...run_config.json: key 'seed': 1e20 is a float; a seed is a whole number written without a decimal point or exponent (e.g. 3)
    """
    path = Path(path)
    data = read_object(path)
    return {"config": _config_value(data.get("config"), str(path)),
            "seed": _seed_value(data.get("seed"), str(path))}



def read_object(path: Path) -> dict:
    """The JSON object of a run folder's JSON file (at most 1 MiB, UTF-8, finite numbers):
    the one reader of ``run_config.json``, for :func:`read_run_config` and the declared
    threshold (:func:`dabench_analysis.load._threshold.declared_threshold`).

    Raises
    ------
    ValueError
        Unreadable, larger than 1 MiB, not UTF-8, not JSON, not an object, or holding NaN,
        Infinity or a number beyond the float range; the message names the file.
    """
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
    return data


def _config_value(value, where: str) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where}: key 'config' must be a string, got {_text(value)}")
    return _plain(value, where, "config") or None


def _plain(value: str, where: str, key: str) -> str:
    """``value`` stripped, refused when it holds a control character (a name is plain text)."""
    if CONTROL_CHARACTERS.search(value):
        what = "a seed label" if key == "seed" else "a configuration's name"
        raise ValueError(f"{where}: key {key!r} holds a control character or a lone "
                         f"surrogate ({value.encode('unicode_escape').decode()!r}); {what} "
                         "must be plain text")
    return value.strip()


def _text(value) -> str:
    return getattr(value, "text", None) or repr(value)


def _seed_value(value, where: str, *, text: bool = False) -> int | str | None:
    """A seed: a whole number in the 64-bit range written as an integer, or a label (a JSON
    string; in a task_metrics column, where every value is text, text that is not a number).
    ``"3"`` in a column is the number 3; ``"3.0"`` there is refused as ``3.0`` in the file."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        label = _plain(value, where, "seed")
        if not text or not label:
            return label or None
        try:
            value = int(label)
        except ValueError:
            if not _is_number(label):
                return label
            raise ValueError(f"{where}: 'seed' must be a whole number written without a "
                             f"decimal point or exponent, got {value!r}") from None
    if isinstance(value, float):
        raise ValueError(f"{where}: key 'seed': {_text(value)} is a float; a seed is a whole "
                         "number written without a decimal point or exponent (e.g. 3)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: key 'seed' must be a whole number or a label, got "
                         f"{_text(value)}")
    if not SEED_MIN <= value <= SEED_MAX:
        shown = str(value) if len(str(value)) <= 30 else f"an integer of {len(str(value))} digits"
        raise ValueError(f"{where}: key 'seed': {shown} is outside the 64-bit integer range "
                         f"[-2**63, 2**63 - 1]")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
        the run declares none), ``seed`` (Int64, <NA> when not declared; string when some run's
        seed is a label, every seed then as its text), ``source`` (``"run_config.json"``,
        ``"task_metrics"`` or ``""``).

    Raises
    ------
    ValueError
        The first error of :func:`declared_config`, named: a bad ``run_config.json`` (see
        :func:`read_run_config`); ``config``/``seed`` columns that vary within a run or hold a
        seed that is a number but not a whole one; two folders with the same ``run_id``;
        ``tasks`` without ``run_id``.

    Notes
    -----
    The file wins over the columns; when both are present and disagree a warning says so. Seeds
    that are labels are kept as labels, with one warning naming them (a label tells the
    repetitions of a configuration apart as a number does). Files are only read (run
    directories are never written).

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
                          f"({str(exc).splitlines()[0]})", stacklevel=outside_level())
            continue
        if run_id in seen:
            raise ValueError(f"run_id {run_id!r} is given twice: {seen[run_id]} and {folder}")
        seen[run_id] = folder
        declared, found = declared_config(run_id, folder, tasks)
        for f in found:
            where = folder / CONFIG_FILE if f.file == CONFIG_FILE else \
                f"task_metrics of run {run_id!r}"
            if f.severity == "error":
                raise ValueError(f"{where}: {f.message}")
            if f.check != SEED_LABEL:
                warnings.warn(f"{where}: {f.message}", stacklevel=outside_level())
        rows.append(declared)
    labels = [r["seed"] for r in rows if isinstance(r["seed"], str)]
    if labels:
        warnings.warn(f"{len(labels)} run(s) declare a seed that is a label, not a number "
                      f"({', '.join(map(repr, labels[:5]))}{' ...' if len(labels) > 5 else ''})"
                      ": kept as labels, which tell the repetitions apart",
                      stacklevel=outside_level())
    seeds = "string" if labels else "Int64"
    out = pd.DataFrame(rows, columns=_COLUMNS)
    if labels:
        out["seed"] = [None if v is None else str(v) for v in out["seed"]]
    return out.astype({"run_id": "string", "config": "string", "seed": seeds,
                       "source": "string"})


#: The check of a seed that is a label (an info finding, never an error).
SEED_LABEL = "seed_label"


def declared_config(run_id: str, folder: str | os.PathLike[str],
                    tasks: pd.DataFrame | None = None, *,
                    task_file: str = TASK_FILE) -> tuple[dict, list[Finding]]:
    """What one run declares (``run_config.json``, else constant ``config``/``seed`` task
    columns) and every finding on the way: the one check of a run's declaration, for the sweep
    report (:func:`run_configs`) and ``validate``.

    Parameters
    ----------
    run_id : str
        The run (its rows in ``tasks``).
    folder : path-like
        The run folder (``run_config.json`` is looked for there; a file of another harness has
        none).
    tasks : DataFrame, optional
        Task rows with ``config`` / ``seed`` columns (and ``run_id``: rows of other runs are
        ignored; without it every row is the run's).
    task_file : str
        How the findings name the task file.

    Returns
    -------
    declared : dict
        ``run_id``, ``config`` (str or None), ``seed`` (int, str label or None), ``source``
        (``"run_config.json"``, ``"task_metrics"`` or ``""``); a value refused is None.
    findings : list of Finding
        ``error`` (check ``run_config``): a ``run_config.json`` refused by
        :func:`read_run_config`, columns varying within the run or a seed written as a number
        that is not a whole one; ``warning`` (``run_config_conflict``): file and columns
        disagree (the file is used); ``info`` (``seed_label``): the seed is a label, not a
        number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / CONFIG_FILE).write_text('{"config": "react", "seed": "baseline-a"}')
    >>> declared, found = declared_config("r1", d)
    >>> declared["seed"], [(f.severity, f.file, f.column, f.check) for f in found]
    ('baseline-a', [('info', 'run_config.json', 'seed', 'seed_label')])
    >>> found[0].message
    "seed is a label, not a number ('baseline-a'): kept as text; it tells the run apart from the configuration's other repetitions"
    """
    if tasks is not None and "run_id" not in tasks:
        tasks = tasks.assign(run_id=run_id)
    found: list[Finding] = []
    cols = {}
    for key in ("config", "seed"):
        try:
            cols[key] = _constant(tasks, run_id, key)
        except ValueError as exc:
            found.append(Finding("error", task_file, None, key, "run_config",
                                 str(exc).removeprefix(f"task_metrics of run {run_id!r}: ")))
            cols[key] = None
    file, seed_file = Path(folder) / CONFIG_FILE, task_file
    if not file.is_file():
        has = cols["config"] is not None or cols["seed"] is not None
        declared = {"run_id": run_id, **cols, "source": "task_metrics" if has else ""}
    else:
        try:
            read = read_run_config(file)
        except ValueError as exc:
            text = str(exc).removeprefix(f"{file}: ")
            key = next((k for k in ("config", "seed") if f"key '{k}'" in text), None)
            found.append(Finding("error", CONFIG_FILE, None, key, "run_config", text))
            read = {"config": None, "seed": None}
            cols = read  # what the file says is not known: nothing to compare
        clash = [k for k in ("config", "seed") if cols[k] is not None
                 and (read[k] is None or str(cols[k]) != str(read[k]))]
        if clash:
            found.append(Finding(
                "warning", CONFIG_FILE, None, ", ".join(clash), "run_config_conflict",
                f"{' and '.join(clash)} differ(s) from the task_metrics column(s) "
                f"({', '.join(f'{k}={cols[k]!r}' for k in clash)}); the file is used"))
        declared, seed_file = {"run_id": run_id, **read, "source": CONFIG_FILE}, CONFIG_FILE
    if isinstance(declared["seed"], str):
        found.append(Finding("info", seed_file, None, "seed", SEED_LABEL,
                             f"seed is a label, not a number ({declared['seed']!r}): kept as "
                             "text; it tells the run apart from the configuration's other "
                             "repetitions"))
    return declared, found
