"""The arguments of a command, checked at the edge before any work starts: the run folders (each
a folder, each once), ``--baseline`` (an evaluated run), ``--judge-study`` and
``--research-eval`` (folders holding their files), ``--worked-case`` (a case with a verdict),
and no file the toolkit did not write where it would write one. Each problem is one line with
exit code 2 (:class:`~dabench_analysis.report._edge.EdgeError`).
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from dabench_analysis.export._text import visible
from dabench_analysis.report._edge import EdgeError
from dabench_analysis.report._outputs import in_the_way


def check_runs(paths: Sequence[str | os.PathLike[str]], *,
               say: Callable[[str], None] | None = None, fmt: str | None = None) -> list[Path]:
    """The runs of a command: each a readable folder (eval-v2) or a readable file (another
    harness's results, in ``fmt`` or a format recognised from its content); a run given twice
    (also through a link) is one run, with a note through ``say``.

    Returns
    -------
    list of Path
        ``paths`` in their order, each folder once (as first given).

    Raises
    ------
    EdgeError
        Exit code 2, naming the first path that is neither a readable folder nor a readable
        file of a known format (does not exist, cannot be read, no ``fmt`` and none
        recognised: :func:`dabench_analysis.load.detect_format`).

    Examples
    --------
    >>> [p.name for p in check_runs(["data/sample_runs/pending_run"] * 2, say=print)]
    note: data/sample_runs/pending_run is data/sample_runs/pending_run again: one run
    ['pending_run']
    >>> check_runs(["/nonexistent/run"])
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: run directory /nonexistent/run does not exist
    """
    from dabench_analysis.load._findings import RunLoadError
    from dabench_analysis.load._folders import check_dir, identity
    from dabench_analysis.load._formats import detect_format
    from dabench_analysis.load._readers import formats

    kept: dict[tuple[int, int] | None, Path] = {}
    for path in map(Path, paths):
        try:
            if path.is_file():  # another harness's file (an Inspect log, tau-bench results)
                path.open("rb").close()  # it can be read
                if fmt is None and detect_format(path) is None:
                    raise EdgeError(f"run {visible(str(path))} is a file of no format this "
                                    f"toolkit recognises: pass a run folder, or --format "
                                    f"({', '.join(f for f in formats() if f != 'eval-v2')})")
            else:
                check_dir(path)
        except RunLoadError as exc:
            raise EdgeError(str(exc)) from None
        except OSError as exc:
            raise EdgeError(f"run file {visible(str(path))}: cannot read "
                            f"({exc.strerror or exc})") from None
        key = identity(path)  # the folder itself, whatever the links on the way
        if key is not None and key in kept:  # None: gone since it was checked
            if say is not None:
                say(f"note: {visible(str(path))} is {visible(str(kept[key]))} again: one run")
            continue
        kept[key] = path
    return list(kept.values())


def check_map(mapping: dict, runs: Sequence[Path], fmt: str | None) -> None:
    """``--map`` renames the columns of per-task tables: at least one run must be one (given
    ``--format table`` or recognised as a CSV, JSONL or Parquet file), and each table must have
    every column the mapping names (its header read, :func:`table_columns`).

    Parameters
    ----------
    mapping : dict
        ``{catalogue column: table column}`` (checked by
        :func:`dabench_analysis.harnesses._table.check_mapping`).
    runs : sequence of Path
        The runs given (folders and files).
    fmt : str or None
        ``--format``.

    Raises
    ------
    EdgeError
        Exit code 2: ``--map`` given and no run is a per-task table (it would be ignored), or a
        table without a mapped column (one line naming the file, the column and the columns it
        has).

    Examples
    --------
    >>> check_map({"final_score": "score"}, [Path("data/sample_runs/baseline_react")], None)
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --map renames the columns of a per-task table \
(CSV, JSONL, Parquet), and none of the runs given is one
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "results.csv"
    >>> _ = p.write_text("sample_id,passed\\nq1,1\\n")
    >>> check_map({"task_id": "sample_id", "final_score": "score"}, [p], None)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --map final_score=score: .../results.csv has no \
column 'score' (its columns: sample_id, passed)
    """
    from dabench_analysis.load._formats import detect_format

    if not mapping:
        return
    tables = [r for r in runs if Path(r).is_file()
              and (fmt == "table" if fmt is not None else detect_format(r) == "table")]
    if not tables:
        raise EdgeError("--map renames the columns of a per-task table (CSV, JSONL, Parquet), "
                        "and none of the runs given is one")
    for path in tables:
        present = table_columns(path)
        if present is None:  # unreadable: its report says why
            continue
        for name, column in mapping.items():
            if column not in present:
                shown = ", ".join(visible(c) for c in present[:_SHOWN]) or "none"
                more = f" and {len(present) - _SHOWN} more" if len(present) > _SHOWN else ""
                raise EdgeError(f"--map {name}={visible(column)}: {visible(str(path))} has no "
                                f"column {visible(repr(column))} (its columns: {shown}{more})")


#: Columns of a table named in a ``--map`` error, at most.
_SHOWN = 30


def table_columns(path: str | os.PathLike[str]) -> list[str] | None:
    """The column names of a per-task table, read cheaply: a CSV file's header line (names
    stripped, as the CSV reader strips them), the keys of a JSON-lines file's records (in order
    of first appearance), a Parquet file's schema.

    Returns
    -------
    list of str or None
        None when the file cannot be read as its suffix says (the report then says why).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = p.write_text('{"id": "a", "score": 1}\\n\\n{"id": "b", "tokens": 3}\\n')
    >>> table_columns(p)
    ['id', 'score', 'tokens']
    """
    from dabench_analysis.load._csv import read_header
    from dabench_analysis.load._findings import RunLoadError

    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            return _jsonl_keys(path)
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return [c.strip() for c in read_header(path)]
    except (RunLoadError, OSError, ValueError):  # pyarrow's errors are OSError / ValueError
        return None


def _jsonl_keys(path: Path) -> list[str] | None:
    keys: dict[str, None] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            if not isinstance(record, dict):
                return None
            keys.update(dict.fromkeys(record))
    return list(keys)


def check_kernel(name: str) -> None:
    """``--kernel`` names an installed Jupyter kernel (jupyter_client's kernel specs).

    Raises
    ------
    EdgeError
        Exit code 2, naming the kernels that are installed.

    Examples
    --------
    >>> check_kernel("no-such-kernel")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --kernel 'no-such-kernel': no such Jupyter kernel ...
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    specs = KernelSpecManager()
    try:
        specs.get_kernel_spec(name)
    except NoSuchKernel:
        known = ", ".join(sorted(specs.find_kernel_specs())) or "none"
        raise EdgeError(f"--kernel {visible(repr(name))}: no such Jupyter kernel (installed: "
                        f"{known})") from None


def check_baseline(baseline: str | os.PathLike[str]) -> None:
    """``--baseline`` names an evaluated run: something to compare the others against.

    Raises
    ------
    EdgeError
        Exit code 2: neither a folder nor a file, a folder without ``task_metrics.csv``, or
        a file without scores (:func:`dabench_analysis.report.is_evaluated`).

    Examples
    --------
    >>> check_baseline("data/sample_runs/pending_run")
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --baseline data/sample_runs/pending_run: not a run \
to compare against: no task_metrics.csv: evaluate the run with the eval-v2 harness first \
(the harness's command: `dabench eval-v2 <RUN_ID>`)
    """
    from dabench_analysis.report._jobs import is_evaluated
    from dabench_analysis.schema._files import NOT_EVALUATED_HINT

    check_runs([baseline])
    if not is_evaluated(Path(baseline)):
        raise EdgeError(f"--baseline {baseline}: not a run to compare against: "
                        f"{NOT_EVALUATED_HINT}")


def check_in_the_way(jobs: Sequence, out: str | os.PathLike[str], *,
                     names: Sequence[str] = (), kind: str = "") -> None:
    """No file the toolkit did not write stands where it would write one.

    Parameters
    ----------
    jobs : sequence of Job
        Planned reports: ``index.html`` in ``out``, and in each report's folder its fixed names
        and what the catalogue's sections of its kind write
        (:func:`dabench_analysis.report._outputs.in_the_way`).
    out : path-like
        The ``--out`` folder.
    names, kind : sequence of str, str
        Other names in ``out`` itself, and whose list of files says the toolkit wrote them
        (``validate --out``: its four files, kind ``"validate"``).

    Raises
    ------
    EdgeError
        Exit code 2, naming the first such file (and how many more there are).

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = (out / "index.html").write_text("<h1>mine</h1>")
    >>> check_in_the_way([], out)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --out ...: .../index.html is in the way: ...
    """
    from dabench_analysis.report._index import INDEX, INDEX_KIND
    from dabench_analysis.report.runner import notebook_outputs

    found = in_the_way(out, names, kind=kind) if names else \
        in_the_way(out, [INDEX], kind=INDEX_KIND)
    for job in jobs:
        found += in_the_way(job.out_dir, stems=notebook_outputs(job.notebook))
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise EdgeError(f"--out {out}: {found[0]} is in the way{more}: dabench-analysis did "
                        "not write it and never overwrites it; move it away or choose another "
                        "--out")


def _required(option: str) -> tuple[tuple[str, ...], str]:
    """What the folder of ``option`` must hold (file names, or patterns that must match at
    least one file) and what such a folder is called."""
    if option == "--judge-study":
        from dabench_analysis.judge._load import CASES, DIMENSIONS, FACTOIDS, VERDICTS

        return (CASES, VERDICTS, FACTOIDS, DIMENSIONS), "a judge study"
    return ("summary.json", "*/artifacts/results.jsonl"), "a research-eval session"


def check_input_folder(option: str, folder: str | os.PathLike[str]) -> None:
    """A ``--judge-study`` or ``--research-eval`` folder exists and holds the files its reader
    needs (the four CSV files of a judge study; a session's ``summary.json`` and at least one
    ``<run_id>/artifacts/results.jsonl``). Their contents are checked by the report.

    Raises
    ------
    EdgeError
        Exit code 2, naming the option, the folder and what it lacks.

    Examples
    --------
    >>> check_input_folder("--judge-study", "data/sample_runs")
    Traceback (most recent call last):
    ...
    dabench_analysis.report._edge.EdgeError: --judge-study data/sample_runs: not a judge study: \
no cases.csv, judge_verdicts.csv, factoid_ratings.csv, dimension_ratings.csv
    """
    root = Path(folder)
    if not root.is_dir():
        raise EdgeError(f"{option} {folder}: no such folder")
    needed, noun = _required(option)
    absent = [n for n in needed if not any(p.is_file() for p in root.glob(n))]
    if absent:
        raise EdgeError(f"{option} {folder}: not {noun}: no {', '.join(absent)}")


def _notebook_default(notebook: Path, name: str) -> object:
    """The default of parameter ``name`` in ``notebook``'s cell tagged ``parameters``."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for node in ast.parse("".join(cell["source"])).body:
                if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == name:
                    return ast.literal_eval(node.value)
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name
                                                        for t in node.targets):
                    return ast.literal_eval(node.value)
    raise KeyError(f"{notebook.name} has no parameter {name!r}")


def check_report_inputs(judge_study: Path | None, research_eval: Path | None,
                        worked_case: str | None) -> None:
    """The report's input folders given as options hold their files
    (:func:`check_input_folder`), and ``--worked-case`` is a case of the judge study with a
    verdict of the judge notebook's ``worked_configuration``.

    Raises
    ------
    EdgeError
        Exit code 2 (a bad parameter), naming the option and what is wrong.
    """
    for option, folder in (("--judge-study", judge_study), ("--research-eval", research_eval)):
        if folder is not None:
            check_input_folder(option, folder)
    if worked_case is None:
        return
    if judge_study is None:
        raise EdgeError("--worked-case needs a judge study (--judge-study DIR)")
    import warnings

    from dabench_analysis.judge import read_judge_study
    from dabench_analysis.report.runner import NOTEBOOK_DIR

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the report lists the study's findings
            study = read_judge_study(judge_study, strict=False)
    except ValueError:
        return  # a study that cannot be read fails its own report, the others go on
    cases = study.cases["test_case_id"].tolist()
    if worked_case not in cases:
        raise EdgeError(f"--worked-case {worked_case!r}: not a test_case_id of "
                        f"{Path(judge_study) / 'cases.csv'} (it has "
                        f"{', '.join(cases[:5])}{' ...' if len(cases) > 5 else ''})")
    configuration = _notebook_default(NOTEBOOK_DIR / "judge_agreement.ipynb",
                                      "worked_configuration")
    try:
        study.worked_verdict(worked_case, configuration)
    except ValueError as exc:
        raise EdgeError(f"--worked-case {worked_case!r}: {exc}") from None
