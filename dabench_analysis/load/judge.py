"""Judge studies (seed 004): the four CSV files of cases, judge verdicts and human ratings, read
into a :class:`JudgeStudy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dabench_analysis.schema import require_columns


@dataclass(frozen=True)
class JudgeStudy:
    """The four tables of a judge study (see the module docstring for their columns)."""

    cases: pd.DataFrame
    verdicts: pd.DataFrame
    factoid_ratings: pd.DataFrame
    dimension_ratings: pd.DataFrame

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


def read_judge_study(path: str | Path) -> JudgeStudy:
    """Read a judge study written by :func:`dabench_analysis.synthetic.judge.generate` (or by hand in the same format).

    Parameters
    ----------
    path : path-like
        Folder holding the four CSV files.

    Returns
    -------
    JudgeStudy

    Raises
    ------
    ValueError
        A file or a required column is missing.

    Examples
    --------
    >>> read_judge_study("data/judge_study").verdicts.shape
    (165, 12)
    """
    need = {"cases.csv": ["test_case_id", "query"],
            "judge_verdicts.csv": ["test_case_id", "configuration", "exec_score", "tokens"],
            "factoid_ratings.csv": ["test_case_id", "factoid_id", "annotator", "rating"],
            "dimension_ratings.csv": ["test_case_id", "annotator", "dimension", "rating"]}
    frames = {}
    for name, cols in need.items():
        file = Path(path) / name
        if not file.is_file():
            raise ValueError(f"judge study file {file} not found; expected {', '.join(need)}")
        frame = pd.read_csv(file, dtype={"test_case_id": "string"})
        require_columns(frame, cols, str(file))
        frames[name] = frame
    verdicts = frames["judge_verdicts.csv"]
    for col in ("n_response_factoids", "n_gt_factoids", "n_matched_factoids", "tokens"):
        if col in verdicts:
            verdicts[col] = verdicts[col].astype("Int64")
    verdicts["configuration"] = pd.Categorical(
        verdicts["configuration"], categories=list(dict.fromkeys(verdicts["configuration"])))
    return JudgeStudy(frames["cases.csv"], verdicts, frames["factoid_ratings.csv"],
                      frames["dimension_ratings.csv"])
