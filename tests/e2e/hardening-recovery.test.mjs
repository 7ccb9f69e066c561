// Nothing stored bricks the page (issue 11, "nothing bricks the page"), the
// key is checked before it is trusted and what is sound can be kept (issue 27).
//
// A bad database file is put where the reader's database lives, for real:
// the test rewrites the OPFS pool's slot that holds the database (see
// `plant`), as damage on disk would — the page has no way to do that, and its
// static build no test switch for it; then the page is opened as a reader
// would open it, and its own worker meets the file at start. The files: an
// inbox-lab export whose header says a newer schema version
// (storage/unusable), bytes that are not SQLite at all (storage/corrupt), an
// export whose two inbox indexes point at each other's pages (storage/corrupt:
// `integrity_check`), and one with a row past the range the page reads.
//
// Each time the page starts anyway, says what is wrong (English and
// Russian, with the technical detail), refuses every other call with that
// error (not retryable), "Export as is" downloads exactly the stored bytes,
// "Reset…" (after a confirmation; from the keyboard) brings a working page,
// and a reload stays working. With two tabs the follower shows the notice
// too and can reset through the owner.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { BASE_URL, idle, openPage, reloadPage, reveal, screenshotPath, usePage } from './browser.mjs';

const EVENT = { source: 'recovery', event_id: 'evt-1', account_id: 1, amount: 500 };

/** Bytes that are not a database. */
const NOT_SQLITE = Buffer.from('this is a shopping list, not a database\n'.repeat(200));

/**
 * Puts `bytes` in place of the database file, byte for byte. The page leaves
 * (its owner tab lets go of the file); a page that takes no part in the owner
 * election (`?storage=memory`) rewrites the slot of the OPFS pool holding the
 * database and frees the slots of its journal and WAL. A slot of the pool
 * (sqlite-wasm-vfs's "sahpool", directory `.inbox-lab/.opaque`) is a file
 * whose first 4096 bytes are a header — the name it stands for, NUL-padded to
 * 512 bytes, then its open flags — followed by that file's bytes; a free slot
 * has a zero header. The next page to open meets the planted bytes.
 */
async function plant(page, bytes) {
  await page.goto(new URL('?storage=memory', BASE_URL).href);
  await idle(page);
  const planted = await page.evaluate(async (data) => {
    const HEADER = 4096;
    const NAME = 512;
    const root = await navigator.storage.getDirectory();
    const pool = await (await root.getDirectoryHandle('.inbox-lab')).getDirectoryHandle('.opaque');
    const found = [];
    for await (const slot of pool.values()) {
      const head = new Uint8Array(await (await slot.getFile()).slice(0, NAME).arrayBuffer());
      const end = head.indexOf(0);
      const name = new TextDecoder().decode(head.subarray(0, end < 0 ? head.length : end));
      const file = /inbox-lab\.sqlite3(-journal|-wal)?$/.exec(name);
      if (file === null) {
        continue;
      }
      const writable = await slot.createWritable({ keepExistingData: true });
      if (file[1] === undefined) {
        await writable.truncate(HEADER);
        await writable.write({ type: 'write', position: HEADER, data: new Uint8Array(data) });
      } else {
        await writable.write({ type: 'write', position: 0, data: new Uint8Array(NAME + 4) });
        await writable.truncate(HEADER);
      }
      await writable.close();
      found.push(name);
    }
    return found;
  }, [...bytes]);
  assert.equal(planted.filter((name) => name.endsWith('.sqlite3')).length, 1, `the database's slot: ${planted}`);
}

/** `bytes` edited by Python's sqlite3 (a test dependency already) running `sql`. */
async function edited(bytes, sql) {
  const dir = await mkdtemp(join(tmpdir(), 'inbox-lab-recovery-'));
  try {
    const file = join(dir, 'db.sqlite3');
    await writeFile(file, bytes);
    execFileSync('python3', [
      '-c',
      'import sqlite3, sys\n' +
        'c = sqlite3.connect(sys.argv[1], isolation_level=None)\n' +
        'c.executescript(sys.argv[2])\n' +
        'c.execute("PRAGMA journal_mode = DELETE")\n' +
        'c.close()\n',
      file,
      sql,
    ]);
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The page's database as it stands, after `reset` and these deliveries. */
async function exported(page, events) {
  await openPage(page);
  await page.evaluate(() => window.inboxLab.reset());
  for (const event of events) {
    await page.evaluate((e) => window.inboxLab.deliver(e), event);
  }
  return Buffer.from(await page.evaluate(async () => [...(await window.inboxLab.exportDatabase())]));
}

/** What the notice shows, and whether. */
function notice(page) {
  return page.evaluate(() => {
    const el = document.querySelector('#db-problem');
    return { shown: !el.hidden, code: el.dataset.code, text: el.innerText };
  });
}

function rejection(page, call) {
  return page.evaluate(
    ([name, arg]) => window.inboxLab[name](arg).then(() => null, (error) => error),
    call,
  );
}

async function setLanguage(page, lang) {
  await page.click(`[data-lang="${lang}"]`);
}

describe('a stored database the page cannot use', { timeout: 240_000 }, () => {
  let page;
  usePage({ open: null }, (opened) => (page = opened));

  test('a newer schema version: the page starts, says why in EN and RU, exports as is, resets, stays working', async () => {
    await openPage(page);
    await page.evaluate(() => window.inboxLab.reset());
    await page.evaluate((e) => window.inboxLab.deliver(e), EVENT);
    const healthy = Buffer.from(await page.evaluate(async () => [...(await window.inboxLab.exportDatabase())]));
    // The header's user_version (bytes 60..64, big-endian): a version this build does not know.
    const bytes = Buffer.from(healthy);
    bytes.writeUInt32BE(99, 60);
    await plant(page, bytes);

    await page.goto(BASE_URL);
    const ready = await page.evaluate(() => window.inboxLab.ready);
    await idle(page);
    assert.equal(ready.storage, 'opfs');
    assert.deepEqual(
      [ready.problem.kind, ready.problem.code, ready.problem.retryable, ready.problem.http_status],
      ['storage', 'unusable', false, 500],
    );
    assert.match(ready.problem.message, /database schema version 99 is not supported by this build/);

    // The notice, near the top, in English with the technical detail.
    const en = await notice(page);
    assert.deepEqual([en.shown, en.code], [true, 'unusable']);
    assert.match(en.text, /^The stored database cannot be used\./);
    assert.match(en.text, /storage error: the stored database cannot be used: database schema version 99 is not supported/);
    assert.match(en.text, /Technical detail: storage\/unusable storage error: the stored database cannot be used: database schema version 99/);
    assert.match(en.text, /Export as is/);
    assert.equal(await page.getAttribute('#status', 'data-phase'), 'problem');
    assert.equal(await page.textContent('#status'), 'The stored database cannot be used: see the notice below.');
    const top = await page.evaluate(() => document.querySelector('#db-problem').getBoundingClientRect().top);
    assert.ok(top < 400, `the notice is near the top (${top}px)`);

    // Every other call answers the problem; the file is not touched.
    for (const call of [['deliver', EVENT], ['tables'], ['query', 'SELECT 1'], ['exportDatabase'], ['addAccount', 2]]) {
      const error = await rejection(page, call);
      assert.deepEqual(error, ready.problem, `${call[0]} answers the problem`);
    }

    // Russian: the same error, by its code.
    await setLanguage(page, 'ru');
    const ru = await notice(page);
    assert.match(ru.text, /^Сохранённой базой данных пользоваться нельзя\./);
    assert.match(ru.text, /сохранённую базу данных нельзя использовать: database schema version 99/);
    assert.match(ru.text, /Технические подробности: storage\/unusable/);
    assert.match(ru.text, /Выгрузить как есть/);
    assert.match(ru.text, /Сбросить…/);
    await setLanguage(page, 'en');

    // Export as is, from the keyboard: exactly the stored bytes.
    await reveal(page, '#db-problem-export');
    await page.focus('#db-problem-export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    await idle(page);
    assert.equal(download.suggestedFilename(), 'inbox-lab-as-is.sqlite3');
    const path = await screenshotPath('as-is.sqlite3');
    await download.saveAs(path);
    assert.deepEqual(await readFile(path), bytes, 'the stored file, byte for byte');
    assert.equal(
      await page.textContent('#db-problem-note'),
      `Saved the stored file as it is: ${bytes.length.toLocaleString('en')} bytes, as inbox-lab-as-is.sqlite3.`,
    );
    assert.deepEqual(
      Buffer.from(await page.evaluate(async () => [...(await window.inboxLab.exportRaw())])),
      bytes,
      'inboxLab.exportRaw() too',
    );

    // Reset asks first: dismissed, nothing happens.
    page.once('dialog', (dialog) => dialog.dismiss());
    await reveal(page, '#db-problem-reset');
    await page.focus('#db-problem-reset');
    await page.keyboard.press('Enter');
    await idle(page);
    assert.equal((await notice(page)).shown, true);

    // Accepted: a fresh database, the notice gone, the page works.
    let asked = null;
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      dialog.accept();
    });
    await page.keyboard.press('Enter');
    await page.waitForSelector('#db-problem', { state: 'hidden' });
    await idle(page);
    assert.match(asked, /^Delete the stored database, which cannot be used, and start again/);
    await page.waitForSelector('#status[data-phase="ready"]');
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), { accounts: [{ id: 1, balance: 0 }], inbox: [] });
    const answer = await page.evaluate((e) => window.inboxLab.deliver(e), EVENT);
    assert.equal(answer.outcome, 'applied');

    // A reload stays working: no problem, the delivery kept.
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
    assert.equal((await notice(page)).shown, false);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).accounts, [{ id: 1, balance: 500 }]);
  });

  test('not SQLite at all, two tabs: the follower sees the notice, exports and resets through the owner', async () => {
    await plant(page, NOT_SQLITE);
    const ready = await openPage(page);
    assert.deepEqual([ready.problem.code, ready.problem.retryable], ['corrupt', false]);
    assert.match(ready.problem.message, /not a database/);

    const follower = await page.context().newPage();
    const followerProblems = [];
    follower.on('pageerror', (error) => followerProblems.push(`page error: ${error.stack ?? error}`));
    follower.on('console', (message) => {
      if (message.type() === 'error') {
        followerProblems.push(`console error: ${message.text()}`);
      }
    });
    assert.deepEqual(await openPage(follower), ready, 'the follower is told the same');
    assert.equal(follower.workers().length, 0, 'the follower runs no worker');
    const shown = await notice(follower);
    assert.deepEqual([shown.shown, shown.code], [true, 'corrupt']);
    assert.match(shown.text, /storage error: file is not a database|not a database/);
    assert.deepEqual(await rejection(follower, ['deliver', EVENT]), ready.problem);
    assert.deepEqual(
      Buffer.from(await follower.evaluate(async () => [...(await window.inboxLab.exportRaw())])),
      NOT_SQLITE,
      'exportRaw through the owner: the stored bytes',
    );

    follower.once('dialog', (dialog) => dialog.accept());
    await follower.click('#db-problem-reset');
    await follower.waitForSelector('#db-problem', { state: 'hidden' });
    await page.waitForSelector('#db-problem', { state: 'hidden' });
    assert.equal((await follower.evaluate((e) => window.inboxLab.deliver(e), EVENT)).outcome, 'applied');
    assert.equal((await page.evaluate((e) => window.inboxLab.deliver(e), EVENT)).outcome, 'duplicate');
    await follower.close();
    assert.deepEqual(followerProblems, []);
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
  });

  test('the worker has no op that plants a file; exportRaw and reset answer on a healthy worker', async () => {
    await openPage(page, '?storage=memory');
    const replies = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const worker = new Worker(new URL('www/db/worker.js?storage=memory', window.location.href), { type: 'module' });
          const seen = [];
          worker.addEventListener('message', ({ data }) => {
            if ('id' in data) {
              seen.push(data);
              if (seen.length === 3) {
                worker.terminate();
                resolve(seen.map((m) => ({ id: m.id, ok: m.ok, code: m.error?.code, bytes: m.result?.length })));
              }
            }
          });
          worker.postMessage({ id: 1, op: 'testPlant', args: { bytes: new Uint8Array(4) } });
          worker.postMessage({ id: 2, op: 'exportRaw' });
          worker.postMessage({ id: 3, op: 'reset' });
        }),
    );
    assert.deepEqual(replies[0], { id: 1, ok: false, code: 'unknown_op', bytes: undefined });
    assert.equal(replies[1].ok, true);
    assert.ok(replies[1].bytes > 0, 'a healthy database exports as is');
    assert.deepEqual(replies[2], { id: 3, ok: true, code: undefined, bytes: undefined });
  });

  test('two index roots swapped: reported as damaged, never trusted; "keep what is sound" rebuilds it and a replay is a duplicate', async () => {
    const healthy = await exported(page, [EVENT]);
    // The inbox's key index and receipt index point at each other's pages.
    const swapped = await edited(
      healthy,
      `PRAGMA writable_schema = ON;
       CREATE TEMP TABLE roots AS SELECT name, rootpage FROM sqlite_master
         WHERE name IN ('sqlite_autoindex_inbox_1', 'sqlite_autoindex_inbox_2');
       UPDATE sqlite_master SET rootpage = (SELECT rootpage FROM temp.roots WHERE name = 'sqlite_autoindex_inbox_2')
         WHERE name = 'sqlite_autoindex_inbox_1';
       UPDATE sqlite_master SET rootpage = (SELECT rootpage FROM temp.roots WHERE name = 'sqlite_autoindex_inbox_1')
         WHERE name = 'sqlite_autoindex_inbox_2';`,
    );
    await plant(page, swapped);
    const ready = await openPage(page);
    assert.deepEqual([ready.problem.code, ready.problem.retryable], ['corrupt', false]);
    assert.match(ready.problem.message, /the file is damaged: .*index/);
    assert.deepEqual(await rejection(page, ['deliver', EVENT]), ready.problem, 'no replay runs');

    page.once('dialog', (dialog) => dialog.accept());
    await reveal(page, '#db-problem-salvage');
    await page.click('#db-problem-salvage');
    await page.waitForSelector('#db-problem-close:not([hidden])');
    await idle(page);
    const shown = await notice(page);
    assert.equal(shown.shown, true, 'the account stays until closed');
    assert.match(shown.text, /^The database was rebuilt from what was sound\./);
    assert.match(shown.text, /Kept 1 accounts, 1 inbox rows, 0 outbox messages and 0 orders\. Rows left out: 0\./);
    assert.equal(await page.$$eval('#db-problem-dropped li', (items) => items.length), 0);
    await page.click('#db-problem-close');
    assert.equal((await notice(page)).shown, false);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).accounts, [{ id: 1, balance: 500 }]);
    assert.equal((await page.evaluate((e) => window.inboxLab.deliver(e), EVENT)).outcome, 'duplicate');
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
  });

  test('a row past the range the page reads: "keep what is sound" leaves out that row and says so, in EN and RU', async () => {
    const other = { ...EVENT, event_id: 'evt-2', amount: 7 };
    const healthy = await exported(page, [EVENT, other]);
    const damaged = await edited(healthy, "UPDATE inbox SET received_at = 9007199254740995 WHERE event_id = 'evt-2';");
    await plant(page, damaged);
    const ready = await openPage(page);
    assert.deepEqual([ready.problem.code, ready.problem.retryable], ['unusable', false]);
    assert.match(ready.problem.message, /row 2 of table inbox, column received_at: 9007199254740995 is outside 0\.\.=9007199254740991/);

    const answer = await page.evaluate(() => window.inboxLab.salvage());
    assert.deepEqual(answer.kept, { accounts: 1, inbox: 1, outbox: 0, orders: 0, version: 2, ignored: [] });
    assert.deepEqual(
      answer.dropped.map((d) => [d.kind, d.code, d.field, d.params.table, d.params.row, d.params.column]),
      [['invalid_input', 'row_invalid', 'file', 'inbox', '2', 'received_at']],
    );
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['evt-1']);
    // The row left out is gone with its proof: the balance still holds its credit.
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).accounts, [{ id: 1, balance: 507 }]);

    // Through the notice, in both languages: plant again and press the button.
    await plant(page, damaged);
    await openPage(page);
    page.once('dialog', (dialog) => dialog.accept());
    await reveal(page, '#db-problem-salvage');
    await page.click('#db-problem-salvage');
    await page.waitForSelector('#db-problem-close:not([hidden])');
    const listed = () => page.$$eval('#db-problem-dropped li', (items) => items.map((li) => li.textContent));
    assert.deepEqual(await listed(), [
      'invalid file: row 2 of table inbox, column received_at: 9007199254740995 is outside 0..=9007199254740991',
    ]);
    await setLanguage(page, 'ru');
    assert.match((await notice(page)).text, /^База собрана заново из исправных строк\./);
    assert.deepEqual(await listed(), [
      'поле file: строка 2 таблицы inbox, столбец received_at: 9007199254740995 is outside 0..=9007199254740991',
    ]);
    await setLanguage(page, 'en');
    await page.click('#db-problem-close');
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
  });

  test('the lab clock stops at its largest time, and no reload after the console API\'s writes opens as unusable', async () => {
    await openPage(page);
    await page.evaluate(() => window.inboxLab.reset());
    const max = 2 ** 53 - 1;
    assert.equal(await page.evaluate((ms) => window.inboxLab.scheme.advanceClock(ms), max - 1), max - 1);
    const refused = await page.evaluate(() => window.inboxLab.scheme.advanceClock(2).then(() => null, (e) => e));
    assert.deepEqual([refused.kind, refused.code, refused.retryable], ['invalid_input', 'clock_limit', false]);
    assert.equal(refused.params.max, String(max));
    assert.equal(await page.evaluate(() => window.inboxLab.scheme.clock()), max - 1, 'unchanged');
    assert.equal(await page.evaluate((ms) => window.inboxLab.scheme.advanceClock(ms), 1), max);
    assert.equal((await page.evaluate((e) => window.inboxLab.deliver(e), EVENT)).outcome, 'applied');
    await page.evaluate((e) => window.inboxLab.scheme.deliver({ ...e, event_id: 'evt-2' }, { strategy: 'outbox' }), EVENT);
    await page.evaluate(() => window.inboxLab.scheme.dispatchOne({}));
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' }, 'no problem after the reload');
    assert.equal((await page.evaluate(() => window.inboxLab.tables())).inbox.length, 2);
  });
});
