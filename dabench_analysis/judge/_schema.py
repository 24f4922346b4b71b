"""The files of a judge study (seed 004 §5 and Appendix A), named once, with their columns as
the one CSV reader reads them (:class:`~dabench_analysis.schema._files.FileKind`: structural
damage found as in a run's files) and the ranges the judge-study reader checks.

One row per: ``cases.csv`` test case; ``judge_verdicts.csv`` test case x judge configuration;
``factoid_ratings.csv`` ground-truth factoid x annotator; ``dimension_ratings.csv`` test case x
annotator x rubric dimension (``data/judge_study/README.md``).
"""

from __future__ import annotations

from types import MappingProxyType

from dabench_analysis.schema._files import FileKind
from dabench_analysis.schema.columns import Column

__all__ = ["CASES", "COUNTS", "DIMENSIONS", "FACTOIDS", "JUDGE_FILES", "LIKERT", "SCORES",
           "SCORE_RANGE", "VERDICTS"]

#: The judge's 0-9 scores (seed 004 §5) and the annotators' Likert scale (Appendix A).
SCORE_RANGE, LIKERT = (0.0, 9.0), (1, 5)
#: The judge's scores (0-9) and the whole-number columns (>= 0) of judge_verdicts.csv.
SCORES = ("exec_score", "coverage", "conciseness", "tone", "clarity", "overall")
COUNTS = ("n_response_factoids", "n_gt_factoids", "n_matched_factoids", "tokens")


def _col(name: str, kind: str, description: str, *, required: bool = False) -> Column:
    unit = {"float": "0-9", "count": "count", "tokens": "tokens"}.get(kind, "")
    return Column(name, kind, "Judge study", unit, None, description, required)


def _kind(file: str, keys: tuple[str, ...], columns: list[Column]) -> FileKind:
    # every value is read as text (the reader types and range-checks it); a repeated key is an
    # error: a case, verdict or rating listed twice would be counted twice
    return FileKind(file, "judge", MappingProxyType({c.name: c for c in columns}), keys,
                    "error")


_CASE = _col("test_case_id", "id", "test case id (seed 004 §5)", required=True)
_RATING = _col("rating", "count", "Likert rating 1-5 (seed 004 Appendix A)", required=True)
_ANNOTATOR = _col("annotator", "id", "annotator id (A1-A3)", required=True)

CASES = FileKind("cases.csv", "judge", MappingProxyType({c.name: c for c in (
    _CASE, _col("query", "text", "the user's question", required=True),
    _col("vertical", "text", "business vertical"), _col("sub_task", "text", "sub-task"))}),
    ("test_case_id",), "error")
VERDICTS = _kind("judge_verdicts.csv", ("test_case_id", "configuration"), [
    _CASE, _col("configuration", "id", "judge configuration (No GT, NL GT, GT-as-code)",
                required=True),
    _col("exec_score", "float", "judge score 0-9 (seed 004 §5)", required=True),
    *(_col(c, "count", "factoid count |F_r|, |F_g|, |F_rg| (seed 004 §4)")
      for c in COUNTS[:3]),
    *(_col(c, "float", "rubric score 0-9 (seed 004 Table 4)") for c in SCORES[1:]),
    _col("tokens", "tokens", "judge tokens per test case", required=True)])
FACTOIDS = _kind("factoid_ratings.csv", ("test_case_id", "factoid_id", "annotator"), [
    _CASE, _col("factoid_id", "id", "ground-truth factoid id", required=True), _ANNOTATOR,
    _RATING])
DIMENSIONS = _kind("dimension_ratings.csv", ("test_case_id", "annotator", "dimension"), [
    _CASE, _ANNOTATOR, _col("dimension", "id", "rubric dimension (coverage, conciseness, tone)",
                            required=True), _RATING])
#: The four files, in the order they are read.
JUDGE_FILES: tuple[FileKind, ...] = (CASES, VERDICTS, FACTOIDS, DIMENSIONS)
