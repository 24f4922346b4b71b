"""JSON summaries (NaN as null, numpy scalars as numbers) and text files, written atomically."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis._atomic import atomic_write
from dabench_analysis.export._text import visible


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp,)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="records"))
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    return obj


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``obj`` as indented, key-sorted JSON, atomically.

    NaN and infinities become ``null`` (strict JSON); numpy scalars, ``pd.NA``, paths and
    DataFrames (as a list of records) are converted.

    Parameters
    ----------
    obj : Any
        JSON-serialisable data (dicts, lists, numbers, strings, numpy scalars).
    path : path-like
        Destination file.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    TypeError
        If a value cannot be represented in JSON.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_json({"a": float("nan"), "b": np.int64(2)}, pathlib.Path(tempfile.mkdtemp()) / "s.json")
    >>> p.read_text()
    '{\\n  "a": null,\\n  "b": 2\\n}\\n'
    """
    text = json.dumps(_nan_to_none(json.loads(json.dumps(obj, default=_json_default,
                                                          allow_nan=True))),
                      indent=2, sort_keys=True, allow_nan=False)
    dest = Path(path)
    with atomic_write(dest) as fh:
        fh.write(text + "\n")
    return dest


def write_text(text: str, path: str | os.PathLike[str]) -> Path:
    """Write UTF-8 text atomically (e.g. a results paragraph as Markdown), control characters
    and lone surrogates from the data as escapes (:func:`dabench_analysis.export.visible`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> write_text("hi\\n", pathlib.Path(tempfile.mkdtemp()) / "p.md").read_text()
    'hi\\n'
    """
    dest = Path(path)
    with atomic_write(dest) as fh:
        fh.write(visible(text))
    return dest
