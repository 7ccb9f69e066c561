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
// {type: 'module'})` (www/db/client.js does; the OPFS database runs in WAL
// mode, exclusive, synchronous=FULL, and `&journal=delete` asks for a rollback
// journal instead — see below). The messages have the one shape
// of www/lib/rpc.js — a request `{id, op, args}`, exactly one reply
// `{id, ok, result | error}`, announcements without an id — and rpc.js's
// `serve` answers them; below are this worker's ops and announcements. `storage` is "opfs" (the default: persistent, in the
// origin private file system) or "memory" (gone on reload); any other value
// is reported as a `fatal` storage error by the Rust side.
//
// Only one worker at a time can hold the OPFS database (its access handles
// are exclusive), so with several tabs open only the owner tab runs this
// worker; the others forward their requests to it (tabs.js, client.js).
//
// Neither missing OPFS (`fallback`) nor an unusable stored database
// (`problem`, Rust's health check in src/core/health.rs) stops the worker:
// see the `ready` announcement below. Test only: www/db/opfs-refused.js
// starts this worker in a browser whose OPFS refuses to open; no page
// imports it, so the static build (dist/) holds no test switch.
//
// Page → worker, the ops: `{id, op, args}` (www/lib/rpc.js), one per call of
// the console API, named and with the args ops.js gives; README.md ("The
// console API") says what each answers. Values are passed to Rust exactly as
// received: validation is Rust's job (`amount: "500"` is an error, not 500).
// What README leaves to this file:
//
//   `steps`, in the result and in the error of "deliver", "step.next" and
//   "race.step" alike, is what the handler ran (src/core/trace.rs): [{op,
//   statements, rows, effect, tx}], effect "kept" | "rolled_back" | "failed" |
//   "crashed" ("open" only while a stepped delivery's transaction is), tx
//   the transaction it ran in (1, 2, …) or null outside any; []
//   when it was refused before any SQL.
//   `not_reached`, only in the error of a delivery that crashed, is what the
//   crash left out: the statements the handler would have run next, [{op,
//   statements, tx}] (Trace::unreached; the flow picture draws them greyed).
//   `verdict`, in the result and in the error alike, is what the delivery
//   really did, judged in Rust from its steps and the tables before and after
//   (src/labs/verdicts/; shown by www/lib/verdict.js):
//     {kind: "correct" | "credited_twice" | "credit_lost" | "false_duplicate" |
//            "history_rewritten" | "failed_after_commit" | "unknown",
//      handler, heard: "applied" | "duplicate" | error kind | "refused",
//      credits_before, credits (the event's kept credits before and after it),
//      credits_known (false: the count before is inferred from the inbox row,
//      e.g. after a reload), kept: {row, credit} (what this delivery
//      committed), sent: {account_id, amount}, stored_before, stored_after:
//      {account_id, amount, receipt} | null (the event's inbox row), balance:
//      {account, before, after}, breaks_on: "repeat" | "other_payload" |
//      "crash_after_insert" | "crash_after_update" | null (a mistake found
//      correct this time: what breaks it), unreached: {fault, why: "absent" |
//      "not_run" | "no_row"} | null (a crash point asked for that no step reached)}
//   "checkDelivery" checks a share link's delivery by the rules "deliver"
//   applies first, touching no database: null, or the error "deliver" would
//   answer (www/panels/share/replay.js).
//   "step.start" begins a delivery that runs one statement per "step.next"
//   ({ran, next, outcome, steps, verdict?}; `next` null once committed);
//   "step.throw" makes it throw (rolled back: a simulated_crash error). While
//   it is open, other writes answer `busy` (it holds the write lock).
//   "race.step" answers {delivery, statements, result: "ran" | "waiting" |
//   "answered" | "failed", answer?, kind?, message?, committed, steps, next,
//   verdict}; "race.explore" {handler, deliveries, interleavings,
//   double_credits, lost_credits, wrong_answers, deadlocks, failing_schedule}.
//   "query" runs on a copy of the database in the console's lane (foreign.js),
//   never here — only a bare pragma reading a setting of this connection
//   (`PRAGMA journal_mode`) is answered here; "cancel" {tickets} stops the
//   queries with these tickets, waiting or running: {cancelled: n}.
//   "importDatabase" checks and rebuilds the file in the import's lane (its
//   schema is never adopted); only the last step — copying the rebuilt
//   database in, one transaction — runs here.
//   "judge.run" / "judge.runWorkshop" judge in the judge's lane, announcing
//   {type: "judgeProgress", done, total, check} as each check ("cases",
//   "faults", "race_2", "race_3", then "done") starts: {result: "report",
//   report: {handler, verdict, race, faults, cases, first_failure, failures, stopped?},
//   crash_sweep: "native_only"} or {result: "parse_error", code, line,
//   column, en, ru}; "judge.replay" a reported schedule: {steps, verdict};
//   "judge.builtin" a built-in handler's text; "judge.handlers" the six
//   built-ins' names, then "workshop" when this build has its handler.
//   "scheme.*": this worker keeps one simulated receiver of notifications,
//   a `Notifier` ("the user's phone": another system, in memory), created on
//   first use without dedup and replaced by "scheme.resetReceiver", "reset",
//   "salvage" and "importDatabase"; `receiver` names the current one.
//   "hooks.*": the secrets live in their own database file, never exported,
//   imported or reset (src/labs/webhooks/, src/wasm/hooks.rs).
//
// Worker → page, exactly one reply per request (www/lib/rpc.js), an unknown op
// (invalid_input / unknown_op) included; an error reply's `error` is Rust's
// {kind, code, message, http_status, retryable, params, field?}
// (www/lib/problem.js).
//
// Worker → page, announcements (no `id`):
//
//   {type: "started"}
//       this worker's script runs (its wasm not loaded yet): the page waits
//       for it before building its panels (www/db/client.js, `starting`).
//   {type: "ready", storage, stack, start, fallback?, problem?}
//       the database is open; `storage` "opfs" or "memory"; `stack` {vfs,
//       journal_mode, synchronous} as SQLite reports them (null while the
//       database cannot be used); `start` how the start went: {at: {script,
//       wasm, opened}} (wall-clock ms, `performance.timeOrigin + now()`: this
//       worker's code running, the wasm compiled and instantiated, the
//       database open), and Rust's opfs_ms and check_ms (Lab.startTimes);
//       `fallback`: OPFS was asked for but cannot be
//       used, the error saying why (insecure_context, no_opfs,
//       opfs_unavailable), and the database is in memory; `problem`: the
//       stored database cannot be used, the error saying why (storage/corrupt,
//       unusable, ...): only "exportRaw", "salvage" and "reset" run, every
//       other request is answered with it.
//   {type: "problem", problem: error | null}
//       the database's problem changed: null after a "reset" that worked
//       (sent before that request's reply).
//   {type: "waiting", attempt, attempts}
//       the database file is still held by another worker (a reload racing
//       the old worker, or the previous owner tab closing); retrying. After
//       `attempts` tries: fatal, code "in_use".
//   {type: "fatal", error}
//       the storage could not be opened at all (an unknown `storage`, the file
//       held by another tab): every request, queued or later, is answered
//       with this error.
//   {type: "crashed", error}
//       the WebAssembly instance trapped (a Rust panic) or threw something
//       that is not one of its error objects: the request that hit it and
//       every later one are answered with a storage error, and the page must
//       terminate this worker and start a new one.
//   {type: "busy", busy: bool}
//       true before handling requests, false once none wait.
//   {type: "judgeProgress", done, total, check}
//       how far a "judge.run" has come (above).
//
// Requests that arrive while the database is still opening wait for it.

import * as start from '../pkg/inbox_lab.js';
import { asErrorObject, heldByAnotherWorker, isErrorObject, opfsMissing, problem, queryCancelled } from '../lib/problem.js';
import { serve } from '../lib/rpc.js';
import { Lane } from './foreign.js';
import { OPS, handlersFor } from './ops.js';

// When this worker's code began to run: the first step `ready` reports. The
// page builds its panels once it hears this (`started`).
const scriptAt = performance.timeOrigin + performance.now();
self.postMessage({ type: 'started' });

const DATABASE = 'inbox-lab.sqlite3';
const settings = new URL(self.location.href).searchParams;
const storage = settings.get('storage') ?? 'opfs';
// The journal on OPFS: "wal" (the default: one flush per commit) or "delete"
// (`?journal=delete` on the page: a rollback journal, three flushes per
// commit; src/wasm/lab.rs, Lab.openWithJournal). Anything else is a fatal
// storage error from Rust.
const journal = settings.get('journal') ?? 'wal';

// OPFS access handles are exclusive. After a reload, or after the page
// replaced a crashed worker, the old worker may still hold them for a moment
// and opening fails with NoModificationAllowedError; waiting a little is
// enough. Another tab keeps them for as long as it is open, so give up after
// about five seconds and say so.
const OPEN_ATTEMPTS = 20;
const OPEN_RETRY_MS = 25;

// The race lab's connections: created on first use, separate from `lab`
// (an in-memory database shared by 2 or 3 real connections).
let raceLab = null;

const HANDLERS = {
  deliver: (args) => lab.deliver(args?.event, args?.fault, args?.handler),
  deliverMany: (args) => lab.deliverMany(args?.events, args?.handler),
  deliverJson: (args) => lab.deliverJson(args?.text, args?.fault),
  // Rust's `undefined` arrives as undefined; the protocol says null.
  checkDelivery: (args) => start.checkDelivery(args?.event, args?.handler, args?.fault) ?? null,
  tables: (args) => (args?.newest === undefined ? lab.tables() : lab.newestTables(args.newest)),
  reset: () => replacing(() => lab.reset()),
  exportRaw: () => lab.exportRaw(),
  salvage: () => replacing(() => lab.salvage()),
  addAccount: (args) => lab.addAccount(args?.account_id),
  query: (args) => {
    const sql = String(args?.sql ?? '');
    if (start.readsOnlySettings(sql)) {
      // A setting of this very connection, read by the full module's console.
      return handOver().then(() => lab.query(sql));
    }
    return foreign('console', 'query', { copy: lab.snapshot(), sql }, { ticket: args?.ticket });
  },
  cancel: (args) => {
    const tickets = Array.isArray(args?.tickets) ? args.tickets : [];
    return { cancelled: LANES.console.cancel(tickets, queryCancelled()) };
  },
  exportDatabase: () => lab.export(),
  importDatabase: async (args) => {
    const file = bytesOf(args?.bytes);
    const rebuilt = await foreign('import', 'rebuild', { file }, { size: file.length });
    lab.adopt(rebuilt.bytes);
    forgetNotifier();
    return rebuilt.report;
  },
  runScenario: () => lab.runScenario(),
  // The source text only: the full module answers it without the database moving.
  applySource: () => loadFull().then((full) => full.applySource()),
  'step.start': (args) => lab.stepStart(args?.event, args?.fault),
  'step.next': () => lab.stepNext(),
  'step.throw': () => lab.stepThrow(),
  'race.reset': (args) => {
    raceLab?.free();
    raceLab = new wasm.RaceLab(args?.deliveries);
  },
  'race.start': (args) => race().start(args?.handler),
  'race.step': (args) => race().step(deliveryIndex(args?.delivery)),
  'race.explore': (args) => race().explore(args?.handler),
  'judge.run': (args) => judge(args, false),
  'judge.runWorkshop': (args) => judge(args, true),
  'judge.replay': (args) => replay(args, false),
  'judge.replayWorkshop': (args) => replay(args, true),
  'judge.builtin': (args) => start.builtinHandler(args?.name),
  'judge.handlers': () => start.handlerNames(),
  'scheme.deliver': (args) => notifier().deliver(lab, args?.event, args?.strategy, args?.crash),
  // Rust's `None` arrives as undefined; the protocol says null.
  'scheme.dispatchOne': (args) => notifier().dispatchOne(lab, args?.crash) ?? null,
  'scheme.dispatch': (args) => notifier().dispatch(lab, args?.crash ?? false),
  'scheme.redeliver': (args) => notifier().redeliver(lab, args?.event),
  'scheme.effects': () => ({ receiver: receiverName, ...notifier().effects(lab) }),
  'scheme.receivedAt': (args) => lab.receivedAt(args?.source, args?.event_id) ?? null,
  'scheme.resetReceiver': (args) => {
    const fresh = new wasm.Notifier(args?.dedup); // throws (and keeps the old one) if dedup is not a boolean
    forgetNotifier();
    notifierInstance = fresh;
    receiverName = nameReceiver();
    return { receiver: receiverName, dedup: fresh.dedup };
  },
  'scheme.shown': () => {
    const receiver = notifier();
    return { receiver: receiverName, dedup: receiver.dedup, shown: receiver.shown() };
  },
  'scheme.outbox': () => lab.outbox(),
  'scheme.activate': (args) => lab.activate(args?.source, args?.event_id, args?.order_id),
  'scheme.clock': () => lab.now(),
  'scheme.advanceClock': (args) => lab.advanceClock(args?.ms),
  'scheme.purge': (args) => lab.purge(args?.keep_ms),
  // Signed webhooks (www/panels/hooks/): secrets drawn here from the
  // browser's cryptographic random source, kept in their own database.
  'hooks.secret': (args) => lab.hookSecret(args?.source, freshKey()),
  'hooks.rotate': (args) => lab.hookRotate(args?.source, freshKey()),
  'hooks.sign': (args) => lab.hookSign(args?.source, args?.id, args?.timestamp, args?.body),
  'hooks.receive': (args) => lab.hookReceive(args?.relayed, args?.verify),
  'hooks.forget': () => lab.hookForget(),
};

// Foreign work (foreign.js): each kind in a worker of its own, stopped at
// its deadline, so no query, file or handler can make a delivery wait.
const LANES = {
  console: new Lane('the console worker'),
  import: new Lane('the import worker'),
  judge: new Lane('the judge worker'),
};

/** Runs `op` in the lane of `work`, with its deadline from Rust for `size` (an import's bytes, the judge's seconds, 0: all). */
function foreign(work, op, args, { size = 0, ticket, onProgress } = {}) {
  return LANES[work].run(op, args, {
    deadlineMs: start.deadlineMs(work, size),
    overDeadline: (progress) => start.overDeadline(work, size, progress?.check ?? 'cases'),
    onProgress,
    ticket,
  });
}

/** Runs `replace` (a reset, a salvage: a new database), then says whether its problem changed. */
function replacing(replace) {
  forgetNotifier();
  try {
    return replace();
  } finally {
    updateProblem(lab);
  }
}

/** A handler judged in the judge's lane: a handler text, or the workshop's handler in Rust. */
function judge(args, workshop) {
  return foreign('judge', 'judge', { workshop, text: args?.text, deliveries: args?.deliveries, seed: args?.seed }, {
    size: judgeLimit(args?.seconds),
    onProgress: judgeProgress,
  });
}

/** A schedule the judge reported, replayed in the judge's lane. */
function replay(args, workshop) {
  const { text, deliveries, seed } = args ?? {};
  return foreign('judge', 'judgeReplay', { workshop, text, deliveries, schedule: scheduleOf(args?.schedule), seed });
}

/** 32 random bytes: the key of a new secret. */
function freshKey() {
  return crypto.getRandomValues(new Uint8Array(32));
}

// The ops that run while the database has a problem: the ways out.
const WITH_PROBLEM = new Set(['exportRaw', 'salvage', 'reset']);

// The receiver of "where the scheme ends". Its memory is another system's,
// not our database's, so it is not in OPFS; but the message ids it
// remembers are our outbox's, which start again at 1 in a fresh or imported
// database, so a new database gets a new receiver (keeping the dedup choice).
let notifierInstance = null;
let notifierDedup = false;
let receiverName = null;
// Unique across workers too (no crypto.randomUUID: it needs a secure context).
const workerStamp = Math.random().toString(36).slice(2, 10);
let receiversMade = 0;

function notifier() {
  if (notifierInstance === null) {
    notifierInstance = new wasm.Notifier(notifierDedup);
    receiverName = nameReceiver();
  }
  return notifierInstance;
}

function nameReceiver() {
  receiversMade += 1;
  return `${workerStamp}-${receiversMade}`;
}

function forgetNotifier() {
  if (notifierInstance !== null) {
    notifierDedup = notifierInstance.dedup;
    notifierInstance.free();
    notifierInstance = null;
  }
}

/** A judge run's limit in seconds as Rust takes it: 0 when not given; Rust refuses what is not a whole number 1..=120. */
function judgeLimit(seconds) {
  if (seconds === undefined) {
    return 0;
  }
  return typeof seconds === 'number' && seconds !== 0 ? seconds : Number.NaN;
}

/** The judge's progress, as each check starts: an announcement to the page. */
function judgeProgress({ done, total, check }) {
  self.postMessage({ type: 'judgeProgress', done, total, check });
}

/** A schedule as Rust takes it: delivery indexes 0..2, at most 10,000 of them. */
function scheduleOf(value) {
  if (!Array.isArray(value) || value.length > 10_000 || !value.every((i) => i === 0 || i === 1 || i === 2)) {
    const text = 'a schedule is a list of delivery indexes 0, 1 or 2';
    throw problem('invalid_input', 'other', text, { text }, 'schedule');
  }
  return Uint32Array.from(value);
}

function race() {
  raceLab ??= new wasm.RaceLab(2);
  return raceLab;
}

function deliveryIndex(value) {
  if (!Number.isInteger(value) || value < 0) {
    throw problem('invalid_input', 'unknown_delivery', 'invalid delivery: expected 0, 1 or 2', {}, 'deliveries');
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
  throw problem('invalid_input', 'not_bytes', 'invalid file: expected the bytes of a .sqlite3 file', {}, 'file');
}

let lab = null;
// Once set, the worker is unusable and every request is answered with it.
let failure = null;
// Why the stored database cannot be used (Rust's `Lab.problem`), or null.
// While set, only WITH_PROBLEM ops run; the rest are answered with it.
let problemNow = null;

const opened = open().then(
  ({ opened: database, fallback, wasmAt }) => {
    lab = database;
    problemNow = lab.problem;
    const at = { script: scriptAt, wasm: wasmAt, opened: performance.timeOrigin + performance.now() };
    const ready = { type: 'ready', storage: lab.storage, stack: lab.stack, start: { at, ...lab.startTimes } };
    self.postMessage({ ...ready, ...(fallback && { fallback }), ...(problemNow !== null && { problem: problemNow }) });
  },
  (thrown) => {
    failure = asErrorObject(thrown, 'open_failed', 'cannot open the database');
    self.postMessage({ type: 'fatal', error: failure });
  },
);

// Lab calls are synchronous, so requests are answered strictly one after
// another, in arrival order; "busy" frames each run of them.
serve(handlersFor(inTheirModule(HANDLERS)), {
  ready: opened,
  refuse: (request) => failure ?? (problemNow !== null && !WITH_PROBLEM.has(request.op) ? problemNow : null),
  asError: crashed,
  onBusy: (busy) => self.postMessage({ type: 'busy', busy }),
  background: (op) => OPS[op]?.background === true,
});

// Opens the database: OPFS if asked for and possible, else memory with the
// reason. A damaged or foreign database file does not make `Lab.open` throw
// (it becomes `lab.problem`); any other storage error is fatal: falling back
// to memory would hide the reader's data.
async function open() {
  await start.default();
  const wasmAt = performance.timeOrigin + performance.now();
  const { Lab } = start;
  if (storage !== 'opfs') {
    return { opened: await Lab.open(DATABASE, storage), wasmAt };
  }
  const missing = opfsMissing(self);
  if (missing !== null) {
    return { opened: await Lab.open(DATABASE, 'memory'), fallback: missing, wasmAt };
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      return { opened: await Lab.openWithJournal(DATABASE, 'opfs', journal), wasmAt };
    } catch (thrown) {
      if (heldByAnotherWorker(thrown)) {
        if (attempt === OPEN_ATTEMPTS) {
          throw inUse(thrown);
        }
        self.postMessage({ type: 'waiting', attempt, attempts: OPEN_ATTEMPTS });
        await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS * attempt));
      } else if (isErrorObject(thrown) && thrown.code === 'opfs_unavailable') {
        return { opened: await Lab.open(DATABASE, 'memory'), fallback: thrown, wasmAt };
      } else {
        throw thrown;
      }
    }
  }
}

// The page's wasm is two modules of one crate (Cargo.toml, `full`): the
// database opens in the start module (www/pkg/: the core, deliveries by the
// article's handler, the tables), and the first op the start module cannot
// run (ops.js's `full`, or a delivery by a mistaken handler) loads the full
// module and hands the database over to it: closed and its OPFS pool paused
// in the start module (Lab.release), then opened in the full one — in memory,
// its bytes carried over. Every op from then on runs there; an op that arrives
// while the hand-over is under way (after a background op began it) waits for
// it to end.
let wasm = start;
// The hand-over under way or done (a promise), or null.
let handing = null;

function inTheirModule(handlers) {
  const needsFull = (op, args) =>
    OPS[op]?.full === true || (!OPS[op]?.reads && OPS[op]?.options?.includes('handler') && (args?.handler ?? 'atomic') !== 'atomic');
  const wrapped = Object.entries(handlers).map(([op, run]) => [
    op,
    (args, context) => {
      if (wasm === start && needsFull(op, args)) {
        return handOver().then(() => run(args, context));
      }
      if (wasm === start && handing !== null) {
        return handing.then(
          () => run(args, context),
          () => run(args, context),
        );
      }
      return run(args, context);
    },
  ]);
  return Object.fromEntries(wrapped);
}

function handOver() {
  handing ??= reopenInFull().catch((thrown) => {
    handing = null;
    throw thrown;
  });
  return handing;
}

// The full module, loaded and instantiated once (the database stays where it is).
let fullModule = null;
function loadFull() {
  if (fullModule === null) {
    fullModule = import('../pkg-full/inbox_lab.js').then(async (full) => {
      await full.default();
      return full;
    });
    fullModule.catch(() => {
      fullModule = null; // a failed fetch may be tried again
    });
  }
  return fullModule;
}

async function reopenInFull() {
  const full = await loadFull();
  const { storage: where } = lab;
  const bytes = where === 'memory' ? lab.snapshot() : null;
  lab.release();
  let reopened;
  try {
    reopened = await (where === 'opfs' ? full.Lab.openWithJournal(DATABASE, 'opfs', journal) : full.Lab.open(DATABASE, 'memory'));
    if (bytes !== null) {
      reopened.adopt(bytes);
    }
  } catch (thrown) {
    // Closed here, not open there: no op can run. Every commit was done before
    // the release, so the page restarts this worker (`crashed`) and loses nothing.
    throw crashed(new Error(`the database could not be handed to the full module: ${thrown?.message ?? thrown}`));
  }
  lab.free();
  lab = reopened;
  wasm = full;
  updateProblem(lab);
}

// After a request that can change it: tell the page when the database's
// problem changed (before that request's reply, so the page's state is
// current when the reply's promise settles).
function updateProblem(opened) {
  const now = opened.problem;
  if (JSON.stringify(now) !== JSON.stringify(problemNow)) {
    problemNow = now;
    self.postMessage({ type: 'problem', problem: now });
  }
}

function inUse(error) {
  const seconds = String((OPEN_RETRY_MS * OPEN_ATTEMPTS * (OPEN_ATTEMPTS - 1)) / 2000);
  return problem(
    'storage',
    'in_use',
    `the database is held by another tab, window or worker of this page and was not released within ${seconds} s; ` +
      `close the other inbox-lab tabs and reload (${error.message})`,
    { seconds, detail: error.message },
  );
}

// What an op threw, as the reply's error. Rust's error objects are answers;
// anything else is a trap or a bug, and a trap leaves Rust's memory in an
// unknown state (a lock half taken, a connection mid-statement), so no
// further call may use this instance. The open transaction never committed:
// the next worker's connection rolls it back, so retrying the request is safe.
function crashed(thrown) {
  if (isErrorObject(thrown)) {
    return thrown;
  }
  failure = asErrorObject(thrown, 'crashed', 'the database worker crashed and is being restarted');
  lab = null;
  self.postMessage({ type: 'crashed', error: failure });
  return failure;
}
