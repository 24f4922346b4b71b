"""Usage errors of the command line in one line: a bad option value, an unknown option, a
missing argument are ``error: --success-threshold: 'abc' is not a number`` on standard error
with exit code 2, for every option of every command, instead of click's (or typer's boxed)
several lines. Configured once, on the command group (:class:`OneLineGroup`); click parses.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from dabench_analysis import export

try:  # typer before it carried its own copy of click raised click's exceptions
    from click import ClickException as _ClickException
except ImportError:  # pragma: no cover - typer without click installed
    _ClickException = typer.TyperException
#: What click (in typer, or typer's own copy of it) raises for a usage error.
USAGE_ERRORS = (typer.TyperException, _ClickException)
#: The words for a value of the wrong type: pydantic's error types (typer's coercion) and
#: click's type names.
_NOT_A = {"float_parsing": "a number", "float_type": "a number", "float": "a number",
          "int_parsing": "a whole number", "int_type": "a whole number",
          "int_from_float": "a whole number", "integer": "a whole number"}


def _hint(param: Any) -> str:
    """How the command line spells ``param``: its longest option name, or its metavar."""
    opts = getattr(param, "opts", None) or []
    if getattr(param, "param_type_name", "") == "option" and opts:
        return max(opts, key=len)
    return getattr(param, "human_readable_name", None) or str(param.name).upper()


def _value_error(exc: Exception) -> str:
    """What is wrong with the value, without the option: ``'abc' is not a number``."""
    cause = exc.__cause__
    with contextlib.suppress(AttributeError, IndexError, TypeError):
        error = cause.errors()[0]  # pydantic's ValidationError, from typer's coercion
        what = _NOT_A.get(error["type"])
        if what:
            return f"{error['input']!r} is not {what}"
        message = re.sub(r"^Input should", "should", error["msg"])
        return f"{error['input']!r}: {message}"
    message = re.sub(r" is not a valid (float|integer)\.?$",
                     lambda m: f" is not {_NOT_A[m[1]]}", str(exc.message))
    return message.rstrip(".")


def usage_line(exc: Exception) -> str:
    """A usage error in one line, without the ``error:`` prefix.

    Parameters
    ----------
    exc : Exception
        What click (or typer's copy of it) raised while parsing the command line
        (``BadParameter``, ``NoSuchOption``, ``MissingParameter``, ``UsageError``).

    Returns
    -------
    str
        A bad value: ``<option>: <what is wrong>`` (``--success-threshold: 'abc' is not a
        number``); anything else: its message on one line, pointing at ``--help``. Control
        characters are shown as escapes (:func:`~dabench_analysis.export.visible`).

    Examples
    --------
    >>> import typer
    >>> from typer.main import get_command
    >>> app = typer.Typer()
    >>> @app.command()
    ... def run(jobs: int = 1, debug: bool = False) -> None:
    ...     pass
    >>> try:
    ...     get_command(app).main(["--jobs", "x"], standalone_mode=False)
    ... except USAGE_ERRORS as exc:
    ...     print(usage_line(exc))
    --jobs: 'x' is not a whole number
    """
    param = getattr(exc, "param", None)
    if param is not None and type(exc).__name__ != "MissingParameter":
        return export.visible(f"{_hint(param)}: {_value_error(exc)}")
    text = " ".join(exc.format_message().split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        text += f" (`{ctx.command_path} --help` shows the usage)"
    return export.visible(text)


class OneLineGroup(TyperGroup):
    """The command group of ``dabench-analysis``: typer's, except that a usage error is one
    line on standard error (:func:`usage_line`) with its exit code (2)."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Run the command line; in standalone mode (the console script) exit with its code."""
        kwargs = dict(args=args, prog_name=prog_name, complete_var=complete_var, **extra)
        if not standalone_mode:
            return super().main(standalone_mode=False, **kwargs)
        try:
            code = super().main(standalone_mode=False, **kwargs)
        except USAGE_ERRORS as exc:
            if type(exc).__name__ != "NoArgsIsHelpError":  # that one: typer showed the help
                typer.secho(f"error: {usage_line(exc)}", err=True, fg="red")
            sys.exit(getattr(exc, "exit_code", 2))
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)
