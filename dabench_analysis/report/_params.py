"""Notebook parameters checked before anything runs: types (papermill's ``-p`` reads values as
YAML, so ``-p run_dir 007`` arrives as the integer 7), folders that exist, and an output folder
that belongs to the run being reported."""

from __future__ import annotations

import os
from pathlib import Path

from dabench_analysis.report._jobs import run_name, safe_name  # noqa: F401 (run_name: re-exported)
from dabench_analysis.report._outputs import staged

_KINDS = {str: "a string", float: "a number", int: "an integer", bool: "true or false"}


def check_parameters(values: dict, types: dict[str, type]) -> None:
    """Raise a clear error for a notebook parameter of the wrong type.

    Parameters
    ----------
    values : dict
        Parameter name -> value (e.g. ``{"run_dir": run_dir}``).
    types : dict
        Parameter name -> expected type (``str``, ``float``, ``int``, ``bool``). An integer is
        accepted for ``float``; a bool is never taken for a number.

    Raises
    ------
    TypeError
        Naming the parameter, the value received and how to pass it with papermill (``-r`` for
        strings such as run folders, which ``-p`` would read as numbers).

    Examples
    --------
    >>> check_parameters({"run_dir": "runs/007", "threshold": 1}, {"run_dir": str,
    ...                   "threshold": float})
    >>> check_parameters({"run_dir": 7}, {"run_dir": str})
    Traceback (most recent call last):
    ...
    TypeError: notebook parameter 'run_dir' must be a string, got int 7. papermill's -p reads values as YAML (007 becomes 7): pass strings with -r, e.g. papermill IN.ipynb OUT.ipynb -r run_dir 007
    """
    for name, expected in types.items():
        value = values[name]
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if ok:
            continue
        hint = (f"papermill's -p reads values as YAML (007 becomes 7): pass strings with -r, "
                f"e.g. papermill IN.ipynb OUT.ipynb -r {name} 007" if expected is str
                else f"pass it with papermill's -p, e.g. -p {name} 0.8")
        raise TypeError(f"notebook parameter {name!r} must be {_KINDS.get(expected, expected)}, "
                        f"got {type(value).__name__} {value!r}. {hint}")


def input_dir(path: str, name: str) -> Path:
    """``path`` as an existing folder, or an error that says where it was looked for.

    Raises
    ------
    FileNotFoundError
        The folder does not exist from the working folder; the message says that the notebooks'
        default paths are relative to ``notebooks/`` (``papermill --cwd notebooks``).
    """
    p = Path(path).expanduser()
    if p.is_dir():
        return p
    in_notebooks = Path.cwd().name == "notebooks"
    hint = ("" if p.is_absolute() else
            " Relative paths are taken from the working folder: pass an absolute path."
            if in_notebooks else
            " The notebooks' default paths are relative to notebooks/: run papermill with "
            "--cwd notebooks, or pass an absolute path.")
    raise FileNotFoundError(f"{name} {str(path)!r} is not a folder (looked in "
                            f"{os.getcwd()}).{hint}")


def input_path(path: str, name: str) -> Path:
    """``path`` as an existing run folder or file of another harness (an Inspect log, a
    tau-bench results file, a per-task table), or the error of :func:`input_dir`.

    Raises
    ------
    FileNotFoundError
        As :func:`input_dir`, for a path that is neither a folder nor a file.

    Examples
    --------
    >>> input_path("tests/data/harness/tau-bench/gpt-4o-airline.json", "run_dir").name
    'gpt-4o-airline.json'
    """
    p = Path(path).expanduser()
    return p if p.is_file() else input_dir(path, name)


def output_dir_for(output_dir: str, name: str) -> Path:
    """The report folder: ``output_dir`` if given, else ``figures/<name>`` of the project.

    Parameters
    ----------
    output_dir : str
        As passed to the notebook; empty means "derive it from the report's subject".
    name : str
        The run's folder name (or ``compare_<a>_vs_<b>``): never another run's folder.

    Returns
    -------
    Path
        ``output_dir``, or ``../figures/<safe name>`` when the notebook runs in ``notebooks/``,
        else ``figures/<safe name>`` under the working folder; when the toolkit's runner runs
        the notebook, the staging folder that stands in for it until the report has finished
        (:func:`dabench_analysis.report._outputs.staged`).

    Examples
    --------
    >>> output_dir_for("", "run 7").name
    'run_7'
    """
    if output_dir:
        return staged(Path(output_dir).expanduser())
    here = Path.cwd()
    base = here.parent if here.name == "notebooks" else here
    return staged(base / "figures" / safe_name(name))
