// The page's side of the database worker: one Promise per request.
//
// `inboxLab` (also `window.inboxLab`, for the browser console and for tests)
// is built from the op table (ops.js): each call sends its op to the
// database worker (worker.js) in the one request/answer shape of
// www/lib/rpc.js, whose `Caller` settles each call's Promise with the reply
// that echoes its id. README.md ("The console API") says what each call
// answers; `window.inboxLab` is this object plus what the page's buttons do
// (www/app.js). What is added here: restarting a worker that died,
// cancelling a query, and which tab answers (tabs.js). A rejection always
// carries the same shape as Rust's errors (www/lib/problem.js).
//
// Nothing here validates or converts the values you pass: `amount: "500"`
// reaches Rust as the string "500" and is rejected there, because the point
// of the lab is to watch the Rust rules at work.
//
// ## Several tabs, cancelling, no OPFS, a damaged file
//
// With several tabs open, one of them — the owner — runs the worker and the
// others forward every call to it (tabs.js); with `?storage=memory`, in a
// page opened by a share link (SCRATCH), or where tabs cannot share, a tab
// keeps its own worker: role "alone". `cancel()` rejects this tab's queries
// still waiting, at once, with invalid_input / query_cancelled, and asks the
// database worker — this tab's or the owner tab's — to stop them by their
// tickets (foreign.js). If OPFS cannot be used, the database opens in memory
// and `ready`'s and the status's `fallback` say why (the banner,
// www/panels/notices/banner.js); if the stored file cannot be used,
// `problem` says why and every call but `exportRaw()`, `salvage()` and
// `reset()` is rejected with it (www/panels/notices/recovery.js).
//
// ## Listening
//
// `onStatus(listener)` calls `listener({phase, storage, stack, busy, error,
// fallback, problem, waiting, role})` on every change (`stack`: the worker's
// `{vfs, journal_mode, synchronous}`, or null): phase "opening" → "ready", or
// "failed" (could not open), or "restarting" (the worker crashed; a new one
// is opening the database); `waiting` is `{attempt, attempts}` while the
// database file is still held by another worker; role "owner", "follower"
// or "alone". `onTablesChanged(listener)` calls `listener()` whenever a
// write answered by the database may have changed the tables — this tab's,
// another tab's, or after the database was reopened.

import { isErrorObject, describe, notCloneable, opfsMissing, problem, queryCancelled } from '../lib/problem.js';
import { Caller } from '../lib/rpc.js';
import { isShare } from '../lib/share.js';
import { OPS } from './ops.js';
import { TAB_ID, Tabs, canShare } from './tabs.js';

const WORKER_URL = new URL('./worker.js', import.meta.url);
// The longest the panels wait for this tab's worker to run its script (`starting`).
const RUNNING_MS = 500;

const settings = new URLSearchParams(window.location.search);
/**
 * Whether this page was opened by a share link ("#s=…", www/lib/share.js):
 * then its database is a scratch one, in memory, whatever `?storage=` says.
 * The reader's stored OPFS database is neither opened nor written, and this
 * tab keeps its own worker (role "alone"): it never asks to own the stored
 * database, nor serves other tabs. www/panels/share/replay.js replays the link.
 */
export const SCRATCH = isShare(window.location.hash);
// "opfs" unless the page was opened with `?storage=...` (e.g. `memory`) or by a share link.
const STORAGE = SCRATCH ? 'memory' : (settings.get('storage') ?? 'opfs');
// `?journal=delete` (or `wal`, the default): the OPFS database's journal (worker.js), passed on as is.
const JOURNAL = settings.get('journal');

// Everything this tab knows about its database, in one place.
const db = {
  // tabs.js's Tabs while tabs share one database (role "follower" or "owner"), else null ("alone").
  tabs: null,
  // This tab's worker, as an rpc.js Caller (an owner's or a lone tab's).
  worker: null,
  // This tab's calls still waiting for an answer, by id: {id, op, args, resolve,
  // reject, route: "worker" | "channel", timer, ...tabs.js's fields}.
  pending: new Map(),
  nextId: 1,
  // Names this tab's queries by, for `cancel()`: unique across tabs.
  nextTicket: 1,
  // Set when this tab's worker could not even start: every call is then
  // rejected with this at once instead of waiting forever.
  stopped: null,
  // Whether writes were answered since the worker last said it is idle.
  dirty: false,
  // Whether the database was ready before: a later "ready" is a reopening.
  wasReady: false,
  status: { phase: 'opening', storage: STORAGE, stack: null, busy: false, error: null, fallback: null, problem: null, waiting: null, role: 'alone' },
  settleReady: null,
  // Settles at this tab's worker's first announcement ("started": its script
  // runs) or when it fails to load; null while this tab runs no worker.
  running: null,
  listeners: { status: new Set(), changes: new Set(), judge: new Set() },
};

const ready = new Promise((resolve, reject) => {
  db.settleReady = { resolve, reject };
});
// A failure to open is also shown through onStatus; this keeps a reader who
// never looks at `ready` from seeing an "uncaught (in promise)" error.
ready.catch(() => {});

if (STORAGE === 'opfs' && canShare()) {
  db.status.role = 'follower';
  db.tabs = new Tabs({
    pending: db.pending,
    finish,
    dispatch,
    run,
    becomeOwner() {
      start();
      setStatus({ phase: 'opening', busy: false, error: null, fallback: null, problem: null, waiting: null, role: 'owner' });
    },
    follow,
    changed: () => tablesChanged(false),
    status: sharedStatus,
  });
} else {
  start();
}

/**
 * Settles once this tab's database worker runs its script, or this tab knows
 * another tab runs it (tabs.js); at the latest after RUNNING_MS. www/app.js
 * waits for it before building the panels: a module worker's script is
 * fetched and handed over through the page's thread, so one long task of
 * building them would hold the worker back (with the CPU throttled 4×, its
 * script began 180 ms after it was started, 40 ms with this wait).
 */
export const starting = (db.tabs?.decided ?? Promise.resolve()).then(() =>
  Promise.race([db.running, new Promise((resolve) => setTimeout(resolve, RUNNING_MS))]),
);

/** The console API, the same in every tab: one call per op (ops.js), and what only the page does. */
export const inboxLab = consoleApi({
  ready,
  query: (sql) => {
    const ticket = `${TAB_ID}:${db.nextTicket}`;
    db.nextTicket += 1;
    return request('query', { sql, ticket });
  },
  cancel: () => Promise.resolve({ cancelled: cancelQueries() }),
  'judge.onProgress': (listener) => subscribe(db.listeners.judge, listener),
});

window.inboxLab = inboxLab;

/** Calls `listener(status)` now and on every change; returns a function that unsubscribes. */
export function onStatus(listener) {
  const unsubscribe = subscribe(db.listeners.status, listener);
  listener(db.status);
  return unsubscribe;
}

/**
 * Calls `listener()` after writes (of any tab) may have changed the tables,
 * and after the database was reopened; returns a function that unsubscribes.
 */
export function onTablesChanged(listener) {
  return subscribe(db.listeners.changes, listener);
}

function subscribe(listeners, listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

// `inboxLab`: for every op, a call that sends its positional arguments and
// the options it reads under their names (ops.js); `own` adds or replaces
// calls. "race.step" becomes `inboxLab.race.step`.
function consoleApi(own) {
  const calls = {};
  for (const [name, op] of Object.entries(OPS)) {
    calls[name] = (...values) => calling(() => request(name, argumentsOf(op, values)));
  }
  Object.assign(calls, own);
  const api = {};
  for (const [name, call] of Object.entries(calls)) {
    const [group, member] = name.split('.');
    api[group] = member === undefined ? call : Object.freeze({ ...api[group], [member]: call });
  }
  return Object.freeze(api);
}

// The request's args: the positional `values` under the op's names, then the
// options object's fields. Reading the options runs the caller's code (a
// getter, a Proxy), which may throw: `calling` turns that into a rejection.
function argumentsOf(op, values) {
  if (op.args === undefined && op.options === undefined) {
    return undefined;
  }
  const args = {};
  (op.args ?? []).forEach((name, i) => {
    args[name] = values[i];
  });
  const given = values[op.args?.length ?? 0];
  const options = given === undefined ? {} : given;
  if (op.strict && (typeof options !== 'object' || options === null)) {
    throw problem(
      'invalid_input',
      'bad_options',
      'invalid fault: the second argument must be an object such as {fault: "after_insert"}',
      {},
      'fault',
    );
  }
  for (const name of op.options ?? []) {
    args[name] = options?.[name];
  }
  return args;
}

// ---- Calls: to this tab's worker, or to the owner tab ---------------------

function request(op, args) {
  if (db.stopped !== null) {
    return Promise.reject(db.stopped);
  }
  return new Promise((resolve, reject) => {
    const entry = { id: db.nextId, op, args, resolve, reject, route: null, timer: null };
    db.nextId += 1;
    db.pending.set(entry.id, entry);
    dispatch(entry);
  });
}

// Sends a call where it is answered: the owner tab, or this tab's worker.
function dispatch(entry) {
  if (db.tabs?.role === 'follower') {
    db.tabs.forward(entry);
  } else {
    entry.route = 'worker';
    clearTimeout(entry.timer);
    run(entry.op, entry.args, (ok, value) => finish(entry, ok, value));
  }
}

function finish(entry, ok, value) {
  if (db.pending.get(entry.id) !== entry) {
    return; // already settled (a timeout, a hand-over or a restart came first)
  }
  db.pending.delete(entry.id);
  clearTimeout(entry.timer);
  if (ok) {
    entry.resolve(value);
  } else {
    entry.reject(value);
  }
}

// Answers one request in this tab — its own, or another tab's when this tab
// is the owner; `settle(ok, value)` gets the answer. Arguments that cannot be
// copied to a worker — functions, symbols, DOM objects (structured clone) —
// settle it at once with not_cloneable, so Rust never sees them.
function run(op, args, settle) {
  if (db.stopped !== null) {
    settle(false, db.stopped);
  } else if (OPS[op]?.tab) {
    killWorker().then(
      (value) => settle(true, value),
      (error) => settle(false, error),
    );
  } else {
    try {
      db.worker.send(op, args, (ok, value) => answered(op, ok, value, settle));
    } catch (thrown) {
      settle(false, notCloneable('the database worker', thrown));
    }
  }
}

// The worker's reply to a request: after a write, every tab's tables are
// refreshed once the worker is idle (a write answered while it is idle — an
// import, whose last step comes after the requests behind it — at once).
// Unknown ops count as writes: a needless refresh is harmless.
function answered(op, ok, value, settle) {
  if (!OPS[op]?.reads) {
    if (db.status.busy) {
      db.dirty = true;
    } else {
      tablesChanged(true);
    }
  }
  settle(ok, value);
}

// Rejects this tab's queries still waiting; returns how many. The database
// worker is asked to stop them where they run, by their tickets.
function cancelQueries() {
  const tickets = [];
  for (const entry of [...db.pending.values()]) {
    if (entry.op === 'query') {
      tickets.push(entry.args.ticket);
      finish(entry, false, queryCancelled());
    }
  }
  if (tickets.length > 0) {
    request('cancel', { tickets }).catch(() => {}); // a query that ended meanwhile is no loss
  }
  return tickets.length;
}

// ---- This tab's worker -----------------------------------------------------

function start() {
  const missing = STORAGE === 'opfs' ? opfsMissing(window) : null;
  const url = new URL(WORKER_URL);
  url.searchParams.set('storage', missing === null ? STORAGE : 'memory');
  if (JOURNAL !== null) {
    url.searchParams.set('journal', JOURNAL);
  }
  let opened = false;
  let running;
  db.running = new Promise((resolve) => (running = resolve));
  // A worker that stops on its own (an uncaught error, a script that failed
  // to load): before the database was ever opened, starting again would most
  // likely fail the same way, so only a worker that had been working is
  // replaced.
  const onError = (error) => {
    running();
    if (opened) {
      restart(error);
    } else {
      db.stopped = error;
      db.settleReady.reject(error);
      db.worker.terminate(error);
      setStatus({ phase: 'failed', busy: false, error });
    }
  };
  const onAnnouncement = (data) => {
    running();
    if (data.type === 'ready') {
      opened = true;
      const fallback = missing ?? data.fallback ?? null;
      const databaseProblem = data.problem ?? null;
      markStart(data.start);
      db.settleReady.resolve(readyValue(data.storage, fallback, databaseProblem));
      setStatus({ phase: 'ready', storage: data.storage, stack: data.stack ?? null, busy: false, error: null, fallback, problem: databaseProblem, waiting: null });
    } else if (data.type === 'problem') {
      setStatus({ problem: data.problem ?? null });
    } else if (data.type === 'fatal') {
      db.settleReady.reject(data.error);
      setStatus({ phase: 'failed', busy: false, error: data.error, waiting: null });
    } else if (data.type === 'waiting') {
      setStatus({ waiting: { attempt: data.attempt, attempts: data.attempts } });
    } else if (data.type === 'crashed') {
      restart(data.error);
    } else if (data.type === 'judgeProgress') {
      for (const listener of db.listeners.judge) {
        listener({ done: data.done, total: data.total, check: data.check });
      }
    } else if (data.type === 'busy') {
      setStatus({ busy: data.busy });
      if (!data.busy && db.dirty) {
        db.dirty = false;
        tablesChanged(true);
      }
    }
  };
  // Replies go to `answered`; a replaced worker's late messages are
  // dropped by its Caller. The mark: the page's code ran up to here (markStart).
  performance.mark?.('inbox-lab:page');
  db.worker = new Caller(new Worker(url, { type: 'module' }), { name: 'the database worker', onAnnouncement, onError });
}

// `inboxLab.killWorker()`, in the tab that runs the worker: Worker.terminate()
// on the spot, like a process killed mid-transaction, then a new worker.
function killWorker() {
  if (db.stopped !== null) {
    return Promise.reject(db.stopped);
  }
  restart(problem('storage', 'killed', 'the database worker was killed (Worker.terminate)'));
  return new Promise((resolve, reject) => {
    const unsubscribe = onStatus(({ phase, storage, error }) => {
      if (phase === 'ready') {
        unsubscribe();
        resolve({ storage });
      } else if (phase === 'failed') {
        unsubscribe();
        reject(error);
      }
    });
  });
}

// The crashed worker's instance is unusable. Requests still in flight are
// rejected as retryable storage errors, because nobody knows how far they
// got: the one that hit the crash was rolled back, but one finished just
// before may have committed and lost only its answer. Delivering the same
// event again is safe either way (applied, or a duplicate with the stored
// receipt): that is the whole point of the inbox.
function restart(error) {
  db.worker.terminate(
    problem(
      'storage',
      'unconfirmed',
      `${error.message}. This request was not confirmed; retrying it is safe (an event is applied at most once).`,
      { detail: error.message },
    ),
  );
  setStatus({ phase: 'restarting', busy: false, error });
  start();
}

// ---- Status and change notices ---------------------------------------------

// A follower hears the owner's status.
function follow(ownerStatus) {
  const { phase, storage, stack, busy, error, fallback, waiting } = ownerStatus;
  const databaseProblem = ownerStatus.problem ?? null;
  if (phase === 'ready') {
    db.settleReady.resolve(readyValue(storage, fallback, databaseProblem));
  } else if (phase === 'failed') {
    db.settleReady.reject(error);
  }
  setStatus({ phase, storage, stack: stack ?? null, busy, error, fallback, problem: databaseProblem, waiting });
}

function setStatus(change) {
  const before = db.status.phase;
  db.status = { ...db.status, ...change };
  db.tabs?.announce(sharedStatus());
  for (const listener of db.listeners.status) {
    listener(db.status);
  }
  // The database was reopened — after a crash or a kill, by a new owner tab:
  // what it holds may differ from what was shown. (Its first opening is not a
  // change: every panel reads what it shows once `ready` settles.)
  if (db.status.phase === 'ready' && before !== 'ready') {
    if (db.wasReady) {
      tablesChanged(db.tabs?.role === 'owner');
    }
    db.wasReady = true;
  }
}

// What followers need of the owner's status.
function sharedStatus() {
  const { phase, storage, stack, busy, error, fallback, problem: databaseProblem, waiting } = db.status;
  return { phase, storage, stack, busy, error, fallback, problem: databaseProblem, waiting };
}

function tablesChanged(tellOthers) {
  if (tellOthers) {
    db.tabs?.changed();
  }
  for (const listener of db.listeners.changes) {
    listener();
  }
}

/**
 * The start path's steps, as the page's User Timing marks
 * (`performance.getEntriesByType('mark')`, named `inbox-lab:…`): after
 * `inbox-lab:page` (the page's code ran up to starting the worker) and
 * beside `inbox-lab:panels` (www/app.js: every panel built), the
 * database worker's code running, its wasm compiled and instantiated, the
 * database open (detail: Rust's `{opfs_ms, check_ms}`), then the page told.
 * `cargo xtask bench` reports them.
 */
function markStart(start) {
  const at = (time) => Math.max(0, time - performance.timeOrigin);
  try {
    performance.mark('inbox-lab:worker', { startTime: at(start.at.script) });
    performance.mark('inbox-lab:wasm', { startTime: at(start.at.wasm) });
    performance.mark('inbox-lab:opened', {
      startTime: at(start.at.opened),
      detail: { opfs_ms: start.opfs_ms, check_ms: start.check_ms },
    });
    performance.mark('inbox-lab:ready');
  } catch {
    // Timing is for the benchmark; a browser without marks loses nothing.
  }
}

function readyValue(storage, fallback, databaseProblem) {
  return { storage, ...(fallback && { fallback }), ...(databaseProblem && { problem: databaseProblem }) };
}

/**
 * Runs `call`, which reads the caller's options and returns a promise.
 * Every inboxLab call answers with a promise, mistakes included, but reading
 * an options object runs the caller's code — a getter, a Proxy trap — which
 * may throw: that becomes a rejection with an error object (code
 * options_unreadable), never a synchronous throw. www/app.js uses it too.
 */
export function calling(call) {
  try {
    return call();
  } catch (thrown) {
    if (isErrorObject(thrown)) {
      return Promise.reject(thrown);
    }
    const detail = describe(thrown);
    return Promise.reject(
      problem('invalid_input', 'options_unreadable', `cannot read the options: ${detail}`, { detail }),
    );
  }
}
