#!/usr/bin/env python3
"""The article's script in `cargo xtask bench`: its `apply_credit`, timed.

Two ways, on files in DIR, printed as one JSON document on stdout:

* **as written**: `webhook_demo.apply_credit(path, ...)` imported from
  tests/oracle/webhook_demo.py, unmodified. It opens a connection per call
  (and sets `foreign_keys` on it), so each delivery also pays for opening
  and closing the database. Its connection cannot be configured from
  outside, so it runs in the journal mode stored in the file (DELETE, or WAL
  set once on the file beforehand; `locking_mode` stays NORMAL) and
  Python's default `synchronous = FULL`.
* **kept connection**: the same function body, statement for statement,
  run on one connection opened once and configured like the other engines
  (`inbox_lab::bench`): DELETE/FULL, WAL (exclusive)/FULL, WAL
  (exclusive)/NORMAL.

Every database uses the script's own SCHEMA (its two tables, without the
receipt that inbox-lab also stores), created with page_size 8192 like the
other engines. Each run delivers events 0..N-1 once (applied), then again
(duplicates), and checks the balance.

Usage: python3 bench/python_bench.py --dir DIR [--events 2000] [--rounds 1]
                                     [--setting delete-full]

`cargo xtask bench` runs it once per round and setting (`--setting`)
between the browser's runs, so every engine meets the same moments of the
machine.
"""

import argparse
import json
import math
import sqlite3
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "oracle"))
import webhook_demo  # noqa: E402  (the article's script, unmodified)

PAGE_SIZE = 8192

# name -> (journal_mode, locking_mode, synchronous); as inbox_lab::bench::Setting
SETTINGS = {
    "delete-full": ("delete", "normal", "full"),
    "wal-full": ("wal", "exclusive", "full"),
    "wal-normal": ("wal", "exclusive", "normal"),
}


def apply_credit_kept(db, source, event_id, account_id, amount):
    """`webhook_demo.apply_credit` with the connection passed in instead of
    opened and closed: its checks and statements, unchanged."""
    if not isinstance(source, str) or not source:
        raise ValueError("invalid source")
    if not isinstance(event_id, str) or not event_id:
        raise ValueError("invalid event_id")
    if type(account_id) is not int or account_id <= 0:
        raise ValueError("invalid account_id")
    if type(amount) is not int or not 0 < amount <= 10**9:
        raise ValueError("invalid amount")
    try:
        db.execute("BEGIN IMMEDIATE")
        inserted = db.execute("""
            INSERT INTO inbox(source, event_id, account_id, amount)
            VALUES (?, ?, ?, ?)
            ON CONFLICT(source, event_id) DO NOTHING
        """, (source, event_id, account_id, amount)).rowcount
        if inserted == 0:
            old = db.execute("""
                SELECT account_id, amount FROM inbox
                WHERE source = ? AND event_id = ?
            """, (source, event_id)).fetchone()
            if old != (account_id, amount):
                raise ValueError("same key, different payload")
            result = "duplicate"
        else:
            db.execute("""
                UPDATE accounts SET balance = balance + ?
                WHERE id = ?
            """, (amount, account_id))
            result = "applied"
        db.execute("COMMIT")
        return result
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def fresh_database(path, journal_mode):
    """The script's SCHEMA in a new file with the benchmark's page size."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    db = webhook_demo.connect(path)
    db.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    db.execute(f"PRAGMA journal_mode = {journal_mode}")
    db.executescript(webhook_demo.SCHEMA)
    db.close()


def settings_of(db):
    sync = db.execute("PRAGMA synchronous").fetchone()[0]
    return {
        "sqlite_version": sqlite3.sqlite_version,
        "journal_mode": db.execute("PRAGMA journal_mode").fetchone()[0].lower(),
        "locking_mode": db.execute("PRAGMA locking_mode").fetchone()[0].lower(),
        "synchronous": ["off", "normal", "full", "extra"][sync],
        "page_size": db.execute("PRAGMA page_size").fetchone()[0],
    }


def summary(latencies, total_ms):
    """Nearest-rank percentiles, as inbox_lab::bench::Summary::of."""
    s = sorted(latencies)

    def rank(p):
        if not s:
            return 0.0
        k = math.ceil(p / 100 * len(s))
        return s[min(max(k, 1), len(s)) - 1]

    return {
        "events": len(s),
        "total_ms": total_ms,
        "events_per_s": len(s) * 1000 / total_ms if total_ms > 0 else 0.0,
        "p50_ms": rank(50),
        "p99_ms": rank(99),
        "max_ms": s[-1] if s else 0.0,
    }


def timed(deliver, events, expected):
    latencies = []
    t0 = time.perf_counter()
    for i in range(events):
        start = time.perf_counter()
        outcome = deliver(i)
        latencies.append((time.perf_counter() - start) * 1000)
        if outcome != expected:
            raise AssertionError(f"event {i}: {outcome}, expected {expected}")
    return summary(latencies, (time.perf_counter() - t0) * 1000)


def event_id(i):
    return f"evt-{i:08}"


def run_as_written(directory, setting, events):
    journal_mode = SETTINGS[setting][0]
    path = directory / f"python-as-written-{setting}.sqlite3"
    fresh_database(path, journal_mode)
    probe = webhook_demo.connect(path)
    settings = settings_of(probe)
    probe.close()

    def deliver(i):
        return webhook_demo.apply_credit(path, "bench", event_id(i), 1, 1)

    result = finish("python-as-written", setting, settings, path, deliver, events)
    return result


def run_kept(directory, setting, events):
    journal_mode, locking_mode, synchronous = SETTINGS[setting]
    path = directory / f"python-kept-{setting}.sqlite3"
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    db = webhook_demo.connect(path)
    # As inbox_lab::bench::Setting::pragmas, before the first table exists.
    db.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    db.execute(f"PRAGMA locking_mode = {locking_mode}")
    db.execute(f"PRAGMA journal_mode = {journal_mode}")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    db.executescript(webhook_demo.SCHEMA)
    settings = settings_of(db)

    def deliver(i):
        return apply_credit_kept(db, "bench", event_id(i), 1, 1)

    try:
        return finish("python-kept", setting, settings, path, deliver, events, db)
    finally:
        db.close()


def finish(engine, setting, settings, path, deliver, events, db=None):
    applied = timed(deliver, events, "applied")
    duplicate = timed(deliver, events, "duplicate")
    check = db or webhook_demo.connect(path)
    balance = check.execute("SELECT balance FROM accounts WHERE id = 1").fetchone()[0]
    inbox = check.execute("SELECT count(*) FROM inbox").fetchone()[0]
    if db is None:
        check.close()
    if (balance, inbox) != (events, events):
        raise AssertionError(f"after {events} events: balance {balance}, inbox {inbox}")
    return {
        "engine": engine,
        "setting": setting,
        "settings": settings,
        "apply": applied,
        "duplicate": duplicate,
        "tally": {"balance": balance, "inbox": inbox},
    }


def median_round(runs):
    runs = sorted(runs, key=lambda r: r["apply"]["events_per_s"])
    return runs[(len(runs) - 1) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--setting", choices=sorted(SETTINGS))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    plans = [("python-as-written", s, run_as_written) for s in ("delete-full", "wal-full")]
    plans += [("python-kept", s, run_kept) for s in SETTINGS]
    plans = [p for p in plans if args.setting in (None, p[1])]
    results = []
    for engine, setting, run in plans:
        runs = []
        for round_ in range(1, args.rounds + 1):
            print(f"bench python: round {round_}/{args.rounds}: {engine} {setting}, "
                  f"{args.events} events", file=sys.stderr)
            runs.append(run(args.dir, setting, args.events))
        results.append({**median_round(runs), "rounds": runs})
    json.dump({"engine": "python", "python": sys.version.split()[0],
               "sqlite_version": sqlite3.sqlite_version, "results": results},
              sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
