"""Seeded sample of a research-eval harness session (seed 002).

``python -m dabench_analysis.synthetic.research_eval OUT_DIR`` writes one session: three run
profiles over the same 24 test cases of an ``rfc_http_nist_v1``-style dataset::

    OUT_DIR/summary.json                          session summary (runs, session_wall_ms)
    OUT_DIR/<run_id>/artifacts/results.jsonl      one JSON object per test case
    OUT_DIR/<run_id>/artifacts/summary.json       per-run summary

A ``results.jsonl`` row has the fields seed 002 names: ``run_id, case_id, doc_ids, query,
expected`` (``{"type": "contains", "text": ...}`` or ``{"type": "regex", "pattern": ...}``),
``answer, status`` (PASS/FAIL/ERROR/HALTED), ``passed, error, elapsed_ms, token_usage``
(``main``/``summarizer``/``audit_planner`` × ``input_tokens``/``output_tokens``/
``total_tokens``), ``timings_ms`` (``source_prepare_ms, client_init_ms, run_turn_ms,
llm_total_ms, tool_total_ms, local_ingestion_ms, shortlist_ms, case_total_ms``) and
``tool_calls`` (``[{"name": ..., "arguments": {...}}]``). PASS/FAIL is decided by applying the
expectation to the answer, as the harness does. ``results.md``/``report.md`` are not written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from dabench_analysis._atomic import atomic_write

__all__ = ["CASES", "PROFILES", "generate"]

_DOCS = {"rfc9110": "https://www.rfc-editor.org/rfc/rfc9110",
         "rfc9111": "https://www.rfc-editor.org/rfc/rfc9111",
         "nist-800-63b": "https://pages.nist.gov/800-63-3/sp800-63b.html"}
#: case_id, doc_ids, query, expectation, passing answer, failing answer
CASES = [
    ("rfc9110-safe-methods", ["rfc9110"], "Which HTTP request methods are defined as safe?",
     {"type": "regex", "pattern": r"(?is)(?=.*\bGET\b)(?=.*\bHEAD\b)(?=.*\bOPTIONS\b)(?=.*\bTRACE\b).*"},
     "RFC 9110 defines GET, HEAD, OPTIONS and TRACE as safe methods.",
     "GET and HEAD are the safe methods."),
    ("rfc9110-put-idempotent", ["rfc9110"], "Is PUT idempotent according to RFC 9110?",
     {"type": "regex", "pattern": r"(?i)\bPUT\b.*\bidempotent\b"},
     "Yes. PUT is idempotent: repeating it has the same effect as sending it once.",
     "PUT replaces the state of the target resource."),
    ("rfc9110-404", ["rfc9110"], "What does status code 404 indicate?",
     {"type": "contains", "text": "Not Found"},
     "404 Not Found: the origin server did not find a current representation.",
     "404 means the request was malformed."),
    ("rfc9110-405-allow", ["rfc9110"], "Which header must a 405 response include?",
     {"type": "contains", "text": "Allow"},
     "A 405 response must include an Allow header listing the supported methods.",
     "It must include a Retry-After header."),
    ("rfc9110-503-retry", ["rfc9110"], "Which header tells a client how long to wait after 503?",
     {"type": "contains", "text": "Retry-After"},
     "The server may send Retry-After with a 503 response.", "The client should use Expires."),
    ("rfc9110-204", ["rfc9110"], "What is the reason phrase of status code 204?",
     {"type": "contains", "text": "No Content"},
     "204 No Content: the request succeeded and there is no content to send.",
     "204 means Accepted for processing."),
    ("rfc9110-206", ["rfc9110"], "Which status code answers a successful range request?",
     {"type": "regex", "pattern": r"\b206\b"},
     "A successful range request gets 206 Partial Content.", "It returns 200 OK with a body."),
    ("rfc9110-weak-etag", ["rfc9110"], "What prefix marks a weak entity tag?",
     {"type": "contains", "text": "W/"}, "Weak validators are marked with the W/ prefix.",
     "Weak tags are written in lowercase."),
    ("rfc9110-accept", ["rfc9110"], "Which request header lists preferred media types?",
     {"type": "regex", "pattern": r"\bAccept\b"}, "The Accept header lists media ranges.",
     "Content-Type lists the preferred media types."),
    ("rfc9110-host", ["rfc9110"], "Which header carries the target host and port?",
     {"type": "regex", "pattern": r"\bHost\b"}, "The Host header field carries host and port.",
     "The Origin header carries them."),
    ("rfc9111-no-store", ["rfc9111"], "Which Cache-Control directive forbids storing a response?",
     {"type": "contains", "text": "no-store"}, "The no-store directive forbids storing it.",
     "The no-cache directive forbids storing it."),
    ("rfc9111-max-age", ["rfc9111"], "Which directive gives the freshness lifetime in seconds?",
     {"type": "contains", "text": "max-age"}, "max-age gives the freshness lifetime in seconds.",
     "Expires gives the lifetime in seconds."),
    ("rfc9111-age", ["rfc9111"], "Which header estimates the time since origin generation?",
     {"type": "regex", "pattern": r"(?i)\bAge\b header"}, "The Age header conveys that estimate.",
     "The Date header conveys that estimate."),
    ("rfc9111-s-maxage", ["rfc9111"], "Which directive applies only to shared caches?",
     {"type": "contains", "text": "s-maxage"}, "s-maxage applies only to shared caches.",
     "private applies only to shared caches."),
    ("rfc9111-heuristic", ["rfc9111"], "What fraction of the time since Last-Modified is a "
     "typical heuristic freshness lifetime?", {"type": "contains", "text": "10%"},
     "A typical setting is 10% of the time since Last-Modified.", "It is half of that time."),
    ("rfc-etag-validation", ["rfc9110", "rfc9111"], "Which header do both specifications use "
     "to validate stored responses?", {"type": "contains", "text": "ETag"},
     "Caches validate stored responses with ETag (If-None-Match).",
     "They use the Vary header."),
    ("nist-min-length", ["nist-800-63b"], "What is the minimum length of a subscriber-chosen "
     "memorized secret?", {"type": "regex", "pattern": r"(?i)\b8\b.*characters"},
     "At least 8 characters in length.", "At least 6 digits."),
    ("nist-max-length", ["nist-800-63b"], "What maximum length should verifiers permit?",
     {"type": "contains", "text": "64"}, "Verifiers should permit at least 64 characters.",
     "Verifiers may cap secrets at 16 characters."),
    ("nist-composition", ["nist-800-63b"], "Should verifiers impose composition rules?",
     {"type": "regex", "pattern": r"(?i)\bshould not\b"},
     "Verifiers should not impose other composition rules.",
     "Yes, require upper and lower case letters and digits."),
    ("nist-periodic-change", ["nist-800-63b"], "Must memorized secrets be changed periodically?",
     {"type": "regex", "pattern": r"(?i)should not require.*(periodic|arbitrar)"},
     "Verifiers should not require periodic (arbitrary) changes.",
     "Yes, every 90 days."),
    ("nist-aal1-reauth", ["nist-800-63b"], "How often is reauthentication required at AAL1?",
     {"type": "contains", "text": "30 days"}, "At AAL1, at least once every 30 days.",
     "Every 12 hours."),
    ("nist-aal2-reauth", ["nist-800-63b"], "What are the reauthentication limits at AAL2?",
     {"type": "regex", "pattern": r"(?is)(?=.*\b12\s*hours\b)(?=.*\b30\s*minutes\b).*"},
     "Every 12 hours, and after 30 minutes of inactivity.", "Every 12 hours."),
    ("nist-rate-limit", ["nist-800-63b"], "How many consecutive failed attempts may be allowed?",
     {"type": "regex", "pattern": r"\b100\b"}, "No more than 100 consecutive failed attempts.",
     "Three failed attempts."),
    ("nist-sms-restricted", ["nist-800-63b"], "What is the status of SMS as an out-of-band "
     "authenticator?", {"type": "regex", "pattern": r"(?i)\brestricted\b"},
     "PSTN/SMS out-of-band authentication is restricted.", "SMS is fully approved."),
]
#: run_id -> profile: harness knobs, pass probability, latency scale (s), tools
PROFILES = {
    "research-glmflash-local": {
        "model_alias": "glmflash", "research_mode": True, "source_provider": "local_snapshot",
        "lean": True, "preload_local_sources": True, "preload_shortlist": False,
        "disabled_tools": [], "p_pass": 0.72, "latency_s": 28.0, "p_error": 0.0,
        "tools": ["get_relevant_content", "get_full_content", "save_finding",
                  "query_research_memory"]},
    "standard-gf-live": {
        "model_alias": "gf", "research_mode": False, "source_provider": "live_web",
        "lean": False, "preload_local_sources": False, "preload_shortlist": True,
        "disabled_tools": [], "p_pass": 0.55, "latency_s": 14.0, "p_error": 0.09,
        "tools": ["web_search", "get_url_content", "get_url_details"]},
    "research-gf-no-web-search": {
        "model_alias": "gf", "research_mode": True, "source_provider": "local_snapshot",
        "lean": False, "preload_local_sources": True, "preload_shortlist": False,
        "disabled_tools": ["web_search", "get_url_content"], "p_pass": 0.8,
        "latency_s": 24.0, "p_error": 0.0,
        "tools": ["get_relevant_content", "get_full_content", "save_finding"]},
}
_ROLES = ("main", "summarizer", "audit_planner")
_TIMINGS = ("source_prepare_ms", "client_init_ms", "run_turn_ms", "llm_total_ms",
            "tool_total_ms", "local_ingestion_ms", "shortlist_ms", "case_total_ms")


def _passes(expected: dict, answer: str) -> bool:
    if expected["type"] == "contains":
        return expected["text"] in answer
    return re.search(expected["pattern"], answer) is not None


def _tool_calls(rng: np.random.Generator, tools: list[str], query: str, doc_ids: list[str]):
    calls = []
    for _ in range(int(rng.integers(1, 7))):
        name = tools[int(rng.choice(len(tools), p=np.linspace(2, 1, len(tools)) /
                                    np.linspace(2, 1, len(tools)).sum()))]
        doc = doc_ids[int(rng.integers(len(doc_ids)))]
        args = {"web_search": {"query": query}, "get_url_content": {"urls": [_DOCS[doc]]},
                "get_url_details": {"url": _DOCS[doc]},
                "get_relevant_content": {"query": query, "doc_id": doc},
                "get_full_content": {"doc_id": doc}, "save_finding": {"doc_id": doc},
                "query_research_memory": {"query": query}}[name]
        calls.append({"name": name, "arguments": args})
    return calls


def _case(rng: np.random.Generator, run_id: str, prof: dict, case: tuple, skill: float) -> dict:
    case_id, doc_ids, query, expected, good, bad = case
    u = rng.uniform()
    status = "ERROR" if u < prof["p_error"] else "HALTED" if u < prof["p_error"] + 0.03 else ""
    answer = "" if status == "ERROR" else ("Based on the sources, " if status == "HALTED" else
                                           good if rng.uniform() < prof["p_pass"] + skill else bad)
    passed = bool(answer) and _passes(expected, answer)
    status = status or ("PASS" if passed else "FAIL")
    calls = [] if status == "ERROR" else _tool_calls(rng, prof["tools"], query, doc_ids)
    run_turn = 120_000.0 if status == "ERROR" else round(prof["latency_s"] * 1000 *
                                                         float(rng.lognormal(0, 0.35)), 1)
    t = {"source_prepare_ms": round(float(rng.uniform(0.5, 4)), 1),
         "client_init_ms": round(float(rng.uniform(40, 180)), 1), "run_turn_ms": run_turn,
         "llm_total_ms": round(run_turn * float(rng.uniform(0.6, 0.8)), 1),
         "tool_total_ms": round(run_turn * float(rng.uniform(0.1, 0.3)), 1),
         "local_ingestion_ms": round(float(rng.uniform(400, 2500)), 1)
         if prof["preload_local_sources"] else 0.0,
         "shortlist_ms": round(float(rng.uniform(200, 900)), 1)
         if prof["preload_shortlist"] else 0.0}
    t["case_total_ms"] = round(sum(v for k, v in t.items() if k not in ("llm_total_ms",
                                                                         "tool_total_ms")), 1)
    main_in = 0 if status == "ERROR" else int(rng.integers(6_000, 40_000))
    summ_in = int(rng.integers(1_500, 6_000)) if prof["research_mode"] and main_in else 0
    usage = {"main": (main_in, int(main_in * rng.uniform(0.02, 0.06))),
             "summarizer": (summ_in, int(summ_in * rng.uniform(0.08, 0.15))),
             "audit_planner": (0, 0)}
    return {"run_id": run_id, "case_id": case_id, "doc_ids": doc_ids, "query": query,
            "expected": expected, "answer": answer, "status": status, "passed": passed,
            "error": "TimeoutError: run_turn exceeded 120 s" if status == "ERROR" else None,
            "elapsed_ms": t["case_total_ms"],
            "token_usage": {r: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}
                            for r, (i, o) in usage.items()},
            "timings_ms": t, "tool_calls": calls}


def _run_summary(run_id: str, prof: dict, rows: list[dict]) -> dict:
    n = len(rows)
    counts: dict[str, int] = {}
    breakdown: dict[tuple[str, str], int] = {}
    for row in rows:
        for call in row["tool_calls"]:
            counts[call["name"]] = counts.get(call["name"], 0) + 1
            key = (call["name"], json.dumps(call["arguments"], sort_keys=True))
            breakdown[key] = breakdown.get(key, 0) + 1
    totals = {k: round(sum(r["timings_ms"][k] for r in rows), 1) for k in _TIMINGS}
    totals["run_wall_ms"] = round(totals["case_total_ms"] + 35.0 * n, 1)
    return {"run_id": run_id, **{k: prof[k] for k in (
        "model_alias", "research_mode", "source_provider", "lean", "preload_local_sources",
        "preload_shortlist", "disabled_tools")}, "parameters": {"temperature": 0.1},
        "total_cases": n, **{f"{k}_cases": sum(r["status"] == s for r in rows) for k, s in (
            ("passed", "PASS"), ("failed", "FAIL"), ("error", "ERROR"), ("halted", "HALTED"))},
        "avg_elapsed_ms": round(sum(r["elapsed_ms"] for r in rows) / n, 1),
        "token_usage_totals": {role: {k: sum(r["token_usage"][role][k] for r in rows) for k in
                                      ("input_tokens", "output_tokens", "total_tokens")}
                               for role in _ROLES},
        "timing_totals_ms": totals,
        "timing_averages_ms": {k: round(v / n, 1) for k, v in totals.items()},
        "timing_counts": {"llm": sum(len(r["tool_calls"]) + 1 for r in rows if r["answer"]),
                          "tool": sum(counts.values()),
                          "local_ingestion": n if prof["preload_local_sources"] else 0,
                          "shortlist": n if prof["preload_shortlist"] else 0},
        "tool_call_counts": dict(sorted(counts.items())),
        "tool_call_breakdown": [{"tool": k[0], "arguments": k[1], "count": v}
                                for k, v in sorted(breakdown.items())]}


def _dump(path: Path, obj: object) -> None:
    with atomic_write(path) as fh:
        fh.write(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def generate(out_dir: str | Path, *, seed: int = 2) -> list[Path]:
    """Write the sample research-eval session into ``out_dir``.

    Parameters
    ----------
    out_dir : path-like
        Session directory (created if missing).
    seed : int
        Seed of the single random generator; the same seed gives the same bytes.

    Returns
    -------
    list of Path
        The files written (per-run results and summaries, then the session summary).

    Examples
    --------
    >>> import tempfile
    >>> [p.name for p in generate(tempfile.mkdtemp())][-1]
    'summary.json'
    """
    rng = np.random.default_rng(seed)
    out, written, runs = Path(out_dir), [], []
    skill = {c[0]: float(rng.normal(0, 0.15)) for c in CASES}  # shared case difficulty
    for run_id, prof in PROFILES.items():
        rows = [_case(rng, run_id, prof, case, skill[case[0]]) for case in CASES]
        art = out / run_id / "artifacts"
        with atomic_write(art / "results.jsonl") as fh:
            fh.writelines(json.dumps(row) + "\n" for row in rows)
        summary = _run_summary(run_id, prof, rows)
        _dump(art / "summary.json", summary)
        written += [art / "results.jsonl", art / "summary.json"]
        runs.append({k: summary[k] for k in ("run_id", "model_alias", "total_cases",
                                              "passed_cases", "failed_cases", "error_cases",
                                              "halted_cases", "avg_elapsed_ms")}
                    | {"run_wall_ms": summary["timing_totals_ms"]["run_wall_ms"]})
    _dump(out / "summary.json", {
        "session_id": "20260614_091500", "dataset_id": "rfc_http_nist_v1",
        "matrix": "evals/research_pipeline/matrices/default.toml",
        "session_wall_ms": round(sum(r["run_wall_ms"] for r in runs) + 120.0, 1), "runs": runs})
    return written + [out / "summary.json"]


if __name__ == "__main__":
    for written in generate(sys.argv[1] if len(sys.argv) > 1 else "data/research_eval"):
        print(written)
