// A foreign-work worker: runs what nobody here wrote, away from the database.
//
// The database worker (worker.js) answers deliveries; it must never wait for
// a console query, an imported file or a judged handler, whose cost the
// reader or the file decides — one SQLite call (a LIKE over a megabyte
// string) can take a minute, and no step counter reaches inside it. So the
// database worker starts workers like this one (foreign.js, one per kind of
// work) and terminates one that runs past its deadline. This worker holds no
// database of its own: a copy comes in as bytes, a rebuilt database goes out
// as bytes.
//
// Ops (www/lib/rpc.js's shape; worker.js documents what the page sees):
//
//   op "query"       args {copy: Uint8Array, sql}  one console query on the copy
//                    (Rust: queryCopy) → {columns, rows, truncated, truncated_values}
//   op "rebuild"     args {file: Uint8Array}  an imported file checked and its rows
//                    rebuilt in a fresh database (Rust: rebuildImport) →
//                    {bytes: Uint8Array, report}
//   op "judge"       args {text, deliveries, seed} or {workshop: true, deliveries, seed}: the judge
//                    (Rust: judgeHandler, judgeWorkshop), with a progress message
//                    {done, total, check} as each check starts → its report
//   op "judgeReplay" args {text, deliveries, schedule, seed} or {workshop: true, …} → the replay
//
// Announcement: {type: "ready"} once it can run requests.
//
// A trap (a Rust panic) leaves this instance unusable: its reply is a storage
// error with code "crashed", and foreign.js replaces the worker.

import init, { judgeHandler, judgeWorkshop, queryCopy, rebuildImport, replayHandler, replayWorkshop } from '../pkg-full/inbox_lab.js';
import { asErrorObject } from '../lib/problem.js';
import { serve } from '../lib/rpc.js';

const OPS = new Map([
  ['query', (args) => queryCopy(args.copy, args.sql)],
  ['rebuild', (args) => rebuildImport(args.file)],
  ['judge', (args, { progress }) =>
    args.workshop === true
      ? judgeWorkshop(args.deliveries, progress, args.seed)
      : judgeHandler(args.text, args.deliveries, progress, args.seed)],
  ['judgeReplay', (args) =>
    args.workshop === true
      ? replayWorkshop(args.deliveries, args.schedule, args.seed)
      : replayHandler(args.text, args.deliveries, args.schedule, args.seed)],
]);

// Announced once the wasm is loaded (or failed to load: then every request
// fails at once), so foreign.js counts a job's deadline from here.
const ready = init().finally(() => self.postMessage({ type: 'ready' }));

serve(OPS, {
  ready,
  asError: (thrown) => asErrorObject(thrown, 'crashed', 'the foreign-work worker crashed'),
});
