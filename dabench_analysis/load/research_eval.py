"""Research-eval harness sessions (seed 002): ``results.jsonl`` and ``summary.json`` of each run
folder, read into a :class:`ResearchEval` (one row per case, runs, tool calls).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

STATUS = pd.CategoricalDtype(["PASS", "FAIL", "ERROR", "HALTED"], ordered=True)


ROLES = ("main", "summarizer", "audit_planner")


TOKENS = ("input_tokens", "output_tokens", "total_tokens")


TIMINGS = ("source_prepare_ms", "client_init_ms", "run_turn_ms", "llm_total_ms",
           "tool_total_ms", "local_ingestion_ms", "shortlist_ms", "case_total_ms")


@dataclass(frozen=True)
class ResearchEval:
    """A loaded session.

    Attributes
    ----------
    path : Path
    cases : DataFrame
        One row per (run_id, case_id): ``run_id, case_id, status`` (ordered categorical PASS <
        FAIL < ERROR < HALTED), ``passed`` (boolean), ``query, expected_type, expected,
        doc_ids, answer, error, elapsed_ms``, ``<role>_<input|output|total>_tokens`` (Int64)
        for main/summarizer/audit_planner, ``total_tokens``, every ``timings_ms`` field
        (float64, ms), ``n_tool_calls`` and ``calls_<tool>`` counts (Int64), and ``source``
        (``<run_id>/artifacts/results.jsonl:<line>``).
    runs : DataFrame
        One row per run profile from its ``summary.json``: ``run_id, model_alias,
        research_mode, source_provider, disabled_tools, total_cases, passed_cases,
        failed_cases, error_cases, halted_cases, avg_elapsed_ms, run_wall_ms``.
    tool_calls : DataFrame
        One row per call: ``run_id, case_id, call_index, tool, arguments`` (JSON text).
    session : dict
        The session ``summary.json``.
    """

    path: Path
    cases: pd.DataFrame
    runs: pd.DataFrame
    tool_calls: pd.DataFrame
    session: dict = field(default_factory=dict)


def _read_json(file: Path) -> Any:
    if not file.is_file():
        raise ValueError(f"{file}: file not found")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{file}:{err.lineno}: malformed JSON: {err.msg}") from None


def _case_row(obj: Any, where: str) -> tuple[dict, list[dict]]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("case_id", "status"):
        if key not in obj:
            raise ValueError(f"{where}: missing field {key!r}")
    if obj["status"] not in STATUS.categories:
        raise ValueError(f"{where}: status {obj['status']!r} not one of "
                         f"{', '.join(STATUS.categories)}")
    expected = obj.get("expected") or {}
    row = {"case_id": str(obj["case_id"]), "status": obj["status"], "passed": obj.get("passed"),
           "query": obj.get("query"), "expected_type": expected.get("type"),
           "expected": expected.get("text", expected.get("pattern")),
           "doc_ids": ",".join(obj.get("doc_ids") or []), "answer": obj.get("answer"),
           "error": obj.get("error"), "elapsed_ms": obj.get("elapsed_ms")}
    usage = obj.get("token_usage") or {}
    for role in ROLES:
        for tok in TOKENS:
            row[f"{role}_{tok}"] = (usage.get(role) or {}).get(tok)
    row |= {k: (obj.get("timings_ms") or {}).get(k) for k in TIMINGS}
    calls = obj.get("tool_calls") or []
    if not isinstance(calls, list) or any(not isinstance(c, dict) or "name" not in c
                                          for c in calls):
        raise ValueError(f"{where}: tool_calls must be a list of objects with a 'name'")
    return row, calls


def _read_run(run_dir: Path) -> tuple[list[dict], list[dict], dict]:
    file = run_dir / "artifacts" / "results.jsonl"
    if not file.is_file():
        raise ValueError(f"{file}: file not found (every run needs artifacts/results.jsonl)")
    rows, calls = [], []
    with file.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{file}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{where}: malformed JSON: {err.msg}") from None
            row, case_calls = _case_row(obj, where)
            row |= {"run_id": run_dir.name, "source": f"{run_dir.name}/artifacts/"
                    f"results.jsonl:{lineno}"}
            row["tool_counts"] = dict(Counter(str(c["name"]) for c in case_calls))
            calls += [{"run_id": run_dir.name, "case_id": row["case_id"], "call_index": i,
                       "tool": c["name"], "arguments": json.dumps(c.get("arguments"),
                                                                  sort_keys=True)}
                      for i, c in enumerate(case_calls)]
            rows.append(row)
    return rows, calls, _read_json(run_dir / "artifacts" / "summary.json")


def _typed_cases(rows: list[dict]) -> pd.DataFrame:
    counts = pd.DataFrame([r.pop("tool_counts") for r in rows], index=range(len(rows))).fillna(0)
    df = pd.DataFrame(rows)
    df["status"] = df["status"].astype(STATUS)
    df["passed"] = df["passed"].astype("boolean")
    for col in ("query", "expected_type", "expected", "doc_ids", "answer", "error"):
        df[col] = df[col].astype("string")
    tok = [f"{r}_{t}" for r in ROLES for t in TOKENS]
    df[tok] = df[tok].apply(pd.to_numeric).astype("Int64")
    df["total_tokens"] = df[[f"{r}_total_tokens" for r in ROLES]].sum(axis=1, min_count=1)
    df[["elapsed_ms", *TIMINGS]] = df[["elapsed_ms", *TIMINGS]].apply(pd.to_numeric).astype(float)
    counts = counts.reindex(sorted(counts.columns), axis=1).astype("Int64").add_prefix("calls_")
    df["n_tool_calls"] = counts.sum(axis=1).astype("Int64")
    first = ["run_id", "case_id", "status", "passed"]
    df = pd.concat([df[first + [c for c in df if c not in first + ["source"]]],
                    counts.set_axis(df.index), df[["source"]]], axis=1)
    dup = df.duplicated(["run_id", "case_id"])
    if dup.any():
        raise ValueError(f"duplicate case {df.loc[dup, 'case_id'].iloc[0]!r} in "
                         f"{df.loc[dup, 'source'].iloc[0]}")
    return df


def load_research_eval(path: str | Path) -> ResearchEval:
    """Read a research-eval session directory (seed 002 layout); never writes into it.

    Parameters
    ----------
    path : path-like
        Session directory: ``summary.json`` and ``<run_id>/artifacts/{results.jsonl,
        summary.json}`` per run profile.

    Returns
    -------
    ResearchEval
        ``cases``, ``runs``, ``tool_calls`` and ``session`` (see :class:`ResearchEval`).

    Raises
    ------
    ValueError
        Missing directory or files, malformed JSON (file and line named), a row without
        ``case_id``/``status`` or with an unknown status, duplicate cases, a run listed in
        the session summary without a directory.

    Warns
    -----
    UserWarning
        When a run summary's case counts disagree with its results.jsonl.

    Examples
    --------
    >>> import tempfile
    >>> from dabench_analysis.synthetic.research_eval import generate
    >>> d = tempfile.mkdtemp(); _ = generate(d)
    >>> ev = load_research_eval(d)
    >>> ev.cases.groupby("run_id", sort=False).size().tolist()
    [24, 24, 24]
    """
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"session directory {root} not found")
    session = _read_json(root / "summary.json")
    run_dirs = sorted(p for p in root.iterdir() if (p / "artifacts").is_dir())
    listed = [r.get("run_id") for r in session.get("runs", []) if isinstance(r, dict)]
    absent = [r for r in listed if r not in {p.name for p in run_dirs}]
    if absent:
        raise ValueError(f"{root / 'summary.json'} lists run(s) {absent} with no "
                         "<run_id>/artifacts directory")
    if not run_dirs:
        raise ValueError(f"{root}: no <run_id>/artifacts directories found")
    order = {r: i for i, r in enumerate(listed)}
    run_dirs.sort(key=lambda p: order.get(p.name, len(order)))
    rows, calls, runs = [], [], []
    for run_dir in run_dirs:
        run_rows, run_calls, summary = _read_run(run_dir)
        rows += run_rows
        calls += run_calls
        counts = pd.Series([r["status"] for r in run_rows]).value_counts()
        for key, status in (("passed_cases", "PASS"), ("failed_cases", "FAIL"),
                            ("error_cases", "ERROR"), ("halted_cases", "HALTED")):
            if key in summary and summary[key] != counts.get(status, 0):
                warnings.warn(f"{run_dir.name}: summary.json {key}={summary[key]} but "
                              f"results.jsonl has {counts.get(status, 0)} {status}", stacklevel=2)
        runs.append({"run_id": run_dir.name, **{k: summary.get(k) for k in (
            "model_alias", "research_mode", "source_provider", "total_cases", "passed_cases",
            "failed_cases", "error_cases", "halted_cases", "avg_elapsed_ms")},
            "disabled_tools": ",".join(summary.get("disabled_tools") or []),
            "run_wall_ms": (summary.get("timing_totals_ms") or {}).get("run_wall_ms")})
    if not rows:
        raise ValueError(f"{root}: the results.jsonl files hold no test cases")
    tool_calls = pd.DataFrame(calls, columns=["run_id", "case_id", "call_index", "tool",
                                              "arguments"])
    return ResearchEval(root, _typed_cases(rows), pd.DataFrame(runs), tool_calls, session)
