// The race lab panel (www/panels/race-lab/racelab.js) as a reader uses it: pick a handler,
// advance the deliveries one statement at a time with the buttons or the
// keys A/B/C, watch the write lock make the second delivery wait, explore
// every interleaving, and replay a failing schedule step by step. The
// connections are real SQLite connections in the page's database worker.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openPageRetrying, reveal, usePage } from './browser.mjs';

const PANEL = '#race-lab';

/** The steps delivery `i` ran, as drawn: `op:state`. */
function ran(page, i) {
  return page.$$eval(`${PANEL} .race-column[data-delivery="${i}"] .race-ran .op`, (ops) =>
    ops.map((op) => `${op.dataset.op}:${op.dataset.state}`),
  );
}

describe('the race lab panel', { timeout: 300_000 }, () => {
  let page;
  usePage(
    {
      prepare: async (opened) => {
        opened.setDefaultTimeout(60_000); // a loaded machine is slow
        // Level 5 won (www/panels/levels/): "Explore every interleaving" is shown.
        await opened.addInitScript(() => localStorage.setItem('inbox-lab.levels.v1', JSON.stringify({ won: [5], playing: null })));
      },
      open, // a first load that stalls is tried again
    },
    (opened) => (page = opened),
  );

  test('atomic: the second BEGIN IMMEDIATE waits for the write lock, and retrying it after COMMIT runs', async () => {
    await choose(page, 'atomic', 2);
    await click(page, '#race-start');
    assert.equal(await column(page, 0, '.race-sql'), 'BEGIN IMMEDIATE');
    assert.equal(await column(page, 1, '.race-sql'), 'BEGIN IMMEDIATE');
    assert.equal(await text(page, '#race-committed'), 'Committed at the start: balance 0, inbox empty.');

    await click(page, '#race-advance-a');
    assert.equal(await column(page, 0, '.race-last'), 'Last step: ran');
    assert.match(await column(page, 0, '.race-sql'), /^INSERT INTO inbox/);
    // What A ran, as Rust reports it: BEGIN, inside its still open transaction.
    assert.deepEqual(await ran(page, 0), ['begin:open']);
    // A holds the write lock: another connection cannot even read.
    assert.match(await text(page, '#race-committed'), /locked/);

    await click(page, '#race-advance-b');
    assert.equal(await column(page, 1, '.race-last'), 'Last step: waiting for the write lock — advance it again to retry');
    assert.equal(await page.getAttribute(`${PANEL} .race-column[data-delivery="1"]`, 'data-state'), 'waiting');
    assert.equal(await column(page, 1, '.race-sql'), 'BEGIN IMMEDIATE', 'a waiting statement did nothing: it is still next');
    await click(page, '#race-advance-b');
    assert.match(await column(page, 1, '.race-last'), /waiting for the write lock/, 'still waiting while A is open');

    // Run A to its answer from the keyboard: the key A advances delivery A.
    await reveal(page, '#race-advance-a');
    await page.focus('#race-advance-a');
    let steps = 0;
    while (!(await page.isDisabled('#race-advance-a'))) {
      await page.keyboard.press('a');
      await idle(page);
      steps += 1;
      assert.ok(steps < 10, 'delivery A never finished');
    }
    assert.equal(await column(page, 0, '.race-answer'), 'Answer: applied');
    assert.equal(await column(page, 0, '.race-sql'), 'Finished: nothing more to run.');
    assert.deepEqual(await ran(page, 0), ['begin:ok', 'insert:ok', 'credit:ok', 'store_receipt:ok', 'commit:ok']);
    assert.deepEqual(await ran(page, 1), [], 'B waited: nothing of it ran yet');
    assert.equal(await text(page, '#race-committed'), 'Committed, as another connection reads it: balance 500, inbox rows 1.');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'race-advance-b', 'the focus moved on to B');

    // The retried BEGIN now runs; B finds the row and answers duplicate.
    await page.keyboard.press('b');
    await idle(page);
    assert.equal(await column(page, 1, '.race-last'), 'Last step: ran');
    while (!(await page.isDisabled('#race-advance-b'))) {
      await click(page, '#race-advance-b');
    }
    assert.equal(await column(page, 1, '.race-answer'), 'Answer: duplicate');
    assert.deepEqual(await ran(page, 1), ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok']);

    assert.deepEqual(await flags(page), ['correct']);
    assert.equal(await text(page, '#race-verdict .race-flag'), 'Correct: credited once, one “applied”, the rest “duplicate”.');
    assert.deepEqual(await tableCells(page, '#race-final-accounts'), [['1', '500']]);
    assert.deepEqual(await tableCells(page, '#race-final-inbox'), [['1']]);
    const log = await page.$$eval('#race-log li', (items) => items.map((li) => li.dataset.result));
    assert.equal(log.filter((r) => r === 'waiting').length, 2, 'both waits are in the step log');
    assert.equal(log.at(-1), 'answered');
  });

  test('check_then_act: two deliveries both see "not there yet" and both credit', async () => {
    await choose(page, 'check_then_act', 2);
    assert.match(await text(page, '#race-why'), /^Mistake: SELECT, then act/);
    await click(page, '#race-start');
    // Both checks first, then both credits: nothing waits, each statement commits on its own.
    for (const letter of ['a', 'b', 'a', 'b']) {
      await click(page, `#race-advance-${letter}`);
    }
    assert.equal(await text(page, '#race-committed'), 'Committed, as another connection reads it: balance 1000, inbox rows 0.');
    await click(page, '#race-advance-a');
    await click(page, '#race-advance-b');
    assert.equal(await column(page, 0, '.race-answer'), 'Answer: applied');
    assert.match(await column(page, 1, '.race-answer'), /^Answer: error /, 'the second INSERT hits the unique key, after crediting');
    // Its own statements show the mistake: the credit is kept, the INSERT failed.
    assert.deepEqual(await ran(page, 1), ['check:ok', 'credit:ok', 'insert:failed']);
    assert.deepEqual(await flags(page), ['double_credit', 'wrong_answer']);
    assert.deepEqual(await tableCells(page, '#race-final-accounts'), [['1', '1000']]);
  });

  test('"Explore every interleaving" keeps the race the reader just stepped on screen, stopped, next to the counts', async () => {
    await choose(page, 'check_then_act', 2);
    await click(page, '#race-start');
    for (const letter of ['a', 'b', 'a', 'b', 'a']) {
      await click(page, `#race-advance-${letter}`);
    }
    const log = await page.$$eval('#race-log li', (items) => items.length);
    assert.equal(await column(page, 0, '.race-answer'), 'Answer: applied');
    await click(page, '#race-explore');
    assert.ok((await page.$$('#race-explorer .race-counts li')).length === 3, 'the explorer answered');
    assert.equal(await page.$$eval('#race-log li', (items) => items.length), log, 'the stepped race is still there');
    assert.equal(await column(page, 0, '.race-answer'), 'Answer: applied');
    assert.deepEqual(await ran(page, 0), ['check:ok', 'credit:ok', 'insert:ok']);
    assert.equal(await column(page, 1, '.race-sql'), 'Stopped here: the explorer took over the connections. Start again to race anew.');
    assert.equal(await page.isDisabled('#race-advance-b'), true, 'it cannot go on: its connections were reused');
  });

  test('"Explore every interleaving": atomic ends correct in every schedule', async () => {
    await choose(page, 'atomic', 2);
    await click(page, '#race-explore');
    const counts = await page.$$eval('#race-explorer .race-counts li', (items) => items.map((li) => li.textContent));
    const total = Number(/of (\d+) schedules/.exec(counts[0])?.[1]);
    assert.ok(total >= 2, `atomic has at least one schedule per first delivery: ${counts[0]}`);
    assert.deepEqual(counts, [
      `0 of ${total} schedules end in a double credit`,
      `0 of ${total} schedules end in a lost credit`,
      `0 of ${total} schedules end in a wrong answer`,
    ]);
    assert.equal(
      await text(page, '#race-explorer .race-flag'),
      'No schedule ends badly: whatever the order, the result is correct.',
    );
    assert.equal(await page.$('#race-replay'), null, 'nothing to replay');
  });

  test('check_then_act double credits in 18 of 20 schedules, and the failing schedule replays step by step', async () => {
    await choose(page, 'check_then_act', 2);
    await click(page, '#race-explore');
    const counts = await page.$$eval('#race-explorer .race-counts li', (items) => items.map((li) => li.textContent));
    assert.deepEqual(counts, [
      '18 of 20 schedules end in a double credit',
      '0 of 20 schedules end in a lost credit',
      '18 of 20 schedules end in a wrong answer',
    ]);
    const schedule = await page.$$eval('#race-schedule li', (items) => items.map((li) => li.textContent));
    assert.ok(schedule.length > 0 && schedule.every((s) => s === 'A' || s === 'B'), `a schedule of A and B: ${schedule}`);
    assert.ok(schedule.includes('A') && schedule.includes('B'), 'a failure needs both deliveries');

    await click(page, '#race-replay');
    assert.equal(await text(page, '#race-replay-position'), `Step 0 of ${schedule.length}`);
    for (const [n, letter] of schedule.entries()) {
      assert.equal(await text(page, '#race-replay-next'), `Next step of the schedule (${letter})`);
      const upNext = await page.getAttribute(`${PANEL} .race-column[data-up-next="true"]`, 'data-delivery');
      assert.equal(upNext, String('AB'.indexOf(letter)), 'the column that moves next is highlighted');
      assert.equal(await page.isDisabled(`#race-advance-${letter.toLowerCase()}`), true, 'manual steps wait during a replay');
      await click(page, '#race-replay-next');
      assert.equal(await text(page, '#race-replay-position'), `Step ${n + 1} of ${schedule.length}`);
      const current = await page.$$eval('#race-schedule li', (items) => items.findIndex((li) => li.getAttribute('aria-current') === 'step'));
      assert.equal(current, n, 'the step just run is marked in the schedule');
      assert.equal(await page.$$eval('#race-log li', (items) => items.length), n + 1);
    }
    assert.equal(await text(page, '#race-replay-next'), 'Replayed: the verdict above is this schedule’s.');
    assert.ok((await flags(page)).includes('double_credit'));
    assert.deepEqual(await tableCells(page, '#race-final-accounts'), [['1', '1000']]);
  });

  test('every handler has a one-line explanation of its mistake', async () => {
    const options = await page.$$eval('#race-handler option', (items) => items.map((o) => o.value));
    assert.deepEqual(options, ['atomic', 'no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace']);
    const seen = new Set();
    for (const handler of options) {
      await reveal(page, '#race-handler');
      await page.selectOption('#race-handler', handler);
      const why = await text(page, '#race-why');
      assert.match(why, handler === 'atomic' ? /^Correct:/ : /^Mistake:/);
      seen.add(why);
    }
    assert.equal(seen.size, options.length);
  });

  test('insert_or_ignore survives identical deliveries; a redelivery with another amount shows its mistake', async () => {
    await choose(page, 'insert_or_ignore', 2);
    assert.match(await text(page, '#race-why'), /never compares payloads/);
    assert.doesNotMatch(await text(page, '#race-why'), /amount 0/);
    await click(page, '#race-explore');
    const counts = await page.$$eval('#race-explorer .race-counts li', (items) => items.map((li) => li.textContent.split(' ')[0]));
    assert.deepEqual(counts, ['0', '0', '0'], 'identical concurrent deliveries do not expose it');

    const demoRows = (tables) => tables.inbox.filter((r) => r.source === 'race-lab-demo');
    const balance = (tables) => tables.accounts.find((a) => a.id === 1).balance;
    const before = await page.evaluate(() => window.inboxLab.tables());
    await click(page, '#race-demo-run');
    const shown = await page.$$eval('#race-demo-result p', (ps) => ps.map((p) => [p.dataset.step, p.textContent]));
    assert.deepEqual(shown.map(([step]) => step), ['first', 'ignore', 'atomic', 'written', 'lesson']);
    const lines = Object.fromEntries(shown);
    assert.equal(lines.first, '1. insert_or_ignore, amount 500: applied (200)');
    assert.equal(lines.ignore, '2. insert_or_ignore, the same key with amount 700: duplicate (200)');
    assert.match(lines.atomic, /^3\. atomic, the same key with amount 700: payload conflict \(422\) — .*500.*700/);
    assert.match(lines.lesson, /amount 700 was silently accepted as a repeat of 500/);

    // What was written: one inbox row, amount 500, no receipt, and one credit of 500.
    const after = await page.evaluate(() => window.inboxLab.tables());
    const added = demoRows(after).filter((r) => !demoRows(before).some((b) => b.event_id === r.event_id));
    assert.equal(added.length, 1, 'one new inbox row');
    assert.match(added[0].event_id, /^demo-\d+$/);
    assert.deepEqual(
      { account_id: added[0].account_id, amount: added[0].amount, receipt: added[0].receipt },
      { account_id: 1, amount: 500, receipt: null },
    );
    assert.equal(balance(after), balance(before) + 500, 'credited 500 once; the 700 never');
    assert.equal(
      lines.written,
      `In the database: the inbox row race-lab-demo / ${added[0].event_id} holds amount 500; the balance of account 1 went from ${balance(before)} to ${balance(after)}.`,
    );

    // A second click is a new event: again exactly one row and one credit of 500.
    await click(page, '#race-demo-run');
    const again = await page.evaluate(() => window.inboxLab.tables());
    assert.equal(demoRows(again).length, demoRows(after).length + 1, 'a fresh event id per click');
    assert.equal(balance(again), balance(after) + 500);
    assert.equal(await text(page, '#race-demo-result p[data-step="ignore"]'), lines.ignore);

    await setLanguage(page, 'ru');
    try {
      assert.match(await text(page, '#race-why'), /никогда не сравнивает содержимое/);
      assert.match(await text(page, '#race-demo-result p[data-step="lesson"]'), /сумма 700 от отправителя молча принята за повтор/);
      assert.match(await text(page, '#race-demo-result p[data-step="atomic"]'), /^3\. atomic, тот же ключ с суммой 700: конфликт данных \(422\) — [^a-z]*[а-яё]/i);
    } finally {
      await setLanguage(page, 'en');
    }
    await choose(page, 'atomic', 2);
    assert.equal(await page.isHidden('#race-demo'), true, 'the demonstration belongs to insert_or_ignore');
  });

  test('three deliveries: a third column, and atomic still ends correct in every schedule', async () => {
    await choose(page, 'atomic', 3);
    assert.equal(await page.isVisible(`${PANEL} .race-column[data-delivery="2"]`), true);
    await click(page, '#race-start');
    await click(page, '#race-advance-c');
    await click(page, '#race-advance-a');
    assert.match(await column(page, 0, '.race-last'), /waiting for the write lock/);
    await click(page, '#race-explore');
    const counts = await page.$$eval('#race-explorer .race-counts li', (items) => items.map((li) => li.textContent));
    assert.match(counts[0], /^0 of \d+ schedules end in a double credit$/);
    assert.match(counts[2], /^0 of \d+ schedules end in a wrong answer$/);
    assert.match(await text(page, '#race-explorer p'), /atomic, 3 deliveries/);
    await choose(page, 'atomic', 2);
    assert.equal(await page.isHidden(`${PANEL} .race-column[data-delivery="2"]`), true);
  });

  test('in Russian', async () => {
    await setLanguage(page, 'ru');
    try {
      await choose(page, 'atomic', 2);
      await click(page, '#race-start');
      await click(page, '#race-advance-a');
      await click(page, '#race-advance-b');
      assert.equal(await text(page, '#race-lab-title'), 'Гонки: доставки вперемешку, по одному оператору');
      assert.equal(await column(page, 1, '.race-last'), 'Последний шаг: ждёт блокировку записи — сделайте шаг ещё раз, чтобы повторить');
      assert.equal(await text(page, '#race-advance-b'), 'Шаг B');
      assert.match(await text(page, '#race-committed'), /заблокировано/);
    } finally {
      await setLanguage(page, 'en');
    }
  });
});

/** Opens the page and waits for it; a stalled first load is retried. */
async function open(page) {
  await openPageRetrying(page, '?storage=memory#/race-lab');
  await idle(page);
}

function idle(page) {
  return page.waitForSelector(`${PANEL}[aria-busy="false"]`, { state: 'attached' });
}

async function click(page, selector) {
  await page.click(selector);
  await idle(page);
}

/** Picks the handler and the number of deliveries, as a reader does. */
async function choose(page, handler, deliveries) {
  await reveal(page, '#race-handler');
  await page.selectOption('#race-handler', handler);
  await idle(page);
  if (!(await page.isChecked(`#race-deliveries-${deliveries}`))) {
    await reveal(page, `#race-deliveries-${deliveries}`);
    await page.check(`#race-deliveries-${deliveries}`);
    await idle(page);
  }
}

function text(page, selector) {
  return page.textContent(selector).then((s) => s.trim());
}

function column(page, i, selector) {
  return text(page, `${PANEL} .race-column[data-delivery="${i}"] ${selector}`);
}

function flags(page) {
  return page.$$eval('#race-verdict .race-flag', (ps) => ps.map((p) => p.dataset.flag));
}

function tableCells(page, selector) {
  return page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
}

function setLanguage(page, lang) {
  return page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
}
