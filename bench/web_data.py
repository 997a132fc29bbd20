#!/usr/bin/python3
"""The web dashboard's reads against a peer: python's sqlite3 + json.

bench_web_data (bench/web_data.cc) fills a store with 10,000 bugs, one of
which has 1,000 events and 20 agent sessions (10 messages each), and times
the daemon's handlers (routing, SQLite queries, JSON encoding; no socket):

  view:      GET /api/v1/bugs/{id}/view of the heavy bug;
  list:      GET /api/v1/bugs (first page, 100 bugs, with the total);
  list_pass: the same filtered by pass (an expression index);
  list_text: the same filtered by text (a scan of titles and reports).

This script then runs the same queries on the same store file with
/usr/bin/python3's sqlite3 and json modules (decoding the stored JSON and
encoding the answer, as the daemon does) and prints the medians and the
ratios trench/python (below 1: trench is faster).

Usage: /usr/bin/python3 bench/web_data.py [--build build] [--repeats 30]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

PASS = ("(CASE WHEN json_valid(details) THEN json_extract(details, "
        "'$.localization.findings.pass') END)")
TEXT = ("(instr(lower(title), ?) > 0 OR instr(lower(coalesce(CASE WHEN "
        "json_valid(details) THEN json_extract(details, '$.report.text') END, "
        "'')), ?) > 0)")
BUG_COLUMNS = ("id, state, signature, title, created_ms, updated_ms, "
               "duplicate_of, flaky_rate, case_sha256, minimized_sha256, "
               "culprit_commit, fix_commit, details")


def bug_json(row):
    keys = [k.strip() for k in BUG_COLUMNS.split(",")]
    b = dict(zip(keys, row))
    b["details"] = json.loads(b["details"])
    return b


def bug_list(db, where, args):
    rows = db.execute("SELECT " + BUG_COLUMNS + " FROM bugs WHERE " + where +
                      " AND id > ? ORDER BY id LIMIT 100",
                      args + [0]).fetchall()
    out = {"bugs": [bug_json(r) for r in rows]}
    if len(rows) == 100:
        out["next"] = rows[-1][0]
    out["total"] = db.execute("SELECT count(*) FROM bugs WHERE " + where,
                              args).fetchone()[0]
    return json.dumps(out)


def bug_view(db, bug):
    out = {"bug": bug_json(db.execute(
        "SELECT " + BUG_COLUMNS + " FROM bugs WHERE id = ?",
        [bug]).fetchone())}
    out["events"] = [
        {"id": r[0], "kind": "bug", "bug_id": r[1], "from": r[2], "to": r[3],
         "actor": r[4], "evidence": json.loads(r[5]), "at_ms": r[6]}
        for r in db.execute(
            "SELECT id, bug_id, from_state, to_state, actor, evidence, at_ms "
            "FROM events WHERE bug_id = ? ORDER BY id LIMIT 5000", [bug])]
    out["runs"] = [
        {"id": r[0], "commit": r[1], "seconds": r[2], "created_ms": r[3],
         "verdict": json.loads(r[4])}
        for r in db.execute(
            "SELECT id, commit_sha, seconds, created_ms, verdict FROM runs "
            "WHERE bug_id = ? ORDER BY id LIMIT 200", [bug])]
    out["patches"] = [
        {"id": r[0], "branch": r[1], "diff": r[2],
         "verification": json.loads(r[3])}
        for r in db.execute(
            "SELECT id, branch, diff, verification FROM patches WHERE "
            "bug_id = ? ORDER BY id", [bug])]
    sessions = []
    for r in db.execute(
            "SELECT s.id, s.bug_id, s.role, s.backend, s.status, s.cost_usd, "
            "s.started_ms, s.ended_ms, coalesce(sum(m.input_tokens), 0), "
            "coalesce(sum(m.output_tokens), 0), s.fallback_reason FROM "
            "agent_sessions s LEFT JOIN agent_messages m ON m.session_id = "
            "s.id WHERE s.bug_id = ? GROUP BY s.id ORDER BY s.id",
            [bug]).fetchall():
        s = dict(zip(["id", "bug_id", "role", "brain", "status", "cost_usd",
                      "started_ms", "ended_ms", "input_tokens",
                      "output_tokens", "fallback_reason"], r))
        s["messages"] = [
            {"role": m[0], "content": m[1], "input_tokens": m[2],
             "output_tokens": m[3], "at_ms": m[4]}
            for m in db.execute(
                "SELECT role, content, input_tokens, output_tokens, at_ms "
                "FROM agent_messages WHERE session_id = ? ORDER BY id",
                [r[0]])]
        sessions.append(s)
    out["sessions"] = sessions
    out["jobs"] = [
        {"id": r[0], "kind": r[1], "state": r[2]}
        for r in db.execute(
            "SELECT id, kind, state FROM jobs WHERE dedup_key LIKE ? ORDER BY "
            "id DESC LIMIT 50", ["bug:%d:%%" % bug])]
    return json.dumps(out)


def median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=30)
    a = ap.parse_args()
    binary = os.path.join(a.build, "bench", "bench_web_data")
    with tempfile.TemporaryDirectory(prefix="trench-web-bench.") as tmp:
        run = subprocess.run([binary, tmp, str(a.repeats)], check=True,
                             capture_output=True, text=True)
        # The store's log lines (migrations) precede the JSON line.
        trench = json.loads([line for line in run.stdout.splitlines()
                             if line.startswith("{")][-1])
        db = sqlite3.connect(trench["store"])
        bug = trench["bug"]
        peer = {
            "view": lambda: bug_view(db, bug),
            "list": lambda: bug_list(db, "1", []),
            "list_pass": lambda: bug_list(db, PASS + " = ?", ["pass7"]),
            "list_text": lambda: bug_list(db, TEXT, ["needle", "needle"]),
        }
        print("| query | trench ms | python ms | trench/python |")
        print("| --- | ---: | ---: | ---: |")
        for name, fn in peer.items():
            fn()  # Warm the page cache and the statements.
            p = median_ms(fn, a.repeats)
            t = trench[name]
            print("| %s | %.2f | %.2f | %.2f |" % (name, t, p, t / p))
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
