"""``MPLBACKEND`` checked before matplotlib is first imported (below every layer, like
``_atomic``): matplotlib validates the variable while it imports, so ``MPLBACKEND=bogus`` made
``import dabench_analysis`` (and every ``dabench-analysis`` command) end in matplotlib's
traceback. An unknown name is now ignored with one line, ``MPLBACKEND:0: UserWarning: ...``;
a valid one is applied exactly as matplotlib's import applies it. The toolkit itself never needs
the caller's backend: figures are saved to files, and report kernels get the inline backend.
"""

from __future__ import annotations

import os
import sys
import warnings

#: The variable matplotlib reads at import.
ENV = "MPLBACKEND"


def check_backend() -> str | None:
    """Import matplotlib with ``MPLBACKEND`` set aside, then apply it if matplotlib knows it.

    Returns
    -------
    str or None
        The ignored value when it is not a backend (a ``UserWarning`` said so), else None.
        Nothing is done when the variable is unset or matplotlib is already imported.

    Notes
    -----
    The environment is left as it was (child processes see the same ``MPLBACKEND``); only
    ``matplotlib.rcParams["backend"]`` is set for a valid name, as ``matplotlib/__init__.py``
    does with the variable.
    """
    name = os.environ.get(ENV)
    if not name or "matplotlib" in sys.modules:
        return None
    del os.environ[ENV]
    try:
        import matplotlib
        from matplotlib import rcsetup

        try:
            rcsetup.validate_backend(name)
        except ValueError:
            warnings.warn_explicit(  # a file name without source: one line, no code excerpt
                f"{name!r} is not a matplotlib backend (agg, pdf, svg, module://..., "
                "tkagg, qtagg, ...); ignored, matplotlib picks its default", UserWarning,
                ENV, 0)
            return name
        matplotlib.rcParams["backend"] = name
        return None
    finally:
        os.environ[ENV] = name


check_backend()  # on import: the package imports this module before any module that draws
