// Foreign work never stalls the inbox: a console query, an imported file and
// a judged handler run in workers of their own (www/db/foreign.js), stopped at
// their deadlines from outside, while deliveries go on.
//
// The claim is causal, not a speed bound: each delivery sent while the
// foreign work runs is answered *before* that work ends (so it did not wait
// for it), and the work ends with its own budget error. The deliveries'
// round trips are printed, as figures.
//
// The slow work is generated, not hand-picked: every SQLite function whose
// time grows with its input, fed each large built string (below), and import
// files of several sizes, page counts and index counts.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { DB_WORKER_SCRIPT, openPage, tables, usePage } from './browser.mjs';

// Large strings, built three ways inside SQLite (the console's values are
// limited to 1 MiB: these stay under it).
const SIZE = 900_000;
const BUILT = {
  printf: (n) => `printf('%.*c', ${n}, 'a')`,
  zeroblob: (n) => `replace(hex(zeroblob(${n / 2})), '0', 'a')`,
  replace: (n) => `replace(printf('%.*c', ${n}, 'x'), 'x', 'a')`,
};
// One call whose time grows with the product of its inputs, on a large string
// `big` of `n` characters 'a': each compares about n²/4 characters in ONE
// SQLite step, where no step counter reaches. The needle of instr/replace is
// half the haystack and found nowhere; the LIKE/GLOB pattern (at most 50,000
// characters, SQLite's limit) matches everywhere but at its end.
const SLOW_CALLS = {
  instr: (big, n) => `instr(${big}, substr(${big}, 1, ${n / 2}) || 'b')`,
  replace: (big, n) => `length(replace(${big}, substr(${big}, 1, ${n / 2}) || 'b', 'c'))`,
  like: (big) => `${big} LIKE '%' || replace(printf('%.*c', 24000, 'x'), 'x', 'a_') || 'b'`,
  glob: (big) => `${big} GLOB '*' || replace(printf('%.*c', 24000, 'x'), 'x', 'a?') || 'b'`,
};
// Where such a call may stand in a query: alone, inside an aggregate or
// another function, in a WHERE clause. (This build of SQLite has no JSON
// functions: json_* is "no such function" here.)
const CONTEXTS = {
  alone: (call) => `SELECT ${call}`,
  group_concat: (call) => `SELECT group_concat(${call}) FROM (SELECT 1 UNION ALL SELECT 2)`,
  printf: (call) => `SELECT printf('%s', ${call})`,
  where: (call) => `SELECT count(*) FROM accounts WHERE ${call} IS NOT NULL`,
};

/** Every slow call on every built string, and the first in every context: [name, sql]. */
function slowQueries() {
  const queries = [];
  for (const [call, slow] of Object.entries(SLOW_CALLS)) {
    for (const [how, build] of Object.entries(BUILT)) {
      queries.push([`${call} over a string built with ${how}`, CONTEXTS.alone(slow(build(SIZE), SIZE))]);
    }
  }
  for (const [where, context] of Object.entries(CONTEXTS).slice(1)) {
    queries.push([`instr inside ${where}`, context(SLOW_CALLS.instr(BUILT.printf(SIZE), SIZE))]);
  }
  return queries;
}

// Import files, generated: inbox-lab's own database (exported by the page)
// with a table of padding rows and as many indexes as asked, at a page size,
// and optionally rows whose index calls instr over large strings (a check
// that spends seconds in each of a few SQLite steps).
const FILE_MAKER = `
import random, shutil, sqlite3, string, sys
src, dst, rows, indexes, page_size, slow = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
shutil.copy(src, dst)
c = sqlite3.connect(dst)
c.execute('PRAGMA journal_mode = DELETE')
c.execute(f'PRAGMA page_size = {page_size}')
columns = max(indexes, 1)
c.execute('CREATE TABLE pad(k INTEGER PRIMARY KEY, ' + ', '.join(f'c{i} TEXT' for i in range(columns)) + ')')
rnd = random.Random(rows)
cells = lambda: [''.join(rnd.choices(string.ascii_letters, k=24)) for _ in range(columns)]
c.executemany('INSERT INTO pad VALUES (?' + ', ?' * columns + ')', ([k, *cells()] for k in range(rows)))
for i in range(indexes):
    c.execute(f'CREATE INDEX pad_{i} ON pad(c{i})')
if slow:
    # The page's SQLite scans these strings for seconds an entry; Python's own
    # instr (str.find, the same answers) makes the file in milliseconds.
    c.create_function('instr', 2, lambda a, b: a.find(b) + 1, deterministic=True)
    c.execute('CREATE TABLE big(a TEXT, b TEXT)')
    c.executemany('INSERT INTO big VALUES (?, ?)', [('a' * 600000, 'a' * 300000 + 'b')] * slow)
    c.execute('CREATE INDEX big_slow ON big(instr(a, b))')
c.commit()
c.execute('VACUUM')
c.close()
`;
const FILES = [
  { rows: 20_000, indexes: 1, pageSize: 4096, slow: 0 },
  { rows: 20_000, indexes: 12, pageSize: 4096, slow: 0 },
  { rows: 60_000, indexes: 4, pageSize: 512, slow: 0 },
  { rows: 200_000, indexes: 2, pageSize: 65536, slow: 0 },
  { rows: 100, indexes: 1, pageSize: 4096, slow: 3 },
];

/** A generated import file (see FILE_MAKER) made from `base`, the page's export. */
async function importFile(base, { rows, indexes, pageSize, slow }) {
  const dir = await mkdtemp(join(tmpdir(), 'inbox-lab-isolation-'));
  try {
    const [src, dst] = [join(dir, 'base.sqlite3'), join(dir, 'file.sqlite3')];
    await writeFile(src, base);
    execFileSync('python3', ['-c', FILE_MAKER, src, dst, ...[rows, indexes, pageSize, slow].map(String)]);
    return await readFile(dst);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Starts foreign work in the page — `work` is {sql}, {file: url} (an import
 * of the bytes served there) or {judge: text, seconds} — and right behind it
 * delivers three new events one after another. Resolves to the work's
 * answer, the deliveries' answers and round trips, and whether each was
 * answered before the work ended.
 */
function alongside(page, work) {
  return page.evaluate(async (work) => {
    const lab = window.inboxLab;
    const file = work.file === undefined ? null : new Uint8Array(await (await fetch(work.file)).arrayBuffer());
    const start = () => {
      if (work.sql !== undefined) {
        return lab.query(work.sql);
      }
      return file !== null ? lab.importDatabase(file) : lab.judge.run(work.judge, 2, { seconds: work.seconds });
    };
    let ended = null;
    const began = performance.now();
    const running = start().then(
      (value) => ({ value }),
      (error) => ({ error }),
    );
    running.finally(() => (ended = performance.now()));
    // Sent right behind it: the database worker has taken the work (and
    // handed it on) before it takes the first delivery.
    const deliveries = [];
    for (let i = 0; i < 3; i += 1) {
      const sent = performance.now();
      const answer = await lab.deliver({ source: 'alongside', event_id: `${began}-${i}`, account_id: 1, amount: 1 });
      deliveries.push({ outcome: answer.outcome, ms: performance.now() - sent, beforeEnd: ended === null });
    }
    const answer = await running;
    return { answer, deliveries, workMs: ended - began };
  }, work);
}

/** Asserts every delivery alongside was applied while the work still ran, and prints the figures. */
function assertNotHeld(name, { deliveries, workMs }) {
  const trips = deliveries.map((d) => d.ms.toFixed(1)).join(', ');
  console.log(`${name}: ran ${workMs.toFixed(0)} ms; deliveries alongside answered in ${trips} ms`);
  assert.deepEqual(
    deliveries.map((d) => [d.outcome, d.beforeEnd]),
    [['applied', true], ['applied', true], ['applied', true]],
    'every delivery was answered while the work still ran',
  );
}

const FILE_URL = '/isolation-test-file.sqlite3';

describe('foreign work never stalls the inbox', { timeout: 1_200_000 }, () => {
  let page;
  usePage(
    {
      open: async (opened) => assert.deepEqual(await openPage(opened), { storage: 'opfs' }),
      beforeEach: (opened) => opened.evaluate(() => window.inboxLab.reset()),
    },
    (opened) => (page = opened),
  );

  for (const [name, sql] of slowQueries()) {
    test(`console: ${name} ends at its budget; deliveries alongside are not held`, async () => {
      const result = await alongside(page, { sql });
      assertNotHeld(name, result);
      assert.equal(result.answer.error?.code, 'query_budget', JSON.stringify(result.answer).slice(0, 300));
      assert.equal((await tables(page)).accounts[0].balance, 3, 'the three deliveries, nothing of the query');
    });
  }

  for (const shape of FILES) {
    const name = `${shape.rows} rows, ${shape.indexes} indexes, pages of ${shape.pageSize} B${shape.slow ? `, ${shape.slow} slow index entries` : ''}`;
    test(`import: a file of ${name} is checked away from the deliveries`, async () => {
      const base = Buffer.from(await page.evaluate(async () => Array.from(await window.inboxLab.exportDatabase())));
      const bytes = await importFile(base, shape);
      await page.route(`**${FILE_URL}`, (route) => route.fulfill({ body: bytes, contentType: 'application/octet-stream' }));
      const result = await alongside(page, { file: new URL(FILE_URL, page.url()).href });
      await page.unroute(`**${FILE_URL}`);
      assertNotHeld(`import of ${name} (${(bytes.length / 2 ** 20).toFixed(1)} MiB)`, result);
      const after = await tables(page);
      if (shape.slow) {
        // Each of its index entries takes seconds to check: stopped at the
        // budget its size gives, and nothing imported.
        assert.equal(result.answer.error?.code, 'import_budget', JSON.stringify(result.answer).slice(0, 300));
        assert.equal(after.accounts[0].balance, 3, 'the deliveries alongside are kept');
      } else {
        // Accepted: the database is the file's (the deliveries made while it
        // was checked are replaced with everything else).
        const padding = [...Array.from({ length: shape.indexes }, (_, i) => `index pad_${i}`), 'table pad'];
        assert.deepEqual(result.answer.value?.ignored.toSorted(), padding.toSorted(), JSON.stringify(result.answer).slice(0, 300));
        assert.deepEqual(after, { accounts: [{ id: 1, balance: 0 }], inbox: [] });
      }
    });
  }

  test('judge: a handler whose statement is slow is stopped at its limit; deliveries alongside are not held', async () => {
    const slow =
      "SELECT instr(printf('%.*c', 900000, 'a'), substr(printf('%.*c', 900000, 'a'), 1, 450000) || 'b')";
    const atomic = await page.evaluate(() => window.inboxLab.judge.builtin('atomic'));
    const text = atomic.replace('BEGIN IMMEDIATE', `${slow}\nBEGIN IMMEDIATE`);
    const result = await alongside(page, { judge: text, seconds: 5 });
    assertNotHeld('judge of a slow handler', result);
    const { error } = result.answer;
    assert.deepEqual([error?.code, error?.field, error?.params.seconds], ['judge_budget', 'handler', '5'], JSON.stringify(result.answer).slice(0, 300));
    // The judge's worker was replaced: the next run is judged as usual.
    const again = await page.evaluate((text) => window.inboxLab.judge.run(text, 2), atomic);
    assert.equal(again.report.verdict, 'correct');
  });

  test('judge: a limit that is not a whole number of seconds from 1 to 120 is refused before anything runs', async () => {
    const refused = await page.evaluate(async () => {
      const text = await window.inboxLab.judge.builtin('atomic');
      return Promise.all(
        [0, 121, 1.5, '5', -1].map((seconds) => window.inboxLab.judge.run(text, 2, { seconds }).catch((error) => [error.field, error.kind])),
      );
    });
    assert.deepEqual(refused, Array(5).fill(['seconds', 'invalid_input']));
  });
});

// The database worker starts in the start module (www/pkg/) and hands its
// database to the full one only for an op that needs it (www/db/ops.js,
// `full`): each hand-over closes and reopens the database, and deliveries wait
// for it. A console query runs in its own worker on a copy, and an export is
// the start module's own, so neither hands the database over; a bare settings
// pragma, which reads this very connection, does.
describe('a console query and an export leave the database where it is', { timeout: 120_000 }, () => {
  let page;
  usePage({ open: (opened) => openPage(opened) }, (opened) => (page = opened));

  test('only a bare settings pragma hands the database to the full module', async () => {
    const worker = page.workers().find((w) => DB_WORKER_SCRIPT.test(w.url()));
    // The full module's wasm, as the database worker fetched it (named
    // inbox_lab_bg.wasm under www/pkg-full/, inbox_lab_full-<hash>.wasm in dist/).
    const fullFetched = async () =>
      (await worker.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name))).some((name) =>
        /pkg-full\/|inbox_lab_full-/.test(name),
      );
    assert.equal(await fullFetched(), false, 'the page started in the start module');
    const counted = await page.evaluate(() => window.inboxLab.query('SELECT count(*) FROM inbox'));
    assert.deepEqual(counted.rows, [[0]]);
    assert.ok((await page.evaluate(async () => (await window.inboxLab.exportDatabase()).length)) > 0);
    assert.equal(await fullFetched(), false, 'a query on a copy and an export ran where the database is');
    const mode = await page.evaluate(() => window.inboxLab.query('PRAGMA journal_mode'));
    assert.equal(mode.rows.length, 1);
    assert.equal(await fullFetched(), true, 'a setting of the live connection is read by the full module');
  });
});
