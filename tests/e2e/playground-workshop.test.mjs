// The workshop: the article's scenario in the browser, and the three
// exercises whose checks say whether the expected result happened — for
// the right handler, and not for a wrong one.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { screenshotPath, shownTables, usePage } from './browser.mjs';
import { EXAMPLE, fillSender, freshPlayground, press, pressDeliver, shownAnswer } from './playground.mjs';

/** The verdict of exercise `id`: `{passed, text}`. */
async function verdict(page, id) {
  return page.$eval(`[data-verdict="${id}"]`, (p) => ({ passed: p.dataset.passed, text: p.textContent }));
}

/** Presses the exercise's n-th button (0-based; the last one is Check). */
async function exerciseButton(page, id, n) {
  await press(page, `[data-exercise="${id}"] .actions button:nth-child(${n + 1})`);
}

describe('the workshop', { timeout: 240_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  test('the article’s scenario ends with its exact line, and leaves the reader’s data alone', async () => {
    await pressDeliver(page);
    const before = await shownTables(page);
    await press(page, '#scenario-run');
    assert.equal(await page.textContent('#scenario-summary'), 'OK: balance=1500, inbox=3, applied=1, duplicate=19');
    const checks = await page.$$eval('#scenario-result tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[3].textContent]));
    assert.ok(checks.length >= 9, `${checks.length} checks`);
    assert.ok(checks.every(([, mark]) => mark === '✓'), JSON.stringify(checks));
    assert.deepEqual(checks[0], ['evt-1 first delivery', '✓']);
    assert.deepEqual(await shownTables(page), before, 'a scratch database: the reader’s tables did not change');
    await page.locator('#workshop').screenshot({ path: await screenshotPath('playground-workshop.png') });
  });

  test('exercise 1: not yet, then evt-1 from provider-a and provider-b passes', async () => {
    await exerciseButton(page, 'ex1', 2); // Check first: nothing done yet
    assert.deepEqual(await verdict(page, 'ex1'), {
      passed: 'false',
      text: '✗ Not yet. The inbox has no event_id delivered from two sources and applied both times.',
    });
    await exerciseButton(page, 'ex1', 0);
    await exerciseButton(page, 'ex1', 1);
    assert.deepEqual(await verdict(page, 'ex1'), {
      passed: 'true',
      text:
        '✓ Done. evt-1 is two events: provider-a (receipt #1, balance after 500) and provider-b (receipt #2, balance after 1000).',
    });
    assert.deepEqual((await shownTables(page)).accounts, [['1', '1000']]);
  });

  test('exercise 2: account 42 answers 422 and leaves the inbox as it was', async () => {
    await exerciseButton(page, 'ex2', 0);
    assert.equal((await shownAnswer(page)).outcome, 'unknown_account');
    assert.deepEqual(await verdict(page, 'ex2'), {
      passed: 'true',
      text: '✓ Done. Account 42: answered 422 unknown_account, and the inbox has no row (provider-a, evt-42).',
    });
    assert.deepEqual((await shownTables(page)).inbox, [['empty']]);
  });

  test('exercise 2 holds for the mistakes too: they are wrong about deduplication, not about a missing account', async () => {
    for (const handler of ['two_transactions', 'insert_or_ignore', 'check_then_act']) {
      await fillSender(page, { handler, attempts: '1' });
      await exerciseButton(page, 'ex2', 0);
      assert.deepEqual(
        await verdict(page, 'ex2'),
        {
          passed: 'true',
          text: '✓ Done. Account 42: answered 422 unknown_account, and the inbox has no row (provider-a, evt-42).',
        },
        handler,
      );
      assert.deepEqual((await shownTables(page)).inbox, [['empty']], handler);
    }
    await fillSender(page, EXAMPLE);
  });

  test('exercise 3: the replay returns the first receipt — also after a lost response', async () => {
    await fillSender(page, { lose_response: true });
    await exerciseButton(page, 'ex3', 0); // one click: applied (lost), then duplicate
    assert.deepEqual(await verdict(page, 'ex3'), {
      passed: 'true',
      text:
        '✓ Done. The replay of (provider-a, evt-1) answered duplicate with receipt #1, balance after 500: the receipt stored with the first application.',
    });
  });

  test('exercise 3 with no_dedup: no duplicate ever comes back', async () => {
    await fillSender(page, { handler: 'no_dedup' });
    await exerciseButton(page, 'ex3', 0);
    await exerciseButton(page, 'ex3', 1);
    assert.deepEqual(await verdict(page, 'ex3'), { passed: 'false', text: '✗ Not yet. No duplicate answer in the timeline yet.' });
    assert.deepEqual((await shownTables(page)).accounts, [['1', '1000']], 'paid twice');
    await fillSender(page, EXAMPLE);
  });
});
