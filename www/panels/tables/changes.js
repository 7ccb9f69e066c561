// Which rows of a table changed between two refreshes. Pure;
// tests/e2e/unit-changes.test.mjs checks it in node, `tables.js` draws with it.
//
// The database has no "last modified" column: the page keeps the previous
// snapshot and marks a row that is new or different. (The order rows are
// shown in is the database's: the inbox's rows written last come first,
// core::tables::newest.)

/** The inbox's key, as one string. */
export function inboxKey(row) {
  return JSON.stringify([row.source, row.event_id]);
}

/** An account's key. */
export function accountKey(row) {
  return String(row.id);
}

/**
 * Remembers the rows of one table as last drawn. `update(rows)` takes a new
 * snapshot and returns `{fresh, changed}`, sets of keys: `fresh`, the rows
 * that are new or differ from the previous snapshot (every row, the first
 * time: the page just opened); `changed`, the latest change to highlight —
 * the fresh rows, or, if there are none, those of the change before (a
 * refresh that finds nothing new keeps the highlight where it was, until
 * `forget()`: a new send begins, and a send that changes nothing leaves
 * nothing highlighted). The first snapshot highlights nothing (nothing
 * happened yet).
 */
export class ChangeTracker {
  #keyOf;
  // The previous snapshot, as key → the row serialized (null before the first).
  #previous = null;
  #latest = new Set();

  constructor(keyOf) {
    this.#keyOf = keyOf;
  }

  /** Drops the highlight: the next change is highlighted, and none if nothing changes. */
  forget() {
    this.#latest = new Set();
  }

  update(rows) {
    const serialized = new Map(rows.map((row) => [this.#keyOf(row), JSON.stringify(row)]));
    const fresh = new Set([...serialized].filter(([key, text]) => this.#previous?.get(key) !== text).map(([key]) => key));
    if (this.#previous !== null && fresh.size > 0) {
      this.#latest = fresh;
    }
    this.#previous = serialized;
    return { fresh, changed: new Set([...this.#latest].filter((key) => serialized.has(key))) };
  }
}
