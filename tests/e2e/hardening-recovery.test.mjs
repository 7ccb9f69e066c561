// Nothing stored bricks the page (issue 11, "nothing bricks the page").
//
// A bad database file is put where the reader's database lives, for real:
// a bare database worker started with the test switch `simulate=plant`
// (www/db/worker.js) replaces the OPFS file with the test's bytes, unchecked,
// and is terminated; then the page is opened as a reader would open it, and
// its own worker meets the file at start. Two files: an inbox-lab export
// whose header says a newer schema version (storage/unusable), and bytes
// that are not SQLite at all (storage/corrupt).
//
// Each time the page starts anyway, says what is wrong (English and
// Russian, with the technical detail), refuses every other call with that
// error (not retryable), "Export as is" downloads exactly the stored bytes,
// "Reset…" (after a confirmation; from the keyboard) brings a working page,
// and a reload stays working. With two tabs the follower shows the notice
// too and can reset through the owner.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import { BASE_URL, idle, openPage, reloadPage, reveal, screenshotPath, usePage } from './browser.mjs';

const EVENT = { source: 'recovery', event_id: 'evt-1', account_id: 1, amount: 500 };

/** Bytes that are not a database. */
const NOT_SQLITE = Buffer.from('this is a shopping list, not a database\n'.repeat(200));

/**
 * Puts `bytes` in place of the database file. The page leaves (its owner tab
 * lets go of the file), a page that takes no part in the owner election
 * (`?storage=memory`) starts a bare worker on OPFS with `simulate=plant`,
 * which plants the bytes and is terminated. The next page to open meets them.
 */
async function plant(page, bytes) {
  await page.goto(new URL('?storage=memory', BASE_URL).href);
  await idle(page);
  await page.evaluate(
    (data) =>
      new Promise((resolve, reject) => {
        const url = new URL('www/db/worker.js?storage=opfs&simulate=plant', window.location.href);
        const worker = new Worker(url, { type: 'module' });
        worker.addEventListener('message', ({ data: message }) => {
          if (message.type === 'ready') {
            worker.postMessage({ id: 'plant', op: 'testPlant', args: { bytes: new Uint8Array(data) } });
          } else if (message.type === 'fatal') {
            worker.terminate();
            reject(new Error(JSON.stringify(message.error)));
          } else if (message.id === 'plant') {
            worker.terminate();
            if (message.ok) {
              resolve();
            } else {
              reject(new Error(JSON.stringify(message.error)));
            }
          }
        });
      }),
    [...bytes],
  );
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

  test('the plant op exists only behind its test switch; exportRaw and reset answer on a healthy worker', async () => {
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
});
