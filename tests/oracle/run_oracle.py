#!/usr/bin/env python3
"""Runs delivery sequences through the article's script, `webhook_demo.apply_credit`.

This is the Python half of `tests/differential.rs`: same inputs through the script and
through the crate must give the same outcomes and the same final tables.

Input (stdin), one JSON document, either a batch:

    {"sequences": [{"accounts": [2, 3], "deliveries": [DELIVERY, ...]}, ...]}

or a single sequence `{"accounts": [...], "deliveries": [...]}`, or a bare list of
deliveries (no extra accounts). A DELIVERY is

    {"source": "provider-a", "event_id": "evt-1", "account_id": 1, "amount": 500,
     "fail_after_insert": false}

Every sequence gets a fresh file database made with the script's SCHEMA (which creates
account 1), plus the extra `accounts` at balance 0.

Output (stdout): for a batch `{"results": [RESULT, ...]}` in input order, otherwise one
RESULT:

    {"outcomes": ["applied", "duplicate", ...],
     "accounts": [{"id": 1, "balance": 500}, ...],          # by id
     "inbox": [{"source": ..., "event_id": ..., "account_id": ..., "amount": ...}, ...]}
                                                            # by (source, event_id) as bytes

Outcomes use the crate's names: the script's return value ("applied" / "duplicate"), or its
exception mapped to an error kind (see `outcome`). An exception this harness does not know
becomes the outcome "unmapped <Type>: <message>", so the Rust side shows it in its diff.

Usage: python3 run_oracle.py [DIRECTORY]   (where the databases go; a temporary one if absent)
"""

import json
import sqlite3
import sys
import tempfile
from pathlib import Path

# Keep `__pycache__` out of the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import webhook_demo  # noqa: E402  (the unmodified copy of the article's script)


def outcome(path, delivery):
    """One delivery through the script, as the crate would name the result."""
    try:
        return webhook_demo.apply_credit(
            path,
            delivery["source"],
            delivery["event_id"],
            delivery["account_id"],
            delivery["amount"],
            fail_after_insert=delivery.get("fail_after_insert", False),
        )
    except ValueError as error:
        # The script raises ValueError both for bad input and for a key reused with
        # another payload; only the message tells them apart.
        if str(error) == "same key, different payload":
            return "payload_conflict"
        return "invalid_input"
    except RuntimeError:
        return "simulated_crash"  # fail_after_insert=True
    except sqlite3.IntegrityError as error:
        if "FOREIGN KEY" in str(error):
            return "unknown_account"  # REFERENCES accounts(id) refused the inbox row
        return f"unmapped IntegrityError: {error}"
    except Exception as error:  # noqa: BLE001 -- reported, not hidden
        return f"unmapped {type(error).__name__}: {error}"


def run_sequence(path, sequence):
    db = webhook_demo.connect(path)
    db.executescript(webhook_demo.SCHEMA)
    db.executemany(
        "INSERT INTO accounts(id) VALUES (?) ON CONFLICT(id) DO NOTHING",
        [(account,) for account in sequence.get("accounts", [])],
    )
    db.close()

    outcomes = [outcome(path, d) for d in sequence["deliveries"]]

    db = webhook_demo.connect(path)
    try:
        accounts = [
            {"id": id_, "balance": balance}
            for id_, balance in db.execute("SELECT id, balance FROM accounts ORDER BY id")
        ]
        inbox = [
            {"source": s, "event_id": e, "account_id": a, "amount": n}
            for s, e, a, n in db.execute(
                "SELECT source, event_id, account_id, amount FROM inbox "
                "ORDER BY CAST(source AS BLOB), CAST(event_id AS BLOB)"
            )
        ]
    finally:
        db.close()
    return {"outcomes": outcomes, "accounts": accounts, "inbox": inbox}


def run_all(directory, sequences):
    results = []
    for index, sequence in enumerate(sequences):
        path = Path(directory) / f"oracle-{index}.sqlite3"
        results.append(run_sequence(path, sequence))
        path.unlink()
    return results


def main():
    document = json.load(sys.stdin)
    if isinstance(document, dict) and "sequences" in document:
        sequences, batch = document["sequences"], True
    elif isinstance(document, dict):
        sequences, batch = [document], False
    else:
        sequences, batch = [{"accounts": [], "deliveries": document}], False

    if len(sys.argv) > 1:
        results = run_all(sys.argv[1], sequences)
    else:
        with tempfile.TemporaryDirectory() as directory:
            results = run_all(directory, sequences)

    json.dump({"results": results} if batch else results[0], sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
