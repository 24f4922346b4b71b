"""A run carries no success threshold: the threshold is a parameter of the analysis (each table's
``threshold=``, a report notebook's ``threshold``, the CLI's ``--threshold``). The loaders refuse
the old ``success_threshold=`` (:func:`refuse_threshold`); a threshold a run declares in its own
``run_config.json`` is only read, to be noted beside the analysis' (:func:`declared_threshold`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from dabench_analysis.schema._files import CONFIG_FILE

#: The keys of ``run_config.json`` read as the run's own success threshold, first found wins.
DECLARED_KEYS = ("success_threshold", "threshold")


def refuse_threshold(function: str, removed: Mapping[str, object]) -> None:
    """Raise TypeError for keyword arguments a loader does not take, naming the change for
    ``success_threshold``.

    Parameters
    ----------
    function : str
        The loader's name, in the message.
    removed : mapping
        The keyword arguments the loader collected beyond its own (``**removed``).

    Raises
    ------
    TypeError
        ``success_threshold`` (or ``threshold``) among them: the loaders no longer take a
        threshold; any other name: an unexpected keyword argument, as Python says it.

    Examples
    --------
    >>> refuse_threshold("load_run", {})
    >>> refuse_threshold("load_run", {"success_threshold": 0.7})
    Traceback (most recent call last):
    ...
    TypeError: load_run() no longer takes success_threshold=: the success threshold is a parameter of the analysis, not of the loaded data; pass threshold=0.7 to the table or figure (a report: --threshold 0.7, or its notebook's threshold parameter)
    """
    for key in ("success_threshold", "threshold"):
        if key in removed:
            value = removed[key]
            raise TypeError(
                f"{function}() no longer takes {key}=: the success threshold is a parameter "
                f"of the analysis, not of the loaded data; pass threshold={value!r} to the "
                f"table or figure (a report: --threshold {value!r}, or its notebook's "
                "threshold parameter)")
    if removed:
        raise TypeError(f"{function}() got an unexpected keyword argument "
                        f"{next(iter(removed))!r}")


def declared_threshold(run_dir: str | Path) -> float | None:
    """The success threshold a run folder declares in its ``run_config.json``, if any.

    Parameters
    ----------
    run_dir : path-like
        An eval-v2 run folder.

    Returns
    -------
    float or None
        The value of the first of :data:`DECLARED_KEYS` that ``run_config.json`` holds as a
        number in (0, 1]; None without the file, without the key, or for a file that is not a
        JSON object or a value that is not such a number (a note only: the file's errors are
        :func:`dabench_analysis.load._config.read_run_config`'s to report).

    Notes
    -----
    Only read, never applied: the analysis' threshold is its own parameter; a report notes a
    run whose declared threshold differs from it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> declared_threshold(d) is None
    True
    >>> _ = (d / "run_config.json").write_text('{"config": "a", "success_threshold": 0.7}')
    >>> declared_threshold(d)
    0.7
    """
    from dabench_analysis.load._config import read_object  # _config imports the loader

    try:  # the one reader of run_config.json; its errors are read_run_config's to report
        data = read_object(Path(run_dir) / CONFIG_FILE)
    except ValueError:
        return None
    for key in DECLARED_KEYS:
        value = data.get(key)
        if (isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value) and 0 < value <= 1):
            return float(value)
    return None
