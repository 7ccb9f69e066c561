// What changed between two snapshots of a table, and the order to show rows
// in so the newest change is on top. Pure; tests/e2e/unit-changes.test.mjs
// checks it in node, `tables.js` draws with it.
//
// The database has no "last modified" column, and the inbox is ordered by
// its key, so a new row may land anywhere in a long table. The page keeps
// its own memory instead: every refresh compares the new snapshot with the
// previous one, and a row that is new or different is "touched" now. Rows
// are shown most recently touched first; rows never seen changing (those
// already there when the page opened) follow, newest receipt first.

/** The inbox's key, as one string. */
export function inboxKey(row) {
  return JSON.stringify([row.source, row.event_id]);
}

/** An account's key. */
export function accountKey(row) {
  return String(row.id);
}

/**
 * Remembers when each row of one table last changed. `update(rows)` takes a
 * new snapshot and returns `{rows, changed}`: the rows in display order and
 * the keys of the latest change — the rows that differ from the previous
 * snapshot, or, if none does, those of the change before (a refresh that
 * finds nothing new keeps the highlight where it was). The first snapshot
 * marks nothing as changed (nothing happened yet; the page just opened).
 */
export class ChangeTracker {
  #keyOf;
  #recentFirst;
  // The previous snapshot, as key → the row serialized (null before the first).
  #previous = null;
  #touched = new Map();
  #tick = 0;
  #latest = new Set();

  /**
   * `recentFirst`: order by last change (the inbox); otherwise the rows keep
   * the order they came in (accounts, by id), and only `changed` is computed.
   */
  constructor(keyOf, { recentFirst }) {
    this.#keyOf = keyOf;
    this.#recentFirst = recentFirst;
  }

  // Each row's key and serialization are computed once per update, and the
  // sort compares plain numbers: with ten thousand inbox rows, redrawn every
  // second during a burst, anything more per row (a key made inside the
  // comparator) holds the main thread for a quarter of a second.
  update(rows) {
    const keys = rows.map(this.#keyOf);
    const serialized = new Map();
    rows.forEach((row, i) => serialized.set(keys[i], JSON.stringify(row)));
    const fresh = new Set();
    if (this.#previous !== null) {
      for (const [key, text] of serialized) {
        if (this.#previous.get(key) !== text) {
          fresh.add(key);
        }
      }
    }
    this.#previous = serialized;
    this.#tick += 1;
    for (const key of this.#touched.keys()) {
      if (!serialized.has(key)) {
        this.#touched.delete(key); // deleted by a reset or an import: forget it
      }
    }
    for (const key of fresh) {
      this.#touched.set(key, this.#tick);
    }
    if (fresh.size > 0) {
      this.#latest = fresh;
    }
    const changed = new Set([...this.#latest].filter((key) => serialized.has(key)));
    if (!this.#recentFirst) {
      return { rows, changed };
    }
    // Receipt numbers only grow, so a higher one is a later first application.
    // Rows without a receipt (written by a mistaken handler) come last.
    const ordered = rows
      .map((row, index) => ({ row, index, touched: this.#touched.get(keys[index]) ?? 0, seq: row.receipt?.seq ?? -1 }))
      .sort((a, b) => b.touched - a.touched || b.seq - a.seq || a.index - b.index)
      .map(({ row }) => row);
    return { rows: ordered, changed };
  }
}
