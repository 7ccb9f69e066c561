// Step mode: one delivery statement by statement, "throw", and a real kill
// of the database worker (Worker.terminate) while its transaction is open —
// then recovery from OPFS, and the sender's retry applying exactly once.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { DB_WORKER_SCRIPT, idle, shownTables, usePage } from './browser.mjs';
import {
  EXAMPLE,
  balance,
  clearTimeline,
  fillSender,
  freshPlayground,
  press,
  pressDeliver,
  restoreSender,
  senderLog,
  senderSummary,
  shownTimeline,
  timelineEntries,
} from './playground.mjs';

const FRESH = { accounts: [['1', '0']], inbox: [['empty']] };

/** The step list: `[step, state]` per item, and the step marked current. */
async function stepList(page) {
  return page.$$eval('#step-list > li', (items) =>
    items.map((li) => [li.dataset.step, li.dataset.state, li.getAttribute('aria-current') ?? '']),
  );
}

/** Whether the first element of `selector` is inside the scrolled box `box`'s visible part. */
function inViewOf(page, selector, box) {
  return page.evaluate(
    ([selector, box]) => {
      const inner = document.querySelector(selector).getBoundingClientRect();
      const outer = document.querySelector(box).getBoundingClientRect();
      return inner.top >= outer.top && inner.bottom <= outer.bottom;
    },
    [selector, box],
  );
}

/** Presses "Next statement" `n` times. */
async function next(page, n = 1) {
  for (let i = 0; i < n; i += 1) {
    await press(page, '#step-next');
  }
}

describe('step mode', { timeout: 240_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  test('runs one statement per press, highlights the next SQL, and commits', async () => {
    await press(page, '#step-start');
    assert.deepEqual(await stepList(page), [['begin', 'next', 'step']]);
    assert.equal(await page.textContent('#step-list [aria-current="step"] pre'), 'BEGIN IMMEDIATE');
    assert.deepEqual(
      await page.$$eval('#stepper button', (bs) => bs.map((b) => [b.id, b.disabled])),
      [['step-start', true], ['step-next', false], ['step-throw', false], ['step-kill', false], ['share-step', false]],
    );

    await next(page, 2); // BEGIN, INSERT
    assert.match(await page.textContent('#step-list [aria-current="step"] pre'), /^UPDATE accounts SET balance = balance \+ \?1/);
    // The open transaction sees its own uncommitted row; the page says so.
    assert.equal(await page.isVisible('#tables-view'), true);
    assert.equal(
      await page.textContent('#tables-view'),
      'Step mode: this is what the open transaction sees, uncommitted. Nobody else sees it until COMMIT.',
      'the yellow badge says what it is about, not empty',
    );
    assert.deepEqual((await shownTables(page)).inbox, [['provider-a', 'evt-1', '1', '500', '—', '—']]);

    await next(page, 3); // UPDATE, RECEIPT, COMMIT
    assert.deepEqual(await stepList(page), [
      ['begin', 'ok', ''],
      ['insert', 'ok', ''],
      ['credit', 'ok', ''],
      ['store_receipt', 'ok', ''],
      ['commit', 'ok', ''],
    ]);
    assert.equal(await page.textContent('#step-note'), 'Committed: applied. The sender heard 200 and stops.');
    assert.equal(await page.getAttribute('#stepper [data-verdict]', 'data-verdict'), 'correct', 'Rust judged the stepped delivery');
    assert.equal(await page.isVisible('#tables-view'), false);
    assert.deepEqual(await senderLog(page), ['t=0.0 s · attempt 1 → applied, 200 · receipt #1 | 200: stop, the handler took responsibility']);
    const [entry] = await shownTimeline(page);
    assert.match(entry.meta, /attempt 1 of 5 · atomic · step mode/);
    assert.deepEqual(entry.ops, ['begin:ok', 'insert:ok', 'credit:ok', 'store_receipt:ok', 'commit:ok']);
    assert.equal(await balance(page), 500);
  });

  test('the Rust each step runs: src/core/apply.rs as built, the lines of the step that runs next marked', async () => {
    const marked = () =>
      page.$$eval('#step-source .source-current', (lines) => lines.map((line) => line.textContent.replace(/^\d+/, '').trim()));
    await press(page, '#step-start');
    await page.click('#step-source summary');
    // The box asks for the text on its `toggle` event, a task after the click.
    await page.waitForFunction(() => document.querySelector('#step-source .rust-source')?.textContent !== '');
    await idle(page);
    const text = await page.textContent('#step-source .rust-source');
    assert.match(text, /ON CONFLICT\(source, event_id\) DO NOTHING/, 'the real file: its SQL');
    assert.match(text, /fn run\(&mut self, conn: &Connection, step: Step\)/);
    let lines = await marked();
    assert.equal(lines[0], 'Step::Begin => {', 'BEGIN runs next');
    assert.equal(lines.at(-1), '}');
    assert.ok(lines.some((line) => line.includes('SQL_BEGIN')));
    assert.match(await page.textContent('#step-source .source-where'), /^Lines \d+–\d+: “begin”, the step that runs next/);

    await next(page, 2); // BEGIN, INSERT
    lines = await marked();
    assert.equal(lines[0], 'Step::Credit => {');
    assert.ok(lines.some((line) => line.includes('SQL_CREDIT')));
    assert.equal(await inViewOf(page, '#step-source .source-current', '#step-source .rust-source'), true, 'scrolled to it');

    await page.click('[data-lang="ru"]');
    assert.match(await page.textContent('#step-source .source-where'), /^Строки \d+–\d+: «credit» — шаг, который выполнится следующим/);
    await page.click('[data-lang="en"]');

    await next(page, 3); // CREDIT, receipt, COMMIT
    assert.deepEqual(await marked(), [], 'nothing runs once it committed');
    assert.match(await page.textContent('#step-source .source-where'), /^No delivery is being stepped/);
  });

  test('"throw" rolls the open transaction back; the sender retries and it applies once', async () => {
    await press(page, '#step-start');
    await next(page, 3); // BEGIN, INSERT, UPDATE
    await press(page, '#step-throw');
    // Rust's steps: what ran, undone; the crash where it stood; the ROLLBACK.
    assert.deepEqual(await stepList(page), [
      ['begin', 'undone', ''],
      ['insert', 'undone', ''],
      ['credit', 'undone', ''],
      ['crash', 'crash', ''],
      ['rollback', 'rollback', ''],
    ]);
    const log = await senderLog(page);
    assert.equal(
      log[0],
      't=0.0 s · attempt 1 → simulated crash, 500' +
        ' | in the database now: no inbox row (provider-a, evt-1); account 1 has balance 0' +
        ' | 500: a temporary failure; retry in 1.0 s',
    );
    assert.match(log[1], /^t=1\.0 s · attempt 2 → applied, 200/);
    assert.equal(await senderSummary(page), 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
    const [retry, thrown] = await shownTimeline(page);
    assert.deepEqual(thrown.ops, ['begin:undone', 'insert:undone', 'credit:undone', 'crash:crash', 'rollback:rollback']);
    assert.equal(retry.outcome, 'applied');
  });

  test('a Deliver refused busy meanwhile does not move the stepped send\'s clock: after the kill it retries at t=1.0 s as it said', async () => {
    await press(page, '#step-start');
    await next(page, 2); // BEGIN, INSERT: the write lock is held
    await pressDeliver(page); // another send: busy, busy, … on its own clock (1 + 2 + 4 + 8 s)
    assert.match((await senderLog(page)).at(-1), /^t=15\.0 s · attempt 5 → busy, 503/);
    await press(page, '#step-kill');
    const log = await senderLog(page);
    assert.match(log[0], /^t=0\.0 s · attempt 1 → no answer.*retry in 1\.0 s$/);
    assert.match(log[1], /^t=1\.0 s · attempt 2 → applied, 200/, 'the wait it announced, not the other send\'s');
    assert.match(await page.textContent('#sender-clock'), /t=15\.0 s/, 'the page\'s clock shows the later of the two');
  });

  test('kill the worker mid-transaction: a new worker reopens OPFS, nothing survived, the retry applies once', async () => {
    const worker = page.workers().find((w) => DB_WORKER_SCRIPT.test(w.url()));
    assert.ok(worker, 'the database worker is running');
    const closed = new Promise((resolve) => worker.once('close', resolve));

    await press(page, '#step-start');
    await next(page, 4); // BEGIN, INSERT, UPDATE, the receipt: only COMMIT is missing
    assert.deepEqual((await shownTables(page)).accounts, [['1', '500']], 'uncommitted, but visible to the open transaction');
    await press(page, '#step-kill');
    await closed; // Worker.terminate() really ended the old worker

    assert.match(await page.textContent('#step-note'), /tables are exactly as before BEGIN — nothing of the killed transaction survived/);
    assert.deepEqual(await stepList(page), [
      ['begin', 'undone', ''],
      ['insert', 'undone', ''],
      ['credit', 'undone', ''],
      ['store_receipt', 'undone', ''],
      ['commit', 'crash', ''],
    ]);
    assert.deepEqual(await senderLog(page), [
      't=0.0 s · attempt 1 → no answer: the worker was killed mid-transaction' +
        ' | in the database now: no inbox row (provider-a, evt-1); account 1 has balance 0' +
        ' | no answer: it may or may not have been applied; retry in 1.0 s',
      't=1.0 s · attempt 2 → applied, 200 · receipt #1 | 200: stop, the handler took responsibility',
    ]);
    assert.equal(await senderSummary(page), 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
    assert.deepEqual(await shownTables(page), {
      accounts: [['1', '500']],
      inbox: [['provider-a', 'evt-1', '1', '500', '#1', '500']],
    });
    const [, killed] = await shownTimeline(page);
    assert.equal(killed.outcome, 'no_answer');
    assert.match(killed.answer, /^no answer · \d[\d,]* ms$/);
    assert.deepEqual(killed.ops, ['begin:undone', 'insert:undone', 'credit:undone', 'store_receipt:undone', 'kill:crash']);
    assert.equal(await page.getAttribute('#status', 'data-phase'), 'ready');
    const integrity = await page.evaluate(() => window.inboxLab.query('PRAGMA integrity_check'));
    assert.deepEqual(integrity.rows, [['ok']]);
    assert.ok(page.workers().some((w) => DB_WORKER_SCRIPT.test(w.url())), 'a new worker took over');
  });

  test('every path of the atomic handler draws the steps Rust reports, in step mode as from the sender', async () => {
    const cases = [
      { name: 'applied', fields: {}, ops: ['begin:ok', 'insert:ok', 'credit:ok', 'store_receipt:ok', 'commit:ok'] },
      { name: 'duplicate', fields: {}, ops: ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok'] },
      {
        name: 'payload_conflict',
        fields: { amount: '700' },
        ops: ['begin:undone', 'insert:no_row', 'read_stored:failed', 'rollback:rollback'],
      },
      {
        name: 'unknown_account',
        fields: { event_id: 'evt-42', account_id: '42' },
        ops: ['begin:undone', 'insert:failed', 'rollback:rollback'],
      },
      {
        name: 'crash after_insert',
        fields: { event_id: 'evt-2', fault: 'after_insert' },
        ops: ['begin:undone', 'insert:undone', 'crash:crash', 'rollback:rollback'],
      },
      {
        name: 'crash after_update',
        fields: { event_id: 'evt-3', fault: 'after_update' },
        ops: ['begin:undone', 'insert:undone', 'credit:undone', 'store_receipt:undone', 'crash:crash', 'rollback:rollback'],
      },
    ];
    for (const { name, fields, ops } of cases) {
      await restoreSender(page);
      await fillSender(page, { ...fields, attempts: '1' });
      await clearTimeline(page);
      await press(page, '#step-start');
      while (await page.isEnabled('#step-next')) {
        await next(page);
      }
      await idle(page);
      const [entry] = await timelineEntries(page);
      assert.equal(entry.via, 'step', name);
      assert.deepEqual((await shownTimeline(page))[0].ops, ops, name);
      // The ops are Rust's, not the page's: the entry holds the steps it reported.
      assert.deepEqual(entry.steps.map((s) => s.op), ops.map((op) => op.split(':')[0]), name);
    }
    assert.deepEqual((await shownTimeline(page)).length, 1);
    assert.deepEqual((await shownTables(page)).accounts, [['1', '500']], 'only the first delivery credited');
  });

  test('invalid input is refused before BEGIN, next to the field', async () => {
    await fillSender(page, { amount: '-5' });
    await press(page, '#step-start');
    assert.match(await page.textContent('#amount-error'), /invalid amount/);
    assert.equal(await page.textContent('#step-note'), 'Refused before any SQL ran: invalid input.');
    assert.equal(await page.isEnabled('#step-start'), true);
    assert.deepEqual(await shownTables(page), FRESH);
    await fillSender(page, EXAMPLE);
  });
});
