"""Which functions declare their inputs (:func:`dabench_analysis.schema.needs.needs`), found by
walking the analysis namespaces: what validation's "disables" messages and the docs' table of
inputs read (:func:`needing`, :func:`using`, :func:`optional_columns`).
"""

from __future__ import annotations

import types
from collections.abc import Callable

from dabench_analysis.schema.columns import TASK_COLUMNS
from dabench_analysis.schema.needs import _DECLARED

#: The namespaces whose functions compute analyses (the layers above this one), walked by
#: :func:`declared`: the one place this layer reads names of the layers above, at run time.
ANALYSIS_NAMESPACES = ("stats", "tables", "figures", "export", "trajectory", "judge", "research_eval")


def _walk(namespace: types.ModuleType, seen: set[str]) -> None:
    """Load every public name of a (lazy) namespace and of its sub-namespaces."""
    if namespace.__name__ in seen:
        return
    seen.add(namespace.__name__)
    for name in getattr(namespace, "__all__", ()):
        try:
            value = getattr(namespace, name)
        except ImportError:  # an optional extra not installed: nothing of it is declared
            continue
        if isinstance(value, types.ModuleType) and value.__name__.startswith(namespace.__name__):
            _walk(value, seen)


def declared() -> list[Callable]:
    """Every function declared with :func:`needs`: the public namespaces of the analysis
    layers (:data:`ANALYSIS_NAMESPACES`) are walked, loading their modules, so that the list
    does not depend on what was imported before.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> da.tables.difficulty_breakdown in declared()
    True
    """
    import sys

    root = sys.modules[__name__.split(".")[0]]
    seen: set[str] = set()
    for name in ANALYSIS_NAMESPACES:
        _walk(getattr(root, name), seen)
    return [f for f in _DECLARED  # not a function of an example or a test
            if (f.__module__.split(".") + [""])[1] in ANALYSIS_NAMESPACES]


def name_of(func: Callable) -> str:
    """How validation and the docs name a declared function: as users reach it, its module
    below the package, or, when that module is private (``_name``), the namespace that exports
    the function.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> name_of(da.tables.failures.root_causes)
    'tables.failures.root_causes'
    >>> name_of(da.tables.key_numbers)  # defined in the private tables/_summary.py
    'tables.key_numbers'
    """
    import sys

    parts = func.__module__.split(".")
    public = [p for p in parts if not p.startswith("_")]
    if len(public) < len(parts):  # a private module: the namespace above it, if it exports it
        space = sys.modules.get(".".join(parts[:len(public)]))
        seen = getattr(space, func.__name__, None) if space is not None else None
        if seen is func or (getattr(seen, "__module__", None), getattr(seen, "__name__", None)) \
                == (func.__module__, func.__name__):  # or its wrapper (takes_run)
            parts = public
    return ".".join([*parts[1:], func.__name__])


def needing(column: str) -> list[str]:
    """Names of the declared functions an absent ``column`` (or optional file, or
    ``"<file>:<column>"``) disables, sorted (whatever order their modules were imported in).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> needing("outcome_error_type")
    ['tables.failures.outcome_error_types']
    """
    return sorted({name_of(f) for f in declared() if column in f.needs.columns
                   or column in f.needs.files or column in f.needs.file_needs})


def using(column: str) -> list[str]:
    """Names of the declared functions that use ``column`` when present (without needing it).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> "tables.paper.main_results" in using("analyst_score")
    True
    """
    return sorted({name_of(f) for f in declared() if column in f.needs.uses})

def optional_columns() -> list[str]:
    """task_metrics columns of the optional tier, in catalogue order.

    Examples
    --------
    >>> "difficulty" in optional_columns(), "task_id" in optional_columns()
    (True, False)
    """
    return [c.name for c in TASK_COLUMNS.values() if not c.required]
