// The SQL console's history: the queries run, newest first, at most
// MAX_ENTRIES, kept in localStorage under a versioned key.
//
// Every query the console sends to the database is kept — answered, refused
// or cancelled alike: a refused one is the one a reader most often wants
// back, to fix it. Running a query that is already in the history moves it to
// the top (one entry per text).
//
// What is stored is read back as untrusted: another version of the page,
// another tool or a hand in the devtools may have written anything under the
// key. A value that is not JSON, not an array, or holds anything but
// non-empty strings of at most MAX_QUERY_CHARS is dropped whole (the history
// starts empty), never thrown on; a longer list is cut to MAX_ENTRIES. A
// storage that cannot be read or written (disabled, full) leaves the history
// in memory for this visit.

/** The localStorage key; a new shape of the value gets a new version. */
export const HISTORY_KEY = 'inbox-lab.sql-history.v1';
/** How many queries are kept. */
export const MAX_ENTRIES = 50;
/** The longest query kept, in UTF-16 code units (a longer one is run, not kept). */
export const MAX_QUERY_CHARS = 10_000;

/** The entries `raw` (a stored string, or null) holds, or [] if it is not a valid history. */
export function parseHistory(raw) {
  if (typeof raw !== 'string') {
    return [];
  }
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(value) || !value.every(isEntry)) {
    return [];
  }
  return [...new Set(value)].slice(0, MAX_ENTRIES);
}

function isEntry(value) {
  return typeof value === 'string' && value.trim() !== '' && value.length <= MAX_QUERY_CHARS;
}

/** `entries` with `sql` first (moved there if it was already in), at most MAX_ENTRIES. */
export function withQuery(entries, sql) {
  if (!isEntry(sql)) {
    return entries;
  }
  return [sql, ...entries.filter((entry) => entry !== sql)].slice(0, MAX_ENTRIES);
}

/** The history of `storage` (localStorage, or anything with getItem/setItem). */
export class History {
  constructor(storage) {
    this.storage = storage;
    this.entries = [];
    try {
      this.entries = parseHistory(storage?.getItem(HISTORY_KEY) ?? null);
    } catch {
      // Storage that cannot be read: start empty.
    }
  }

  /** Adds `sql` at the top and stores the list; returns the entries. */
  add(sql) {
    this.entries = withQuery(this.entries, sql);
    try {
      this.storage?.setItem(HISTORY_KEY, JSON.stringify(this.entries));
    } catch {
      // Full or disabled: the history lives on in memory for this visit.
    }
    return this.entries;
  }
}
