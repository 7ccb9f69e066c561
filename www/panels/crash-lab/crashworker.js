// The crash lab's worker: a database worker that is meant to be killed.
//
// The crash lab (crashlab.js) proves that SQLite's recovery leaves a commit
// either entirely there or entirely absent, wherever the writer dies. A
// browser cannot kill a thread at an exact instruction, so this worker
// stops itself at the exact storage operation instead: the Rust side
// (`CrashLab` in src/wasm/crash.rs) runs the workload through a VFS shim
// (src/storage/iolog.rs) that lets k operations reach OPFS and, at operation k+1,
// tells the page "crashed" and stops dead: a WebAssembly trap unwinds every
// frame, SQLite's included, without running any of them (or, with
// `stop: "spin"`, it loops forever). Nothing more reaches storage; the page
// then calls `worker.terminate()` — the kill — and starts a NEW worker, which
// reopens the database from OPFS. That reopening is the recovery under test.
// After a crash this worker never answers or calls into WebAssembly again.
//
// Every verdict it answers — a crash point's outcome, the sweep's summary,
// the random-kill check — is computed by Rust (src/labs/crash/) from the
// database it reopened; this file only passes them on.
//
// It keeps its files in an OPFS pool of its own (directory
// `.inbox-lab-crash`), never touching the playground's database, and it is
// a separate dedicated worker because a pool belongs to one worker at a time.
//
// ## Message protocol
//
// Start it with `new Worker(new URL('./crashworker.js', import.meta.url), {type: 'module'})`
// (crashdriver.js does). The messages have the one shape of www/lib/rpc.js,
// answered by its `serve`: a request `{id, op, args}`, handled one at a time,
// in order, and its reply; announcements without an id. The ops:
//
//   op "open"        args {mode: "delete" | "wal", events: 1..29, stop?: "trap" | "spin",
//                          module?: WebAssembly.Module, control?: "none" | "holds-commits"}
//                    Loads the wasm (from `module` if given, saving a compile per
//                    worker), installs the crash pool as this worker's default VFS,
//                    the iolog shims over it and write coalescing on top (the page's
//                    stack; "holds-commits": the coalescing control, which keeps a
//                    commit's last bytes past its sync). Retries while the previous (killed)
//                    worker still holds the pool's access handles.
//                    result {mode, events, attempts} (attempts: how many tries opening took)
//   op "prepare"     A fresh template database (schema, account 1, journal mode,
//                    synchronous=FULL) and one uncrashed run of the workload on a copy,
//                    counting its storage operations.
//                    result [{k, file: "db" | "journal" | "wal" | "other",
//                             op: "open" | "write" | "sync" | "truncate" | "delete",
//                             offset, len}]            (the crash points are 1..length)
//   op "try"         args {k}  A fresh copy of the template, then the workload with the
//                    shim armed to crash after k operations. Announces {type: "ack", i}
//                    after event i committed. At the crash it announces
//                    {type: "crashed", k, op} (op: the operation that did NOT happen)
//                    and never answers: the page must terminate this worker.
//                    If the workload needed no more than k operations: result {crashed: false}.
//   op "recover"     args {acknowledged, control}  Reopens the try's database (SQLite
//                    recovers it) — through the broken lock check if `control` — and
//                    classifies it: result {outcome: "atomic" | "partial" |
//                    "lost_acknowledged", recovered: {integrity, registered, credited,
//                    acknowledged}}
//   op "summary"     args {outcomes: ["atomic" | "partial" | "lost_acknowledged", …]}
//                    (the sweep's outcomes, one per crash point, as "recover" gave them)
//                    result {mode, crash_points, atomic, partial, lost_acknowledged}
//                    (the line `inbox-lab crash-lab` prints, same key order)
//   op "killsReset"  Deletes the random-kill stream's database. result undefined
//   op "killsOpen"   args {acknowledged: [j, …]} (the events the sender heard "200" for)
//                    Opens (creating if needed) the stream's database — after a kill,
//                    this is the recovery — and checks it: result {partial: [String],
//                    lost: [String], balance, expected, applied} (`partial` and `lost`
//                    empty when all is well; `expected`: the sum of the stream's inbox
//                    rows; `applied`: how many of its events are there)
//   op "killsStream" args {first, count, crashAfter?, gapMs?}
//                    Announces {type: "streaming"}, then delivers the stream's events
//                    first … first+count-1 (Rust's `crash::stream::event`: "random-kills",
//                    "kill-<j>", account 1, amount 1 + j % 9) in order with the atomic
//                    handler, announcing {type: "ack", i, outcome} (i from 0) after
//                    each commit. With `crashAfter` it crashes like a "try" after that
//                    many storage operations (announcing {type: "crashed", k, op}); without
//                    it the page kills it at a moment of its choosing. `gapMs`: busy time
//                    between deliveries (the worker never yields, so a kill can land in a
//                    transaction or between two). If it is neither crashed nor killed:
//                    result {delivered: n, operations}
//
// Worker → page, exactly one reply per request — except that a worker that
// crashed ("try", or "killsStream" with `crashAfter`) answers nothing more —
// whose error is an error object (www/lib/problem.js).
// Announcements (no `id`): "ack", "crashed" and "streaming" as above.

import init, { CrashLab } from '../../pkg-full/inbox_lab.js';
import { asErrorObject, heldByAnotherWorker, invalid } from '../../lib/problem.js';
import { serve } from '../../lib/rpc.js';

// A killed worker's OPFS access handles are released once it is really gone:
// at once if it was idle, about two seconds after `terminate()` if it was
// running code. Until then opening the pool fails with
// NoModificationAllowedError. Another tab running the crash lab keeps them
// for as long as it runs, so give up after about twenty seconds.
const OPEN_ATTEMPTS = 40;
const OPEN_RETRY_MS = 25;
const OPEN_RETRY_MAX_MS = 500;

let lab = null;
// Set at a crash point: the WebAssembly instance stopped in the middle of
// SQLite and must never run again; the page is about to terminate us.
let crashed = false;
// Answers nothing, ever: what a crashed worker replies. As rpc.js's `serve`
// answers one request after another, nothing after it is answered either.
const NEVER = new Promise(() => {});

// One request at a time, so an "open" (asynchronous) finishes before the
// next request starts.
serve(
  new Map([
    ['open', open],
    ['prepare', () => lab.prepare()],
    ['try', (args) => runTry(args?.k)],
    ['recover', (args) => lab.recover(args?.acknowledged, args?.control === true)],
    ['killsReset', () => lab.killsReset()],
    ['summary', (args) => lab.summary(args?.outcomes)],
    ['killsOpen', (args) => lab.killsOpen(args?.acknowledged)],
    ['killsStream', (args) => stream(args?.first, args?.count, args?.crashAfter, args?.gapMs)],
  ]),
  {
    refuse: (request) => (lab === null && request.op !== 'open' ? invalid('op', 'send "open" first') : null),
    asError: (thrown) => asErrorObject(thrown, 'crash_worker_failed', 'the crash worker failed'),
  },
);

async function open(args) {
  await init(args?.module instanceof WebAssembly.Module ? { module_or_path: args.module } : undefined);
  let wait = OPEN_RETRY_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      lab = await CrashLab.open(args?.mode, args?.events, args?.stop ?? 'trap', args?.control ?? 'none');
      return { mode: args.mode, events: args.events, attempts: attempt };
    } catch (thrown) {
      if (!heldByAnotherWorker(thrown) || attempt === OPEN_ATTEMPTS) {
        throw thrown;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, OPEN_RETRY_MAX_MS);
    }
  }
}

function runTry(k) {
  if (!Number.isInteger(k) || k < 1) {
    throw invalid('k', 'must be a positive integer');
  }
  return untilCrash(() => {
    lab.runTry(k, (i) => self.postMessage({ type: 'ack', i }), crashHook(k));
    return { crashed: false };
  });
}

function stream(first, count, crashAfter, gapMs) {
  if (!Number.isInteger(first) || first < 0 || !Number.isInteger(count) || count < 0) {
    throw invalid('first', 'first and count must be whole numbers');
  }
  if (crashAfter !== undefined && (!Number.isInteger(crashAfter) || crashAfter < 1)) {
    throw invalid('crashAfter', 'must be a positive integer');
  }
  const gap = Number.isFinite(gapMs) ? gapMs : 0;
  return untilCrash(() => {
    if (crashAfter !== undefined) {
      lab.killsArm(crashAfter, crashHook(crashAfter));
    }
    self.postMessage({ type: 'streaming' });
    for (let i = 0; i < count; i += 1) {
      const reply = lab.killsDeliver(first + i);
      // The sender hears "200" only now, after the commit.
      self.postMessage({ type: 'ack', i, outcome: reply.outcome });
      // Busy, not idle: a worker that yielded would only ever be killed
      // between two tasks, never inside a transaction.
      const until = performance.now() + gap;
      while (performance.now() < until) {
        // spin
      }
    }
    return { delivered: count, operations: lab.killsDisarm() };
  });
}

// Called from inside the storage layer at the crash point, just before the
// WebAssembly instance stops.
function crashHook(k) {
  return (op) => {
    crashed = true;
    self.postMessage({ type: 'crashed', k, op });
  };
}

// Runs `work`; if it stopped at a crash point (the trap surfaces here as an
// exception), never answers.
function untilCrash(work) {
  try {
    return work();
  } catch (thrown) {
    if (crashed) {
      return NEVER;
    }
    throw thrown;
  }
}
