// The crash lab's driver: starts crash workers (crashworker.js), kills them,
// starts new ones, and collects what survived. No DOM here — the panel
// (crashlab.js), the console (`window.inboxCrashLab`) and the tests share it.
// Every verdict is computed in Rust, by the worker that reopened the
// database (src/labs/crash/); this file only passes them on and tallies.
//
// Two experiments:
//
// * `sweep({mode, events, control, writeControl, stop})`: crash at EVERY storage operation
//   of a workload (one apply, or a burst), k = 1 … N. For each k: a worker
//   runs the workload on a fresh copy of a template database and stops at
//   operation k+1 (`stop: "trap"`, the default, or `"spin"` — the same
//   results, but each kill then waits about two seconds for the browser to
//   stop a busy worker); the page terminates it; a new worker reopens the
//   database from OPFS (SQLite's recovery) and classifies it. The summary,
//   counted by Rust from those verdicts, is the same line as
//   `inbox-lab crash-lab` prints:
//   {"mode":…,"crash_points":N,"atomic":N,"partial":0,"lost_acknowledged":0}
//   The tries write through the page's stack: write coalescing over the
//   counting shim over OPFS. The two controls, which must be caught:
//   `control: true` recovers through a lock check that always says "held";
//   `writeControl: "holds-commits"` writes through coalescing that keeps a
//   commit's last bytes past its sync (caught in WAL mode as lost
//   acknowledged events).
//
// * `randomKills({trials, mode, kill})`: a sender streams deliveries; the worker is
//   terminated at a random moment, a new one reopens the database, and the
//   sender resumes, retrying every event it has no answer for. After every
//   kill the new worker checks (`crash::stream::check`): integrity ok, no
//   partial apply, no acknowledged event lost, and the balance equals the
//   sum of the distinct applied events. The stream's events are Rust's too
//   (`crash::stream::event`): the sender names them by index.

import { Caller } from '../../lib/rpc.js';

const WORKER_URL = new URL('./crashworker.js', import.meta.url);
const WASM_URL = new URL('../../pkg-full/inbox_lab_bg.wasm', import.meta.url);

// Every worker would otherwise fetch and compile the same module again;
// compiled once here, it is handed to each new worker.
let compiled = null;
function wasmModule() {
  compiled ??= WebAssembly.compileStreaming(fetch(WASM_URL)).catch((error) => {
    compiled = null;
    throw error;
  });
  return compiled;
}

// A crash worker, opened: an rpc.js Caller whose `onAnnouncement` each
// experiment sets to hear the worker's "ack", "crashed" and "streaming".
// `terminate()` is the kill: the thread stops wherever it is, and requests
// still open are rejected.
async function startWorker(mode, events, stop = 'trap', writeControl = 'none') {
  const module = await wasmModule();
  const worker = new Caller(new Worker(WORKER_URL, { type: 'module' }), { name: 'the crash worker' });
  try {
    await worker.call('open', { mode, events, stop, module, control: writeControl });
  } catch (error) {
    worker.terminate();
    throw error;
  }
  return worker;
}

/**
 * Runs try k on `worker`: resolves `{crashed, op, acks}` when the worker
 * reports the crash (it then answers nothing, waiting to be killed) or finishes.
 */
function runTry(worker, k) {
  return new Promise((resolve, reject) => {
    let acks = 0;
    worker.onAnnouncement = (message) => {
      if (message.type === 'ack') {
        acks += 1; // the sender heard "200" for one more event
      } else if (message.type === 'crashed') {
        resolve({ crashed: true, op: message.op, acks });
      }
    };
    worker.call('try', { k }).then(() => resolve({ crashed: false, op: null, acks }), reject);
  });
}

/**
 * The sweep. `onPlan(log)` gets the workload's operations before the first
 * crash; `onRow(row)` each crash point's result as it comes:
 * `{k, last, next, crashed, acks, outcome, recovered}` (`last`: the k-th
 * operation, the last that reached storage; `next`: the one that did not).
 * Resolves `{log, rows, summary}`; `summary` is Rust's count of the rows'
 * outcomes, in the shape and key order of `inbox-lab crash-lab`.
 */
export async function sweep({ mode = 'delete', events = 1, control = false, writeControl = 'none', stop = 'trap', onPlan, onRow } = {}) {
  let worker = await startWorker(mode, events, stop, writeControl);
  try {
    const log = await worker.call('prepare');
    onPlan?.(log);
    const rows = [];
    for (let k = 1; k <= log.length; k += 1) {
      const { crashed, op, acks } = await runTry(worker, k);
      if (crashed) {
        worker.terminate();
        worker = await startWorker(mode, events, stop, writeControl);
      }
      const { outcome, recovered } = await worker.call('recover', { acknowledged: acks, control });
      const row = { k, last: log[k - 1], next: op, crashed, acks, outcome, recovered };
      rows.push(row);
      onRow?.(row);
    }
    const summary = await worker.call('summary', { outcomes: rows.map((row) => row.outcome) });
    return { log, rows, summary };
  } finally {
    worker.terminate();
  }
}

/**
 * Random kills. Each trial: a new worker reopens (recovers) the stream's
 * database and checks it against the sender's record (the indexes of the
 * events answered "200"), returning `{partial, lost, balance, expected,
 * applied}`: `partial` and `lost` list what is wrong (both empty when all
 * is well); `expected` is the sum of the amounts of the stream's inbox
 * rows; `applied`, how many of its events are there. The sender
 * resumes from its first unanswered event (earlier answers may have been
 * lost: those retries must come back "duplicate"); the worker is killed
 * mid-stream. Two ways to pick the moment:
 *
 * * `kill: "io"` — at a random storage operation of the stream (uniform over
 *   about `burst` events' worth): the worker stops exactly there, as in the
 *   sweep, and is terminated. Fast: no waiting for a busy worker to die.
 * * `kill: "clock"` — `terminate()` at a random time while the worker is
 *   busy delivering (`gapMs` of busy time between deliveries). The browser
 *   stops a busy worker about two seconds after `terminate()`, wherever it
 *   then is: a transaction's I/O, SQLite's code, or between two deliveries.
 *
 * `loseAnswers`: the share of answers lost on the way back to the sender
 * (besides those a kill swallows), so retries meet events already applied.
 *
 * `onTrial(check)` after each check. Resolves `{mode, kill, trials,
 * killed_mid_stream, acknowledged, applied,
 * retried_after_lost_answer, partial, lost_acknowledged, balance,
 * expected_balance, kill_points, failures}` (`partial` and
 * `lost_acknowledged` count failed checks; `kill_points` counts, for
 * "io", the operation each kill landed before).
 */
export async function randomKills({
  trials = 200,
  mode = 'delete',
  kill = 'io',
  burst = kill === 'io' ? 6 : 3000,
  gapMs = 1,
  maxDelayMs = 50,
  loseAnswers = 0.1,
  random = Math.random,
  onTrial,
} = {}) {
  if (kill !== 'io' && kill !== 'clock') {
    throw new TypeError(`kill must be "io" or "clock", not ${JSON.stringify(kill)}`);
  }
  const acknowledged = new Set();
  const summary = {
    mode,
    kill,
    trials: 0,
    killed_mid_stream: 0,
    acknowledged: 0,
    applied: 0,
    retried_after_lost_answer: 0,
    partial: 0,
    lost_acknowledged: 0,
    balance: 0,
    expected_balance: 0,
    kill_points: {},
    failures: [],
  };
  // Storage operations per applied event: a first guess, then measured on
  // a stream that ran to its end (retried duplicates write nothing).
  let perEvent = 40;
  let next = 0; // the sender's first event without an answer
  let worker = await startWorker(mode, 1);
  try {
    await worker.call('killsReset');
    for (let trial = 0; ; trial += 1) {
      const check = await worker.call('killsOpen', { acknowledged: [...acknowledged] });
      summary.partial += check.partial.length > 0 ? 1 : 0;
      summary.lost_acknowledged += check.lost.length > 0 ? 1 : 0;
      summary.failures.push(...[...check.partial, ...check.lost].map((reason) => `trial ${trial}: ${reason}`));
      summary.applied = check.applied;
      summary.balance = check.balance;
      summary.expected_balance = check.expected;
      onTrial?.({ trial, next, ...check });
      if (trial === trials) {
        break; // the last reopening only checks
      }
      // Events next … next+burst-1 of the stream.
      const events = { first: next, count: burst };
      const run =
        kill === 'io'
          ? await streamUntilCrash(worker, events, 1 + Math.floor(random() * perEvent * burst))
          : await streamUntilKilled(worker, events, random() * maxDelayMs, gapMs);
      // The sender resumes from its first event without an answer, and
      // sends everything after it again too: at-least-once delivery.
      let resume = next;
      for (const { i, outcome } of run.acks) {
        // Applied before, its answer lost: the retry must be a duplicate.
        summary.retried_after_lost_answer += outcome === 'duplicate' ? 1 : 0;
        if (random() < loseAnswers) {
          continue; // lost on the way back: the sender never heard it
        }
        acknowledged.add(next + i);
        if (next + i === resume) {
          resume += 1;
        }
      }
      const applied = run.acks.filter((a) => a.outcome === 'applied').length;
      if (run.operations !== undefined && applied > 0) {
        perEvent = Math.max(1, Math.round(run.operations / applied));
      }
      if (run.op) {
        const point = `${run.op.file} ${run.op.op}`;
        summary.kill_points[point] = (summary.kill_points[point] ?? 0) + 1;
      }
      summary.killed_mid_stream += run.finished ? 0 : 1;
      summary.trials += 1;
      next = resume;
      worker.terminate();
      worker = await startWorker(mode, 1);
    }
    summary.acknowledged = acknowledged.size;
    return summary;
  } finally {
    worker.terminate();
  }
}

/**
 * Streams the events `{first, count}`, crashing at storage operation `crashAfter + 1`.
 * Resolves `{acks: [{i, outcome}], finished, op, operations}`.
 */
function streamUntilCrash(worker, events, crashAfter) {
  return new Promise((resolve) => {
    const acks = [];
    worker.onAnnouncement = (message) => {
      if (message.type === 'ack') {
        acks.push({ i: message.i, outcome: message.outcome });
      } else if (message.type === 'crashed') {
        resolve({ acks, finished: false, op: message.op });
      }
    };
    worker.call('killsStream', { ...events, crashAfter }).then(
      ({ operations }) => resolve({ acks, finished: true, op: null, operations }),
      () => resolve({ acks, finished: false, op: null }),
    );
  });
}

/**
 * Streams the events `{first, count}` and calls `terminate()` `delayMs` after the stream
 * starts. Resolves `{acks: [{i, outcome}], finished}`. Answers the worker
 * sends after `terminate()` are lost, as a dead handler's would be.
 */
function streamUntilKilled(worker, events, delayMs, gapMs) {
  return new Promise((resolve) => {
    const acks = [];
    let finished = false;
    let timer = null;
    let over = false;
    const done = () => {
      if (over) {
        return;
      }
      over = true;
      clearTimeout(timer);
      worker.terminate();
      resolve({ acks, finished });
    };
    worker.onAnnouncement = (message) => {
      if (message.type === 'streaming') {
        timer = setTimeout(done, delayMs);
      } else if (message.type === 'ack') {
        acks.push({ i: message.i, outcome: message.outcome });
      }
    };
    worker.call('killsStream', { ...events, gapMs }).then(
      () => {
        finished = true;
        done();
      },
      () => done(),
    );
  });
}
