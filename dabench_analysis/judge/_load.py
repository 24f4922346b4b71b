"""Judge studies (seed 004): the four CSV files of cases, judge verdicts and human ratings, read
into a :class:`JudgeStudy`, with the same treatment as a run's files: every value checked by its
column's kind and range, duplicates, unknown and absent cases and raters without labels reported
as findings naming file, row and column (:class:`~dabench_analysis.load.Finding`).

The files (``data/judge_study/README.md``), one row per:

* ``cases.csv``: test case: ``test_case_id, query`` (+ ``vertical, sub_task``);
* ``judge_verdicts.csv``: test case x judge configuration: ``exec_score`` (0-9),
  ``n_response_factoids, n_gt_factoids, n_matched_factoids`` (counts), the rubric scores
  ``coverage, conciseness, tone, clarity, overall`` (0-9), ``tokens``;
* ``factoid_ratings.csv``: factoid x annotator: ``factoid_id, annotator, rating`` (Likert 1-5);
* ``dimension_ratings.csv``: test case x annotator x dimension: ``rating`` (Likert 1-5).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dabench_analysis._caller import outside_level
from dabench_analysis.judge import _schema as files
from dabench_analysis.judge._schema import LIKERT, SCORE_RANGE
from dabench_analysis.load import _csv as csv_reader
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import Finding, RunLoadError, report
from dabench_analysis.load._rules import type_values
from dabench_analysis.schema import require_columns
from dabench_analysis.schema._files import FileKind
from dabench_analysis.schema.columns import Column

CASES, VERDICTS, FACTOIDS, DIMENSIONS = (k.file for k in files.JUDGE_FILES)
_KINDS = {k.file: k for k in files.JUDGE_FILES}
#: Required columns of each file, and the columns that identify one of its rows.
REQUIRED = {k.file: list(k.required) for k in files.JUDGE_FILES}
KEYS = {k.file: list(k.keys) for k in files.JUDGE_FILES}
_SCORES, _COUNTS = files.SCORES, files.COUNTS
#: What the one CSV reader says of eval-v2 files but not of a judge study's (its columns are
#: not eval-v2's catalogue; a missing required column is the reader's own one-line error).
_NOT_FOR_STUDIES = ("unknown_column", "required_column")


@dataclass(frozen=True)
class JudgeStudy:
    """The four tables of a judge study (see the module docstring for their columns).

    ``findings`` lists what :func:`read_judge_study` found (errors are raised unless
    ``strict=False``); ``path`` is the study's folder; ``inputs`` the bytes each file was read
    from (a report's manifest checks them).
    """

    cases: pd.DataFrame
    verdicts: pd.DataFrame
    factoid_ratings: pd.DataFrame
    dimension_ratings: pd.DataFrame
    findings: tuple[Finding, ...] = ()
    path: Path | None = None
    #: file name -> the stamp of the bytes read (:func:`dabench_analysis.load.cache.stamp`).
    inputs: dict = field(default_factory=dict, repr=False, compare=False)

    def rating_table(self, level: str = "factoid") -> pd.DataFrame:
        """Items × annotators Likert table: ``"factoid"`` (items = case, factoid),
        ``"dimensions"`` (case, dimension) or ``"all"`` (both stacked, Table 2's overall)."""
        if level not in ("factoid", "dimensions", "all"):
            raise ValueError(f"level {level!r} unknown; known: factoid, dimensions, all")
        f = self.factoid_ratings.rename(columns={"factoid_id": "item"})
        d = self.dimension_ratings.rename(columns={"dimension": "item"})
        long = {"factoid": f, "dimensions": d, "all": pd.concat([f, d])}[level]
        return long.pivot(index=["test_case_id", "item"], columns="annotator", values="rating")

    def case_scores(self) -> pd.DataFrame:
        """Cases × annotators: the mean factoid Likert rating rescaled to 0–9 by (x − 1)·9/4."""
        mean = self.factoid_ratings.groupby(["test_case_id", "annotator"])["rating"].mean()
        return ((mean - 1) * 9 / 4).unstack("annotator")

    def default_worked_case(self, configuration: str) -> str:
        """The worked case when none is named: the first case of ``cases.csv`` whose verdict
        of ``configuration`` has its three factoid counts.

        Raises
        ------
        ValueError
            No verdict of ``configuration`` has them (naming the configurations there are).

        Examples
        --------
        >>> read_judge_study("data/judge_study").default_worked_case("GT-as-code")
        'tc000'
        """
        v = self._verdicts_of(configuration)
        counted = v.dropna(subset=["n_response_factoids", "n_gt_factoids",
                                   "n_matched_factoids"])["test_case_id"]
        first = [c for c in self.cases["test_case_id"] if c in set(counted)]
        if not first:
            raise ValueError(f"no verdict of configuration {configuration!r} has the factoid "
                             "counts (n_response_factoids, n_gt_factoids, n_matched_factoids) "
                             "a worked case needs")
        return first[0]

    def worked_verdict(self, case: str, configuration: str) -> pd.Series:
        """The verdict row of one case under one configuration (Table 4's worked case).

        Raises
        ------
        ValueError
            ``case`` is not a case with a verdict of ``configuration``: the message names it
            and a few cases that are.

        Examples
        --------
        >>> s = read_judge_study("data/judge_study")
        >>> int(s.worked_verdict("tc000", "GT-as-code")["n_gt_factoids"])
        12
        """
        v = self._verdicts_of(configuration)
        row = v[v["test_case_id"] == case]
        if row.empty:
            known = v["test_case_id"].dropna().tolist()
            raise ValueError(f"worked case {case!r} has no verdict of configuration "
                             f"{configuration!r} in {VERDICTS}; cases with one: "
                             f"{', '.join(known[:5])}{' ...' if len(known) > 5 else ''}")
        return row.iloc[0]

    def _verdicts_of(self, configuration: str) -> pd.DataFrame:
        v = self.verdicts
        known = list(v["configuration"].dropna().unique())
        if configuration not in known:
            raise ValueError(f"configuration {configuration!r} not in {VERDICTS}; known: "
                             f"{', '.join(map(str, known))}")
        return v[v["configuration"] == configuration]


def _read(file: Path, kind: FileKind, findings: list, inputs: dict) -> pd.DataFrame:
    """Every cell as text, read by the one CSV reader (:func:`dabench_analysis.load._csv.parse`):
    a BOM accepted, structural damage (a repeated header line, a row with too many or too few
    fields, a truncated last line, a stray delimiter, mixed line endings) found as in a run's
    files, the damaged rows left out. The frame's index is the 0-based data row of the file."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ValueError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    inputs[kind.file] = parse_cache.stamp(file, data)
    parsed = csv_reader.parse(data, kind, as_text=True, name=kind.file)
    findings += [f for f in parsed.findings if f.check not in _NOT_FOR_STUDIES]
    frame = parsed.table.to_pandas(types_mapper=lambda t: pd.StringDtype())
    frame = frame.astype(object).where(frame.notna(), "")  # an empty cell as written
    frame.index = pd.Index(parsed.rows - 1)
    return frame


def _numbers(frame: pd.DataFrame, name: str, findings: list) -> None:
    """Type the numeric columns in place: scores 0-9 (float), counts (Int64), Likert 1-5."""
    for col in frame.columns:
        if name == VERDICTS and col in _SCORES:
            spec, bounds = Column(col, "float", "", "", None, ""), SCORE_RANGE
        elif name == VERDICTS and col in _COUNTS:
            spec, bounds = Column(col, "count", "", "", None, ""), (0, None)
        elif col == "rating" and name in (FACTOIDS, DIMENSIONS):
            spec, bounds = Column(col, "count", "", "", None, ""), LIKERT
        else:
            continue
        raw = frame[col]
        values = type_values(raw, spec, name, findings)
        low, high = bounds
        out = values.lt(low) | (values.gt(high) if high is not None else False)
        out = out.fillna(False).astype(bool)
        what = (f"not a Likert rating {low}-{high}" if col == "rating" else
                f"outside the judge's {low:g}-{high:g} scale" if high is not None else "negative")
        gone = "; the verdict is left out" if col == "exec_score" else "; set to missing"
        report(findings, out, raw, name, col, "range", what + gone)
        values = values.mask(out)
        # ratings: whole numbers checked, kept as float64 (NaN = not rated) for the agreement
        frame[col] = values.to_numpy(dtype="float64", na_value=np.nan) if col == "rating" \
            else values


def _duplicates(frame: pd.DataFrame, name: str, findings: list) -> pd.DataFrame:
    """Rows repeating another row's key: one error per key naming every row; the first kept."""
    key = KEYS[name]
    dup = frame.duplicated(key, keep=False)
    for _, group in frame[dup].groupby(key, sort=False):
        rows = tuple(int(i) + 1 for i in group.index)
        what = ", ".join(f"{k} {v!r}" for k, v in zip(key, group.iloc[0][key], strict=True))
        findings.append(Finding("error", name, None, key[-1] if len(key) == 1 else None,
                                "duplicate_key", f"{what} is listed {len(rows)} times (rows "
                                f"{', '.join(map(str, rows))}); only row {rows[0]} is used, "
                                "so that nothing is counted twice", rows))
    return frame[~frame.duplicated(key, keep="first")]


def _blank_keys(frame: pd.DataFrame, name: str, findings: list) -> pd.DataFrame:
    blank = frame[KEYS[name]].apply(lambda s: s.str.strip() == "").any(axis=1)
    for col in KEYS[name]:
        report(findings, frame[col].str.strip() == "", frame[col], name, col,
               "required_value", "empty; the row is left out")
    return frame[~blank]


def _spellings(frame: pd.DataFrame, name: str, findings: list) -> None:
    """Ids read as one id however they are spaced: surrounding spaces stripped (a warning
    naming the rows), and ids that differ only in upper/lower case reported (a warning: they
    stay distinct, as they may be, but a rater or configuration split in two changes n)."""
    for col in KEYS[name]:
        raw = frame[col]
        stripped = raw.str.strip()
        report(findings, stripped != raw, raw, name, col, "id_whitespace",
               "surrounding spaces; read without them", "warning")
        frame[col] = stripped
        values = pd.Series(stripped.unique())
        folded = values.str.casefold()
        for _, same in values.groupby(folded.to_numpy()):
            if len(same) > 1:
                rows = tuple(int(i) + 1 for i in frame.index[frame[col].isin(same)])
                findings.append(Finding(
                    "warning", name, None, col, "id_case_variant",
                    f"{', '.join(map(repr, same))} differ only in upper/lower case; read as "
                    f"{len(same)} different {col} values (fix the spelling if they are one)",
                    rows))


def _unscored(frame: pd.DataFrame, findings: list) -> pd.DataFrame:
    """A verdict without an ``exec_score`` cannot say pass or fail: an error naming its rows,
    and the row is left out (never counted as a fail)."""
    empty = frame["exec_score"].isna()
    told = {r for f in findings if f.file == VERDICTS and f.column == "exec_score"
            for r in (f.rows or ())}  # rejected values (range, number_value): already named
    blank = empty & ~pd.Series([i + 1 in told for i in frame.index], index=frame.index)
    report(findings, blank, pd.Series("", index=frame.index), VERDICTS, "exec_score",
           "required_value", "empty; the verdict is left out, never counted as a fail")
    return frame[~empty]


def _cross_file(frames: dict[str, pd.DataFrame], findings: list) -> dict[str, pd.DataFrame]:
    """Cases unknown to cases.csv (errors: rows left out), cases of cases.csv absent from a file
    and raters whose every rating is missing (warnings: their rows left out)."""
    known = set(frames[CASES]["test_case_id"])
    for name in (VERDICTS, FACTOIDS, DIMENSIONS):
        frame = frames[name]
        unknown = ~frame["test_case_id"].isin(known)
        report(findings, unknown, frame["test_case_id"], name, "test_case_id", "unknown_case",
               f"not a test_case_id of {CASES}; the row is left out")
        frame = frames[name] = frame[~unknown]
        absent = [c for c in frames[CASES]["test_case_id"] if c not in set(frame["test_case_id"])]
        if absent:
            findings.append(Finding("warning", name, None, "test_case_id", "case_missing",
                                    f"{len(absent)} case(s) of {CASES} have no row here: "
                                    f"{', '.join(absent[:10])}{' ...' if len(absent) > 10 else ''}"
                                    "; they are left out of what this file feeds"))
        if name == VERDICTS:
            _verdict_coverage(frame, frames[CASES]["test_case_id"], findings)
            continue
        labelled = frame.groupby("annotator", sort=False)["rating"].count()
        for rater in labelled.index[labelled == 0]:
            rows = tuple(int(i) + 1 for i in frame.index[frame["annotator"] == rater])
            findings.append(Finding("warning", name, None, "annotator", "rater_without_labels",
                                    f"annotator {rater!r} has no rating in any of their "
                                    f"{len(rows)} row(s); left out of the agreement", rows))
        frames[name] = frame[~frame["annotator"].isin(labelled.index[labelled == 0])]
    return frames


def _verdict_coverage(verdicts: pd.DataFrame, cases: pd.Series, findings: list) -> None:
    """Cases with a verdict of some configurations but not of another: a warning per
    configuration (its n is smaller than the others')."""
    seen = set(verdicts["test_case_id"])
    for config, group in verdicts.groupby("configuration", sort=False):
        absent = [c for c in cases if c in seen and c not in set(group["test_case_id"])]
        if absent:
            findings.append(Finding(
                "warning", VERDICTS, None, "configuration", "verdict_missing",
                f"configuration {config!r} has no verdict for {len(absent)} case(s) the "
                f"others judged: {', '.join(absent[:10])}{' ...' if len(absent) > 10 else ''}"
                "; its n is smaller"))


def read_judge_study(path: str | Path, *, strict: bool = True) -> JudgeStudy:
    """Read a judge study written by :func:`dabench_analysis.synthetic.judge.generate` (or by
    hand in the same format); never writes into it.

    Parameters
    ----------
    path : path-like
        Folder holding the four CSV files (UTF-8, a BOM accepted).
    strict : bool
        Raise when an error finding is found (default). False: return what could be read, the
        rows or values in error left out, with every finding in ``findings``.

    Returns
    -------
    JudgeStudy
        Ids and text as strings; ``exec_score`` and the rubric scores float (0-9), the counts and
        ``tokens`` Int64, ``rating`` float64 holding whole numbers 1-5 (NaN: not rated),
        ``configuration`` categorical in order of appearance.

    Raises
    ------
    ValueError
        A folder, file or required column missing; a file that is not UTF-8 or not a CSV table.
    RunLoadError
        With ``strict``, any error finding: every finding listed, each naming file, row
        (1-based data row) and column.

    Warns
    -----
    UserWarning
        One per warning finding (a case absent from a file, a rater without labels).

    Notes
    -----
    Findings (check names): ``number_value`` (not a number), ``integer`` (not a whole number),
    ``range`` (a score outside 0-9, a rating outside the Likert scale 1-5, a negative count),
    ``required_value`` (an empty id), ``duplicate_key`` (a case, verdict or rating listed twice:
    only its first row is used, so that n, TP and MCC never count it twice), ``unknown_case``
    (a row whose test case is not in cases.csv): errors; ``case_missing`` (a case of
    cases.csv without a row in a file), ``rater_without_labels`` (an annotator whose every
    rating is empty; left out): warnings; ``missing_values`` (empty ratings or scores, read
    as missing): info.

    Examples
    --------
    >>> study = read_judge_study("data/judge_study")
    >>> study.verdicts.shape, study.findings
    ((165, 12), ())
    """
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"judge study folder {root} not found")
    frames, findings, inputs = {}, [], {}
    for name, cols in REQUIRED.items():
        file = root / name
        if not file.is_file():
            raise ValueError(f"judge study file {file} not found; expected {', '.join(REQUIRED)}")
        frame = _read(file, _KINDS[name], findings, inputs)
        require_columns(frame, cols, str(file))
        frame = _blank_keys(frame, name, findings)
        _spellings(frame, name, findings)
        _numbers(frame, name, findings)
        if name == VERDICTS:
            frame = _unscored(frame, findings)
        frames[name] = _duplicates(frame, name, findings)
    frames = _cross_file(frames, findings)
    for name in (FACTOIDS, DIMENSIONS):
        empty = frames[name]["rating"].isna()
        if empty.any():
            findings.append(Finding("info", name, None, "rating", "missing_values",
                                    f"{int(empty.sum())} of {len(empty)} values empty (read as "
                                    "missing)"))
    errors = [f for f in findings if f.severity == "error"]
    if errors and strict:
        raise RunLoadError(f"judge study {root}: {len(errors)} error(s); pass strict=False to "
                           "read the rest", findings)
    for f in findings:
        if f.severity == "warning":
            warnings.warn(str(f), stacklevel=outside_level())
    verdicts = frames[VERDICTS].reset_index(drop=True)
    verdicts["configuration"] = pd.Categorical(
        verdicts["configuration"], categories=list(dict.fromkeys(verdicts["configuration"])))
    return JudgeStudy(frames[CASES].reset_index(drop=True), verdicts,
                      frames[FACTOIDS].reset_index(drop=True),
                      frames[DIMENSIONS].reset_index(drop=True), tuple(findings), root, inputs)
