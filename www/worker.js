// The database worker: the only code that touches the database.
//
// It runs as a dedicated module worker because SQLite's OPFS storage
// ("sahpool") needs synchronous file access handles, which browsers only
// give to dedicated workers. It holds the one connection to the database
// (through the Rust `Lab`), so the page never builds SQL and never needs a
// lock: requests are handled one at a time, in the order they arrive.
//
// ## Message protocol
//
// Start it with `new Worker(new URL('./worker.js?storage=opfs', import.meta.url),
// {type: 'module'})`. `storage` is "opfs" (the default: persistent, in the
// origin private file system) or "memory" (gone on reload); any other value
// is reported as a `fatal` storage error by the Rust side.
//
// Page → worker, a request:
//
//   {id, op, args}
//     op "deliver"     args {event: {source, event_id, account_id, amount},
//                            fault: undefined | null | "after_insert" | "after_update"}
//                      result {outcome: "applied" | "duplicate", http_status: 200,
//                              receipt: {seq, balance_after}}
//     op "tables"      args none   result {accounts: [{id, balance}],
//                                          inbox: [{source, event_id, account_id,
//                                                   amount, receipt}]}
//     op "reset"       args none   result undefined (a fresh database: account 1, balance 0)
//     op "addAccount"  args {account_id}   result true if created, false if it existed
//     op "stepStart"   args {event, fault}  step mode: a delivery that runs one statement
//                      per "stepNext"; result {ran: null, next: {step, statements}, outcome: null}
//     op "stepNext"    args none   result {ran, next, outcome}; `next` null once committed
//     op "stepThrow"   args none   the stepped handler throws: rolled back; always an error
//                      {kind: "simulated_crash"}. While a stepped delivery is open, other
//                      writes answer `busy` (it holds the write lock).
//     op "query"       args {sql}  read-only SQL: result {columns, rows, truncated}
//     op "export"      args none   result Uint8Array, the database as a .sqlite3 file
//     op "import"      args {bytes: Uint8Array}  replaces the database if the file is a valid
//                      inbox-lab database; otherwise an invalid_input error, field "file"
//     op "runScenario" args none   the article's scenario on a scratch database:
//                      result {summary, passed, checks: [{name, expected, got}]}
//     op "raceNew"     args {deliveries: 2 | 3}  the race lab: fresh connections
//     op "raceStart"   args {handler}  every connection delivers the same event by `handler`
//     op "raceStep"    args {delivery: 0 | 1 | 2}  one statement of one delivery: result
//                      {delivery, statements, result: "ran" | "waiting" | "answered" |
//                      "failed", answer?, kind?, message?, committed, next, verdict}
//     op "raceExplore" args {handler}  every interleaving: result {handler, deliveries,
//                      interleavings, double_credits, lost_credits, wrong_answers,
//                      failing_schedule}
//
//   "deliver" also takes `handler` ("atomic", the default, or one of the race
//   lab's mistakes: no_dedup, check_then_act, two_transactions,
//   insert_or_ignore, insert_or_replace).
//
//   `id` is any value the page chooses; the worker only echoes it. Values are
//   passed to Rust exactly as received: validation is Rust's job, so the page
//   must not coerce anything (`amount: "500"` is an error, not 500).
//
// Worker → page, exactly one reply per request, errors and unknown ops included,
// so no caller ever waits forever:
//
//   {id, ok: true,  result}
//   {id, ok: false, error: {kind, message, http_status, retryable, field?}}
//
//   `kind` is one of Rust's error kinds (invalid_input, payload_conflict,
//   unknown_account, balance_limit, busy, simulated_crash, storage);
//   `field` names the input at fault for invalid_input.
//
// Worker → page, announcements (no `id`):
//
//   {type: "ready", storage}      the database is open; `storage` is "opfs" or "memory"
//   {type: "fatal", error}        the database could not be opened. Every request,
//                                 queued or later, is answered with this error.
//   {type: "crashed", error}      the WebAssembly instance trapped (a Rust panic) or
//                                 threw something that is not one of its error
//                                 objects. It cannot be trusted any more: the request
//                                 that hit it and every later one are answered with a
//                                 storage error, and the page must terminate this
//                                 worker and start a new one.
//   {type: "busy", busy: bool}    true before handling requests, false once none wait,
//                                 so the page can show that work is going on.
//
// Requests that arrive while the database is still opening wait in a queue and
// are handled, in order, once it is open.

import init, { Lab, RaceLab } from './pkg/inbox_lab.js';

const DATABASE = 'inbox-lab.sqlite3';
const storage = new URL(self.location.href).searchParams.get('storage') ?? 'opfs';

// OPFS access handles are exclusive. After a reload, or after the page
// replaced a crashed worker, the old worker may still hold them for a moment
// and opening fails with NoModificationAllowedError; waiting a little is
// enough. Another tab keeps them for as long as it is open, so give up after
// about five seconds and say so.
const OPEN_ATTEMPTS = 10;
const OPEN_RETRY_MS = 100;

// The race lab's connections: created on first use, separate from `lab`
// (an in-memory database shared by 2 or 3 real connections).
let raceLab = null;

const OPS = new Map([
  ['deliver', (lab, args) => lab.deliver(args?.event, args?.fault, args?.handler)],
  ['tables', (lab) => lab.tables()],
  ['reset', (lab) => lab.reset()],
  ['addAccount', (lab, args) => lab.addAccount(args?.account_id)],
  ['stepStart', (lab, args) => lab.stepStart(args?.event, args?.fault)],
  ['stepNext', (lab) => lab.stepNext()],
  ['stepThrow', (lab) => lab.stepThrow()],
  ['query', (lab, args) => lab.query(String(args?.sql ?? ''))],
  ['export', (lab) => lab.export()],
  ['import', (lab, args) => lab.import(bytesOf(args?.bytes))],
  ['runScenario', (lab) => lab.runScenario()],
  ['raceNew', (lab, args) => {
    raceLab?.free();
    raceLab = new RaceLab(args?.deliveries);
  }],
  ['raceStart', (lab, args) => race().start(args?.handler)],
  ['raceStep', (lab, args) => race().step(deliveryIndex(args?.delivery))],
  ['raceExplore', (lab, args) => race().explore(args?.handler)],
]);

function race() {
  if (raceLab === null) {
    raceLab = new RaceLab(2);
  }
  return raceLab;
}

function deliveryIndex(value) {
  if (!Number.isInteger(value) || value < 0) {
    throw { kind: 'invalid_input', field: 'deliveries', message: 'invalid delivery: expected 0, 1 or 2', http_status: 400, retryable: false };
  }
  return value;
}

function bytesOf(value) {
  if (value instanceof Uint8Array) {
    return value;
  }
  if (value instanceof ArrayBuffer) {
    return new Uint8Array(value);
  }
  throw { kind: 'invalid_input', field: 'file', message: 'invalid file: expected the bytes of a .sqlite3 file', http_status: 400, retryable: false };
}

let lab = null;
// Once set, the database is unusable and every request is answered with it.
let failure = null;
const queue = [];

self.addEventListener('message', (event) => {
  queue.push(event.data);
  drain();
});

open().then(
  (opened) => {
    lab = opened;
    self.postMessage({ type: 'ready', storage: lab.storage });
    drain();
  },
  (thrown) => {
    failure = asErrorObject(thrown, 'cannot open the database');
    self.postMessage({ type: 'fatal', error: failure });
    drain();
  },
);

async function open() {
  await init();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await Lab.open(DATABASE, storage);
    } catch (thrown) {
      if (!heldByAnotherWorker(thrown)) {
        throw thrown;
      }
      if (attempt === OPEN_ATTEMPTS) {
        throw inAnotherTab(thrown);
      }
      await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS * attempt));
    }
  }
}

function heldByAnotherWorker(thrown) {
  return isErrorObject(thrown) && thrown.message.includes('NoModificationAllowedError');
}

function inAnotherTab(error) {
  return {
    ...error,
    message: `the database is in use by another tab or window of this page; close it and reload (${error.message})`,
  };
}

// Answers every queued request. Lab calls are synchronous, so one pass cannot
// be interleaved with another: this is what keeps requests in arrival order.
function drain() {
  if ((lab === null && failure === null) || queue.length === 0) {
    return;
  }
  self.postMessage({ type: 'busy', busy: true });
  while (queue.length > 0) {
    self.postMessage(answer(queue.shift()));
  }
  self.postMessage({ type: 'busy', busy: false });
}

function answer(request) {
  const id = request?.id;
  if (failure !== null) {
    return { id, ok: false, error: failure };
  }
  const op = OPS.get(request?.op);
  if (op === undefined) {
    return {
      id,
      ok: false,
      error: {
        kind: 'invalid_input',
        message: `unknown op ${JSON.stringify(request?.op)}: expected one of ${[...OPS.keys()].join(', ')}`,
        http_status: 400,
        retryable: false,
      },
    };
  }
  try {
    return { id, ok: true, result: op(lab, request.args) };
  } catch (thrown) {
    if (isErrorObject(thrown)) {
      return { id, ok: false, error: thrown };
    }
    // A trap leaves Rust's memory in an unknown state (a lock half taken, a
    // connection mid-statement), so no further call may use this instance.
    // The open transaction never committed: the next worker's connection
    // rolls it back, so retrying the request is safe.
    failure = asErrorObject(thrown, 'the database worker crashed and is being restarted');
    lab = null;
    self.postMessage({ type: 'crashed', error: failure });
    return { id, ok: false, error: failure };
  }
}

// The errors Rust throws are plain objects; anything else (a
// WebAssembly.RuntimeError from a panic, a TypeError) is not.
function isErrorObject(value) {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    typeof value.kind === 'string' &&
    typeof value.message === 'string'
  );
}

function asErrorObject(thrown, context) {
  if (isErrorObject(thrown)) {
    return thrown;
  }
  return {
    kind: 'storage',
    message: `${context}: ${thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown)}`,
    http_status: 500,
    retryable: true,
  };
}
