"""The batched path of ``load_runs`` against the per-run path, the reference, on every shape of
the run-shape matrix.

Shapes: the sample runs with each optional column group removed (groups from the catalogue),
with each optional file removed, and runs written "by another eval-v2 version" or by hand:
old column names (aliases), extra columns, flags spelled True/1/yes/1.0/" 1", columns
reordered, enum case variants, header spaces, and rows with errors (a score of 1.5, a short
row, a duplicated task id, an unknown enum), in the task file and in trajectory.csv /
tool_calls.csv (extra and reordered columns, True/False flags, a repeated step key, a flag that
is not one). All shapes are loaded as one sweep (so runs of different columns are stacked
together), with the cache off, then with it on (cold, then a hit); every run's ``tasks``,
``trajectory``, ``tool_calls`` and ``findings`` must equal those of ``load_run`` on its own
(``pd.testing.assert_frame_equal``, findings compared as lists), and the stacked frames must
equal the per-run frames stacked.
"""

from __future__ import annotations

import csv
import io
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from test_run_shapes import optional_groups, slug  # the run-shape matrix's own names

from dabench_analysis import load, schema
from dabench_analysis.load import cache, load_runs
from dabench_analysis.load import sweep as sweep_module

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample_runs"
TM, TRAJ, TOOLS = "task_metrics.csv", "trajectory.csv", "tool_calls.csv"


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _edit(file: str, fn):
    def edit(run: Path) -> None:
        rows = _rows(run / file)
        fn(rows)
        _write(run / file, rows)
    return edit


def _set(col: str, row: int, value: str):
    def fn(rows):
        rows[row][rows[0].index(col)] = value
    return fn


def _flags(rows, spell: dict[str, str], every: int = 1) -> None:
    """Respell the 0/1 flags of every ``every``-th data row."""
    cols = [i for i, h in enumerate(rows[0])
            if schema.TASK_COLUMNS.get(schema.ALIASES.get(h.strip(), h.strip())) is not None
            and schema.TASK_COLUMNS[schema.ALIASES.get(h.strip(), h.strip())].kind == "flag"]
    for n, r in enumerate(rows[1:]):
        if n % every == 0:
            for i in cols:
                r[i] = spell.get(r[i], r[i])


def _side_flags(spell: dict[str, str]):
    def fn(rows):
        i = rows[0].index("success")
        for r in rows[1:]:
            r[i] = spell.get(r[i], r[i])
    return fn


def _reorder(rows) -> None:
    order = sorted(range(len(rows[0])), key=lambda i: (i * 7919) % len(rows[0]))
    rows[:] = [[r[i] for i in order] for r in rows]


def _extra(rows, name="harness_build", value="v1.9") -> None:
    rows[0].append(name)
    for r in rows[1:]:
        r.append(value)


def _rename(old: str, new: str):
    def fn(rows):
        rows[0][rows[0].index(old)] = new
    return fn


def _drop(*cols: str):
    def fn(rows):
        keep = [i for i, h in enumerate(rows[0]) if h not in cols]
        rows[:] = [[r[i] for i in keep] for r in rows]
    return fn


def _other_version(rows) -> None:
    """Another harness version: some columns absent, two old names, an extra column, flags
    True/False on odd rows and 1/0 on even ones, columns reordered."""
    _drop("outcome_error_type", "confidence_score", "trace_id")(rows)
    _rename("execution_stage_calls", "execution_calls")(rows)
    _rename("schema_agent_used", "schema_agent_called")(rows)
    _flags(rows, {"1": "True", "0": "False"}, every=2)
    _extra(rows)
    _reorder(rows)


def _unusual_flags(n: int):
    """``n`` flag columns with one yes/no each (over 8: the per-run path reads the file as
    text)."""
    def fn(rows):
        cols = [i for i, h in enumerate(rows[0])
                if h in schema.TASK_COLUMNS and schema.TASK_COLUMNS[h].kind == "flag"][:n]
        for k, i in enumerate(cols):
            r = rows[1 + k % (len(rows) - 1)]
            r[i] = {"1": "yes", "0": "no"}.get(r[i], r[i])
    return fn


def _chain(*fns):
    def fn(rows):
        for f in fns:
            f(rows)
    return fn


def _remove(pattern: str):
    def edit(run: Path) -> None:
        for p in run.glob(pattern):
            p.unlink()
    return edit


#: shape name -> edits of a copy of a sample run
SHAPES = {
    "complete": [],
    **{f"no_{slug(g)}": [_edit(TM, _drop(*cols))] for g, cols in optional_groups().items()},
    **{f"no_{slug(f)}": [_remove(f)] for f in schema.OPTIONAL_FILES},
    "other_version": [_edit(TM, _other_version),
                      _edit(TRAJ, _chain(_side_flags({"1": "True", "0": "False"}), _extra,
                                         _drop("legacy_stage"), _reorder)),
                      _edit(TOOLS, _chain(_extra, _drop("trace_id"), _reorder))],
    "flags_true_1_yes": [_edit(TM, _chain(lambda r: _flags(r, {"1": "True"}, every=3),
                                          _set("execution_success", 2, "yes"),
                                          _set("first_try_success", 4, "1.0"),
                                          _set("first_try_success", 5, " 1"),
                                          _set("recovery_success", 6, "TRUE"),
                                          _set("recovery_success", 7, "n")))],
    "nine_unusual_flag_columns": [_edit(TM, _unusual_flags(9))],
    "eight_unusual_flag_columns": [_edit(TM, _unusual_flags(8))],
    "enum_case": [_edit(TM, _chain(_set("difficulty", 1, "hard"),
                                   _set("failure_stage", 3, " PLAN"),
                                   _set("severity", 2, "NA")))],
    "enum_spaces_only": [_edit(TM, _chain(_set("difficulty", 2, " Hard"),
                                          _set("severity", 3, "LOW ")))],
    "header_spaces_and_alias": [_edit(TM, _chain(_rename("answer_f1", " answer_f1 "),
                                                 _rename("execution_stage_tokens",
                                                         "execution_tokens")))],
    "no_run_id_column": [_edit(TM, _drop("run_id")), _edit(TRAJ, _drop("run_id"))],
    "blank_run_ids": [_edit(TRAJ, _set("run_id", 3, "")), _edit(TOOLS, _set("run_id", 2, ""))],
    "missing_flag_values": [_edit(TM, _chain(_set("execution_success", 1, ""),
                                             _set("execution_success", 3, "NA"))),
                            _edit(TRAJ, _set("success", 2, ""))],
    "score_above_one": [_edit(TM, _set("final_score", 2, "1.5"))],
    "short_row": [_edit(TM, lambda rows: rows.__setitem__(3, rows[3][:5]))],
    "duplicated_task_id": [_edit(TM, lambda rows: _set("task_id", 2, rows[1][
        rows[0].index("task_id")])(rows))],
    "unknown_enum": [_edit(TM, _set("failure_stage", 2, "LUNCH"))],
    "flag_that_is_not_one": [_edit(TM, _set("execution_success", 2, "maybe"))],
    "side_files_with_findings": [_edit(TRAJ, _chain(_set("success", 1, "yes"),
                                                    _set("success", 2, "maybe"))),
                                 _edit(TOOLS, lambda rows: rows.append(list(rows[1])))],
    "repeated_step_key": [_edit(TRAJ, lambda rows: rows.append(list(rows[1])))],
}
#: shapes whose task file has an error (loaded only with strict=False)
ERRORS = {"score_above_one", "short_row", "duplicated_task_id", "unknown_enum",
          "flag_that_is_not_one"}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fast_shapes")
    for i, (name, edits) in enumerate(SHAPES.items()):
        base = SAMPLE / ("proposed_aat" if i % 2 else "baseline_react")
        run = root / name
        shutil.copytree(base, run, ignore=shutil.ignore_patterns("comprehensive_evaluation.csv"))
        for edit in edits:
            edit(run)
        if (run / TM).is_file() and "run_id" in _rows(run / TM)[0]:
            _edit(TM, lambda rows, n=name: [r.__setitem__(rows[0].index("run_id"), n)
                                            for r in rows[1:]])(run)
    return root


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


def _reference(path: Path) -> load.Run:
    """load_run on its own, sides read in the order the sweep reads them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run = load.load_run(path, strict=False, cache=False)
        run.trajectory, run.tool_calls  # noqa: B018 - their findings join run.findings
    return run


@pytest.fixture(scope="module")
def references(shapes) -> dict[str, load.Run]:
    return {p.name: _reference(p) for p in sorted(shapes.iterdir())}


def _assert_same(loaded, references) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stacked = {"trajectory": loaded.trajectory, "tool_calls": loaded.tool_calls}
    assert sorted(r.path.name for r in loaded) == sorted(references)
    for run in loaded:
        ref = references[run.path.name]
        name = run.path.name
        assert run.run_id == ref.run_id, name
        for attr in ("tasks", "trajectory", "tool_calls"):
            pd.testing.assert_frame_equal(getattr(run, attr), getattr(ref, attr),
                                          obj=f"{name}.{attr}")
        assert run.findings == ref.findings, name
        assert run.source_rows == ref.source_rows, name
    ordered = [references[r.path.name] for r in loaded]
    pd.testing.assert_frame_equal(loaded.tasks,
                                  sweep_module._concat([r.tasks for r in ordered]))
    for attr, frame in stacked.items():
        pd.testing.assert_frame_equal(
            frame, sweep_module._concat([getattr(r, attr) for r in ordered]), obj=attr)


@pytest.mark.parametrize("use_cache", [False, True])
def test_every_shape_equals_load_run(shapes, references, use_cache, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    for _attempt in range(2 if use_cache else 1):  # with the cache: cold, then a hit
        loaded = _quietly(load_runs, shapes, strict=False, cache=use_cache, progress=False)
        assert loaded.skipped.empty
        _assert_same(loaded, references)
    if use_cache:
        assert any(p.suffix == ".arrow" for p in (tmp_path / "cache").rglob("*"))


def test_without_errors_strict_loads_and_stacks_every_shape(shapes, references, tmp_path,
                                                           monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    dirs = [p for p in sorted(shapes.iterdir()) if p.name not in ERRORS]
    for _attempt in range(2):
        loaded = _quietly(load_runs, dirs, progress=False)
        _assert_same(loaded, {p.name: references[p.name] for p in dirs})


def test_shapes_with_notes_and_coercions_take_the_batched_path(shapes, monkeypatch):
    per_run = []
    real = sweep_module.load_run
    monkeypatch.setattr(sweep_module, "load_run",
                        lambda path, **kw: per_run.append(Path(path).name) or real(path, **kw))
    loaded = _quietly(load_runs, shapes, strict=False, cache=False, progress=False)
    # errors, and a file the per-run path reads as text (over 8 columns of unusual flags)
    assert sorted(per_run) == sorted([*ERRORS, "nine_unusual_flag_columns"])
    assert loaded.tasks is not None
    batched = [p.name for p in sorted(shapes.iterdir()) if p.name not in per_run]
    clean = _quietly(load_runs, [shapes / n for n in batched], cache=False, progress=False)
    assert clean.stacked is not None and clean.tasks is clean.stacked
    for name in ("enum_spaces_only", "flags_true_1_yes"):  # alone: silent fixes count too
        assert _quietly(load_runs, [shapes / name], cache=False, progress=False).stacked \
            is not None, name
    # the findings of the coerced values are the per-run path's, row by row
    found = {(f.check, f.column, f.rows) for f in clean["flags_true_1_yes"].findings}
    assert {("flag_coerced", "execution_success", (2,)), ("flag_coerced", "recovery_success",
            (7,)), ("flag_coerced", "first_try_success", (4,))} <= found
    assert ("enum_coerced", "difficulty", (1,)) in \
        {(f.check, f.column, f.rows) for f in clean["enum_case"].findings}


def test_side_files_are_read_once_for_the_sweep(shapes, monkeypatch, tmp_path):
    """Runs.trajectory reads each file once (batched), and a run's own trajectory is then its
    slice, without a second read or its findings twice."""
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    dirs = [shapes / "complete", shapes / "other_version", shapes / "missing_flag_values"]
    steps = sum(len(_reference(d).trajectory) for d in dirs)
    loaded = _quietly(load_runs, dirs, progress=False)
    calls = []
    real = load.run.read_table
    monkeypatch.setattr(load.run, "read_table", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert len(loaded.trajectory) == steps and calls == []
    before = list(loaded["missing_flag_values"].findings)
    assert loaded["missing_flag_values"].trajectory["success"].isna().sum() == 1
    assert loaded["missing_flag_values"].findings == before and calls == []


_FLAG = (["1", "0", "True", "False", "TRUE", "true", "yes", "no", "1.0", " 1", "t", "", "NA",
          "None"], ["maybe", "2"])
_SCORE = (["0.5", "1", "0", "", "NA", "1e-3", "nan", "NaN", "None"], ["1.5", "-0.1", "inf", "0,5"])
_COUNT = (["3", "0", "", "NA", "1e3", "7.0", "nan", "null"], ["2.5", "-1", "x"])
_TEXT = (["", "None", "NA", "x, y", "line\nbreak"], [])
#: column -> (values that load without an error: notes, coerced spellings; values that do not)
_PALETTE = {
    "execution_success": _FLAG, "first_try_success": _FLAG, "recovery_success": _FLAG,
    "difficulty": (["Hard", "hard", " Hard", "HARD", "Easy"], ["LUNCH", "", "NA"]),
    "severity": (["LOW", "low", " HIGH", "", "NA"], ["URGENT"]),
    "failure_stage": (["PLAN", "plan", "execution", "", "None"], ["LUNCH"]),
    "final_score": (["0.5", "1", "0", "1e-3"], ["", "NA", "1.5", "nan"]),
    "answer_f1": _SCORE, "autonomy_score": _SCORE,
    "llm_calls": _COUNT, "replan_count": _COUNT,
    "failure_reason": _TEXT, "root_cause": _TEXT,
}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    from dabench_analysis.synthetic import generate_run

    return generate_run(tmp_path_factory.mktemp("tiny_fast"), run_id="tiny", n_tasks=6, seed=3)


def _edits():
    from hypothesis import strategies as st

    def cells(bad: bool):
        columns = sorted(c for c, values in _PALETTE.items() if values[bad])
        return st.sampled_from(columns).flatmap(lambda col: st.tuples(
            st.just(col), st.integers(1, 6), st.sampled_from(_PALETTE[col][bad])))

    header = st.sampled_from(["alias", "extra", "drop_group", "reorder"])
    some_bad = st.one_of(st.just([]), st.just([]), st.lists(cells(True), min_size=1, max_size=1))
    return st.tuples(st.lists(cells(False), min_size=1, max_size=8), some_bad,
                     st.lists(header, max_size=3, unique=True))


def _edited(tiny_run: Path, root: Path, name: str, edits) -> Path:
    good, bad, headers = edits
    run = root / name
    shutil.copytree(tiny_run, run)
    rows = _rows(run / TM)
    for r in rows[1:]:  # one run id per run
        r[rows[0].index("run_id")] = name
    for col, row, value in good + bad:
        rows[row][rows[0].index(col)] = value
    for h in headers:
        if h != "alias" or "schema_agent_used" in rows[0]:
            {"alias": _rename("schema_agent_used", "schema_agent_called"), "extra": _extra,
             "reorder": _reorder, "drop_group": _drop(*optional_groups()["Planning"])}[h](rows)
    _write(run / TM, rows)
    return run


def test_random_cell_and_header_edits_equal_load_run(tiny_run, tmp_path_factory):
    """Property: whatever the task files of a sweep hold (three runs edited independently,
    loaded together), every run's frame and findings are what load_run gives."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(_edits(), min_size=3, max_size=3))
    def check(edits):
        root = tmp_path_factory.mktemp("edits")
        runs = [_edited(tiny_run, root, f"run_{i}", e) for i, e in enumerate(edits)]
        loaded = _quietly(load_runs, runs, strict=False, cache=False, progress=False)
        assert loaded.skipped.empty and [r.path for r in loaded] == runs
        for run in loaded:
            ref = _reference(run.path)
            pd.testing.assert_frame_equal(run.tasks, ref.tasks)
            _quietly(lambda run=run: (run.trajectory, run.tool_calls))
            assert run.findings == ref.findings

    check()


def test_a_blank_required_enum_beside_plain_values_equals_load_run(tiny_run, tmp_path):
    """Found by the property above: a required enum (difficulty) left blank in one run while
    every value is spelled as a level fails the stacked check with nothing to respell; that
    run goes to the per-file path (an error), the others stay batched, all equal load_run."""
    edits = [([("answer_f1", 1, "0.5")], [], []), ([("answer_f1", 1, "0.5")], [], []),
             ([("answer_f1", 1, "0.5")], [("difficulty", 1, "")], [])]
    runs = [_edited(tiny_run, tmp_path, f"run_{i}", e) for i, e in enumerate(edits)]
    loaded = _quietly(load_runs, runs, strict=False, cache=False, progress=False)
    assert [r.path for r in loaded] == runs
    for run in loaded:
        ref = _reference(run.path)
        pd.testing.assert_frame_equal(run.tasks, ref.tasks)
        assert run.findings == ref.findings
    assert [f.check for f in loaded.runs[2].findings if f.severity == "error"] == \
        ["required_value"]


def test_crlf_split_by_the_batched_read_blocks_stays_exact(tmp_path, monkeypatch):
    """Pitfall P11 on the batched path, which reads 1 MiB blocks: quoted thoughts (shorter than
    a block) with CR LF pairs split by the 1 and 2 MiB offsets are read byte for byte, as the
    per-run path and the standard library's csv module read them."""
    from dabench_analysis.synthetic import generate_run

    mib, size = 1 << 20, 150_000
    run = generate_run(tmp_path, run_id="crlf", n_tasks=6, seed=1, mean_steps=4, replays=False)
    header, *rows = _rows(run / TRAJ)
    col = header.index("thought")
    values = [list("a" * size + "\r\n") for _ in rows]

    def write() -> bytes:
        for row, value in zip(rows, values, strict=True):
            row[col] = "".join(value)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\r\n").writerows([header, *rows])
        (run / TRAJ).write_bytes(buf.getvalue().encode())
        return (run / TRAJ).read_bytes()

    data = write()
    assert len(data) > 2 * mib + size
    starts, at = [], 0
    for _ in rows:  # where each thought's text starts in the file
        at = data.index(b'"' + b"a" * 100, at) + 1
        starts.append(at)
    for target in (mib, 2 * mib):
        i = max(k for k, s in enumerate(starts) if s <= target - 1)
        assert target - starts[i] < size, "the offset falls between two thoughts"
        values[i][target - 1 - starts[i]:target + 1 - starts[i]] = ["\r", "\n"]
    data = write()
    assert all(data[t - 1:t + 1] == b"\r\n" for t in (mib, 2 * mib))
    reference = load.load_run(run, include_text=True, cache=False).trajectory
    reads = []
    real = load.run.read_table
    monkeypatch.setattr(load.run, "read_table", lambda *a, **k: reads.append(a) or real(*a, **k))
    batched = _quietly(load_runs, [run], include_text=True, cache=False, progress=False)
    pd.testing.assert_frame_equal(batched.trajectory, reference, check_index_type=False)
    assert reads == [] and batched.trajectory["thought"].tolist() == ["".join(v) for v in values]
