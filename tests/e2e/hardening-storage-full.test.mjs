// Storage full, for real: Chromium is told (DevTools protocol,
// `Storage.overrideQuotaForOrigin`) that this origin may use only a little
// more than it already does. OPFS then refuses to grow the database file or
// its journal with a QuotaExceededError, which the sahpool VFS reports to
// SQLite as SQLITE_FULL, which Rust reports as `storage` / `full`. No
// simulation inside SQLite (no `max_page_count`): the browser's own quota
// check fails the write.
//
// What must hold: the failed delivery is a clear, retryable storage error
// (in English and Russian); the database stays intact (`integrity_check`)
// and consistent (every acknowledged event there once, the failed one not
// at all, balance = sum of rows); once there is room again, the same event
// is delivered and applied, with the next receipt number (the failed
// transaction's number was rolled back too).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { BASE_URL, assertNoProblems, launch, openPage, reloadPage, reveal } from './browser.mjs';

// Long keys make each row big, so the quota runs out after a few hundred events.
const LONG = 's'.repeat(255);
const eventNo = (i) => ({ source: LONG, event_id: `full-${i}`.padEnd(255, '.'), account_id: 1, amount: 1 });

describe('storage full (a real quota)', { timeout: 300_000 }, () => {
  let browser;
  let page;
  let cdp;
  const origin = new URL(BASE_URL).origin;

  before(async () => {
    browser = await launch();
    page = browser.page;
    cdp = await page.context().newCDPSession(page);
  });
  after(async () => {
    await cdp.send('Storage.overrideQuotaForOrigin', { origin }).catch(() => {});
    await browser.close();
  });

  test('a commit that hits the quota is storage/full; the database stays intact; the event applies once there is room', async (t) => {
    assert.deepEqual(await openPage(page), { storage: 'opfs' });
    await page.evaluate(() => window.inboxLab.reset());
    // The paste box's delivery below runs in the full module: hand the database over to it first
    // (any op of that module: the race lab's reset), so that the hand-over (which closes the
    // database, folding its WAL in) cannot free room mid-test.
    await page.evaluate(() => window.inboxLab.race.reset(2));
    await checkIntact(page, []);
    const { usage } = await page.evaluate(() => navigator.storage.estimate());
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + 64 * 1024 });

    // Deliver until the quota stops a commit: batches of concurrent
    // deliveries, like a burst of senders.
    const { acked, failed } = await page.evaluate(async ({ long }) => {
      const make = (i) => ({ source: long, event_id: `full-${i}`.padEnd(255, '.'), account_id: 1, amount: 1 });
      const acked = [];
      for (let start = 0; start < 20_000; start += 25) {
        const batch = Array.from({ length: 25 }, (_, k) => start + k);
        const answers = await Promise.all(
          batch.map((i) => window.inboxLab.deliver(make(i)).then((answer) => ({ i, answer }), (error) => ({ i, error }))),
        );
        const errors = answers.filter((a) => a.error);
        acked.push(...answers.filter((a) => a.answer).map((a) => ({ i: a.i, seq: a.answer.receipt.seq })));
        if (errors.length > 0) {
          return { acked, failed: errors };
        }
      }
      return { acked, failed: [] };
    }, { long: LONG });
    t.diagnostic(`quota = usage + 64 KiB: ${acked.length} events committed before the first failure; ${failed.length} failed in that batch`);
    assert.ok(failed.length > 0, 'the quota stopped a commit');
    for (const { error } of failed) {
      assert.deepEqual(
        {
          kind: error.kind,
          code: error.code,
          http_status: error.http_status,
          retryable: error.retryable,
          message: error.message,
        },
        {
          kind: 'storage',
          code: 'full',
          http_status: 500,
          retryable: true,
          message:
            'storage error: the storage is full (database or disk full); the transaction was rolled back, retry after freeing space',
        },
      );
    }
    const first = failed[0];

    // The message in both languages, as the page shows it.
    const texts = await page.evaluate(async (error) => {
      const { errorMessage } = window.inboxLab.texts;
      const i18n = window.inboxLab; // setLanguage
      const en = errorMessage(error);
      i18n.setLanguage('ru');
      const ru = errorMessage(error);
      i18n.setLanguage('en');
      return { en, ru };
    }, first.error);
    assert.equal(texts.en, first.error.message);
    assert.equal(
      texts.ru,
      'хранилище переполнено (нет места для базы данных или на диске); транзакция откачена — повторите, когда освободится место',
    );

    // Intact and consistent, while still full.
    await checkIntact(page, acked.map((a) => a.i));
    const again = await page.evaluate((e) => window.inboxLab.deliver(e).catch((error) => error), eventNo(first.i));
    assert.equal(again.code, 'full', 'still full: refused again, nothing half-written');
    await checkIntact(page, acked.map((a) => a.i));

    // The page shows it next to the JSON box, too.
    await reveal(page, '#paste summary');
    await page.click('#paste summary');
    await reveal(page, '#paste-json');
    await page.fill('#paste-json', JSON.stringify(eventNo(first.i)));
    await reveal(page, '#paste-form button[type="submit"]');
    await page.click('#paste-form button[type="submit"]');
    await page.waitForSelector('#paste-form[aria-busy="false"]');
    assert.equal(await page.textContent('#paste-json-error'), first.error.message);

    // Room again: the same event applies, with the next receipt number.
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    const retried = await page.evaluate((e) => window.inboxLab.deliver(e), eventNo(first.i));
    assert.equal(retried.outcome, 'applied');
    assert.equal(retried.receipt.seq, Math.max(...acked.map((a) => a.seq)) + 1, 'no receipt number was used up');
    await reloadPage(page);
    await checkIntact(page, [...acked.map((a) => a.i), first.i]);
    assertNoProblems(browser.problems);
  });
});

/** integrity_check is ok; the inbox holds exactly these events; balance = sum of rows. */
async function checkIntact(page, ids) {
  const integrity = await page.evaluate(() => window.inboxLab.query('PRAGMA integrity_check'));
  assert.deepEqual(integrity.rows, [['ok']]);
  const foreign = await page.evaluate(() => window.inboxLab.query('PRAGMA foreign_key_check'));
  assert.deepEqual(foreign.rows, []);
  const tables = await page.evaluate(() => window.inboxLab.tables());
  const expected = ids.map((i) => eventNo(i).event_id).sort();
  assert.deepEqual(tables.inbox.map((row) => row.event_id).sort(), expected);
  assert.deepEqual(tables.accounts, [{ id: 1, balance: ids.length }]);
}
