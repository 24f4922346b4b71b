"""Seeded sample of a judge–human agreement study (seed 004, Section 5) and its reader.

``python -m dabench_analysis.synthetic.judge OUT_DIR`` writes four CSV files:

* ``cases.csv``: ``test_case_id, vertical, sub_task, query`` (55 test cases).
* ``judge_verdicts.csv``: one row per (test case, judge configuration): ``exec_score`` (0–9),
  factoid counts ``n_response_factoids, n_gt_factoids, n_matched_factoids`` (empty for the
  configuration without ground truth), the rubric scores ``coverage, conciseness, tone,
  clarity, overall`` (0–9) and ``tokens`` per test case.
* ``factoid_ratings.csv``: ``test_case_id, factoid_id, annotator, rating`` (Likert 1–5 per
  ground-truth factoid, three annotators).
* ``dimension_ratings.csv``: ``test_case_id, annotator, dimension, rating`` (Likert 1–5 for
  coverage, conciseness and tone).

By construction, with a pass threshold of 4.5 on the 0–9 scale (an annotator passes a case
when the mean of their factoid ratings, rescaled by (x − 1)·9/4, is ≥ 4.5; the judge when
``exec_score`` ≥ 4.5) and a majority of annotators as the reference, 53 of the 55 cases are
comparable (two have only two annotators who disagree) and the confusion matrices equal those
implied by the paper's Table 3 (MCC −0.379, 0.331, 0.427). Test case ``tc000`` is the worked
example of Appendix A (|F_r| = 14, |F_g| = 12, |F_rg| = 5, Table 4's rubric scores).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dabench_analysis._atomic import atomic_write

__all__ = ["CONFIGURATIONS", "generate"]


#: configuration -> (TP, FP, FN, TN) on the 53 comparable cases, mean tokens per test case
CONFIGURATIONS = {"Baseline-1: No GT": ((5, 16, 20, 12), 70_000),
                  "Baseline-2: NL GT": ((23, 18, 2, 10), 29_200),
                  "GT-as-code": ((25, 19, 0, 9), 24_600)}
ANNOTATORS = ("A1", "A2", "A3")
DIMENSIONS = ("coverage", "conciseness", "tone")
RUBRIC = ("coverage", "conciseness", "tone", "clarity", "overall")
N_CASES, N_POSITIVE, THRESHOLD = 55, 25, 4.5
_WORKED = {"query": "Our risk committee requested this after reviewing last quarter's "
           "delinquency rates. We need a propensity model to flag credit card accounts showing "
           "early signs of default risk - find the relevant AEP datasets, identify the key input "
           "variables, the target variable, and define the target mapping function.",
           "counts": (14, 12, 5), "rubric": (6.0, 7.5, 8.5, 8.0, 5.1)}
_TOPICS = {"retail": [("cart abandonment", "abandon a cart"), ("loyalty upgrade",
                      "move up a loyalty tier"), ("repeat purchase", "buy again")],
           "financial": [("loan application", "apply for a personal loan"),
                         ("card churn", "close their credit card"), ("default risk",
                                                                     "miss a payment")],
           "healthcare": [("prescription refill", "miss a prescription fill"),
                          ("plan switch", "switch insurance plans"), ("no-show",
                                                                      "miss an appointment")]}


def _queries(rng: np.random.Generator) -> pd.DataFrame:
    rows = [{"test_case_id": "tc000", "vertical": "financial", "sub_task": "dataset_discovery",
             "query": _WORKED["query"]}]
    verticals = list(_TOPICS)
    for i in range(1, N_CASES):
        vertical = verticals[i % 3]
        thing, action = _TOPICS[vertical][int(rng.integers(3))]
        period = ("next quarter", "in the next 30 days", "next month")[int(rng.integers(3))]
        sub = ("ml_goal_identification", "dataset_discovery")[int(rng.integers(2))]
        rows.append({"test_case_id": f"tc{i:03d}", "vertical": vertical, "sub_task": sub,
                     "query": f"I'd like a {thing} propensity model to predict which customers "
                              f"will {action} {period}."})
    return pd.DataFrame(rows)


def _counts(rng: np.random.Generator, g: int, passed: bool) -> tuple[int, int, int]:
    while True:  # response factoids r and matches m with accuracy on the right side of 0.5
        r = max(1, g + int(rng.integers(-3, 6)))
        if passed:
            lo, hi = math.ceil(0.51 * (r + g) / 1.51), min(r, g)
        else:
            lo, hi = 0, min(r, g, math.floor(0.49 * (r + g) / 1.49))
        if lo <= hi:
            return r, g, int(rng.integers(lo, hi + 1))


def _verdicts(rng: np.random.Generator, human: dict[str, bool | None],
              n_gt: dict[str, int]) -> pd.DataFrame:
    comparable = [c for c, h in human.items() if h is not None]
    pos = [c for c in comparable if human[c]]
    neg = [c for c in comparable if not human[c] and c != "tc000"]
    rows = []
    for k, (config, ((tp, fp, fn, tn), tokens)) in enumerate(CONFIGURATIONS.items()):
        judge = dict.fromkeys(pos, False) | dict.fromkeys(neg, False) | {"tc000": False}
        for c in rng.permutation(pos)[:tp]:
            judge[str(c)] = True
        for c in rng.permutation(neg)[:fp]:
            judge[str(c)] = True
        assert sum(judge[c] for c in pos) == tp and fn == len(pos) - tp
        assert sum(not judge[c] for c in neg + ["tc000"]) == tn
        raw = rng.lognormal(0, 0.3, size=len(human))
        spent = dict(zip(human, np.round(raw * tokens / raw[[c in comparable for c in human]]
                                         .mean()).astype(int).tolist(), strict=True))
        spent[comparable[0]] += tokens * len(comparable) - sum(spent[c] for c in comparable)
        for c in human:
            passed = judge.get(c, bool(rng.integers(2)))
            row = {"test_case_id": c, "configuration": config}
            if k == 0:  # no ground truth: no factoids, no rubric
                row["exec_score"] = round(float(rng.uniform(4.6, 8.8) if passed
                                                else rng.uniform(0.5, 4.4)), 2)
                rubric = (None,) * 5
                counts = (None, None, None)
            else:
                g = n_gt[c] + (int(rng.integers(0, 4)) if k == 1 else 0)
                counts = _WORKED["counts"] if (c == "tc000" and k == 2) else _counts(rng, g,
                                                                                     passed)
                r, g, m = counts
                row["exec_score"] = round(9 * m / (r + g - m), 2)
                rubric = _WORKED["rubric"] if (c == "tc000" and k == 2) else tuple(
                    round(float(x), 1) for x in np.clip(rng.normal(6.5, 1.3, 5), 0, 9))
            row |= dict(zip(("n_response_factoids", "n_gt_factoids", "n_matched_factoids"),
                            counts, strict=True)) | dict(zip(RUBRIC, rubric, strict=True))
            row["tokens"] = spent[c]
            rows.append(row)
    out = pd.DataFrame(rows)
    for col in ("n_response_factoids", "n_gt_factoids", "n_matched_factoids"):
        out[col] = out[col].astype("Int64")
    return out


def _annotate(rng: np.random.Generator, label: str, g: int) -> dict[str, list[float]]:
    """Factoid ratings per annotator whose majority verdict matches ``label``."""
    probs = {"pass": ([3, 4, 5], [0.15, 0.45, 0.40]), "fail": ([1, 2, 3, 4],
                                                                [0.35, 0.40, 0.20, 0.05])}
    while True:
        if label == "split":  # two annotators only, who disagree
            ratings = {"A1": rng.choice(probs["pass"][0], size=g, p=probs["pass"][1]),
                       "A2": rng.choice(probs["fail"][0], size=g, p=probs["fail"][1])}
        else:
            latent = rng.choice(probs[label][0], size=g, p=probs[label][1])
            ratings = {a: np.clip(latent + rng.choice([-1, 0, 1], size=g, p=[0.03, 0.94, 0.03]),
                                  1, 5).astype(float) for a in ANNOTATORS}
        passes = [((np.mean(v) - 1) * 9 / 4) >= THRESHOLD for v in ratings.values()]
        want = {"pass": 2 * sum(passes) > len(passes), "fail": 2 * sum(passes) < len(passes),
                "split": sum(passes) == 1}[label]
        if want:
            return {a: [float(x) for x in v] for a, v in ratings.items()}


def generate(out_dir: str | Path, *, seed: int = 4) -> list[Path]:
    """Write the sample judge study (four CSV files) into ``out_dir``.

    Parameters
    ----------
    out_dir : path-like
        Destination folder (created if missing).
    seed : int
        Seed of the single random generator; the same seed gives the same bytes.

    Returns
    -------
    list of Path
        The files written.

    Examples
    --------
    >>> import tempfile
    >>> [p.name for p in generate(tempfile.mkdtemp())]
    ['cases.csv', 'judge_verdicts.csv', 'factoid_ratings.csv', 'dimension_ratings.csv']
    """
    rng = np.random.default_rng(seed)
    cases = _queries(rng)
    ids = cases["test_case_id"].tolist()
    split = [str(c) for c in rng.choice(ids[1:], size=2, replace=False)]
    rest = [c for c in ids[1:] if c not in split]
    positive = {str(c) for c in rng.choice(rest, size=N_POSITIVE, replace=False)}
    human = {c: (None if c in split else c in positive) for c in ids}
    n_gt = {c: (12 if c == "tc000" else int(rng.integers(4, 13))) for c in ids}
    factoids, dims = [], []
    for c in ids:
        label = "split" if human[c] is None else ("pass" if human[c] else "fail")
        for annotator, ratings in _annotate(rng, label, n_gt[c]).items():
            factoids += [(c, f"f{i + 1:02d}", annotator, int(x)) for i, x in enumerate(ratings)]
        for dim in DIMENSIONS:
            base = {"coverage": 4 if human[c] else 2, "conciseness": 4, "tone": 5}[dim]
            latent = int(np.clip(base + rng.choice([-1, 0, 1], p=[0.25, 0.5, 0.25]), 1, 5))
            for a in (ANNOTATORS[:2] if label == "split" else ANNOTATORS):
                noise = rng.choice([-1, 0, 1], p=[0.1, 0.8, 0.1])
                dims.append((c, a, dim, int(np.clip(latent + noise, 1, 5))))
    frames = {"cases.csv": cases, "judge_verdicts.csv": _verdicts(rng, human, n_gt),
              "factoid_ratings.csv": pd.DataFrame(factoids, columns=[
                  "test_case_id", "factoid_id", "annotator", "rating"]),
              "dimension_ratings.csv": pd.DataFrame(dims, columns=[
                  "test_case_id", "annotator", "dimension", "rating"])}
    out = Path(out_dir)
    written = []
    for name, frame in frames.items():
        with atomic_write(out / name) as fh:
            frame.to_csv(fh, index=False, lineterminator="\n")
        written.append(out / name)
    return written


if __name__ == "__main__":
    for written in generate(sys.argv[1] if len(sys.argv) > 1 else "data/judge_study"):
        print(written)
