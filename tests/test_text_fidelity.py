"""Free text is loaded byte for byte (issue: real run directories, items 5 and 6).

Expected values come from Python's ``csv`` module reading the same bytes (``newline=""``), an
independent reader; the loader (pyarrow underneath) must agree on every text cell, whatever the
value's length and line breaks, including CR LF pairs split by pyarrow's read-block boundaries
(apache/arrow issue 51368) and values longer than a block. Text and id columns keep
``NA``/``None``/... as written (only an empty cell is missing); number and flag columns read
``schema.NULL_VALUES`` as missing and reject other spellings.
"""

from __future__ import annotations

import csv
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load_run, load_runs, schema
from dabench_analysis.load import _csv as load_csv
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.synthetic import generate_run

MIB = 1 << 20
CATALOGUES = {"task_metrics.csv": schema.TASK_COLUMNS,
              "trajectory.csv": schema.TRAJECTORY_COLUMNS,
              "tool_calls.csv": schema.TOOL_CALL_COLUMNS}
FRAMES = {"task_metrics.csv": "tasks", "trajectory.csv": "trajectory",
          "tool_calls.csv": "tool_calls"}
#: Around a target offset t: CR LF ending at t-2, CR at t-1 + LF at t (split by a boundary at
#: t), a lone CR, then CR LF.
CLUSTER = b"\r\n\r\n\r\r\n"


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """The independent reader: header and rows as Python's csv module reads them."""
    limit = csv.field_size_limit(1 << 30)  # values of megabytes (default limit: 128 KiB)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh, strict=True))
    finally:
        csv.field_size_limit(limit)
    return rows[0], rows[1:]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\r\n").writerows([header, *rows])


def _filler(n: int, seed: int, quotes: bool) -> str:
    """``n`` characters of text with LF, CR LF and lone CR line breaks (and quotes, commas)."""
    words = ["select", "join", "region", "count", "group by", "the table", "mean", "null"]
    breaks = ["\n", "\r\n", "\r", "\n\n", "\r\n\r\n"]
    lines, k = [], seed
    while sum(map(len, lines)) < 8192:
        k += 1
        line = " ".join(words[(k * i) % len(words)] for i in range(1 + k % 9))
        if quotes and k % 5 == 0:
            line = f'"{line}", {k}'
        lines.append(line + breaks[k % len(breaks)])
    block = "".join(lines)
    return (block * (n // len(block) + 2))[seed % 97:][:n]


def _text_columns(file: str, header: list[str]) -> list[str]:
    catalogue = CATALOGUES[file]
    return [c for c in header if c not in catalogue or catalogue[c].kind in ("text", "id")]


def _assert_text_as_csv(run_dir: Path, loaded, files=tuple(FRAMES)) -> int:
    """Every text/id cell of the loaded frames equals the csv module's reading (an empty cell:
    missing). Returns the number of cells compared."""
    compared = 0
    for file in files:
        header, rows = _read_csv(run_dir / file)
        frame = getattr(loaded, FRAMES[file]).reset_index(drop=True)
        assert len(frame) == len(rows), file
        for col in _text_columns(file, header):
            if col == "run_id":
                continue  # an empty run_id is filled from the folder name
            want = [None if r[header.index(col)] == "" else r[header.index(col)] for r in rows]
            got = frame[col].astype(object).where(frame[col].notna(), None).tolist()
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                if g != w:  # a short message: the values may be megabytes
                    first = next((j for j, (a, b) in enumerate(zip(g or "", w or "", strict=False))
                                  if a != b), min(len(g or ""), len(w or "")))
                    raise AssertionError(f"{file} row {i} column {col}: lengths "
                                         f"{len(g or '')} vs {len(w or '')}, first difference "
                                         f"at {first}: {(g or '')[first:first + 8]!r} vs "
                                         f"{(w or '')[first:first + 8]!r}")
            compared += len(want)
    return compared


def _same_frames(a, b) -> None:
    for name in FRAMES.values():
        pd.testing.assert_frame_equal(getattr(a, name).reset_index(drop=True),
                                      getattr(b, name).reset_index(drop=True))


# --- item 6: every byte of free text --------------------------------------------------------


def _encode(row: list[str]) -> bytes:
    return b",".join(b'"' + v.encode().replace(b'"', b'""') + b'"' for v in row) + b"\r\n"


def _write_with_clusters(path: Path, header: list[str], rows: list[list[str]],
                         long_cols: list[str], size: int, targets: list[int]) -> None:
    """Rewrite a file (every field quoted) so that the ``long_cols`` values fill about
    ``size`` bytes with quote-free filler (a value's characters are its bytes, at known file
    offsets), with :data:`CLUSTER` placed so that a CR is at file offset ``t - 1`` and an LF at
    ``t`` for every target ``t``."""
    per_cell = size // (len(rows) * len(long_cols))
    out = bytearray(_encode(header))
    todo = sorted(targets)
    for r, row in enumerate(rows):
        for c, col in enumerate(header):
            if col not in long_cols:
                continue
            # the value's first byte: after the fields before it, each '"...",'
            start = len(out) + sum(len(_encode([v])) + 1 - 2 for v in row[:c]) + 1
            n, mine = per_cell, []
            while todo and todo[0] < start + n + 4096:  # in, or just after, this value:
                mine.append(todo.pop(0) - start)      # stretch the value over it
                n = max(n, mine[-1] + 64)
            value = bytearray(_filler(n, r * 7 + c, quotes=False).encode())
            for rel in mine:
                value[rel - 3:rel + 4] = CLUSTER
            row[c] = value.decode()
        out += _encode(row)
    assert not todo, f"targets {todo} not placed (file of {len(out)} bytes)"
    path.write_bytes(bytes(out))
    for t in targets:
        assert bytes(out[t - 1:t + 1]) == b"\r\n", t


def _boundary_run(root: Path) -> Path:
    """CR LF pairs split by file offsets 1, 2, 4 and 8 MiB (4 and 8 MiB are pyarrow's default
    block boundaries) inside quoted failure_reason/root_cause and thought/observation values
    of at most ~1 MiB (no row longer than a block)."""
    run = generate_run(root, run_id="boundaries", n_tasks=8, seed=1, mean_steps=3,
                       replays=False)
    targets = [MIB, 2 * MIB, 4 * MIB, 8 * MIB]
    for file, cols in (("task_metrics.csv", ["failure_reason", "root_cause"]),
                       ("trajectory.csv", ["thought", "observation"])):
        header, rows = _read_csv(run / file)
        _write_with_clusters(run / file, header, rows, cols, 8 * MIB + 300_000, targets)
    return run


def _long_value(n: int, seed: int) -> str:
    """A value of ``n`` characters with line breaks throughout and CR LF clusters at the
    1, 2, 4 and 8 MiB marks it crosses."""
    value = list(_filler(n, seed, quotes=True))
    for mark in (MIB, 2 * MIB, 4 * MIB, 8 * MIB):
        if mark + 4 < n:
            value[mark - 3:mark + 4] = CLUSTER.decode()
    return "".join(value)


def _long_run(root: Path) -> Path:
    """Values just below and above 1, 2, 4 and 8 MiB (longer than pyarrow's default block:
    a read that must grow its block)."""
    run = generate_run(root, run_id="long", n_tasks=8, seed=2, mean_steps=3, replays=False)
    header, rows = _read_csv(run / "task_metrics.csv")
    sizes = {"failure_reason": [MIB + 1, 2 * MIB - 1, 4 * MIB + 1, 8 * MIB + 3],
             "root_cause": [MIB - 1, 2 * MIB + 1, 4 * MIB - 1, 0]}
    for col, lengths in sizes.items():
        for i, n in enumerate(lengths):
            rows[i][header.index(col)] = _long_value(n, 11 * i + len(col))
    _write_csv(run / "task_metrics.csv", header, rows)
    header, rows = _read_csv(run / "trajectory.csv")
    sizes = {"thought": [8 * MIB + 5, MIB + 1], "observation": [4 * MIB - 3, 2 * MIB - 1]}
    for col, lengths in sizes.items():
        for i, n in enumerate(lengths):
            rows[3 * i][header.index(col)] = _long_value(n, 5 * i + len(col))
    _write_csv(run / "trajectory.csv", header, rows)
    return run


@pytest.fixture(scope="module")
def big_runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("text_fidelity")
    return [_boundary_run(root), _long_run(root)]


def test_boundary_run_splits_crlf_at_pyarrow_block_boundaries(big_runs):
    # the control: the file really holds a quoted CR LF split by the default 4 MiB block
    # boundary (the case pyarrow reads wrongly, apache/arrow issue 51368)
    for file in ("task_metrics.csv", "trajectory.csv"):
        data = (big_runs[0] / file).read_bytes()
        for b in (4 * MIB, 8 * MIB):
            assert data[b - 1:b + 1] == b"\r\n"
            assert data[:b].count(b'"') % 2 == 1  # inside a quoted value
    _, rows = _read_csv(big_runs[1] / "task_metrics.csv")
    assert max(len(v) for r in rows for v in r) == 8 * MIB + 3  # > two 4 MiB blocks


@pytest.mark.parametrize("which", ["boundaries", "long"])
def test_long_text_with_line_breaks_loads_byte_exact(big_runs, which):
    run_dir = big_runs[["boundaries", "long"].index(which)]
    loaded = load_run(run_dir, include_text=True, cache=False)
    assert not [f for f in loaded.findings if f.severity == "error"]
    assert _assert_text_as_csv(run_dir, loaded) > 1000


def test_load_runs_gives_the_same_frames_on_long_text(big_runs):
    single = [load_run(d, include_text=True, cache=False) for d in big_runs]
    for _ in range(2):  # a fresh parse (cache entries written), then the cache hits
        runs = load_runs(big_runs, include_text=True, parallel=False, progress=False)
        for one, many in zip(single, runs, strict=True):
            _same_frames(one, many)
    _assert_text_as_csv(big_runs[1], runs[1], files=["task_metrics.csv"])


@pytest.mark.parametrize("block", [131])
def test_every_offset_of_a_split_crlf_loads_exact_with_small_blocks(tmp_path, monkeypatch,
                                                                    block):
    # pyarrow's block boundaries made dense (the header must fit in one block): CR LF, lone
    # CR and LF at every offset around them, in rows shorter and longer than a block
    monkeypatch.setattr(load_csv, "BLOCK_SIZE", block)
    run = tmp_path / "small"
    run.mkdir()
    values = [
        "", "a\r\nb", "\r\n" * 9, "x" * (block - 1) + "\r\nz", "\r" * 5 + "\n" * 5,
        '"q"\r\n"' * 6, "y" * (3 * block) + "\r\n", "\r\n\r\r\n\n\r",
    ]
    for shift in range(block + 2):
        header = ["task_id", "difficulty", "final_score", "failure_reason", "root_cause"]
        rows = [[f"t{i}", "Easy", "0.5", "p" * shift + v, v[::-1]]
                for i, v in enumerate(values)]
        _write_csv(run / "task_metrics.csv", header, rows)
        loaded = load_run(run, include_text=True, cache=False)
        _assert_text_as_csv(run, loaded, files=["task_metrics.csv"])


# --- item 5: text stays text ------------------------------------------------------------------

SPELLINGS = ["NA", "None", "null", "n/a", "NaN", "N/A", "<NA>", "none"]
#: file -> (text/id columns, number/flag columns) given the spelling in row 2
CELLS = {"task_metrics.csv": (["failure_reason", "root_cause", "task_type", "trace_id"],
                              ["confidence_score", "execution_time", "execution_success"]),
         "trajectory.csv": (["thought", "observation", "decision"],
                            ["duration_seconds", "success"]),
         "tool_calls.csv": (["error_message", "error_type"], ["latency_seconds", "success"])}


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Path:
    return generate_run(tmp_path_factory.mktemp("base"), run_id="spellings", n_tasks=4,
                        seed=3, mean_steps=2, replays=False)


def _spelling_run(base: Path, root: Path, spelling: str) -> Path:
    run = shutil.copytree(base, root / "spellings")
    for file, (texts, values) in CELLS.items():
        header, rows = _read_csv(run / file)
        for col in texts + values:
            rows[1][header.index(col)] = spelling
        rows[2][header.index(texts[0])] = ""  # an empty text cell is missing
        with open(run / file, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
            writer.writerow(header)
            writer.writerows(rows[:3])
            # the same spelling quoted in row 4: quoting changes nothing
            writer = csv.writer(fh, lineterminator="\n", quoting=csv.QUOTE_ALL)
            rows[3] = list(rows[1]) if file != "task_metrics.csv" else \
                [v if c != "task_id" else rows[3][i] for i, (c, v) in
                 enumerate(zip(header, rows[1], strict=True))]
            if file == "trajectory.csv":
                rows[3][header.index("step_id")] = "99"
            if file == "tool_calls.csv":
                rows[3][header.index("call_id")] = "call-99"
            writer.writerows(rows[3:])
    return run


def _check_spellings(run_dir: Path, loaded, spelling: str) -> None:
    documented = spelling in schema.NULL_VALUES
    for file, (texts, values) in CELLS.items():
        frame = getattr(loaded, FRAMES[file]).reset_index(drop=True)
        for row in (1, 3):
            for col in texts:
                assert frame.loc[row, col] == spelling, (file, col, frame.loc[row, col])
            for col in values:
                assert pd.isna(frame.loc[row, col]), (file, col, frame.loc[row, col])
        assert pd.isna(frame.loc[2, texts[0]])
        rejected = {f.column for f in loaded.findings
                    if f.file == file and f.severity == "error"}
        # documented spellings are missing values; others are rejected values (an error)
        assert rejected == (set() if documented else set(values)), (file, rejected)
    _assert_text_as_csv(run_dir, loaded)


class _Parses:
    """Counts the parses of files (0 on a cache hit)."""

    def __init__(self, monkeypatch):
        self.n = 0
        monkeypatch.setattr(load_csv, "parse", self._counting(load_csv.parse))

    def _counting(self, real):
        def counted(*args, **kwargs):
            self.n += 1
            return real(*args, **kwargs)
        return counted


def _load_all(run_dir: Path, how: str, cache: bool):
    if how == "load_run":
        return load_run(run_dir, include_text=True, strict=False, cache=cache)
    return load_runs([run_dir], include_text=True, strict=False, cache=cache, parallel=False,
                     progress=False)[0]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_null_spellings_stay_text_but_are_missing_numbers_and_flags(base_run, tmp_path,
                                                                    monkeypatch, spelling):
    run_dir = _spelling_run(base_run, tmp_path, spelling)
    parses = _Parses(monkeypatch)
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rejected values ("n/a") warn
        for how in ("load_run", "load_runs"):
            parse_cache.clear()  # the two share one cache: each starts cold
            for cache, hit in ((False, False), (True, False), (True, True)):
                before = parses.n
                loaded = _load_all(run_dir, how, cache)
                _check_spellings(run_dir, loaded, spelling)
                frames.append(loaded)
                if hit:
                    assert parses.n == before, f"{how}: the second cached load parsed again"
                else:
                    assert parses.n > before
    for other in frames[1:]:
        _same_frames(frames[0], other)


def test_every_string_kind_has_a_rule(tmp_path):
    # text and id: verbatim; timestamps, like numbers, flags and enums, read NULL_VALUES as
    # missing (a timestamp "None" is no time)
    kinds = {c.kind for cat in CATALOGUES.values() for c in cat.values()}
    assert kinds == {"id", "text", "timestamp", "score", "float", "seconds", "cost", "count", "tokens",
                     "flag", "enum", "bytes"}
    run = tmp_path / "kinds"
    run.mkdir()
    (run / "task_metrics.csv").write_text(
        "task_id,difficulty,final_score,timestamp,failure_reason,severity,extra\n"
        "t1,Easy,0.5,None,None,NA,None\nt2,Easy,0.5,,,,\n", encoding="utf-8")
    tasks = load_run(run, cache=False).tasks
    assert tasks.loc[0, ["failure_reason", "extra"]].tolist() == ["None", "None"]
    assert tasks[["timestamp", "severity"]].isna().all().all()
    assert tasks.loc[1, ["failure_reason", "extra"]].isna().all()
