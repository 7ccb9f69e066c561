// The page's side of the database worker: one Promise per request.
//
// `inboxLab` (also `window.inboxLab`, for the browser console and for tests)
// sends each call to the database worker (`worker.js`, which documents its
// ops) in the one request/answer shape of www/lib/rpc.js, whose `Caller`
// settles each call's Promise with the reply that echoes its id, so any
// number of calls may be in flight and each gets its own answer. What is
// added here: the tabs, restarting a worker that died, and cancelling a
// query. A rejection always
// carries the same shape as Rust's errors:
// `{kind, code, message, http_status, retryable, params, field?}`
// (www/lib/problem.js).
//
// `window.inboxLab` is this object plus what the page's buttons do
// (www/app.js). Every call, "Where the scheme ends"'s `inboxLab.scheme`
// included, is described once, in README.md ("The console API").
//
// Nothing here validates or converts the values you pass: `amount: "500"`
// reaches Rust as the string "500" and is rejected there, because the point
// of the lab is to watch the Rust rules at work.
//
// ## Several tabs
//
// Only one worker can hold the OPFS database, so with several tabs open one
// of them — the owner, elected with Web Locks (tabs.js) — runs the
// worker, and the others forward every call to it over a BroadcastChannel.
// `inboxLab` is the same in every tab; only where the answer comes from
// differs. When the owner tab goes away, the next tab in line becomes the
// owner and starts a worker, which reopens the database from OPFS. A call
// in flight at that moment is sent to the new owner if the old one never
// took it, and otherwise rejected as retryable unless it only reads: it is
// never reported as done unless the database answered it.
//
// With `?storage=memory`, in a page opened by a share link (SCRATCH), or
// where tabs cannot share (no Web Locks), a tab keeps its own worker: role
// "alone".
//
// ## Cancelling a query
//
// A console query never runs in the database worker: it runs on a copy in
// the console's own worker, which the database worker terminates at the
// query's deadline (2 s, src/labs/tools/budget.rs) or on `cancel()`
// (worker.js, www/db/foreign.js). So nothing waits behind a query, and
// cancelling one touches nothing else. `cancel()` rejects this tab's queries
// still waiting, at once, with invalid_input / query_cancelled (not
// retryable: nothing was changed), and asks the database worker — this
// tab's, or the owner tab's — to stop them by their tickets.
//
// ## No OPFS
//
// If OPFS cannot be used (insecure origin, no OPFS, a private window that
// refuses it, the pool failing to install), the database opens in memory
// instead and `status.fallback` / `ready`'s `fallback` say why — an error
// object, code insecure_context, no_opfs or opfs_unavailable. The page shows
// a banner (www/panels/notices/banner.js): nothing will be kept.
//
// ## A stored database that cannot be used
//
// If the database file is damaged, another program's, from a newer inbox-lab
// or holds a value of the wrong type, the worker still starts: `ready` (and
// `status.problem`) carries the error saying why (storage/corrupt,
// storage/unusable, ...; not retryable), every call is rejected with it
// except `exportRaw()` (the stored file's bytes, as they are), `salvage()`
// (keep the rows that pass the import's checks) and `reset()`
// (a fresh database), and the page shows a notice offering the three
// (www/panels/notices/recovery.js). A reset that works clears `status.problem` in every tab.
//
// ## Listening
//
// `onStatus(listener)` calls `listener({phase, storage, stack, busy, error,
// fallback, problem, waiting, role})` on every change (`stack`: the worker's
// `{vfs, journal_mode, synchronous}`, or null): phase "opening" → "ready", or
// "failed" (could not open), or "restarting" (the worker crashed; a new one
// is opening the database); `waiting` is `{attempt, attempts}` while the
// database file is still held by another worker (a reload racing the old
// one, or the previous owner tab closing); role "owner", "follower" or
// "alone".
// `onTablesChanged(listener)` calls `listener()` whenever a write answered
// by the database may have changed the tables — this tab's, another tab's,
// or after the database was reopened — so every tab can show the same live
// tables.

import { isErrorObject, opfsMissing, problem, queryCancelled } from '../lib/problem.js';
import { Caller } from '../lib/rpc.js';
import { isShare } from '../lib/share.js';
import { ACK_TIMEOUT_MS, REPLY_TIMEOUT_MS, TAB_ID, canShare, claimOwnership, openChannel } from './tabs.js';

const WORKER_URL = new URL('./worker.js', import.meta.url);

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

// Calls that only read the database (or the race lab's own scratch
// database): after anything else, every tab is told the tables may have
// changed. Unknown ops count as writes: a needless refresh is harmless.
const READS = new Set([
  'checkDelivery',
  'tables',
  'applySource',
  'query',
  'cancel',
  'export',
  'runScenario',
  'raceNew',
  'raceStart',
  'raceStep',
  'raceExplore',
  'judge',
  'judgeBuiltin',
  'judgeReplay',
  'judgeHandlers',
  'shown',
  'effects',
  'receivedAt',
  'outbox',
  'clock',
  'exportRaw',
]);
// Calls that may be sent again to a new owner when the old one took them but
// went away before answering: running them twice changes nothing.
const REPEATABLE = new Set(['tables', 'query', 'cancel', 'export', 'exportRaw', 'applySource']);

// This tab's calls still waiting for an answer, by id:
// {id, op, args, resolve, reject, route: "worker" | "channel", acked, owner, timer}.
const pending = new Map();
// Names this tab's queries by, for `cancel()`: unique across tabs.
let nextTicket = 1;
// Requests other tabs sent to this owner, by "tab:id": false while running,
// true once answered. A request that arrives again is acked again while it
// runs and otherwise ignored: the tab that sent it gets the one reply.
const served = new Map();
const SERVED_MEMORY = 1000;

const statusListeners = new Set();
const changeListeners = new Set();
// The judge's progress announcements (judge.onProgress).
const judgeListeners = new Set();
let nextId = 1;
// This tab's worker, as an rpc.js Caller.
let worker = null;
let channel = null;
// "owner" | "follower" | "alone"; the owner tab's id as far as this tab knows.
let role = STORAGE === 'opfs' && canShare() ? 'follower' : 'alone';
let ownerId = null;
// Set when this tab's worker could not even start: every call is then
// rejected with this at once instead of waiting forever.
let stopped = null;
// Whether writes were answered since the worker last said it is idle.
let dirty = false;
let status = { phase: 'opening', storage: STORAGE, stack: null, busy: false, error: null, fallback: null, problem: null, waiting: null, role };
let settleReady = null;

const ready = new Promise((resolve, reject) => {
  settleReady = { resolve, reject };
});
// A failure to open is also shown through onStatus; this keeps a reader who
// never looks at `ready` from seeing an "uncaught (in promise)" error.
ready.catch(() => {});

if (role === 'follower') {
  channel = openChannel(onTabMessage);
  channel.send({ type: 'hello' });
  claimOwnership(becomeOwner);
} else {
  start();
}

/** The console API, the same in every tab. */
export const inboxLab = Object.freeze({
  /**
   * Resolves to `{storage}` once the database is open — plus `fallback`, the
   * reason, when OPFS was asked for but the database is in memory, and
   * `problem`, the error, when the stored database cannot be used (only
   * `exportRaw()` and `reset()` work then); rejects if the storage cannot be
   * opened at all.
   */
  ready,

  /**
   * Delivers one event. `options.fault` is "after_insert" or "after_update"
   * to make the transaction fail at that point (it then rolls back).
   * Resolves to `{outcome, http_status, receipt}`.
   */
  deliver(event, options = {}) {
    return calling(() => {
      if (typeof options !== 'object' || options === null) {
        return Promise.reject(badOptions());
      }
      return request('deliver', { event, fault: options.fault, handler: options.handler });
    });
  },

  /**
   * Checks a delivery without making it (a share link's, before any is
   * replayed): `event`, `options.handler` and `options.fault` by the rules
   * `deliver` applies first, in Rust. Resolves to null, or rejects with the
   * invalid_input error `deliver` would answer. Touches no database.
   */
  checkDelivery(event, options = {}) {
    return calling(() => {
      if (typeof options !== 'object' || options === null) {
        return Promise.reject(badOptions());
      }
      return request('checkDelivery', { event, fault: options.fault, handler: options.handler });
    });
  },

  /**
   * Delivers many events, one after another, each in its own transaction —
   * what as many `deliver` calls would do, in one request to the worker.
   * `events` is an array of at most 10,000 events; `options.handler` as for
   * `deliver` (no fault). Resolves to `{delivered, outcomes, verdicts}`,
   * counted by Rust: `outcomes` by what the sender heard ("applied",
   * "duplicate" or an error kind), `verdicts` by verdict kind ("correct",
   * "credited_twice", ...). "N different events" sends its events this way.
   */
  deliverMany(events, options = {}) {
    return calling(() => {
      if (typeof options !== 'object' || options === null) {
        return Promise.reject(badOptions());
      }
      return request('deliverMany', { events, handler: options.handler });
    });
  },

  /**
   * Delivers one event given as JSON text, e.g. pasted:
   * `inboxLab.deliverJson('{"source": "a", "event_id": "e", "account_id": 1, "amount": 5}')`.
   * Exactly these four fields, numbers as plain integers. `options.fault`
   * as for `deliver`. Resolves like `deliver`.
   */
  deliverJson(text, options = {}) {
    return calling(() => {
      if (typeof options !== 'object' || options === null) {
        return Promise.reject(badOptions());
      }
      return request('deliverJson', { text, fault: options.fault });
    });
  },

  /** Resolves to `{accounts: [{id, balance}], inbox: [{source, event_id, account_id, amount, receipt}]}`. */
  tables() {
    return request('tables');
  },

  /**
   * Deletes the database and starts a fresh one holding account 1 at balance 0.
   * Works whatever the stored file holds, and clears `ready`'s `problem`.
   */
  reset() {
    return request('reset');
  },

  /**
   * "Export as is": resolves to a Uint8Array, the stored database file byte
   * for byte — also (above all) when the page cannot use it.
   */
  exportRaw() {
    return request('exportRaw');
  },

  /**
   * "Keep what is sound", when the stored database cannot be used: resolves
   * to `{kept: {accounts, inbox, outbox, orders}, dropped: [error, ...]}`
   * once the sound rows are all the database holds (each row left out as the
   * error an import would have answered); clears `ready`'s `problem` as
   * `reset()` does. Rejects, changing nothing, when nothing can be kept.
   */
  salvage() {
    return request('salvage');
  },

  /** Creates an account at balance 0; resolves to true, or false if it already existed. */
  addAccount(accountId) {
    return request('addAccount', { account_id: accountId });
  },

  /**
   * Kills the database worker on the spot — `Worker.terminate()`: no
   * cleanup, no ROLLBACK, like a process killed mid-transaction — and starts
   * a new one, which reopens the database from OPFS. Requests in flight are
   * rejected as unconfirmed (retryable storage errors). Resolves to
   * `{storage}` once the new worker is ready. Step mode uses it to kill an
   * open transaction and show that nothing of it survives. In a follower
   * tab it kills the owner tab's worker: there is only one.
   */
  killWorker() {
    return role === 'follower' ? request('killWorker') : killLocalWorker();
  },

  /**
   * Runs one read-only statement; resolves to `{columns, rows, truncated,
   * truncated_values}` (worker.js says what each means). It ends within
   * the console's budget (2 s) at most: rejected with query_budget.
   */
  query(sql) {
    const ticket = `${TAB_ID}:${nextTicket}`;
    nextTicket += 1;
    return request('query', { sql, ticket });
  },

  /**
   * Cancels this tab's queries still waiting for an answer: each is
   * rejected at once with invalid_input / query_cancelled, and stopped where
   * it runs (see "Cancelling a query" above). Resolves to `{cancelled}`,
   * how many queries were cancelled.
   */
  cancel() {
    return Promise.resolve({ cancelled: cancelQueries() });
  },

  /** Resolves to a Uint8Array: the database as a `.sqlite3` file. */
  exportDatabase() {
    return request('export');
  },

  /** Replaces the database with a validated `.sqlite3` file (Uint8Array or ArrayBuffer). */
  importDatabase(bytes) {
    return request('import', { bytes });
  },

  /**
   * The Rust of the apply transaction, as built into the wasm:
   * `{path, text, steps: [{step, first, last}]}` (src/core/source.rs).
   */
  applySource() {
    return request('applySource');
  },

  /** Runs the article's scenario on a scratch database; resolves to `{summary, passed, checks}`. */
  runScenario() {
    return request('runScenario');
  },

  /** Step mode: `step.start(event, {fault})`, then `step.next()` until `outcome`, or `step.throw()`. */
  step: Object.freeze({
    start: (event, options = {}) => calling(() => request('stepStart', { event, fault: options?.fault })),
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

  /**
   * Write your own handler: `judge.run(text, deliveries, {seconds, seed})` (its limit: 1 to 120 s,
   * 120 when not given, stopped then with judge_budget; `seed` repeats a report's events),
   * `judge.builtin(name)`, `judge.replay(text, deliveries, schedule, seed)` (worker ops "judge",
   * "judgeBuiltin", "judgeReplay"); the workshop's handler in Rust (a build with the feature
   * `workshop`): `judge.runWorkshop(deliveries, {seconds, seed})`,
   * `judge.replayWorkshop(deliveries, schedule, seed)`;
   * `judge.handlers()`: the six built-ins' names, then "workshop" when the build has it;
   * `judge.onProgress(listener)`: {done, total, check} as each of the judge's checks starts
   * (this tab's worker only); returns an unsubscribe function.
   */
  judge: Object.freeze({
    run: (text, deliveries, options = {}) =>
      calling(() => request('judge', { text, deliveries, seconds: options?.seconds, seed: options?.seed })),
    builtin: (name) => request('judgeBuiltin', { name }),
    replay: (text, deliveries, schedule, seed) => request('judgeReplay', { text, deliveries, schedule, seed }),
    runWorkshop: (deliveries, options = {}) =>
      calling(() => request('judge', { workshop: true, deliveries, seconds: options?.seconds, seed: options?.seed })),
    onProgress: (listener) => {
      judgeListeners.add(listener);
      return () => judgeListeners.delete(listener);
    },
    replayWorkshop: (deliveries, schedule, seed) => request('judgeReplay', { workshop: true, deliveries, schedule, seed }),
    handlers: () => request('judgeHandlers'),
  }),

  /**
   * Where the scheme ends: side effects and the outbox, business keys,
   * retention. See the header of this file for each call; worker.js
   * documents the ops behind them.
   */
  scheme: Object.freeze({
    deliver: (event, options = {}) =>
      calling(() => request('notifyDeliver', { event, strategy: options?.strategy, crash: options?.crash })),
    dispatchOne: (options = {}) => calling(() => request('dispatchOne', { crash: options?.crash })),
    dispatch: (options = {}) => calling(() => request('dispatch', { crash: options?.crash ?? false })),
    redeliver: (event) => request('redeliver', { event }),
    effects: () => request('effects'),
    receivedAt: (source, eventId) => request('receivedAt', { source, event_id: eventId }),
    resetReceiver: (options = {}) => calling(() => request('notifierReset', { dedup: options?.dedup })),
    shown: () => request('shown'),
    outbox: () => request('outbox'),
    activate: (source, eventId, orderId) => request('activate', { source, event_id: eventId, order_id: orderId }),
    clock: () => request('clock'),
    advanceClock: (ms) => request('advanceClock', { ms }),
    purge: (keepMs) => request('purge', { keep_ms: keepMs }),
  }),

  /**
   * Signed webhooks: `hooks.secret(source)` the source's current secret
   * (`{source, secret}`, made on first use), `hooks.rotate(source)` a new one
   * (the old one verifies until the next rotation), `hooks.forget()` every
   * secret (their database, even damaged), `hooks.sign(source, id,
   * timestamp, body)` the `v1,…` signature its secret gives, and
   * `hooks.receive(relayed, {verify})` what the relay (panels/hooks/relay.js)
   * does with a webhook the server passed on.
   */
  hooks: Object.freeze({
    secret: (source) => request('hookSecret', { source }),
    rotate: (source) => request('hookRotate', { source }),
    forget: () => request('hookForget'),
    sign: (source, id, timestamp, body) => request('hookSign', { source, id, timestamp, body }),
    receive: (relayed, options = {}) => calling(() => request('hookReceive', { relayed, verify: options?.verify })),
  }),
});

window.inboxLab = inboxLab;

/** Calls `listener(status)` now and on every change; returns a function that unsubscribes. */
export function onStatus(listener) {
  statusListeners.add(listener);
  listener(status);
  return () => statusListeners.delete(listener);
}

/**
 * Calls `listener()` after writes (of any tab) may have changed the tables,
 * and after the database was reopened; returns a function that unsubscribes.
 */
export function onTablesChanged(listener) {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

// ---- Calls: to this tab's worker, or to the owner tab ---------------------

function request(op, args) {
  if (stopped !== null) {
    return Promise.reject(stopped);
  }
  return new Promise((resolve, reject) => {
    const entry = { id: nextId, op, args, resolve, reject, route: null, acked: false, owner: null, timer: null, job: null };
    nextId += 1;
    pending.set(entry.id, entry);
    dispatch(entry);
  });
}

// Sends a call where it is answered: the owner tab, or this tab's worker.
function dispatch(entry) {
  if (role === 'follower') {
    sendToOwner(entry);
  } else if (entry.op === 'killWorker') {
    entry.route = 'worker';
    clearTimeout(entry.timer);
    killLocalWorker().then(
      (value) => finish(entry, true, value),
      (error) => finish(entry, false, error),
    );
  } else {
    sendToWorker(entry);
  }
}

function finish(entry, ok, value) {
  if (pending.get(entry.id) !== entry) {
    return; // already settled (a timeout, a hand-over or a restart came first)
  }
  pending.delete(entry.id);
  clearTimeout(entry.timer);
  if (ok) {
    entry.resolve(value);
  } else {
    entry.reject(value);
  }
}

function sendToWorker(entry) {
  entry.route = 'worker';
  clearTimeout(entry.timer);
  toWorker(entry.op, entry.args, (ok, value) => finish(entry, ok, value));
}

// Sends one request to this tab's worker; `settle(ok, value)` gets the reply.
// Arguments that cannot be copied to a worker — functions, symbols, DOM
// objects (structured clone) — settle it at once with not_cloneable, so
// Rust never sees them.
function toWorker(op, args, settle) {
  try {
    worker.send(op, args, (ok, value) => answered(op, ok, value, settle));
  } catch (thrown) {
    settle(false, notCloneable('the database worker', thrown));
  }
}

// The worker's reply to a request: after a write, every tab's tables are
// refreshed once the worker is idle (a write answered while it is idle — an
// import, whose last step comes after the requests behind it — at once).
function answered(op, ok, value, settle) {
  if (!READS.has(op)) {
    if (status.busy) {
      dirty = true;
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
  for (const entry of [...pending.values()]) {
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

function sendToOwner(entry) {
  entry.route = 'channel';
  entry.acked = false;
  entry.owner = null;
  try {
    channel.send({ type: 'request', id: entry.id, op: entry.op, args: entry.args });
  } catch (thrown) {
    finish(entry, false, notCloneable('the tab that holds the database', thrown));
    return;
  }
  arm(entry, ACK_TIMEOUT_MS, () =>
    problem(
      'busy',
      'no_owner',
      `no tab acknowledged this request within ${ACK_TIMEOUT_MS / 1000} s (the tab that holds the database may be ` +
        'closing or frozen); it was not confirmed, retry later (retrying is safe)',
      { seconds: String(ACK_TIMEOUT_MS / 1000) },
    ),
  );
}

function arm(entry, ms, error) {
  clearTimeout(entry.timer);
  entry.timer = setTimeout(() => finish(entry, false, error()), ms);
}

// ---- The owner: this tab runs the worker -----------------------------------

// The lock is ours: the tab before us is gone (or there was none). Start the
// worker, tell the other tabs, and take over this tab's own calls that were
// waiting for the old owner.
function becomeOwner() {
  role = 'owner';
  ownerId = TAB_ID;
  start();
  setStatus({ phase: 'opening', busy: false, error: null, fallback: null, problem: null, waiting: null, role });
  for (const entry of [...pending.values()]) {
    if (entry.route === 'channel') {
      if (!entry.acked || REPEATABLE.has(entry.op)) {
        dispatch(entry); // the old owner never had it, or it only reads
      } else {
        finish(entry, false, ownerClosed());
      }
    }
  }
}

// A request from another tab. Acknowledge it at once, run it once, answer it.
function serve({ from, id, op, args }) {
  const key = `${from}:${id}`;
  if (served.has(key)) {
    if (served.get(key) === false) {
      channel.send({ type: 'ack', to: from, id });
    }
    return;
  }
  served.set(key, false);
  if (served.size > SERVED_MEMORY) {
    served.delete(served.keys().next().value);
  }
  channel.send({ type: 'ack', to: from, id });
  const answer = (ok, value) => {
    if (served.has(key)) {
      served.set(key, true);
    }
    channel.send(ok ? { type: 'reply', to: from, id, ok, result: value } : { type: 'reply', to: from, id, ok, error: value });
  };
  if (stopped !== null) {
    answer(false, stopped);
  } else if (op === 'killWorker') {
    killLocalWorker().then(
      (value) => answer(true, value),
      (error) => answer(false, error),
    );
  } else {
    toWorker(op, args, answer);
  }
}

function start() {
  const missing = STORAGE === 'opfs' ? opfsMissing(window) : null;
  const url = new URL(WORKER_URL);
  url.searchParams.set('storage', missing === null ? STORAGE : 'memory');
  if (JOURNAL !== null) {
    url.searchParams.set('journal', JOURNAL);
  }
  let opened = false;
  // A worker that stops on its own (an uncaught error, a script that failed
  // to load): before the database was ever opened, starting again would most
  // likely fail the same way, so only a worker that had been working is
  // replaced.
  const onError = (error) => {
    if (opened) {
      restart(error);
    } else {
      stopped = error;
      settleReady.reject(error);
      worker.terminate(error);
      setStatus({ phase: 'failed', busy: false, error });
    }
  };
  const onAnnouncement = (data) => {
    if (data.type === 'ready') {
      opened = true;
      const fallback = missing ?? data.fallback ?? null;
      const databaseProblem = data.problem ?? null;
      settleReady.resolve(readyValue(data.storage, fallback, databaseProblem));
      setStatus({ phase: 'ready', storage: data.storage, stack: data.stack ?? null, busy: false, error: null, fallback, problem: databaseProblem, waiting: null });
    } else if (data.type === 'problem') {
      setStatus({ problem: data.problem ?? null });
    } else if (data.type === 'fatal') {
      settleReady.reject(data.error);
      setStatus({ phase: 'failed', busy: false, error: data.error, waiting: null });
    } else if (data.type === 'waiting') {
      setStatus({ waiting: { attempt: data.attempt, attempts: data.attempts } });
    } else if (data.type === 'crashed') {
      restart(data.error);
    } else if (data.type === 'judgeProgress') {
      for (const listener of judgeListeners) {
        listener({ done: data.done, total: data.total, check: data.check });
      }
    } else if (data.type === 'busy') {
      setStatus({ busy: data.busy });
      if (!data.busy && dirty) {
        dirty = false;
        tablesChanged(true);
      }
    }
  };
  // Replies go to `answered`; a replaced worker's late messages are
  // dropped by its Caller.
  worker = new Caller(new Worker(url, { type: 'module' }), { name: 'the database worker', onAnnouncement, onError });
}

function killLocalWorker() {
  if (stopped !== null) {
    return Promise.reject(stopped);
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
  worker.terminate(
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


// ---- A follower: listening to the other tabs --------------------------------

function onTabMessage(message) {
  if (message === null || typeof message !== 'object') {
    return;
  }
  const forMe = message.to === TAB_ID;
  switch (message.type) {
    case 'hello':
      if (role === 'owner') {
        channel.send({ type: 'status', status: sharedStatus() });
      }
      break;
    case 'request':
      if (role === 'owner') {
        serve(message);
      }
      break;
    case 'status':
      if (role === 'follower') {
        followOwner(message.from, message.status);
      }
      break;
    case 'ack': {
      const entry = forMe ? pending.get(message.id) : undefined;
      if (entry?.route === 'channel' && !entry.acked) {
        entry.acked = true;
        entry.owner = message.from;
        arm(entry, REPLY_TIMEOUT_MS, () =>
          problem(
            'busy',
            'owner_timeout',
            `the tab that holds the database took this request but did not answer within ${REPLY_TIMEOUT_MS / 1000} s; ` +
              'it was not confirmed, retry later (retrying is safe)',
            { seconds: String(REPLY_TIMEOUT_MS / 1000) },
          ),
        );
      }
      break;
    }
    case 'reply': {
      const entry = forMe ? pending.get(message.id) : undefined;
      if (entry?.route === 'channel') {
        finish(entry, message.ok, message.ok ? message.result : message.error);
      }
      break;
    }
    case 'changed':
      if (role === 'follower') {
        tablesChanged(false);
      }
      break;
    default:
      break;
  }
}

function followOwner(from, ownerStatus) {
  if (from !== ownerId) {
    // A new owner (the lock moved: the old one is gone), or the first one
    // this tab hears of. Requests it never acked go to it now; the old
    // owner's unanswered ones are repeated or reported unconfirmed.
    ownerId = from;
    for (const entry of [...pending.values()]) {
      if (entry.route !== 'channel') {
        continue;
      }
      if (!entry.acked || REPEATABLE.has(entry.op)) {
        sendToOwner(entry);
      } else if (entry.owner !== from) {
        finish(entry, false, ownerClosed());
      }
    }
  }
  const { phase, storage, stack, busy, error, fallback, waiting } = ownerStatus;
  const databaseProblem = ownerStatus.problem ?? null;
  if (phase === 'ready') {
    settleReady.resolve(readyValue(storage, fallback, databaseProblem));
  } else if (phase === 'failed') {
    settleReady.reject(error);
  }
  setStatus({ phase, storage, stack: stack ?? null, busy, error, fallback, problem: databaseProblem, waiting });
}

// ---- Status and change notices ---------------------------------------------

function setStatus(change) {
  const before = status.phase;
  status = { ...status, ...change };
  if (role === 'owner') {
    channel.send({ type: 'status', status: sharedStatus() });
  }
  for (const listener of statusListeners) {
    listener(status);
  }
  // The database was (re)opened — at start, after a crash or a kill, by a
  // new owner tab: what it holds may differ from what was shown.
  if (status.phase === 'ready' && before !== 'ready') {
    tablesChanged(role === 'owner');
  }
}

// What followers need of the owner's status.
function sharedStatus() {
  const { phase, storage, stack, busy, error, fallback, problem: databaseProblem, waiting } = status;
  return { phase, storage, stack, busy, error, fallback, problem: databaseProblem, waiting };
}

function tablesChanged(tellOthers) {
  if (tellOthers && role === 'owner') {
    channel.send({ type: 'changed' });
  }
  for (const listener of changeListeners) {
    listener();
  }
}

function readyValue(storage, fallback, databaseProblem) {
  const value = { storage };
  if (fallback) {
    value.fallback = fallback;
  }
  if (databaseProblem) {
    value.problem = databaseProblem;
  }
  return value;
}

// ---- Errors made here ---------------------------------------------------------

function badOptions() {
  return problem(
    'invalid_input',
    'bad_options',
    'invalid fault: the second argument must be an object such as {fault: "after_insert"}',
    {},
    'fault',
  );
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

// What was thrown, as text; even `String(thrown)` may throw (a Symbol, a
// hostile toString).
function describe(thrown) {
  try {
    return thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return 'something that cannot be shown as text was thrown';
  }
}

function notCloneable(where, thrown) {
  const detail = describe(thrown);
  return problem('invalid_input', 'not_cloneable', `cannot send this request to ${where}: ${detail}`, { detail });
}

function ownerClosed() {
  return problem(
    'storage',
    'owner_closed',
    'the tab that held the database went away before answering. This request was not confirmed; ' +
      'retrying it is safe (an event is applied at most once).',
  );
}
