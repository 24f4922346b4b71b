"""Imports deferred to first use (below every layer, like ``_atomic``): the namespaces'
PEP 562 ``__getattr__`` and ``__dir__``, and the one-line error of a missing optional extra.

A namespace's ``__init__`` lists its public API once, as ordinary imports under
``if TYPE_CHECKING:`` (read by readers, type checkers, the import contract and Sphinx) and as
``__all__``; :func:`attach` reads those import statements from the ``__init__``'s source and
imports a name's module only when the name is first used, so that ``import dabench_analysis``
loads none of SciPy, statsmodels, matplotlib, papermill, Dask, ipywidgets or inspect_ai.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _deferred(package: str, file: str) -> dict[str, tuple[str, str]]:
    """``{name: (module, attribute)}`` from the ``from X import Y [as Z]`` statements under
    ``if TYPE_CHECKING:`` at the top level of the namespace's ``__init__``."""
    tree = ast.parse(Path(file).read_text(encoding="utf-8"), file)
    where: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for imp in node.body:
            if isinstance(imp, ast.ImportFrom):
                base = importlib.util.resolve_name("." * imp.level + (imp.module or ""),
                                                   package) if imp.level else imp.module
                for alias in imp.names:
                    where[alias.asname or alias.name] = (base, alias.name)
    return where


class _Namespace(types.ModuleType):
    """A lazy namespace whose public name wins over a submodule of the same name.

    Importing ``stats.correlation`` (the module) binds ``stats.correlation`` on the package;
    when the namespace exports a function of that name (``stats.correlation``, the function),
    the function stays what the name means, as it did when the ``__init__`` imported eagerly.
    """

    def __setattr__(self, name: str, value) -> None:
        shadowed = self.__dict__.get("_lazy_shadowed", ())
        if name in shadowed and isinstance(value, types.ModuleType) \
                and value.__name__ == f"{self.__name__}.{name}":
            return  # the submodule stays reachable as sys.modules[...] and by import
        super().__setattr__(name, value)


def attach(package: str, file: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """PEP 562 ``__getattr__`` and ``__dir__`` of a namespace from its deferred imports.

    Parameters
    ----------
    package : str
        The namespace's ``__name__``.
    file : str
        Its ``__init__.py`` (``__file__``), whose ``if TYPE_CHECKING:`` block lists the
        imports to defer.

    Returns
    -------
    tuple of callable
        ``__getattr__(name)``: imports the name's module on first use and keeps the value in
        the namespace (later uses are plain attribute lookups); a submodule that the namespace
        does not list is imported when named (``da.tables.paper``); ``__dir__()``: ``__all__``.

    Raises
    ------
    AttributeError
        From ``__getattr__``, for a name the namespace neither lists nor holds as a submodule
        (as a module does).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> da.stats.proportion_ci.__module__
    'dabench_analysis.stats._proportions'
    """
    where = _deferred(package, file)
    module = sys.modules[package]
    module.__class__ = _Namespace
    module._lazy_shadowed = frozenset(  # names that are also a submodule's name
        name for name, (mod, attr) in where.items()
        if (Path(file).parent / f"{name}.py").is_file() and (mod, attr) != (package, name))

    def __getattr__(name: str):
        try:
            mod, attr = where[name]
        except KeyError:  # a submodule not listed (``da.tables.paper``), as once imported
            here = Path(file).parent
            if not name.isidentifier() or not ((here / f"{name}.py").is_file()
                                               or (here / name / "__init__.py").is_file()):
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
            mod, attr = package, name
        if mod == package:  # ``from dabench_analysis.stats import agreement``: a submodule
            value = importlib.import_module(f"{package}.{attr}")
        else:
            owner = importlib.import_module(mod)
            try:
                value = getattr(owner, attr)
            except AttributeError:
                value = importlib.import_module(f"{mod}.{attr}")
        module.__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(module.__dict__.get("__all__", where))

    return __getattr__, __dir__


def need(module: str, *, what: str, extra: str, dist: str | None = None) -> types.ModuleType:
    """Import an optional library, or fail in one line naming the extra that installs it.

    Parameters
    ----------
    module : str
        The module to import (``"ipywidgets"``, ``"distributed"``, ``"inspect_ai.log"``).
    what : str
        What needs it, as the user called it (``"da.explore"``, ``"report --scheduler"``).
    extra : str
        The package extra that installs it (``pip install 'dabench-analysis[extra]'``).
    dist : str, optional
        The distribution's name when it differs from the module's first part.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        ``"<what> needs <dist>: pip install 'dabench-analysis[<extra>]'"`` when it is missing.

    Examples
    --------
    >>> need("json", what="an example", extra="none").__name__
    'json'
    >>> need("no_such_module_here", what="da.explore", extra="explore", dist="ipywidgets")
    Traceback (most recent call last):
    ImportError: da.explore needs ipywidgets: pip install 'dabench-analysis[explore]'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        name = dist or module.split(".")[0]
        raise ImportError(f"{what} needs {name}: pip install 'dabench-analysis[{extra}]'") \
            from None
