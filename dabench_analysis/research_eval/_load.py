# Over 400 lines: one reader of the research-eval harness layout, whose field kinds (the Notes
# of load_research_eval) form one table; split, the kinds and their checks would drift apart.
"""Research-eval harness sessions (seed 002): ``results.jsonl`` and ``summary.json`` of each run
folder, read into a :class:`ResearchEval`. Values are checked by their field's kind; what is
converted (with a warning) and what is an error: :func:`load_research_eval`, Notes.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from dabench_analysis._caller import outside_level
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import Finding
from dabench_analysis.load._rules import parse_flags
from dabench_analysis.schema import NULL_VALUES
from dabench_analysis.schema.rules import MAX_COUNT

STATUS = pd.CategoricalDtype(["PASS", "FAIL", "ERROR", "HALTED"], ordered=True)
ROLES = ("main", "summarizer", "audit_planner")
TOKENS = ("input_tokens", "output_tokens", "total_tokens")
TIMINGS = ("source_prepare_ms", "client_init_ms", "run_turn_ms", "llm_total_ms",
           "tool_total_ms", "local_ingestion_ms", "shortlist_ms", "case_total_ms")
SUMMARY_COUNTS = ("total_cases", "passed_cases", "failed_cases", "error_cases", "halted_cases")
RUN_TYPES = {"model_alias": "string", "research_mode": "boolean",
             "source_provider": "string", **dict.fromkeys(SUMMARY_COUNTS, "Int64"),
             "avg_elapsed_ms": "float64", "disabled_tools": "string", "run_wall_ms": "float64"}

_NAN = "written as NaN, read as missing"
_NULL = "written as a null string ('', 'NA', 'null', ...), read as missing"
_FLAG = "written as a string or number in a boolean field, read as true/false"
_NUMBER = "written as a string in a numeric field, read as a number"
_WHOLE = "written as a float with no fraction (e.g. 12.0) in a count field, read as an integer"
_SPLIT = "written as a comma-separated string in a list field, split on commas"
_TEXT = "of another JSON type in a text field, kept as JSON text"
_IDENT = "written as an integer in an identifier field, read as text"


@dataclass(frozen=True)
class ResearchEval:
    """A loaded session.

    Attributes
    ----------
    path : Path
    cases : DataFrame
        One row per (run_id, case_id): ``run_id, case_id, status`` (ordered categorical PASS <
        FAIL < ERROR < HALTED), ``passed`` (boolean), ``query, expected_type, expected, doc_ids``
        (comma-joined), ``answer, error`` (string), ``elapsed_ms`` and every ``timings_ms``
        field (float64, ms), ``<role>_<input|output|total>_tokens`` (Int64) for ROLES,
        ``total_tokens`` (Int64, sum of the role totals), ``n_tool_calls`` and
        ``calls_<tool>`` (Int64), ``source`` (``<run_id>/artifacts/results.jsonl:<line>``).
    runs : DataFrame
        One row per run (its ``summary.json``): ``run_id, model_alias, research_mode``
        (boolean), ``source_provider, total_cases, passed_cases, failed_cases, error_cases,
        halted_cases`` (Int64), ``avg_elapsed_ms, disabled_tools`` (joined), ``run_wall_ms``.
    tool_calls : DataFrame
        One row per call: ``run_id, case_id, call_index, tool, arguments`` (JSON text).
    session : dict
        The session ``summary.json`` as parsed (only its ``runs`` list is checked).
    findings : tuple of Finding
        Warnings about the session as a whole (``case_missing``: a case absent from a run).
    inputs : dict
        File path -> the stamp of the bytes read (a report's manifest checks them).
    """

    path: Path
    cases: pd.DataFrame
    runs: pd.DataFrame
    tool_calls: pd.DataFrame
    session: dict = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    inputs: dict = field(default_factory=dict, repr=False, compare=False)


class _Number(float):
    """A non-finite JSON number (NaN, Infinity, 1e400) or a > 300-digit integer, with its text."""

    def __new__(cls, text: str) -> _Number:
        obj = super().__new__(cls, float(text))
        obj.text = text if len(text) <= 30 else f"{text[:12]}... ({len(text)} digits)"
        return obj


def _loads(text: str) -> Any:
    """``json.loads`` with NaN, Infinity, 1e400 and huge integers as :class:`_Number`."""
    return json.loads(text, parse_constant=_Number,
                      parse_float=lambda s: f if math.isfinite(f := float(s)) else _Number(s),
                      parse_int=lambda s: int(s) if len(s) <= 300 else _Number(s))


#: A JSON escape of a UTF-16 surrogate (``\ud800``): paired, a character; alone, text that no
#: table column (Arrow strings are UTF-8) can hold.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATES = ("held a lone UTF-16 surrogate, which no table can hold: read as its escape "
               "text (\\ud800)")


def _no_surrogates(value: Any, where: str, notes: list, name: str = "") -> Any:
    """``value`` with every lone surrogate in its text written as its escape text, noted."""
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value
        notes.append((_SURROGATES, where, name or "(top level)", _show(value)))
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, dict):
        return {k: _no_surrogates(v, where, notes, f"{name}.{k}" if name else str(k))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_no_surrogates(v, where, notes, f"{name}[{i}]") for i, v in enumerate(value)]
    return value


def _json_number(text: str) -> Any:
    try:
        value = _loads(text)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


def _show(value: Any) -> str:
    text = (value.text if isinstance(value, _Number) else repr(value) if isinstance(value, str)
            else json.dumps(value, default=str))
    return text if len(text) <= 60 else text[:57] + "..."


class _Fields:
    """Reads the fields of one JSON object by kind: errors name ``where`` and the field,
    conversions go to ``notes`` (warned by the caller)."""

    def __init__(self, where: str, notes: list[tuple[str, str, str, str]]):
        self.where, self.notes = where, notes

    def fail(self, name: str, value: Any, what: str) -> NoReturn:
        raise ValueError(f"{self.where}: field {name!r}: {_show(value)} {what}")

    def note(self, name: str, value: Any, rule: str) -> None:
        self.notes.append((rule, self.where, name, _show(value)))

    def _absent(self, name: str, value: Any, noun: str) -> bool:
        """True for null and NaN (noted: warned later); Infinity, 1e400 are errors."""
        if isinstance(value, float) and math.isinf(value):
            self.fail(name, value, f"is not a {noun}")
        if isinstance(value, float) and math.isnan(value):
            self.note(name, value, _NAN)
            return True
        return value is None

    def number(self, name: str, value: Any, *, count: bool) -> int | float | None:
        noun = "count" if count else "duration in ms"
        if isinstance(value, str) and value.strip() in NULL_VALUES:
            return self.note(name, value, _NULL)
        if isinstance(value, str) and not isinstance(parsed := _json_number(value), str):
            self.note(name, value, _NUMBER)
            value = parsed
        if isinstance(value, bool) or not isinstance(value, int | float | None):
            self.fail(name, value, f"is not a {noun}")
        if self._absent(name, value, f"finite {noun}"):
            return None
        if value < 0:
            self.fail(name, value, f"is not a {noun} (negative)")
        if not count:
            return float(value)
        if isinstance(value, float):
            if not value.is_integer():
                self.fail(name, value, "is not a whole number")
            self.note(name, value, _WHOLE)
        if value >= MAX_COUNT:
            self.fail(name, value, "is not a count below 2**53")
        return int(value)

    def flag(self, name: str, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        flag, _, bad = (s.iloc[0] for s in parse_flags(pd.Series([str(value)], dtype=object)))
        if bad:  # also lists, objects and Infinity; NaN and "NA" are read as missing
            self.fail(name, value, "is not a boolean (true/false)")
        self.note(name, value, _FLAG if pd.notna(flag) else
                  _NAN if isinstance(value, float) else _NULL)
        return None if pd.isna(flag) else bool(flag)

    def text(self, name: str, value: Any) -> str | None:
        if isinstance(value, str) or self._absent(name, value, "text"):
            return value if isinstance(value, str) else None
        self.note(name, value, _TEXT)
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    def ident(self, name: str, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            self.note(name, value, _IDENT)
        elif not isinstance(value, str) or not value.strip():
            self.fail(name, value, "is not an identifier (a non-empty string)")
        return str(value)

    def items(self, name: str, value: Any) -> list[str]:
        if self._absent(name, value, "list of strings"):
            return []
        if isinstance(value, str):
            self.note(name, value, _SPLIT)
            return [s.strip() for s in value.split(",") if s.strip()]
        if not isinstance(value, list):
            self.fail(name, value, "is not a list of strings")
        out = [self.ident(f"{name}[{i}]", v) for i, v in enumerate(value)]
        for i in [i for i, v in enumerate(out) if "," in v][:1]:
            self.fail(f"{name}[{i}]", out[i], "contains a comma (lists are stored comma-joined)")
        return out

    def obj(self, name: str, value: Any) -> dict:
        if not self._absent(name, value, "JSON object") and not isinstance(value, dict):
            self.fail(name, value, "is not a JSON object")
        return value if isinstance(value, dict) else {}


def _bytes(file: Path, inputs: dict) -> bytes:
    """A file's bytes, their stamp noted in ``inputs`` (the manifest checks them later)."""
    if not file.is_file():
        raise ValueError(f"{file}: file not found")
    data = file.read_bytes()
    inputs[str(file)] = parse_cache.stamp(file, data)
    return data


def _decode(file: Path, data: bytes, line: int | None = None, notes: list | None = None
            ) -> Any:
    where = f"{file}:{line}" if line else str(file)
    try:
        text = data.decode("utf-8-sig")
        value = _loads(text)
        if notes is not None and _SURROGATE_ESCAPE.search(text):
            value = _no_surrogates(value, where, notes)
        return value
    except UnicodeDecodeError as err:
        raise ValueError(f"{where}: not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{file}:{line or err.lineno}: malformed JSON: {err.msg}") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deeply") from None


def _case_row(obj: Any, f: _Fields) -> tuple[dict, list[str], list[Any]]:
    if not isinstance(obj, dict):
        raise ValueError(f"{f.where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("case_id", "status"):
        if key not in obj:
            raise ValueError(f"{f.where}: missing field {key!r}")
    if not isinstance(obj["status"], str) or obj["status"] not in STATUS.categories:
        raise ValueError(f"{f.where}: status {_show(obj['status'])} not one of "
                         f"{', '.join(STATUS.categories)}")
    expected = f.obj("expected", obj.get("expected"))
    check = "text" if "text" in expected else "pattern"
    docs = ("doc_ids", obj["doc_ids"]) if "doc_ids" in obj else ("doc_id", obj.get("doc_id"))
    row = {"case_id": f.ident("case_id", obj["case_id"]), "status": obj["status"],
           "passed": f.flag("passed", obj.get("passed")), "query": f.text("query", obj.get(
               "query")), "expected_type": f.text("expected.type", expected.get("type")),
           "expected": f.text(f"expected.{check}", expected.get(check)),
           "doc_ids": ",".join(f.items(*docs)), "answer": f.text("answer", obj.get("answer")),
           "error": f.text("error", obj.get("error")),
           "elapsed_ms": f.number("elapsed_ms", obj.get("elapsed_ms"), count=False)}
    usage = f.obj("token_usage", obj.get("token_usage"))
    for role in ROLES:
        part = f.obj(f"token_usage.{role}", usage.get(role))
        for tok in TOKENS:
            row[f"{role}_{tok}"] = f.number(f"token_usage.{role}.{tok}", part.get(tok),
                                            count=True)
    timings = f.obj("timings_ms", obj.get("timings_ms"))
    row |= {k: f.number(f"timings_ms.{k}", timings.get(k), count=False) for k in TIMINGS}
    calls = obj.get("tool_calls") or []
    if not isinstance(calls, list) or any(not isinstance(c, dict) or "name" not in c
                                          for c in calls):
        raise ValueError(f"{f.where}: tool_calls must be a list of objects with a 'name'")
    names = [f.ident(f"tool_calls[{i}].name", c["name"]) for i, c in enumerate(calls)]
    return row, names, [c.get("arguments") for c in calls]


def _read_run(run_dir: Path, rows: list, calls: list, notes: list, inputs: dict) -> None:
    """Append the run's cases to ``rows``, its tool calls to ``calls``."""
    file = run_dir / "artifacts" / "results.jsonl"
    if not file.is_file():
        raise ValueError(f"{file}: file not found (every run needs artifacts/results.jsonl)")
    for lineno, line in enumerate(_bytes(file, inputs).split(b"\n"), start=1):
        if not line.strip():
            continue
        fields = _Fields(f"{file}:{lineno}", notes)
        row, names, args = _case_row(_decode(file, line, lineno, notes), fields)
        row |= {"run_id": run_dir.name, "source": f"{run_dir.name}/artifacts/"
                f"results.jsonl:{lineno}", "tool_counts": dict(Counter(names))}
        calls += [{"run_id": run_dir.name, "case_id": row["case_id"], "call_index": i,
                   "tool": name, "arguments": json.dumps(arg, sort_keys=True)}
                  for i, (name, arg) in enumerate(zip(names, args, strict=True))]
        rows.append(row)


def _read_summary(run_dir: Path, notes: list, inputs: dict) -> dict:
    file = run_dir / "artifacts" / "summary.json"
    s = _decode(file, _bytes(file, inputs))
    if not isinstance(s, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(s).__name__}")
    f = _Fields(str(file), notes)
    totals = f.obj("timing_totals_ms", s.get("timing_totals_ms"))
    return {"run_id": run_dir.name, "model_alias": f.text("model_alias", s.get("model_alias")),
            "research_mode": f.flag("research_mode", s.get("research_mode")),
            "source_provider": f.text("source_provider", s.get("source_provider")),
            **{k: f.number(k, s.get(k), count=True) for k in SUMMARY_COUNTS},
            "avg_elapsed_ms": f.number("avg_elapsed_ms", s.get("avg_elapsed_ms"), count=False),
            "disabled_tools": ",".join(f.items("disabled_tools", s.get("disabled_tools"))),
            "run_wall_ms": f.number("timing_totals_ms.run_wall_ms", totals.get("run_wall_ms"),
                                    count=False)}


def _typed_cases(rows: list[dict]) -> pd.DataFrame:
    counts = pd.DataFrame([r.pop("tool_counts") for r in rows], index=range(len(rows))).fillna(0)
    df = pd.DataFrame(rows)
    text = ["query", "expected_type", "expected", "doc_ids", "answer", "error"]
    df = df.astype({"status": STATUS, "passed": "boolean", **dict.fromkeys(text, "string"),
                    **{f"{r}_{t}": "Int64" for r in ROLES for t in TOKENS},
                    **dict.fromkeys(["elapsed_ms", *TIMINGS], "float64")})
    df["total_tokens"] = df[[f"{r}_total_tokens" for r in ROLES]].sum(axis=1, skipna=False)
    counts = counts.reindex(sorted(counts.columns), axis=1).astype("Int64").add_prefix("calls_")
    df["n_tool_calls"] = counts.sum(axis=1).astype("Int64")
    first = ["run_id", "case_id", "status", "passed"]
    df = pd.concat([df[first + [c for c in df if c not in first + ["source"]]],
                    counts.set_axis(df.index), df[["source"]]], axis=1)
    dup = df.duplicated(["run_id", "case_id"])
    if dup.any():  # a case counted twice would change n and the pass rate without a word
        row = df[dup].iloc[0]
        first = df.loc[(df["run_id"] == row["run_id"]) & (df["case_id"] == row["case_id"]),
                       "source"].iloc[0].rsplit(":", 1)[1]
        raise ValueError(f"{row['source']}: field 'case_id': duplicate case "
                         f"{row['case_id']!r} (first at line {first}); one line per case")
    return df


def _absent_cases(cases: pd.DataFrame) -> list[Finding]:
    """``case_missing`` warnings: a case of the session absent from some run's results.jsonl
    (comparisons of two profiles use the cases both have)."""
    every = list(dict.fromkeys(cases["case_id"]))
    out = []
    for run_id, ids in cases.groupby("run_id", sort=False)["case_id"]:
        absent = [c for c in every if c not in set(ids)]
        if absent:
            out.append(Finding("warning", f"{run_id}/artifacts/results.jsonl", None, "case_id",
                               "case_missing", f"{len(absent)} case(s) other runs have are "
                               f"absent here: {', '.join(absent[:10])}"
                               + (" ..." if len(absent) > 10 else "")))
    return out


def _warnings(notes: list[tuple[str, str, str, str]], shown: int = 5) -> list[str]:
    """One message per rule: how many values, which fields, the first ``shown`` places."""
    out = []
    for rule in dict.fromkeys(n[0] for n in notes):
        hits = [n for n in notes if n[0] == rule]
        names = ", ".join(repr(n) for n in dict.fromkeys(h[2] for h in hits))
        out.append(f"{len(hits)} value{'s' * (len(hits) != 1)} {rule} (field(s) {names}): "
                   + "; ".join(f"{w} field {n!r} ({v})" for _, w, n, v in hits[:shown])
                   + (f"; and {len(hits) - shown} more" if len(hits) > shown else ""))
    return out


def load_research_eval(path: str | Path) -> ResearchEval:
    """Read a research-eval session directory (seed 002 layout); never writes into it.

    Parameters
    ----------
    path : path-like
        Session directory: ``summary.json`` and ``<run_id>/artifacts/{results.jsonl,
        summary.json}`` per run profile (UTF-8, a leading BOM accepted).

    Returns
    -------
    ResearchEval
        ``cases``, ``runs``, ``tool_calls`` and ``session`` (see :class:`ResearchEval`).

    Raises
    ------
    ValueError
        Missing directory or files; text not UTF-8 or not JSON; a line that is not an object,
        lacks ``case_id``/``status`` or has an unknown status; duplicate cases; a listed run
        without a directory; a value its field's kind rejects (Notes). Messages name file,
        1-based line of ``results.jsonl`` and field: ``<file>:3: field
        'token_usage.main.input_tokens': 1e400 is not a finite count``.

    Warns
    -----
    UserWarning
        When a run summary's case counts disagree with its results.jsonl; when a case of the
        session is absent from a run's results.jsonl (also in ``findings``); one per
        conversion rule (Notes), saying how many values, which fields, and the first five
        places.

    Notes
    -----
    Fields are read by kind; ``null`` or absent -> missing. Any kind: ``NaN`` -> missing with a
    warning; ``Infinity``, ``-Infinity``, ``1e400`` -> error (Python's json accepts them:
    intercepted by ``parse_constant``/``parse_float``). "Warned" = converted with a warning.

    - count (tokens, summary case counts; Int64): integer in [0, 2**53) (exact in float64;
      sums cannot overflow int64); ``"12"``, ``12.0`` -> 12 and ``"NA"``, ``""`` -> missing,
      warned; negative, 2**70, 12.5, boolean, other text -> error.
    - ms (``elapsed_ms``, ``timings_ms.*``, ``avg_elapsed_ms``, ``run_wall_ms``; float64, the
      only float kind): number >= 0; ``"12.5"`` warned; negative, boolean, text -> error.
    - boolean (``passed``, ``research_mode``): a string or number is read by
      :func:`~dabench_analysis.load._rules.parse_flags` (``"true"``, ``"yes"``, 1), warned;
      ``"maybe"``, 2, a list or an object -> error.
    - list (``doc_ids`` or the seed's ``doc_id``, ``disabled_tools``): a string is split on
      commas, warned (``"a,b"`` -> [a, b], ``""`` -> []); an item that is not an identifier
      or holds a comma -> error.
    - identifier (``case_id``, tool names, list items): non-empty string; integer -> text,
      warned; else error. ``status``: exactly PASS, FAIL, ERROR or HALTED.
    - text (``query``, ``answer``, ``error``, ``expected``, ...): other JSON -> JSON text,
      warned. ``total_tokens`` is missing if a role total is (never a partial sum).

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
    inputs: dict = {}
    session = _decode(root / "summary.json", _bytes(root / "summary.json", inputs))
    listed = session.get("runs", []) if isinstance(session, dict) else None
    if not isinstance(listed, list) or any(not isinstance(r, dict) or not isinstance(
            r.get("run_id"), str) for r in listed):
        raise ValueError(f"{root / 'summary.json'}: expected an object whose 'runs' lists "
                         "objects with a string 'run_id'")
    listed = [r["run_id"] for r in listed]
    run_dirs = sorted(p for p in root.iterdir() if (p / "artifacts").is_dir())
    absent = [r for r in listed if r not in {p.name for p in run_dirs}]
    if absent:
        raise ValueError(f"{root / 'summary.json'} lists run(s) {absent} with no "
                         "<run_id>/artifacts directory")
    if not run_dirs:
        raise ValueError(f"{root}: no <run_id>/artifacts directories found")
    order = {r: i for i, r in enumerate(listed)}
    run_dirs.sort(key=lambda p: order.get(p.name, len(order)))
    rows, calls, runs, notes = [], [], [], []
    for run_dir in run_dirs:
        _read_run(run_dir, rows, calls, notes, inputs)
        runs.append(_read_summary(run_dir, notes, inputs))
        counts = Counter(r["status"] for r in rows if r["run_id"] == run_dir.name)
        for key, status in zip(SUMMARY_COUNTS[1:], STATUS.categories, strict=True):
            if runs[-1][key] is not None and runs[-1][key] != counts[status]:
                warnings.warn(f"{run_dir.name}: summary.json {key}={runs[-1][key]} but "
                              f"results.jsonl has {counts[status]} {status}",
                              stacklevel=outside_level())
    for message in _warnings(notes):
        warnings.warn(message, stacklevel=outside_level())
    if not rows:
        raise ValueError(f"{root}: the results.jsonl files hold no test cases")
    tool_calls = pd.DataFrame(calls, columns=["run_id", "case_id", "call_index", "tool",
                                              "arguments"])
    cases = _typed_cases(rows)
    findings = _absent_cases(cases)
    for f in findings:
        warnings.warn(str(f), stacklevel=outside_level())
    return ResearchEval(root, cases, pd.DataFrame(runs, columns=["run_id", *RUN_TYPES]).astype(
        RUN_TYPES), tool_calls, session, tuple(findings), inputs)
