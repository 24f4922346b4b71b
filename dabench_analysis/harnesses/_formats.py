"""The readers of this folder, registered with the core loader
(:func:`dabench_analysis.load.register_format`); each imports its reader (and
inspect_ai) only when it is called.

Detection (:func:`dabench_analysis.load.detect_format`): a file named ``.traj`` is a
SWE-agent trajectory; a zip named ``.eval`` or a JSON object with Inspect's ``version``,
``status`` and ``eval`` keys an Inspect log; a ``.traj.json`` object with ``messages`` a
SWE-agent trajectory; a JSON list of results with ``task_id`` and ``reward`` or a JSON object
with ``simulations`` tau-bench (tau2-bench); a JSON object whose ``schema_version`` names ATIF
an ATIF trajectory; a Parquet file or a ``.csv``, ``.jsonl``/``.ndjson`` file a per-task table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dabench_analysis.load._readers import register_format

#: File suffixes read as per-task tables.
TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".jsonl", ".ndjson", ".parquet", ".pq")
_ZIP, _PARQUET = b"PK\x03\x04", b"PAR1"
_INSPECT_KEYS = (b"version", b"status", b"eval")


def _json_keys(head: bytes, keys: tuple[bytes, ...]) -> bool:
    return all(b'"' + k + b'"' in head for k in keys)


def _holds(path: Path, needle: bytes) -> bool:
    """Whether the file holds ``needle`` (read in chunks; a key of a large JSON object)."""
    tail = b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            if needle in tail + chunk:
                return True
            tail = chunk[-len(needle):]
    return False


def _text(head: bytes) -> bytes:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")


def _object(path: Path, head: bytes) -> bool:
    """A JSON object (not JSON lines)."""
    return _text(head).startswith(b"{") and path.suffix.lower() not in (".jsonl", ".ndjson")


def _is_inspect(path: Path, head: bytes) -> bool:
    if path.name.endswith(".traj"):
        return False
    if head.startswith(_ZIP):
        return path.suffix == ".eval"
    return _object(path, head) and _json_keys(_text(head), _INSPECT_KEYS)


def _is_swe(path: Path, head: bytes) -> bool:
    return path.name.endswith(".traj") or (
        path.name.endswith(".traj.json") and _object(path, head)
        and _json_keys(_text(head), (b"messages",)))


def _is_tau(path: Path, head: bytes) -> bool:
    text = _text(head)
    if path.name.endswith(".traj"):
        return False
    return (text.startswith(b"[") and _json_keys(text, (b"task_id", b"reward"))) or (
        _object(path, head) and not _is_swe(path, head) and _holds(path, b'"simulations"'))


def _is_atif(path: Path, head: bytes) -> bool:
    text = _text(head)
    return (not path.name.endswith(".traj") and _object(path, head) and not _is_swe(path, head)
            and b'"schema_version"' in text and b'"ATIF-' in text)


def _is_table(path: Path, head: bytes) -> bool:
    return not path.name.endswith(".traj") and (head.startswith(_PARQUET) or (
        not head.startswith(_ZIP) and path.suffix.lower() in TABLE_SUFFIXES))


def _swe_folder(path: Path) -> bool:
    from dabench_analysis.harnesses import _swe_traj as swe_traj

    return bool(swe_traj.trajectory_files(path, first=True))


def _chat_folder(path: Path) -> bool:
    from dabench_analysis.harnesses import _groupchat as groupchat

    first = next(iter(groupchat.chat_files(path)), None)
    return first is not None and groupchat.is_chat(first)


def _inspect_scored(path: Path) -> bool:
    """Whether an Inspect log's header has scores (any failure: False, the full read says why)."""
    try:
        from inspect_ai.log import read_eval_log

        head = read_eval_log(str(path), header_only=True)
        return head.results is not None and bool(head.results.scores)
    except Exception:  # noqa: BLE001 - then the full read says what is wrong
        return False


def _read_inspect(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._inspect_log import read_inspect

    return [read_inspect(path)]


def _read_swe(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._swe_traj import read_swe

    return [read_swe(path)]


def _read_tau(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._taubench import read_taubench

    return [read_taubench(path)]


def _read_atif(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._atif import read_atif

    return [read_atif(path)]


def _read_table(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._table import read_table_records

    return read_table_records(path, mapping or {})


def _read_chat(path: Path, mapping: Mapping[str, str]) -> list:
    from dabench_analysis.harnesses._groupchat import read_groupchat

    return [read_groupchat(path)]


# In this order (the order the command line names them); each sniff excludes what an earlier
# check of the detection rule (module docstring) claims, so the order does not decide.
register_format("inspect", read=_read_inspect, sniff=_is_inspect, scored=_inspect_scored)
register_format("tau-bench", read=_read_tau, sniff=_is_tau)
register_format("atif", read=_read_atif, sniff=_is_atif)
register_format("table", read=_read_table, sniff=_is_table)
register_format("swe-agent", read=_read_swe, sniff=_is_swe, folder=_swe_folder)
register_format("groupchat", read=_read_chat, folder=_chat_folder)
