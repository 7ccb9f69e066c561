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
// When OPFS cannot be used — not a secure context, no OPFS in this browser, or
// the browser refuses it (private windows) — the worker does not give up: it
// opens an in-memory database instead and says why in its `ready` message
// (`fallback`), so the page can warn that nothing will be kept.
//
// Test only: www/db/opfs-refused.js starts this worker in a browser whose
// OPFS refuses to open, so the real install failure and the fallback run; no
// page imports it, so the static build (dist/) holds no test switch.
//
// A stored database that cannot be used — damaged on disk, written by another
// program or a newer inbox-lab, holding a value of the wrong type (Rust's
// health check, src/core/health.rs) — does not stop the worker either: it is
// `ready` with a `problem`. Until that is fixed, only "exportRaw" (keep the
// file as it is), "salvage" (keep what is sound) and "reset" (start afresh)
// run; every other request is answered with the problem (not retryable: the
// same file fails the same way).
//
// Page → worker, the ops (`{id, op, args}`, www/lib/rpc.js):
//
//     op "deliver"     args {event: {source, event_id, account_id, amount},
//                            fault: undefined | null | "after_insert" | "after_update"}
//                      result {outcome: "applied" | "duplicate", http_status: 200,
//                              receipt: {seq, balance_after}, steps, verdict}
//                      `steps`, in the result and in the error alike, is what the
//                      handler ran (src/core/trace.rs): [{op, statements, rows, effect}],
//                      effect "kept" | "rolled_back" | "failed" | "crashed" ("open"
//                      only while a stepped delivery's transaction is); [] when it
//                      was refused before any SQL.
//                      `verdict`, in the result and in the error alike, is what the
//                      delivery really did, judged in Rust from its steps and the
//                      tables before and after (src/labs/verdicts/; shown by
//                      www/lib/verdict.js):
//                        {kind: "correct" | "credited_twice" | "credit_lost" |
//                               "false_duplicate" | "history_rewritten" |
//                               "failed_after_commit" | "unknown",
//                         handler, heard: "applied" | "duplicate" | error kind | "refused",
//                         credits_before, credits (the event's kept credits before and
//                         after it), credits_known (false: the count before is inferred
//                         from the inbox row, e.g. after a reload), kept: {row, credit}
//                         (what this delivery committed), sent: {account_id, amount},
//                         stored_before, stored_after: {account_id, amount, receipt} | null
//                         (the event's inbox row), balance: {account, before, after}}
//     op "deliverMany" args {events: [event, ...] (at most 10,000), handler}
//                      each event delivered as by "deliver" (no fault), one after
//                      another, each in its own transaction, each judged; result
//                      {delivered, outcomes: {applied | duplicate | <error kind>: n},
//                      verdicts: {correct | credited_twice | ...: n}}, counted by Rust.
//                      One request for many deliveries: the burst of "N different
//                      events" sends batches of them, so the worker's time goes to the
//                      commits, not to a message per event.
//     op "deliverJson" args {text, fault}  the event as JSON text, e.g. pasted:
//                      '{"source": "a", "event_id": "e", "account_id": 1, "amount": 5}';
//                      exactly these four fields, plain integers. Result as "deliver".
//     op "checkDelivery" args {event, handler, fault}  a share link's delivery checked by the
//                      rules "deliver" applies first (handler and fault by name, the event's
//                      fields), touching no database: result null, or the invalid_input
//                      error "deliver" would answer (www/panels/share/replay.js)
//     op "tables"      args none   result {accounts: [{id, balance}],
//                                          inbox: [{source, event_id, account_id,
//                                                   amount, receipt}]}
//     op "reset"       args none   result undefined (a fresh database: account 1, balance 0).
//                      Deletes the file, journal and WAL first, so it works whatever the
//                      file holds; it clears the database's problem (announced first:
//                      {type: "problem", problem: null})
//     op "exportRaw"   args none   result Uint8Array, the stored file exactly as it is ("export
//                      as is"; with a healthy database open, the same as "export")
//     op "salvage"     args none   "keep what is sound", for a database with a problem: its
//                      rows that pass the import's checks, rebuilt in a fresh database (the
//                      problem then cleared, announced first as for "reset"): result {kept:
//                      {accounts, inbox, outbox, orders, version, ignored}, dropped: [error, ...]}
//                      (each row left out, as the error an import would have answered)
//     op "addAccount"  args {account_id}   result true if created, false if it existed
//     op "stepStart"   args {event, fault}  step mode: a delivery that runs one statement
//                      per "stepNext"; result {ran: null, next: {step, statements},
//                      outcome: null, steps: []}
//     op "stepNext"    args none   result {ran, next, outcome, steps, verdict?}; `next` null
//                      once committed; `steps` every step so far, as for "deliver"; an
//                      error carries its `steps` too. Once the delivery has ended
//                      (committed or failed) the result or error carries its `verdict`,
//                      as for "deliver"
//     op "stepThrow"   args none   the stepped handler throws: rolled back; always an error
//                      {kind: "simulated_crash", steps, verdict}. While a stepped delivery is open, other
//                      writes answer `busy` (it holds the write lock).
//     op "query"       args {sql, ticket?}  one read-only statement (src/labs/tools/console.rs):
//                      result {columns, rows, truncated, truncated_values: [{row, column, bytes}]}.
//                      `rows` are arrays of null, numbers and text (blobs as x'0A1B', integers
//                      past 2^53-1 as text); at most 500 rows and 4 MiB of text in all
//                      (`truncated`: rows were left out). A text or blob longer than 10,000
//                      characters is cut: its cell holds the beginning and `truncated_values`
//                      lists it, with the whole value's size in bytes. It runs on a copy of
//                      the database (taken as the query arrives) in the console's own worker
//                      (foreign.js), never here — only a bare pragma reading a setting of this
//                      connection (`PRAGMA journal_mode`) is answered here — within a budget
//                      (2 s or 10^8 SQLite steps) that the console worker is terminated at,
//                      whatever the query does: invalid_input errors, field "sql", codes
//                      query_budget, value_too_big (a value over 1 MiB), result_too_big
//                      (column names alone over the 4 MiB a result may hold), query_memory
//                      (SQLite's 512 MiB heap limit). Requests after it do not wait for it.
//     op "cancel"      args {tickets: [string]}  stops the queries with these tickets, waiting
//                      or running (their console worker is terminated): each is answered
//                      invalid_input / query_cancelled. Result {cancelled: n}
//     op "export"      args none   result Uint8Array, the database as a .sqlite3 file
//     op "import"      args {bytes: Uint8Array}  replaces the database with the file's rows,
//                      rebuilt in a fresh inbox-lab database (the file's schema is never
//                      adopted): result {accounts, inbox, outbox, orders, version, ignored:
//                      ["trigger name", ...]}. A file that is not an intact inbox-lab
//                      database: an invalid_input error, field "file", nothing changed. The
//                      file is checked and rebuilt in the import's own worker, within a budget
//                      scaled to its size (2 s + 1 s per MiB, import_budget), and only the
//                      last step — copying the rebuilt database in, one transaction — runs
//                      here: requests after it do not wait for the check, and what they wrote
//                      before that step is replaced with everything else.
//     op "applySource" args none   the Rust step mode runs, as built into this wasm
//                      (src/core/source.rs): result {path: "src/core/apply.rs", text,
//                      steps: [{step, first, last}]} (each step's lines, 1-based, inclusive)
//     op "runScenario" args none   the article's scenario on a scratch database:
//                      result {summary, passed, checks: [{name, expected, got}]}
//     op "raceNew"     args {deliveries: 2 | 3}  the race lab: fresh connections
//     op "raceStart"   args {handler}  every connection delivers the same event by `handler`
//     op "raceStep"    args {delivery: 0 | 1 | 2}  one statement of one delivery: result
//                      {delivery, statements, result: "ran" | "waiting" | "answered" |
//                      "failed", answer?, kind?, message?, committed, steps, next, verdict}
//                      (`steps`: what this delivery ran so far, as for "deliver")
//     op "raceExplore" args {handler}  every interleaving: result {handler, deliveries,
//                      interleavings, double_credits, lost_credits, wrong_answers,
//                      failing_schedule}
//     op "judge"       args {text, deliveries?: 2 | 3, seconds?: 1..120, seed?}  a handler text (docs/handler-language.md),
//                      or {workshop: true, deliveries?} the workshop's handler in Rust (a build
//                      with the feature `workshop`; otherwise an invalid_input error); while it
//                      runs, the announcement {type: "judgeProgress", done, total, check}
//                      as each check ("cases", "faults", "race_2", "race_3", then "done") starts,
//                      judged on an in-memory database of its own (never the reader's), in
//                      the judge's own worker, stopped at its deadline (120 s) with
//                      invalid_input / judge_budget; requests after it do not wait for it:
//                      result {result: "report", report: {handler, verdict, race, faults,
//                      cases, first_failure, stopped?}, crash_sweep: "native_only"} or
//                      {result: "parse_error", code, line, column, en, ru}
//     op "judgeBuiltin" args {name}  a built-in handler's text: result a string
//     op "judgeReplay" args {text, deliveries, schedule: [delivery index, …], seed?}  a schedule the
//                      judge reported, replayed on fresh connections: result {steps: [as
//                      "raceStep" without next/verdict], verdict (null: a delivery still waits)};
//                      {workshop: true, deliveries, schedule} replays the workshop's handler
//     op "judgeHandlers" no args  the handlers a race can be started with: the six built-ins,
//                      then "workshop" when this build has the workshop's handler
//
//   Where the scheme ends (www/panels/scheme-ends/; Rust: src/labs/scheme_ends/). The
//   worker keeps one simulated receiver of notifications, a `Notifier` ("the user's
//   phone": another system, in memory, and the story of the experiments since it
//   started), created on first use without dedup and replaced by "notifierReset",
//   "reset" and "import" (a new worker has a new one too). `receiver` names the current
//   one: a new name is a new receiver.
//     op "notifyDeliver" args {event, strategy: "send_before_commit" | "send_after_commit" |
//                        "outbox", crash: null | "after_send_before_commit" |
//                        "after_commit_before_send"}  delivers with the atomic handler and
//                        notifies the user by `strategy`. Result as "deliver"; a crash is
//                        a simulated_crash error (what was sent stays sent).
//     op "dispatchOne"   args {crash: null | "after_send_before_mark"}  one round of the
//                        outbox dispatcher: send the oldest unsent message, then mark it
//                        sent. Result the message_id sent, or null when none is pending.
//     op "dispatch"      args {crash: boolean}  the page's dispatcher button: drain the
//                        outbox, or send the oldest pending message and die before marking
//                        it. Result {outcome: "drained", sent} or {outcome: "crashed", message_id}
//     op "redeliver"     args {event}  the retention experiment's delivery (atomic handler):
//                        result as "deliver" without steps, plus applied_times, how often
//                        this receiver's story saw the event applied (2: applied AGAIN)
//     op "effects"       args none  result {receiver, dedup, shown, outbox, verdicts:
//                        [{source, event_id, credited, shown, verdict: "once" | "phantom" |
//                        "lost" | "pending" | "duplicate" | "nothing"}], resent: [{message_id,
//                        sends, shown}]}: the side-effect experiment with Rust's verdicts
//     op "receivedAt"    args {source, event_id}  result the lab time its inbox row was
//                        received, or null (none: not delivered, or purged)
//     op "notifierReset" args {dedup: boolean}  a new, empty receiver that deduplicates by
//                        message id or not. Result {receiver, dedup}
//     op "shown"         args none  result {receiver, dedup, shown: [{message_id, account_id,
//                        amount}]}: every notification the user saw, in order
//     op "outbox"        args none  result [{message_id, source, event_id, account_id,
//                        amount, sent_at: null | ms}]
//     op "activate"      args {source, event_id, order_id}  "activate order once": result
//                        {outcome: "activated" | "already_active" | "duplicate",
//                        by_source?, by_event_id?, first?, http_status: 200}
//     op "clock"         args none  result the lab clock, in simulated ms
//     op "advanceClock"  args {ms}  moves the lab clock forward; result the new time
//     op "purge"         args {keep_ms}  deletes inbox rows received more than keep_ms ago,
//                        in batches of 100, each its own transaction; result how many
//
//   Signed webhooks (www/panels/hooks/; Rust: src/labs/webhooks/, src/wasm/hooks.rs).
//   The secrets live in their own database file, never exported, imported or reset.
//     op "hookSecret"  args {source}  result {source, secret: "whsec_..."}: the current
//                      secret, made from 32 random bytes the first time
//     op "hookRotate"  args {source}  result as "hookSecret": a new current secret; the old
//                      one keeps verifying until the next rotation
//     op "hookSign"    args {source, id, timestamp, body}  result "v1,<base64>": the
//                      signature the source's current secret gives (the page plays the
//                      genuine provider)
//     op "hookForget"  args none  deletes every secret (their database, whatever it holds);
//                      result undefined
//     op "hookReceive" args {relayed: {source, headers, body_base64}, verify}  a webhook
//                      the server relayed: verified (unless verify === false), then
//                      delivered; result {status, body, event, steps}
//
//   "deliver" also takes `handler` ("atomic", the default, or one of the race
//   lab's mistakes: no_dedup, check_then_act, two_transactions,
//   insert_or_ignore, insert_or_replace). The event is validated by the same
//   rules whichever the handler: an invalid one is invalid_input, no SQL run.
//
//   `id` is any value the page chooses; the worker only echoes it. Values are
//   passed to Rust exactly as received: validation is Rust's job, so the page
//   must not coerce anything (`amount: "500"` is an error, not 500).
//
// Worker → page, exactly one reply per request (www/lib/rpc.js), an unknown op
// (invalid_input / unknown_op) included; an error reply's `error` is
// {kind, code, message, http_status, retryable, params, field?}:
//
//   `kind` is one of Rust's error kinds (invalid_input, payload_conflict,
//   unknown_account, balance_limit, busy, simulated_crash, storage);
//   `code` says why within the kind and `params` holds the values the
//   message mentions (the page translates `error.<kind>.<code>`, see
//   www/lib/problem.js); `field` names the input at fault for invalid_input.
//
// Worker → page, announcements (no `id`):
//
//   {type: "ready", storage, stack}  the database is open; `storage` is "opfs" or "memory";
//                                 `stack` {vfs, journal_mode, synchronous} as SQLite reports
//                                 them (null while the database cannot be used)
//   {type: "ready", storage, problem: error}
//                                 the worker runs, but the stored database cannot be used:
//                                 `problem` says why (kind storage, code corrupt, unusable,
//                                 ...). Only "exportRaw", "salvage" and "reset" run; every other
//                                 request is answered with `problem`.
//   {type: "problem", problem: error | null}
//                                 the database's problem changed: null after a "reset"
//                                 that worked (sent before that request's reply).
//   {type: "ready", storage: "memory", fallback: error}
//                                 OPFS was asked for but cannot be used: `fallback` is
//                                 the error saying why (code insecure_context, no_opfs
//                                 or opfs_unavailable); the database is in memory.
//   {type: "waiting", attempt, attempts}
//                                 the database file is still held by another worker
//                                 (NoModificationAllowedError: a reload racing the old
//                                 worker, or the previous owner tab closing); retrying.
//                                 After `attempts` tries: fatal, code "in_use".
//   {type: "fatal", error}        the storage could not be opened at all (an unknown
//                                 `storage`, the file held by another tab: in_use).
//                                 Every request, queued or later, is answered with
//                                 this error. (A bad database file is not fatal: see
//                                 `problem` above.)
//   {type: "crashed", error}      the WebAssembly instance trapped (a Rust panic) or
//                                 threw something that is not one of its error
//                                 objects. It cannot be trusted any more: the request
//                                 that hit it and every later one are answered with a
//                                 storage error, and the page must terminate this
//                                 worker and start a new one.
//   {type: "busy", busy: bool}    true before handling requests, false once none wait,
//                                 so the page can show that work is going on.
//
// Requests that arrive while the database is still opening wait, and are
// handled, in order, once it is open.

import init, {
  Lab,
  Notifier,
  RaceLab,
  applySource,
  builtinHandler,
  checkDelivery,
  deadlineMs,
  handlerNames,
  overDeadline,
  readsOnlySettings,
} from '../pkg/inbox_lab.js';
import { asErrorObject, isErrorObject, opfsMissing, problem, queryCancelled } from '../lib/problem.js';
import { serve } from '../lib/rpc.js';
import { Lane } from './foreign.js';

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

const OPS = new Map([
  ['deliver', (args) => lab.deliver(args?.event, args?.fault, args?.handler)],
  ['deliverMany', (args) => lab.deliverMany(args?.events, args?.handler)],
  ['deliverJson', (args) => lab.deliverJson(args?.text, args?.fault)],
  // Rust's `undefined` arrives as undefined; the protocol says null.
  ['checkDelivery', (args) => checkDelivery(args?.event, args?.handler, args?.fault) ?? null],
  ['tables', () => lab.tables()],
  ['reset', () => replacing(() => lab.reset())],
  ['exportRaw', () => lab.exportRaw()],
  ['salvage', () => replacing(() => lab.salvage())],
  ['addAccount', (args) => lab.addAccount(args?.account_id)],
  ['stepStart', (args) => lab.stepStart(args?.event, args?.fault)],
  ['stepNext', () => lab.stepNext()],
  ['stepThrow', () => lab.stepThrow()],
  ['query', (args) => {
    const sql = String(args?.sql ?? '');
    if (readsOnlySettings(sql)) {
      return lab.query(sql);
    }
    return foreign('console', 'query', { copy: lab.snapshot(), sql }, { ticket: args?.ticket });
  }],
  ['cancel', (args) => {
    const tickets = Array.isArray(args?.tickets) ? args.tickets : [];
    return { cancelled: LANES.console.cancel(tickets, queryCancelled()) };
  }],
  ['export', () => lab.export()],
  ['import', async (args) => {
    const file = bytesOf(args?.bytes);
    const rebuilt = await foreign('import', 'rebuild', { file }, { size: file.length });
    lab.adopt(rebuilt.bytes);
    forgetNotifier();
    return rebuilt.report;
  }],
  ['runScenario', () => lab.runScenario()],
  ['applySource', () => applySource()],
  ['raceNew', (args) => {
    raceLab?.free();
    raceLab = new RaceLab(args?.deliveries);
  }],
  ['raceStart', (args) => race().start(args?.handler)],
  ['raceStep', (args) => race().step(deliveryIndex(args?.delivery))],
  ['raceExplore', (args) => race().explore(args?.handler)],
  ['judge', (args) =>
    foreign('judge', 'judge', { workshop: args?.workshop === true, text: args?.text, deliveries: args?.deliveries, seed: args?.seed }, {
      size: judgeLimit(args?.seconds),
      onProgress: judgeProgress,
    })],
  ['judgeBuiltin', (args) => builtinHandler(args?.name)],
  ['judgeReplay', (args) =>
    foreign('judge', 'judgeReplay', {
      workshop: args?.workshop === true,
      text: args?.text,
      deliveries: args?.deliveries,
      schedule: scheduleOf(args?.schedule),
      seed: args?.seed,
    })],
  ['judgeHandlers', () => handlerNames()],
  ['notifyDeliver', (args) => notifier().deliver(lab, args?.event, args?.strategy, args?.crash)],
  // Rust's `None` arrives as undefined; the protocol says null.
  ['dispatchOne', (args) => notifier().dispatchOne(lab, args?.crash) ?? null],
  ['dispatch', (args) => notifier().dispatch(lab, args?.crash)],
  ['redeliver', (args) => notifier().redeliver(lab, args?.event)],
  ['effects', () => {
    const story = notifier();
    return { receiver: receiverName, ...story.effects(lab) };
  }],
  ['receivedAt', (args) => lab.receivedAt(args?.source, args?.event_id) ?? null],
  ['notifierReset', (args) => {
    const fresh = new Notifier(args?.dedup); // throws (and keeps the old one) if dedup is not a boolean
    forgetNotifier();
    notifierInstance = fresh;
    receiverName = nameReceiver();
    return { receiver: receiverName, dedup: fresh.dedup };
  }],
  ['shown', () => {
    const receiver = notifier();
    return { receiver: receiverName, dedup: receiver.dedup, shown: receiver.shown() };
  }],
  ['outbox', () => lab.outbox()],
  ['activate', (args) => lab.activate(args?.source, args?.event_id, args?.order_id)],
  ['clock', () => lab.now()],
  ['advanceClock', (args) => lab.advanceClock(args?.ms)],
  ['purge', (args) => lab.purge(args?.keep_ms)],
  // Signed webhooks (www/panels/hooks/): secrets drawn here from the
  // browser's cryptographic random source, kept in their own database.
  ['hookSecret', (args) => lab.hookSecret(args?.source, freshKey())],
  ['hookRotate', (args) => lab.hookRotate(args?.source, freshKey())],
  ['hookSign', (args) => lab.hookSign(args?.source, args?.id, args?.timestamp, args?.body)],
  ['hookReceive', (args) => lab.hookReceive(args?.relayed, args?.verify)],
  ['hookForget', () => lab.hookForget()],
]);

// Foreign work (foreign.js): each kind in a worker of its own, stopped at
// its deadline, so no query, file or handler can make a delivery wait.
const LANES = {
  console: new Lane('the console worker'),
  import: new Lane('the import worker'),
  judge: new Lane('the judge worker'),
};
// The ops whose reply does not hold the requests after them (rpc.js).
const BACKGROUND = new Set(['query', 'import', 'judge', 'judgeReplay']);

/**
 * Runs `op` in the lane of `work` ("console", "import", "judge"), with that
 * work's deadline from Rust: for an import scaled to its `size` in bytes,
 * for the judge `size` seconds (0: its whole budget).
 */
function foreign(work, op, args, { size = 0, ticket, onProgress } = {}) {
  return LANES[work].run(op, args, {
    deadlineMs: deadlineMs(work, size),
    overDeadline: (progress) => overDeadline(work, size, progress?.check ?? 'cases'),
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
    notifierInstance = new Notifier(notifierDedup);
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
  if (raceLab === null) {
    raceLab = new RaceLab(2);
  }
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
  ({ opened: database, fallback }) => {
    lab = database;
    problemNow = lab.problem;
    const ready = { type: 'ready', storage: lab.storage, stack: lab.stack };
    if (fallback) {
      ready.fallback = fallback;
    }
    if (problemNow !== null) {
      ready.problem = problemNow;
    }
    self.postMessage(ready);
  },
  (thrown) => {
    failure = asErrorObject(thrown, 'open_failed', 'cannot open the database');
    self.postMessage({ type: 'fatal', error: failure });
  },
);

// Requests that arrive while the database is still opening wait (`ready`).
// Lab calls are synchronous, so requests are answered strictly one after
// another, in arrival order; "busy" frames each run of them.
serve(OPS, {
  ready: opened,
  refuse: (request) => {
    if (failure !== null) {
      return failure;
    }
    if (problemNow !== null && !WITH_PROBLEM.has(request.op)) {
      return problemNow;
    }
    return null;
  },
  asError: crashed,
  onBusy: (busy) => self.postMessage({ type: 'busy', busy }),
  background: BACKGROUND,
});

// Opens the database: OPFS if asked for and possible, else memory with the
// reason. A damaged or foreign database file does not make `Lab.open` throw
// (it becomes `lab.problem`); any other storage error is fatal: falling back
// to memory would hide the reader's data.
async function open() {
  await init();
  if (storage !== 'opfs') {
    return { opened: await Lab.open(DATABASE, storage) };
  }
  const missing = opfsMissing(self);
  if (missing !== null) {
    return { opened: await Lab.open(DATABASE, 'memory'), fallback: missing };
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      return { opened: await Lab.openWithJournal(DATABASE, 'opfs', journal) };
    } catch (thrown) {
      if (heldByAnotherWorker(thrown)) {
        if (attempt === OPEN_ATTEMPTS) {
          throw inUse(thrown);
        }
        self.postMessage({ type: 'waiting', attempt, attempts: OPEN_ATTEMPTS });
        await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS * attempt));
      } else if (isErrorObject(thrown) && thrown.code === 'opfs_unavailable') {
        return { opened: await Lab.open(DATABASE, 'memory'), fallback: thrown };
      } else {
        throw thrown;
      }
    }
  }
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

function heldByAnotherWorker(thrown) {
  return isErrorObject(thrown) && thrown.message.includes('NoModificationAllowedError');
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
