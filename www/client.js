// The page's side of the database worker: one Promise per request.
//
// `inboxLab` (also `window.inboxLab`, for the browser console and for tests)
// sends each call to the worker (`worker.js`, which documents the protocol)
// and settles its Promise with the reply that echoes the request's id, so
// any number of calls may be in flight and each gets its own answer. A
// rejection always carries the same shape as Rust's errors:
// `{kind, message, http_status, retryable, field?}`.
//
// Nothing here validates or converts the values you pass: `amount: "500"`
// reaches Rust as the string "500" and is rejected there, because the point
// of the lab is to watch the Rust rules at work.
//
// The page is told how the worker is doing through `onStatus(listener)`,
// which calls `listener({phase, storage, busy, error})` on every change:
// phase "opening" → "ready", or "failed" (could not open), or "restarting"
// (the worker crashed; a new one is opening the database).

const WORKER_URL = new URL('./worker.js', import.meta.url);

// "opfs" unless the page was opened with `?storage=...` (e.g. `memory`).
const STORAGE = new URLSearchParams(window.location.search).get('storage') ?? 'opfs';

const pending = new Map();
const listeners = new Set();
let nextId = 1;
let worker = null;
// Set when no worker is left to answer (it could not even start): every call
// is then rejected with this at once instead of waiting forever.
let stopped = null;
let status = { phase: 'opening', storage: STORAGE, busy: false, error: null };
let settleReady = null;

const ready = new Promise((resolve, reject) => {
  settleReady = { resolve, reject };
});
// A failure to open is also shown through onStatus; this keeps a reader who
// never looks at `ready` from seeing an "uncaught (in promise)" error.
ready.catch(() => {});

start();

/** The console API. */
export const inboxLab = Object.freeze({
  /** Resolves to `{storage}` once the database is open; rejects if it cannot be opened. */
  ready,

  /**
   * Delivers one event. `options.fault` is "after_insert" or "after_update"
   * to make the transaction fail at that point (it then rolls back).
   * Resolves to `{outcome, http_status, receipt}`.
   */
  deliver(event, options = {}) {
    if (typeof options !== 'object' || options === null) {
      return Promise.reject(
        invalidInput('fault', 'the second argument must be an object such as {fault: "after_insert"}'),
      );
    }
    return request('deliver', { event, fault: options.fault, handler: options.handler });
  },

  /** Resolves to `{accounts: [{id, balance}], inbox: [{source, event_id, account_id, amount, receipt}]}`. */
  tables() {
    return request('tables');
  },

  /** Deletes the database and starts a fresh one holding account 1 at balance 0. */
  reset() {
    return request('reset');
  },

  /** Creates an account at balance 0; resolves to true, or false if it already existed. */
  addAccount(accountId) {
    return request('addAccount', { account_id: accountId });
  },

  /** Runs one read-only statement; resolves to `{columns, rows, truncated}`. */
  query(sql) {
    return request('query', { sql });
  },

  /** Resolves to a Uint8Array: the database as a `.sqlite3` file. */
  exportDatabase() {
    return request('export');
  },

  /** Replaces the database with a validated `.sqlite3` file (Uint8Array or ArrayBuffer). */
  importDatabase(bytes) {
    return request('import', { bytes });
  },

  /** Runs the article's scenario on a scratch database; resolves to `{summary, passed, checks}`. */
  runScenario() {
    return request('runScenario');
  },

  /** Step mode: `step.start(event, {fault})`, then `step.next()` until `outcome`, or `step.throw()`. */
  step: Object.freeze({
    start: (event, options = {}) => request('stepStart', { event, fault: options?.fault }),
    next: () => request('stepNext'),
    throw: () => request('stepThrow'),
  }),

  /**
   * The race lab: `race.reset(2 | 3)`, `race.start(handler)`, `race.step(i)`,
   * `race.explore(handler)` (every interleaving).
   */
  race: Object.freeze({
    reset: (deliveries) => request('raceNew', { deliveries }),
    start: (handler) => request('raceStart', { handler }),
    step: (delivery) => request('raceStep', { delivery }),
    explore: (handler) => request('raceExplore', { handler }),
  }),
});

window.inboxLab = inboxLab;

/** Calls `listener(status)` now and on every change; returns a function that unsubscribes. */
export function onStatus(listener) {
  listeners.add(listener);
  listener(status);
  return () => listeners.delete(listener);
}

function request(op, args) {
  if (stopped !== null) {
    return Promise.reject(stopped);
  }
  return new Promise((resolve, reject) => {
    const id = nextId;
    nextId += 1;
    pending.set(id, { resolve, reject });
    try {
      worker.postMessage({ id, op, args });
    } catch (thrown) {
      // Functions, symbols and DOM objects cannot be copied to a worker
      // (structured clone), so Rust never sees them.
      pending.delete(id);
      reject(invalidInput(null, `cannot send this request to the database worker: ${thrown.message}`));
    }
  });
}

function start() {
  worker = new Worker(`${WORKER_URL}?storage=${encodeURIComponent(STORAGE)}`, { type: 'module' });
  const thisWorker = worker;
  let opened = false;
  thisWorker.addEventListener('message', ({ data }) => {
    if (thisWorker !== worker) {
      return; // a late message from a worker already replaced
    }
    if ('id' in data) {
      settle(data);
    } else if (data.type === 'ready') {
      opened = true;
      settleReady.resolve({ storage: data.storage });
      setStatus({ phase: 'ready', storage: data.storage, busy: false, error: null });
    } else if (data.type === 'fatal') {
      settleReady.reject(data.error);
      setStatus({ phase: 'failed', busy: false, error: data.error });
    } else if (data.type === 'crashed') {
      restart(data.error);
    } else if (data.type === 'busy') {
      setStatus({ busy: data.busy });
    }
  });
  // An uncaught error inside the worker, including a worker script that
  // failed to load. Before the database was ever opened, starting again
  // would most likely fail the same way, so only a worker that had been
  // working is replaced.
  thisWorker.addEventListener('error', (event) => {
    event.preventDefault();
    if (thisWorker !== worker) {
      return;
    }
    const error = storageError(`the database worker stopped: ${event.message || 'it could not be started'}`);
    if (opened) {
      restart(error);
    } else {
      worker.terminate();
      stopped = error;
      settleReady.reject(error);
      failAll(error);
      setStatus({ phase: 'failed', busy: false, error });
    }
  });
}

// The crashed worker's instance is unusable. Requests still in flight are
// rejected as retryable storage errors, because nobody knows how far they
// got: the one that hit the crash was rolled back, but one finished just
// before may have committed and lost only its answer. Delivering the same
// event again is safe either way (applied, or a duplicate with the stored
// receipt): that is the whole point of the inbox.
function restart(error) {
  worker.terminate();
  failAll(
    storageError(
      `${error.message}. This request was not confirmed; retrying it is safe (an event is applied at most once).`,
    ),
  );
  setStatus({ phase: 'restarting', busy: false, error });
  start();
}

function settle({ id, ok, result, error }) {
  const waiting = pending.get(id);
  if (waiting === undefined) {
    return; // already rejected by a restart
  }
  pending.delete(id);
  if (ok) {
    waiting.resolve(result);
  } else {
    waiting.reject(error);
  }
}

function failAll(error) {
  for (const { reject } of pending.values()) {
    reject(error);
  }
  pending.clear();
}

function setStatus(change) {
  status = { ...status, ...change };
  for (const listener of listeners) {
    listener(status);
  }
}

function storageError(message) {
  return { kind: 'storage', message, http_status: 500, retryable: true };
}

// Shaped like Rust's `invalid_input`, for the two mistakes that never reach
// Rust: a malformed options argument, and a value a worker cannot receive.
function invalidInput(field, message) {
  const error = { kind: 'invalid_input', message, http_status: 400, retryable: false };
  return field === null ? error : { ...error, field, message: `invalid ${field}: ${message}` };
}
