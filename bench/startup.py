"""The package's size and start-up: what a user installs, imports and waits for.

Size (static, from the source with ``ast``): modules (and how many are public, no ``_`` in the
path), lines split into code, docstrings and the rest (comments, blank lines), the distinct
names in the ``__all__`` of the top level, ``schema`` and the core layers (``load``,
``validate``, ``stats``, ``tables``, ``figures``, ``export``) and in every namespace's
``__all__`` (qualified: ``da.load_run`` and ``da.load.load_run`` are two names), the public functions and classes (top-level ``def``/``class`` without ``_`` in the
public modules) and the required dependencies of ``pyproject.toml`` (with the extras).

Start-up (fresh processes, ``--repeats`` each, interleaved, medians): ``python -c "import
pandas"``, ``python -c "import pandas, dabench_analysis"``, ``python -c "import
dabench_analysis"`` and ``dabench-analysis --help``; the import beyond pandas (target <= 0.5 s)
and ``--help`` over the bare pandas import (target <= 1.5), and which heavy libraries a bare
``import dabench_analysis`` loads (target: none).

    .venv/bin/python bench/startup.py                  # this checkout, 10 repeats
    .venv/bin/python bench/startup.py --source DIR     # size of another checkout (no timing
                                                       # unless --timing: it times this venv)

Prints a table; ``--json FILE`` writes the figures too.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import statistics
import subprocess
import sys
import time
import tokenize
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The namespaces of the core (issue 34: the top level, schema and the core layers).
CORE = ("", "schema", "load", "validate", "stats", "tables", "figures", "export")
#: Libraries a bare ``import dabench_analysis`` must not load (issue 37 item 3).
HEAVY = ("scipy", "statsmodels", "matplotlib", "seaborn", "papermill", "nbformat", "nbclient",
         "nbconvert", "distributed", "dask", "ipywidgets", "inspect_ai", "IPython", "krippendorff",
         "typer", "rich", "jinja2")


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers (1-based) spanned by the docstrings of a module, its classes and functions."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _code_lines(source: str) -> set[int]:
    """Line numbers that hold a token other than a comment, a newline or indentation."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER, tokenize.ENCODING}
    lines: set[int] = set()
    for tok in tokenize.tokenize(io.BytesIO(source.encode()).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def _all_names(tree: ast.Module) -> list[str]:
    """The names of a module's ``__all__`` (``=`` and ``+=`` of literal lists or tuples)."""
    names: list[str] = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            else node.target if isinstance(node, ast.AugAssign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:
            try:
                names += list(ast.literal_eval(node.value))
            except ValueError:
                pass  # computed: not counted
    return names


def size(source: Path = ROOT) -> dict:
    """The static size of the package under ``source`` (a checkout's root)."""
    pkg = source / "dabench_analysis"
    out = {"modules": 0, "public_modules": 0, "lines": 0, "code_lines": 0, "docstring_lines": 0,
           "public_defs": 0}
    core_all: set[str] = set()  # qualified: "schema.TASK_FILE", "load_run" (top level)
    every_all: set[str] = set()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        public = not any(p.startswith("_") and p not in ("__init__.py", "__main__.py")
                         for p in rel.parts)
        out["modules"] += 1
        out["public_modules"] += public
        doc = _docstring_lines(tree)
        out["lines"] += len(text.splitlines())
        out["docstring_lines"] += len(doc)
        out["code_lines"] += len(_code_lines(text) - doc)
        if public:
            out["public_defs"] += sum(
                isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and not n.name.startswith("_") for n in tree.body)
        if rel.name == "__init__.py":
            space = ".".join(rel.parent.parts)
            names = {f"{space}.{n}".lstrip(".") for n in _all_names(tree)}
            every_all.update(names)
            if space in CORE:
                core_all.update(names)
    out["core_all_names"] = len(core_all)
    out["all_names"] = len(every_all)
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out["dependencies"] = [d.split(">")[0].split("=")[0].split("[")[0].strip()
                           for d in project["dependencies"]]
    out["n_dependencies"] = len(out["dependencies"])
    out["extras"] = sorted(project.get("optional-dependencies", {}))
    return out


def _seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT)
    return time.perf_counter() - start


def startup(repeats: int = 10, python: str = sys.executable) -> dict:
    """Medians over ``repeats`` fresh processes of each command, the commands interleaved."""
    cli = str(Path(python).with_name("dabench-analysis"))
    cmds = {"pandas": [python, "-c", "import pandas"],
            "pandas_package": [python, "-c", "import pandas, dabench_analysis"],
            "package": [python, "-c", "import dabench_analysis"],
            "help": [cli, "--help"]}
    for cmd in cmds.values():  # warm: byte code and the OS page cache
        _seconds(cmd)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(repeats):
        for key, cmd in cmds.items():
            times[key].append(_seconds(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    probe = ("import sys, json, dabench_analysis; "
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))")
    loaded = json.loads(subprocess.run([python, "-c", probe], check=True, capture_output=True,
                                       text=True, cwd=ROOT).stdout)
    return {"repeats": repeats, "median_s": med,
            "import_beyond_pandas_s": med["pandas_package"] - med["pandas"],
            "help_vs_pandas": med["help"] / med["pandas"],
            "heavy_loaded_by_import": loaded}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=ROOT, help="checkout whose size to count")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--timing", action=argparse.BooleanOptionalAction, default=None,
                    help="time this venv's start-up (default: when --source is this checkout)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    res = {"size": size(args.source)}
    s = res["size"]
    print(f"modules {s['modules']} ({s['public_modules']} public); lines {s['lines']}: code "
          f"{s['code_lines']}, docstrings {s['docstring_lines']}")
    print(f"names in __all__: {s['core_all_names']} in the top level, schema and core layers, "
          f"{s['all_names']} in every namespace; public functions and classes {s['public_defs']}")
    print(f"required dependencies {s['n_dependencies']}: {', '.join(s['dependencies'])}; "
          f"extras: {', '.join(s['extras'])}")
    timing = args.timing if args.timing is not None else \
        args.source.resolve() == ROOT.resolve()
    if timing:
        res["startup"] = t = startup(args.repeats)
        med = t["median_s"]
        print(f"median of {t['repeats']} fresh processes (s): " + ", ".join(
            f"{k} {v:.3f}" for k, v in med.items()))
        print(f"import dabench_analysis beyond pandas: {t['import_beyond_pandas_s']:.3f} s "
              f"(target <= 0.5); --help / import pandas: {t['help_vs_pandas']:.2f} "
              f"(target <= 1.5)")
        print("heavy libraries loaded by import dabench_analysis: "
              + (", ".join(t["heavy_loaded_by_import"]) or "none"))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
