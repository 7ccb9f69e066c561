// The benchmark worker: times the real apply path (Rust `inbox_lab::apply`
// through `Bench`, bench/src/wasm.rs) on OPFS, one event per transaction.
//
// It is a dedicated module worker of its own, with its own OPFS pool
// (`.inbox-lab-bench`), so it never touches the reader's database and can run
// while the page's database worker holds that one. Each run opens a fresh
// database for one setting and deletes it afterwards.
//
// Timing: `performance.now()` around each `bench.apply(i)` call, which takes
// an integer and returns a boolean, so what is timed is the transaction, not
// the conversion of JavaScript objects. Outside a cross-origin-isolated page
// browsers coarsen `performance.now()` (Chromium: to 0.1 ms), so per-event
// latencies below that are quantised; totals over many events are not. The
// reply reports the resolution seen (`timer_resolution_ms`).
//
// ## Message protocol
//
// The one shape of www/lib/rpc.js (a request `{id, op, args}`, progress
// messages, exactly one reply), answered by its `serve`. The ops:
//
//   {id, op: "run", args: {setting, events, coalesce}}
//       setting "delete-full" | "wal-full" | "wal-normal"; events 1..=1,000,000.
//       Delivers events 0..events-1 (each applied), then every one again
//       (each a duplicate), then checks what the database holds. The
//       database is opened straight on the OPFS pool (as the page's worker
//       opened its own before), or with `coalesce: true` through the write-coalescing
//       shim (src/storage/coalesce.rs), as the page runs since issue 16.
//   {id, op: "profile", args: {setting, events, asPage?}}
//       The same new events through the timing shim (bench/src/timing.rs):
//       where each commit's time goes, per file and storage call. Slower than
//       "run" by the shim's clock reads, so never used for throughput. With
//       `asPage: true`, as the page's worker delivers: write coalescing over
//       the timing shim, and each delivery's steps, verdict and JS answer.
//
// Worker → page:
//
//   {id, type: "progress", done, total}   while a run goes on (about 50 per pass, 100 per run)
//   {id, ok: true, result}                once, at the end:
//       result {engine: "inbox-lab", variant: "page" | "coalesce", setting,
//               settings: {sqlite_version, journal_mode, locking_mode, synchronous,
//               page_size}, timer_resolution_ms, apply: SUMMARY, duplicate: SUMMARY,
//               tally: {balance, inbox, last_receipt},
//               writes: {writes_in, writes_out} per new event (coalesce only)}
//       SUMMARY {events, total_ms, events_per_s, p50_ms, p99_ms, max_ms}
//       for "profile": result {engine: "inbox-lab", setting, events, total_ms,
//               rows: [{file: "db" | "journal" | "wal", op, calls, total_ms}]}
//   {id, ok: false, error}   once, instead, on any failure (www/lib/problem.js)
//
// `bench/official-worker.mjs` answers the same protocol for the official
// SQLite WASM build, so the two are driven and reported alike.

// The bench's own build of the wasm (built with the bench feature; the page's
// pkg/ has no `Bench`).
import init, { Bench } from '../../pkg-bench/inbox_lab.js';
import { asErrorObject, invalid, problem } from '../../lib/problem.js';
import { serve } from '../../lib/rpc.js';
import { checkTally, timed } from './timing.js';

const MAX_EVENTS = 1_000_000;

const started = init();

// Requests run one after another, in arrival order (rpc.js).
serve(
  new Map([
    [
      'run',
      async (args, { progress }) =>
        run(String(args?.setting), await eventsOf(args), args?.coalesce === true, (done, total) => progress({ done, total })),
    ],
    ['profile', async (args) => profile(String(args?.setting), await eventsOf(args), args?.asPage === true)],
  ]),
  { asError: (thrown) => asErrorObject(thrown, 'bench_failed', 'the bench failed') },
);

// The number of events asked for, once the wasm is ready.
async function eventsOf(args) {
  const events = args?.events;
  if (!Number.isInteger(events) || events < 1 || events > MAX_EVENTS) {
    throw invalid('events', `must be an integer in 1..=${MAX_EVENTS}`);
  }
  await started;
  return events;
}

async function run(setting, events, coalesce, progress) {
  const bench = await Bench.open(setting, coalesce);
  try {
    const settings = bench.settings();
    const total = events * 2;
    bench.takeWrites();
    const deliver = (i) => (bench.apply(i) ? 'applied' : 'duplicate');
    const apply = timed(deliver, events, 'applied', (done) => progress(done, total), failed);
    const [writesIn, writesOut] = bench.takeWrites();
    const duplicate = timed(deliver, events, 'duplicate', (done) => progress(events + done, total), failed);
    const tally = bench.tally();
    checkTally(tally, events, failed);
    return {
      engine: 'inbox-lab',
      variant: coalesce ? 'coalesce' : 'page',
      setting,
      settings,
      timer_resolution_ms: timerResolution(),
      apply,
      duplicate,
      tally,
      writes: coalesce ? { writes_in: writesIn / events, writes_out: writesOut / events } : null,
    };
  } finally {
    bench.close();
    bench.free();
  }
}

async function profile(setting, events, asPage) {
  const bench = await Bench.openProfiled(setting, asPage);
  try {
    return { engine: 'inbox-lab', ...bench.profile(events) };
  } finally {
    bench.close();
    bench.free();
  }
}

// The smallest non-zero step of performance.now() seen in a short spin.
function timerResolution() {
  let smallest = Infinity;
  let last = performance.now();
  const until = last + 20;
  while (last < until) {
    const now = performance.now();
    if (now > last) {
      smallest = Math.min(smallest, now - last);
      last = now;
    }
  }
  return smallest;
}

function failed(detail) {
  return problem('storage', 'bench_failed', `the bench failed: ${detail}`, { detail });
}
