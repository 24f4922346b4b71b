"""The loader's value rules as data: how cell text becomes a value, and which values a column
of each kind admits (seed 000 §Data Model Schema: scores in [0, 1], counts and times >= 0, flags
0/1, the seed's enums).

The loader (:mod:`dabench_analysis.load._rules`) evaluates these once per column over every file
of a sweep, vectorised; a value that fails is set to missing and reported by file, row and
column with the rule's ``check`` name and message. Nothing else restates them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dabench_analysis.schema.columns import NULL_VALUES

#: Kinds parsed as numbers: floating (scores, unbounded floats, seconds) and whole numbers.
FLOAT_KINDS: tuple[str, ...] = ("score", "float", "seconds", "cost")
INTEGER_KINDS: tuple[str, ...] = ("count", "tokens", "bytes")
NUMBER_KINDS: tuple[str, ...] = FLOAT_KINDS + INTEGER_KINDS
#: Kinds whose cells are kept as written: only an empty cell is missing (``NA``, ``None``,
#: ``null`` are text: a failure reason "None" is a reason).
VERBATIM_KINDS: tuple[str, ...] = ("id", "text")
#: Whole numbers must be below this: float64 holds every integer below 2**53 exactly; from 2**53
#: on, text such as 9007199254740993 is rounded when parsed, so such values are rejected.
MAX_COUNT = 2 ** 53

#: Outcome columns that another harness may write as a 0/1 or pass/fail field: a column whose
#: every value is a flag spelling (:data:`~dabench_analysis.schema.FLAG_TRUE`, ``FLAG_FALSE``,
#: ``FLAG_COERCED``: true/false, pass/fail, yes/no) is read as 1.0 / 0.0, with an info finding;
#: the one outcome rule (:func:`dabench_analysis.schema.correct`) then applies to it.
OUTCOME_FLAG_COLUMNS: tuple[str, ...] = ("final_score",)

#: Legacy failure_stage names (seed 000 §Failure Attribution's example writes "execution").
LEGACY_STAGES: dict[str, str] = {
    "exploration": "UNDERSTAND", "understanding": "UNDERSTAND", "planning": "PLAN",
    "execution": "EXECUTE", "verification": "VERIFY", "aggregation": "AGGREGATE"}


@dataclass(frozen=True)
class Rule:
    """A value rule: the values of columns of ``kinds`` must lie in ``[low, high]``.

    Attributes
    ----------
    name : str
        Identifier.
    check : str
        The finding's check name (``finite``, ``range``).
    kinds : tuple of str
        Column kinds it applies to.
    low, high : float
        Bounds, inclusive; ``-inf`` / ``inf`` for none. ``finite`` excludes the infinities
        themselves (``open_ends``).
    open_ends : bool
        Whether an infinite bound excludes the infinity (``finite``) or admits it.
    message : str
        What a failing value is, in the finding (``"outside [0, 1]"``).
    """

    name: str
    check: str
    kinds: tuple[str, ...]
    low: float
    high: float
    message: str
    open_ends: bool = False

    def admits(self, value: float) -> bool:
        """Whether one value passes (missing values pass every rule).

        Examples
        --------
        >>> RULES[1].admits(0.5), RULES[1].admits(1.5), RULES[0].admits(float("inf"))
        (True, False, False)
        """
        if math.isnan(value):
            return True
        if self.open_ends and math.isinf(value):
            return False
        return self.low <= value <= self.high


#: Every value rule, in the order findings are reported. Whole numbers are checked before these
#: (a fraction, an infinity or a value of 2**53 or more: check ``integer``).
RULES: tuple[Rule, ...] = (
    Rule("finite", "finite", FLOAT_KINDS, -math.inf, math.inf, "infinite value", open_ends=True),
    Rule("unit_interval", "range", ("score",), 0.0, 1.0, "outside [0, 1]"),
    Rule("non_negative", "range", ("seconds", "cost", *INTEGER_KINDS), 0.0, math.inf,
         "negative"),
)


def missing_spellings(kind: str | None) -> tuple[str, ...]:
    """The cell texts read as missing in a column of ``kind`` (None: a column the catalogue
    does not know, kept as text).

    Returns
    -------
    tuple of str
        ``("",)`` for kinds ``id`` and ``text`` and unknown columns (only an empty cell is
        missing), else :data:`~dabench_analysis.schema.NULL_VALUES` (compared exactly; flag,
        number and enum parsing also ignore surrounding blanks).

    Examples
    --------
    >>> missing_spellings("text"), missing_spellings(None)
    (('',), ('',))
    >>> "None" in missing_spellings("score")
    True
    """
    return ("",) if kind is None or kind in VERBATIM_KINDS else NULL_VALUES
