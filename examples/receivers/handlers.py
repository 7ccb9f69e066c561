"""The handlers behind receiver.py: the article's pattern, and the mistakes a
reader plausibly makes, each named by the probe scenario that catches it.

Every handler takes (db, source, event_id, account_id, amount, body=,
authentic=) and returns "applied" or "duplicate"; ValueError means a
conflicting payload (422). `db` is "sqlite:PATH" or a postgres:// URL.

Correct:
  article          the article's handler, unchanged (tests/oracle/webhook_demo.py), SQLite
  postgres         the same pattern on PostgreSQL at READ COMMITTED
Broken (the scenario that shows it):
  memory           dedup in process memory (same_again: another process never saw it)
  two_transactions credit committed, then the registration (same_again: paid again)
  check_then_act   SELECT, then UPDATE + INSERT, PostgreSQL (concurrent)
  body_hash        dedup keyed on the body (id_stripped_or_changed)
  signature_after_dedup  the id is registered before the signature is checked (forged_first)
"""

import contextlib
import hashlib
import sqlite3
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "oracle"))
import webhook_demo  # noqa: E402  (the article's handler and schema)

POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    id BIGINT PRIMARY KEY,
    balance BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS inbox (
    source TEXT NOT NULL,
    event_id TEXT NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts(id),
    amount BIGINT NOT NULL CHECK (amount > 0),
    PRIMARY KEY (source, event_id)
);
INSERT INTO accounts(id) VALUES (1) ON CONFLICT DO NOTHING;
"""


def other_work():
    """What a real handler does between deciding and committing: a call to
    another service, a log line. 200 ms of it widens the window a race needs,
    and the same window is in the correct PostgreSQL handler, which holds."""
    time.sleep(0.2)


def sqlite_path(db):
    if not db.startswith("sqlite:"):
        raise SystemExit(f"this handler needs --db sqlite:PATH, not {db}")
    return db[len("sqlite:"):]


@contextlib.contextmanager
def transaction(db):
    """One PostgreSQL transaction at READ COMMITTED (PostgreSQL's default,
    said out loud): committed when the block ends, rolled back on an error."""
    import psycopg2  # Debian's python3-psycopg2; only the PostgreSQL handlers need it

    conn = psycopg2.connect(db)
    try:
        conn.set_session(isolation_level="READ COMMITTED")
        with conn, conn.cursor() as cur:
            yield cur
    finally:
        conn.close()


def create_schema(db):
    if db.startswith("postgres"):
        with transaction(db) as cur:
            cur.execute("SELECT pg_advisory_xact_lock(1)")  # two processes may start at once
            cur.execute(POSTGRES_SCHEMA)
        return
    conn = webhook_demo.connect(sqlite_path(db))
    try:
        conn.execute("BEGIN IMMEDIATE")
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'accounts'").fetchone()
        conn.execute("COMMIT")
        if not exists:
            conn.executescript(webhook_demo.SCHEMA)
    finally:
        conn.close()


def balance(db, account_id=1):
    if db.startswith("postgres"):
        with transaction(db) as cur:
            cur.execute("SELECT balance FROM accounts WHERE id = %s", (account_id,))
            return cur.fetchone()[0]
    conn = webhook_demo.connect(sqlite_path(db))
    try:
        return conn.execute("SELECT balance FROM accounts WHERE id = ?",
                            (account_id,)).fetchone()[0]
    finally:
        conn.close()


# ---- correct ----------------------------------------------------------------

def article(db, source, event_id, account_id, amount, **_):
    return webhook_demo.apply_credit(sqlite_path(db), source, event_id, account_id, amount)


def postgres(db, source, event_id, account_id, amount, **_):
    """The article's pattern on PostgreSQL. READ COMMITTED is enough: the
    INSERT ... ON CONFLICT DO NOTHING of a second delivery waits for the
    first one's transaction and then inserts nothing (rowcount 0), so only
    the delivery whose INSERT inserted goes on to the UPDATE, in the same
    transaction."""
    with transaction(db) as cur:
        cur.execute("""
            INSERT INTO inbox(source, event_id, account_id, amount)
            VALUES (%s, %s, %s, %s)
            ON CONFLICT (source, event_id) DO NOTHING
        """, (source, event_id, account_id, amount))
        if cur.rowcount == 0:
            cur.execute("""
                SELECT account_id, amount FROM inbox
                WHERE source = %s AND event_id = %s
            """, (source, event_id))
            if cur.fetchone() != (account_id, amount):
                raise ValueError("same key, different payload")
            return "duplicate"
        other_work()
        cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s",
                    (amount, account_id))
        return "applied"


# ---- broken -----------------------------------------------------------------

def credit_sqlite(path, account_id, amount):
    conn = webhook_demo.connect(path)
    try:
        conn.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?",
                     (amount, account_id))
    finally:
        conn.close()


_seen = set()
_seen_lock = threading.Lock()


def memory(db, source, event_id, account_id, amount, **_):
    # Correct inside one process (the lock), and only there: a second
    # instance, or this one restarted, has never seen the event.
    with _seen_lock:
        if (source, event_id) in _seen:
            return "duplicate"
        _seen.add((source, event_id))
    credit_sqlite(sqlite_path(db), account_id, amount)
    return "applied"


def two_transactions(db, source, event_id, account_id, amount, **_):
    path = sqlite_path(db)
    credit_sqlite(path, account_id, amount)  # transaction 1: committed now
    conn = webhook_demo.connect(path)
    try:  # transaction 2: the unique key refuses a repeat, too late
        conn.execute("INSERT INTO inbox(source, event_id, account_id, amount) "
                     "VALUES (?, ?, ?, ?)", (source, event_id, account_id, amount))
    except sqlite3.IntegrityError:
        return "duplicate"
    finally:
        conn.close()
    return "applied"


def check_then_act(db, source, event_id, account_id, amount, **_):
    # At READ COMMITTED the SELECT sees no row while another delivery's
    # transaction is still open: both go on to credit.
    with transaction(db) as cur:
        cur.execute("SELECT account_id, amount FROM inbox WHERE source = %s AND event_id = %s",
                    (source, event_id))
        old = cur.fetchone()
        if old is not None:
            if old != (account_id, amount):
                raise ValueError("same key, different payload")
            return "duplicate"
        other_work()
        cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s",
                    (amount, account_id))
        cur.execute("INSERT INTO inbox(source, event_id, account_id, amount) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (source, event_id, account_id, amount))
        return "applied"


def body_hash(db, source, event_id, account_id, amount, *, body, **_):
    # The article's handler, keyed on the body instead of webhook-id.
    key = hashlib.sha256(body).hexdigest()
    return webhook_demo.apply_credit(sqlite_path(db), source, key, account_id, amount)


def signature_after_dedup(db, source, event_id, account_id, amount, *, authentic, **_):
    path = sqlite_path(db)
    conn = webhook_demo.connect(path)
    try:  # the id is registered (and committed) before anyone checked who sent it
        inserted = conn.execute(
            "INSERT INTO inbox(source, event_id, account_id, amount) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(source, event_id) DO NOTHING",
            (source, event_id, account_id, amount)).rowcount
    finally:
        conn.close()
    if not inserted:
        return "duplicate"
    authentic()
    credit_sqlite(path, account_id, amount)
    return "applied"


signature_after_dedup.checks_signature_late = True

HANDLERS = {f.__name__: f for f in [article, postgres, memory, two_transactions,
                                     check_then_act, body_hash, signature_after_dedup]}
