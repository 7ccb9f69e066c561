// The workshop: the article's scenario in the browser, and the three
// exercises whose checks say whether the expected result happened — for
// the right handler, and not for a wrong one, counting only what the reader
// delivered with the sender since opening the exercise; the fourth is done
// with the command line (`inbox-lab probe`).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { goTo, reveal, screenshotPath, shownTables, usePage } from './browser.mjs';
import { EXAMPLE, fillSender, freshPlayground, press, pressDeliver, shownAnswer } from './playground.mjs';

/** The verdict of exercise `id`: `{passed, text}`. */
async function verdict(page, id) {
  return page.$eval(`[data-verdict="${id}"]`, (p) => ({ passed: p.dataset.passed, text: p.textContent }));
}

/** Opens exercise `id` (a disclosure) as the reader does: its title. From then on it records. */
async function openExercise(page, id) {
  await reveal(page, `[data-exercise="${id}"]`);
  await page.click(`[data-exercise="${id}"] summary`);
  await page.waitForSelector(`[data-exercise="${id}"] details[open]`);
}

/** Presses the exercise's n-th chip (0-based): it only fills the sender's form. */
async function exerciseChip(page, id, n) {
  const chip = `[data-exercise="${id}"] .chips button:nth-of-type(${n + 1})`;
  await reveal(page, chip);
  await page.click(chip);
}

/** Presses the exercise's Check. */
async function check(page, id) {
  await press(page, `[data-check="${id}"]`);
}

/** Fills the form with the exercise's chip, then delivers it as the reader does: Deliver. */
async function fillAndDeliver(page, id, n) {
  await exerciseChip(page, id, n);
  await pressDeliver(page);
  await check(page, id);
}

describe('the workshop', { timeout: 240_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  test('the article’s scenario ends with its exact line, and leaves the reader’s data alone', async () => {
    await pressDeliver(page);
    const before = await shownTables(page);
    await press(page, '#scenario-run');
    assert.equal(await page.textContent('#scenario-summary'), 'OK: balance=1500, inbox=3, applied=1, duplicate=19');
    const head = await page.$$eval('#scenario-result thead th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(head, ['check', 'expected', 'got', 'result'], 'no empty header');
    const values = await page.$$eval('#scenario-result tbody tr', (trs) => trs.map((tr) => [tr.cells[1].textContent, tr.cells[2].textContent]));
    assert.ok(
      values.every(([expected, got]) => !/Some\(|None|\[\]/.test(expected + got)),
      `no Rust debug output: ${JSON.stringify(values)}`,
    );
    assert.deepEqual(values.at(-2), ['1500', '1500'], 'the balance, as a number');
    const checks = await page.$$eval('#scenario-result tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[3].textContent]));
    assert.ok(checks.length >= 9, `${checks.length} checks`);
    assert.ok(checks.every(([, mark]) => mark === '✓'), JSON.stringify(checks));
    assert.deepEqual(checks[0], ['evt-1 first delivery', '✓']);
    assert.deepEqual(await shownTables(page), before, 'a scratch database: the reader’s tables did not change');
    await page.locator('#workshop').screenshot({ path: await screenshotPath('playground-workshop.png') });
  });

  test('exercise 1: not yet, then evt-1 from provider-a and provider-b passes', async () => {
    await openExercise(page, 'ex1');
    await check(page, 'ex1'); // Check first: nothing done yet
    assert.deepEqual(await verdict(page, 'ex1'), {
      passed: 'false',
      text: '✗ Not yet. Since you opened this exercise, no event_id was delivered from two sources and applied both times.',
    });
    await exerciseChip(page, 'ex1', 1);
    assert.equal(await page.inputValue('#source'), 'provider-b', 'a chip fills the form');
    assert.equal(new URL(page.url()).hash, '#/deliver', 'and opens the section that holds it');
    assert.equal(
      await page.evaluate(() => document.activeElement === document.querySelector('#deliver-form button[type=submit]')),
      true,
      'Deliver, focused, is the reader’s to press',
    );
    await check(page, 'ex1');
    assert.equal((await verdict(page, 'ex1')).passed, 'false', 'filling the form delivers nothing');
    await fillAndDeliver(page, 'ex1', 0);
    await fillAndDeliver(page, 'ex1', 1);
    assert.deepEqual(await verdict(page, 'ex1'), {
      passed: 'true',
      text:
        '✓ Done. evt-1 is two events: provider-a (receipt #1, balance after 500) and provider-b (receipt #2, balance after 1000).',
    });
    assert.deepEqual((await shownTables(page)).accounts, [['1', '1000']]);
  });

  test('exercise 2: account 42 answers 422 and leaves the inbox as it was', async () => {
    await openExercise(page, 'ex2');
    await fillAndDeliver(page, 'ex2', 0);
    assert.equal((await shownAnswer(page)).outcome, 'unknown account');
    assert.deepEqual(await verdict(page, 'ex2'), {
      passed: 'true',
      text: '✓ Done. Account 42: answered 422 unknown account, and the inbox has no row (provider-a, evt-42).',
    });
    assert.deepEqual((await shownTables(page)).inbox, [['empty']]);
  });

  test('exercise 2 holds for the mistakes too: they are wrong about deduplication, not about a missing account', async () => {
    await openExercise(page, 'ex2');
    for (const handler of ['two_transactions', 'insert_or_ignore', 'check_then_act']) {
      await fillSender(page, { handler, attempts: '1' });
      await fillAndDeliver(page, 'ex2', 0);
      assert.deepEqual(
        await verdict(page, 'ex2'),
        {
          passed: 'true',
          text: '✓ Done. Account 42: answered 422 unknown account, and the inbox has no row (provider-a, evt-42).',
        },
        handler,
      );
      assert.deepEqual((await shownTables(page)).inbox, [['empty']], handler);
    }
    await fillSender(page, EXAMPLE);
  });

  test('exercise 3: the replay returns the first receipt — also after a lost response', async () => {
    await openExercise(page, 'ex3');
    assert.equal(await page.$$eval('[data-exercise="ex3"] button', (bs) => bs.length), 1, 'only Check: the exercise is the reader’s to do');
    await fillSender(page, { lose_response: true });
    await pressDeliver(page); // the reader's own send: applied (lost), then duplicate
    await check(page, 'ex3');
    assert.deepEqual(await verdict(page, 'ex3'), {
      passed: 'true',
      text:
        '✓ Done. The replay of (provider-a, evt-1) answered duplicate with receipt #1, balance after 500: the receipt stored with the first application.',
    });
  });

  test('exercise 4 is done outside the page: it shows the probe command, and no Check', async () => {
    await reveal(page, '[data-exercise="ex4"]');
    assert.equal(await page.$$eval('[data-exercise="ex4"] button', (bs) => bs.length), 0);
    const command = await page.textContent('[data-exercise="ex4"] pre code');
    assert.match(command, /^cargo run --release -- probe http:\/\/127\.0\.0\.1:\d+\/hooks\/provider-a .*--secret whsec_… --state sqlite:/);
    assert.match(await page.textContent('[data-exercise="ex4"] h3'), /^Exercise 4\. Probe your own receiver$/);
  });

  test('exercise 3 with no_dedup: no duplicate ever comes back', async () => {
    await openExercise(page, 'ex3');
    await fillSender(page, { handler: 'no_dedup' });
    await pressDeliver(page);
    await pressDeliver(page);
    await check(page, 'ex3');
    assert.deepEqual(await verdict(page, 'ex3'), { passed: 'false', text: '✗ Not yet. No duplicate answer since you opened this exercise.' });
    assert.deepEqual((await shownTables(page)).accounts, [['1', '1000']], 'paid twice');
    await fillSender(page, EXAMPLE);
  });

  test('an exercise counts only the reader’s own deliveries since it was opened: not what came before, nor a burst', async () => {
    // A duplicate before the exercise is opened: not the exercise's.
    await pressDeliver(page);
    await pressDeliver(page);
    await openExercise(page, 'ex3');
    await check(page, 'ex3');
    assert.deepEqual(
      await verdict(page, 'ex3'),
      { passed: 'false', text: '✗ Not yet. No duplicate answer since you opened this exercise.' },
      'the duplicate delivered before the exercise was opened does not count',
    );
    // Duplicates from elsewhere — a burst, as a webhook would — are not the reader's sender either.
    const burst = await page.evaluate(() =>
      window.inboxLab.burst({ source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 }, 3),
    );
    assert.equal(burst.counts.duplicate, 3, 'the burst answered duplicate');
    await check(page, 'ex3');
    assert.equal((await verdict(page, 'ex3')).passed, 'false', 'a burst is not the exercise');
    // The reader's own repeat, with the sender, after opening: it counts.
    await pressDeliver(page);
    await check(page, 'ex3');
    assert.equal((await verdict(page, 'ex3')).passed, 'true');
    // Closed and opened again, the exercise starts afresh.
    await page.click('[data-exercise="ex3"] summary');
    await openExercise(page, 'ex3');
    assert.equal(await page.textContent('[data-verdict="ex3"]'), '', 'the old verdict went with the old record');
    await check(page, 'ex3');
    assert.equal((await verdict(page, 'ex3')).passed, 'false');
  });

  test('the workshop fits three phone screens (390×844) with its exercises closed, EN and RU', async () => {
    await goTo(page, 'workshop');
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const size of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
        await page.setViewportSize(size);
        const height = await page.evaluate(() => document.documentElement.scrollHeight);
        if (size.width === 390) {
          assert.ok(height <= 3 * size.height, `${lang}: the workshop is ${height} px on a phone, more than three screens`);
        }
        await page.screenshot({ path: await screenshotPath(`workshop-${lang}-${size.width}x${size.height}.png`), fullPage: true });
      }
    }
    await openExercise(page, 'ex1');
    await page.screenshot({ path: await screenshotPath('workshop-ex1-open-ru-1280x800.png'), fullPage: true });
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
  });
});
