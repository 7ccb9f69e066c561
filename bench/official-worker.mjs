// The benchmark's peer: the same workload on the official SQLite WASM build
// (`@sqlite.org/sqlite-wasm` 3.54.1-build1, installed by npm into
// bench/node_modules), through its own JavaScript API and its own OPFS
// "opfs-sahpool" VFS, in a dedicated worker like ours.
//
// `cargo xtask bench` serves this file as /www/official/worker.mjs next to
// the package's `index.mjs` and `sqlite3.wasm` and the generated `core-sql.mjs`; it is never part of the page.
//
// The transaction is src/core/apply.rs's, statement for statement (the same SQL
// text, generated from the core into ./core-sql.mjs): BEGIN IMMEDIATE, the INSERT ... ON CONFLICT DO NOTHING
// that decides, then either the credit (UPDATE ... RETURNING balance), the
// receipt counter and the receipt, or the read of the stored payload, then
// COMMIT; ROLLBACK on any error. Statements are prepared once and reused, the
// way the official API is meant to be used for a hot path (and the way our
// apply path caches them), so the comparison is engine and storage, not
// statement compilation.
//
// Same protocol (the shape of www/lib/rpc.js) and result shape as
// www/panels/bench/benchworker.js:
//   page → worker {id, op: "run", args: {setting, events}}
//   worker → page {id, type: "progress", done, total}, then
//                 {id, ok: true, result} | {id, ok: false, error: {kind, message}}
//   result.engine is "official".

import sqlite3InitModule from './index.mjs';
import { SCHEMA, STATEMENTS } from './core-sql.mjs';
// www/panels/bench/timing.js: the loop, percentiles and tally check the page's bench worker uses.
import { checkTally, timed } from '../panels/bench/timing.js';

const POOL = { name: 'official-bench', directory: '.official-bench', initialCapacity: 16, clearOnInit: true };
const PAGE_SIZE = 8192; // as inbox_lab_bench::PAGE_SIZE
const MAX_BALANCE = 2 ** 53 - 1;

const SETTINGS = {
  'delete-full': { locking_mode: 'normal', journal_mode: 'delete', synchronous: 'full' },
  'wal-full': { locking_mode: 'exclusive', journal_mode: 'wal', synchronous: 'full' },
  'wal-normal': { locking_mode: 'exclusive', journal_mode: 'wal', synchronous: 'normal' },
};

// The schema and the statements of the core (src/core/schema.rs, src/core/apply.rs), generated
// by the native bench (`--official-sql`) into ./core-sql.mjs, so they cannot drift from ours.
const [bumpSeq, writeReceipt] = STATEMENTS.store_receipt;
const SQL = {
  begin: STATEMENTS.begin[0],
  insert: STATEMENTS.insert[0],
  readStored: STATEMENTS.read_stored[0],
  credit: STATEMENTS.credit[0],
  bumpSeq,
  writeReceipt,
  commit: STATEMENTS.commit[0],
};

let pool = null;
let queue = Promise.resolve();

self.addEventListener('message', (event) => {
  const { id, op, args } = event.data ?? {};
  queue = queue.then(() => handle(id, op, args));
});

async function handle(id, op, args) {
  try {
    if (op !== 'run') {
      throw new Error(`unknown op ${JSON.stringify(op)}: expected "run"`);
    }
    if (pool === null) {
      const sqlite3 = await sqlite3InitModule();
      pool = { sqlite3, util: await sqlite3.installOpfsSAHPoolVfs(POOL) };
    }
    const result = run(String(args?.setting), args?.events, (done, total) =>
      self.postMessage({ id, type: 'progress', done, total }),
    );
    self.postMessage({ id, ok: true, result });
  } catch (thrown) {
    self.postMessage({ id, ok: false, error: { kind: 'storage', message: String(thrown?.message ?? thrown) } });
  }
}

function run(setting, events, progress) {
  const want = SETTINGS[setting];
  if (want === undefined) {
    throw new Error(`unknown setting ${JSON.stringify(setting)}`);
  }
  const name = `/bench-${setting}.sqlite3`;
  pool.util.unlink(name);
  const db = new pool.util.OpfsSAHPoolDb(name);
  const statements = [];
  try {
    // As src/core/db.rs and inbox_lab_bench::open configure a connection.
    db.exec(`PRAGMA page_size = ${PAGE_SIZE};
PRAGMA locking_mode = ${want.locking_mode};
PRAGMA journal_mode = ${want.journal_mode};
PRAGMA synchronous = ${want.synchronous};
PRAGMA busy_timeout = 100;
PRAGMA foreign_keys = ON;`);
    db.transaction('IMMEDIATE', () => db.exec(`${SCHEMA}INSERT INTO accounts(id) VALUES (1);`));
    const settings = {
      sqlite_version: db.selectValue('SELECT sqlite_version()'),
      journal_mode: String(db.selectValue('PRAGMA journal_mode')).toLowerCase(),
      locking_mode: String(db.selectValue('PRAGMA locking_mode')).toLowerCase(),
      synchronous: ['off', 'normal', 'full', 'extra'][db.selectValue('PRAGMA synchronous')] ?? 'unknown',
      page_size: db.selectValue('PRAGMA page_size'),
    };
    for (const key of ['journal_mode', 'locking_mode', 'synchronous']) {
      if (settings[key] !== want[key]) {
        throw new Error(`the official build did not take ${key} = ${want[key]}: got ${settings[key]}`);
      }
    }
    const stmt = {};
    for (const [key, sql] of Object.entries(SQL)) {
      stmt[key] = db.prepare(sql);
      statements.push(stmt[key]);
    }
    const deliver = (i) => applyCredit(db, stmt, 'bench', `evt-${String(i).padStart(8, '0')}`, 1, 1);
    const total = events * 2;
    const fail = (detail) => new Error(detail);
    const apply = timed(deliver, events, 'applied', (done) => progress(done, total), fail);
    const duplicate = timed(deliver, events, 'duplicate', (done) => progress(events + done, total), fail);
    const tally = {
      balance: db.selectValue('SELECT balance FROM accounts WHERE id = 1'),
      inbox: db.selectValue('SELECT count(*) FROM inbox'),
      last_receipt: db.selectValue('SELECT last_seq FROM receipt_counter WHERE id = 1'),
    };
    checkTally(tally, events, fail);
    return { engine: 'official', setting, settings, timer_resolution_ms: null, apply, duplicate, tally };
  } finally {
    for (const s of statements) {
      s.finalize();
    }
    db.close();
    pool.util.unlink(name);
  }
}

// One delivery: src/core/apply.rs's transaction, with the official API.
function applyCredit(db, stmt, source, eventId, accountId, amount) {
  step(stmt.begin);
  try {
    stmt.insert.bind([source, eventId, accountId, amount]);
    step(stmt.insert);
    let outcome;
    if (db.changes() === 0) {
      stmt.readStored.bind([source, eventId]);
      if (!stmt.readStored.step()) {
        throw new Error('the conflicting row is gone');
      }
      const [storedAccount, storedAmount, seq] = stmt.readStored.get([]);
      stmt.readStored.reset();
      if (storedAccount !== accountId || storedAmount !== amount) {
        throw new Error('payload_conflict');
      }
      if (seq === null) {
        throw new Error('the stored event has no receipt');
      }
      outcome = 'duplicate';
    } else {
      stmt.credit.bind([amount, accountId, MAX_BALANCE]);
      if (!stmt.credit.step()) {
        throw new Error('balance_limit or unknown_account');
      }
      const balance = stmt.credit.get(0);
      stmt.credit.reset();
      stmt.bumpSeq.bind([MAX_BALANCE]);
      if (!stmt.bumpSeq.step()) {
        throw new Error('receipt_limit');
      }
      const seq = stmt.bumpSeq.get(0);
      stmt.bumpSeq.reset();
      stmt.writeReceipt.bind([seq, balance, source, eventId]);
      step(stmt.writeReceipt);
      outcome = 'applied';
    }
    step(stmt.commit);
    return outcome;
  } catch (error) {
    for (const s of Object.values(stmt)) {
      s.reset();
    }
    if (pool.sqlite3.capi.sqlite3_get_autocommit(db.pointer) === 0) {
      db.exec('ROLLBACK');
    }
    throw error;
  }
}

function step(statement) {
  statement.step();
  statement.reset();
}

