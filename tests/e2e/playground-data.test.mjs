// The data tools and the SQL console: persistence across a reload, export
// as a download and import of it (a round trip), a bad file refused with the
// current database untouched, and a console that reads but never writes.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import { idle, reloadPage, resetDatabase, reveal, screenshotPath, shownTables, usePage } from './browser.mjs';
import { EXAMPLE, fillSender, press, pressDeliver, restoreSender } from './playground.mjs';

const FRESH = { accounts: [['1', '0']], inbox: [['empty']] };
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

/** Delivers the example and evt-1 from provider-b: two rows, balance 1000. */
async function twoEvents(page) {
  await fillSender(page, EXAMPLE);
  await pressDeliver(page);
  await fillSender(page, { source: 'provider-b' });
  await pressDeliver(page);
  await restoreSender(page);
  return shownTables(page);
}

/** Chooses `file` ({name, buffer}) in the import field and presses Import. */
async function importFile(page, file) {
  await reveal(page, '#import-file');
  await page.setInputFiles('#import-file', { mimeType: 'application/octet-stream', ...file });
  await press(page, '#import-form button[type=submit]');
}

describe('data and the SQL console', { timeout: 240_000 }, () => {
  let page;
  usePage({ beforeEach: resetDatabase }, (opened) => (page = opened));

  test('the tables survive a reload: they live in OPFS', async () => {
    const before = await twoEvents(page);
    await reloadPage(page);
    assert.deepEqual(await shownTables(page), before);
    assert.equal(before.inbox.length, 2);
  });

  test('export downloads inbox-lab.sqlite3; importing it after a reset brings the data back', async () => {
    const before = await twoEvents(page);
    await reveal(page, '#export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    await idle(page);
    assert.equal(download.suggestedFilename(), 'inbox-lab.sqlite3');
    const path = await screenshotPath('exported.sqlite3');
    await download.saveAs(path);
    const bytes = await readFile(path);
    assert.equal(bytes.subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
    assert.match(await page.textContent('#data-note'), new RegExp(`^Exported ${bytes.length} bytes as inbox-lab\\.sqlite3\\.$`));

    await resetDatabase(page);
    assert.deepEqual(await shownTables(page), FRESH);
    await importFile(page, { name: 'inbox-lab.sqlite3', buffer: bytes });
    assert.equal(await page.textContent('#data-note'), `Imported inbox-lab.sqlite3: the tables now come from that file (accounts: ${before.accounts.length}, inbox rows: ${before.inbox.length}; rebuilt in a fresh inbox-lab database).`);
    assert.deepEqual(await shownTables(page), before);
    assert.equal(await page.isHidden('#import-file-error'), true);
  });

  test('a file that is not an inbox-lab database is refused next to the field; the database is untouched', async () => {
    const before = await twoEvents(page);
    await importFile(page, { name: 'notes.sqlite3', buffer: Buffer.from('these are my notes, not a database') });
    assert.match(
      await page.textContent('#import-file-error'),
      /^invalid file: not a SQLite database: the file does not start with the SQLite header/,
    );
    assert.equal(await page.getAttribute('#import-file', 'aria-invalid'), 'true');
    assert.deepEqual(await shownTables(page), before);

    // Real SQLite files that fail Rust's checks: one from a "newer" inbox-lab
    // (PRAGMA user_version is the 4 bytes at offset 60 of the header), and
    // one whose second page is garbage.
    const exported = Buffer.from(await page.evaluate(async () => Array.from(await window.inboxLab.exportDatabase())));
    const newer = Buffer.from(exported);
    newer.writeUInt32BE(99, 60);
    await importFile(page, { name: 'newer.sqlite3', buffer: newer });
    assert.match(await page.textContent('#import-file-error'), /^invalid file: .*99/);
    assert.deepEqual(await shownTables(page), before);

    const damaged = Buffer.from(exported);
    const pageSize = damaged.readUInt16BE(16);
    damaged.fill(0xff, pageSize, 2 * pageSize);
    await importFile(page, { name: 'damaged.sqlite3', buffer: damaged });
    assert.match(await page.textContent('#import-file-error'), /^invalid file: /);
    assert.deepEqual(await shownTables(page), before);
    await page.screenshot({ path: await screenshotPath('playground-import-refused.png') });
  });

  test('Import without a file says so next to the field', async () => {
    await press(page, '#import-form button[type=submit]');
    assert.equal(await page.textContent('#import-file-error'), 'Choose a .sqlite3 file first.');
  });

  test('the SQL console shows a SELECT as a table', async () => {
    await twoEvents(page);
    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'SELECT source, event_id, amount, receipt_seq, NULL AS note FROM inbox ORDER BY receipt_seq');
    await press(page, '#sql-form button[type=submit]');
    const table = await page.$$eval('#sql-result tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.deepEqual(table, [
      ['source', 'event_id', 'amount', 'receipt_seq', 'note'],
      ['provider-a', 'evt-1', '500', '1', 'NULL'],
      ['provider-b', 'evt-1', '500', '2', 'NULL'],
    ]);
    assert.equal(await page.textContent('#sql-result .note'), '2 row(s).');
  });

  test('Ctrl+Enter runs; the example buttons run read-only PRAGMAs', async () => {
    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'SELECT 6 * 7 AS answer');
    await reveal(page, '#sql-editor');
    await page.press('#sql', 'Control+Enter');
    await idle(page);
    assert.deepEqual(await page.$$eval('#sql-result td', (tds) => tds.map((td) => td.textContent)), ['42']);
    await press(page, '[data-sql="PRAGMA integrity_check"]');
    assert.deepEqual(await page.$$eval('#sql-result td', (tds) => tds.map((td) => td.textContent)), ['ok']);
  });

  test('a write is refused by SQLite’s own check, shown under the SQL, and changes nothing', async () => {
    await twoEvents(page);
    const before = await shownTables(page);
    for (const sql of ['UPDATE accounts SET balance = 1000000', 'DELETE FROM inbox', 'PRAGMA foreign_keys = OFF']) {
      await reveal(page, '#sql-editor');
      await page.fill('#sql', sql);
      await press(page, '#sql-form button[type=submit]');
      assert.match(await page.textContent('#sql-error'), /^invalid sql: /, sql);
      assert.equal(await page.getAttribute('#sql', 'aria-invalid'), 'true', sql);
      assert.equal(await page.textContent('#sql-result'), '', sql);
    }
    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'SELEKT nonsense');
    await press(page, '#sql-form button[type=submit]');
    assert.match(await page.textContent('#sql-error'), /syntax error/);
    await reveal(page, '#tables-title');
    await page.click('#tables-title');
    assert.deepEqual(await shownTables(page), before);
    const foreignKeys = await page.evaluate(() => window.inboxLab.query('PRAGMA foreign_keys'));
    assert.deepEqual(foreignKeys.rows, [[1]], 'foreign keys are still on');
  });

  test('read-only pragmas answer, their settings are refused; a value too long to show is cut, marked and counted', async () => {
    const cells = () => page.$$eval('#sql-result td', (tds) => tds.map((td) => td.textContent));
    for (const [sql, shown] of [
      ['PRAGMA journal_mode', ['wal']],
      ['PRAGMA page_size', ['8192']],
      ['PRAGMA foreign_keys', ['1']],
    ]) {
      await reveal(page, '#sql-editor');
      await page.fill('#sql', sql);
      await press(page, '#sql-form button[type=submit]');
      assert.deepEqual(await cells(), shown, sql);
    }
    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'PRAGMA journal_mode = WAL');
    await press(page, '#sql-form button[type=submit]');
    assert.match(await page.textContent('#sql-error'), /^invalid sql: this statement would change the connection/);
    // Not on the console's lists: it would run ANALYZE, which writes.
    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'PRAGMA optimize');
    await press(page, '#sql-form button[type=submit]');
    assert.equal(
      await page.textContent('#sql-error'),
      'invalid sql: PRAGMA optimize is not one the console runs: only pragmas that read are allowed ' +
        '(such as journal_mode, page_size or table_info(inbox))',
    );

    await reveal(page, '#sql-editor');
    await page.fill('#sql', 'SELECT hex(zeroblob(50000)) AS zeros, 7 AS n');
    await press(page, '#sql-form button[type=submit]');
    const [zeros, n] = await cells();
    assert.equal(zeros, `${'0'.repeat(10_000)} … (cut)`);
    assert.equal(n, '7');
    assert.equal(await page.getAttribute('#sql-result td.cut', 'title'), '100,000 bytes in full; only the beginning is shown');
    assert.deepEqual(await page.$$eval('#sql-result .note', (ps) => ps.map((p) => p.textContent)), [
      '1 row(s).',
      '1 value(s) too long to show in full: only the beginning of each is shown, marked “… (cut)”.',
    ]);
  });

  test('an endless query shows Cancel; Cancel (from the keyboard) stops it at once, says so, and a delivery right after is applied', async () => {
    // The status line's phases as they change: cancelling stops the
    // console's own worker, never the database worker ("restarting").
    await page.evaluate(() => {
      window.statusPhases = [];
      const line = document.querySelector('#status');
      new MutationObserver(() => window.statusPhases.push(line.dataset.phase)).observe(line, {
        attributes: true,
        attributeFilter: ['data-phase'],
      });
    });
    assert.equal(await page.isHidden('#sql-cancel'), true, 'no Cancel while nothing runs');
    await reveal(page, '#sql-editor');
    await page.fill('#sql', ENDLESS);
    await reveal(page, '#sql-form button[type=submit]');
    await page.click('#sql-form button[type=submit]');
    await page.waitForSelector('#sql-cancel', { state: 'visible' });
    await reveal(page, '#sql-cancel');
    await page.focus('#sql-cancel');
    const pressed = Date.now();
    await page.keyboard.press('Enter');
    await page.waitForSelector('#sql-error:not([hidden])');
    const shownAfter = Date.now() - pressed;
    assert.equal(
      await page.textContent('#sql-error'),
      'You cancelled the query before it finished; nothing was changed.',
    );
    assert.ok(shownAfter < 1_000, `the cancel was shown ${shownAfter} ms after the key press`);
    await page.waitForSelector('#sql-cancel', { state: 'hidden' });
    await idle(page);
    const phases = await page.evaluate(() => window.statusPhases);
    assert.ok(!phases.includes('restarting'), `the database worker ran on throughout: ${phases}`);

    await fillSender(page, EXAMPLE);
    await pressDeliver(page);
    assert.deepEqual((await shownTables(page)).accounts, [['1', '500']], 'the delivery right after is applied');
    // The tables are redrawn while the send is still the page's action (the line says
    // "Working…" until it ends): read the line once the page is idle.
    await idle(page);
    assert.equal(await page.textContent('#status'), 'Saved in your browser; survives a reload.');
  });

  test('without Cancel, an endless query ends by itself within its budget, with query_budget', async () => {
    await reveal(page, '#sql-editor');
    await page.fill('#sql', ENDLESS);
    const started = Date.now();
    await reveal(page, '#sql-form button[type=submit]');
    await page.click('#sql-form button[type=submit]');
    await page.waitForSelector('#sql-error:not([hidden])', { timeout: 10_000 });
    const elapsed = Date.now() - started;
    assert.equal(
      await page.textContent('#sql-error'),
      "invalid sql: the query was stopped: it used up the console's budget of 2 s or 100000000 steps of " +
        "SQLite's virtual machine; nothing was changed (narrow it with WHERE or LIMIT)",
    );
    assert.ok(elapsed < 5_000, `ended after ${elapsed} ms; the budget is 2 s`);
    await idle(page);
    assert.equal(await page.isHidden('#sql-cancel'), true);
    await fillSender(page, EXAMPLE);
    await pressDeliver(page);
    assert.deepEqual((await shownTables(page)).accounts, [['1', '500']]);
  });
});
