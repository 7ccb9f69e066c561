// The sender as a reader uses it: presets, redelivery, lost responses and
// the retry policy on a simulated clock, crashes, and the handler selector —
// with the sender's log, the timeline and the tables checked after each.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { reveal, shownTables, usePage } from './browser.mjs';
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
  shownAnswer,
  shownTimeline,
} from './playground.mjs';

const FRESH = { accounts: [['1', '0']], inbox: [['empty']] };

describe('the sender', { timeout: 240_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  test('a lost response: attempt 1 applied (response lost), attempt 2 → duplicate, 200, credited once', async () => {
    await fillSender(page, { lose_response: true });
    await pressDeliver(page);

    assert.deepEqual(await senderLog(page), [
      't=0.0 s · attempt 1 → applied, 200 · response lost' +
        ' | in the database now: the inbox row (provider-a, evt-1) is there; account 1 has balance 500' +
        ' | no answer: it may or may not have been applied; retry in 1.0 s',
      't=1.0 s · attempt 2 → duplicate, 200 · receipt #1 | 200: stop, the handler took responsibility',
    ]);
    assert.equal(await senderSummary(page), 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
    assert.deepEqual(await shownAnswer(page), { outcome: 'duplicate', 'HTTP status': '200', receipt: '#1, balance after: 500' });
    assert.equal(await balance(page), 500);

    const [second, first] = await shownTimeline(page);
    assert.deepEqual([first.attempt, first.outcome, first.handler], [1, 'applied', 'atomic']);
    assert.match(first.answer, /^applied · 200 · response lost · \d+ ms$/);
    assert.deepEqual(first.ops, ['begin:ok', 'insert:ok', 'credit:ok', 'store_receipt:ok', 'commit:ok']);
    assert.deepEqual([second.attempt, second.outcome], [2, 'duplicate']);
    assert.deepEqual(second.ops, ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok']);
    assert.match(await page.textContent('#sender-clock'), /t=1\.0 s/, 'the simulated clock moved by the one wait');
  });

  test('the same story with no_dedup: the retry is paid again, and the timeline names the handler', async () => {
    await fillSender(page, { handler: 'no_dedup', lose_response: true });
    await pressDeliver(page);
    const log = await senderLog(page);
    assert.match(log[0], /^t=0\.0 s · attempt 1 → applied, 200 · response lost/);
    assert.match(log[1], /^t=1\.0 s · attempt 2 → applied, 200 \| 200: stop/);
    assert.equal(await senderSummary(page), 'provider-a / evt-1: credited 2 times! Balance of account 1: 0 → 1,000.');
    assert.equal(await balance(page), 1000);
    const timeline = await shownTimeline(page);
    assert.deepEqual(timeline.map((e) => [e.handler, e.outcome]), [['no_dedup', 'applied'], ['no_dedup', 'applied']]);
    assert.deepEqual(timeline[0].ops, ['credit:ok']);
    assert.match(timeline[0].meta, /· no_dedup ·/);
  });

  test('a mistake is drawn in its own statements: two_transactions keeps the registration and loses the credit', async () => {
    await fillSender(page, { handler: 'two_transactions', fault: 'after_insert' });
    await pressDeliver(page);
    const [retry, crashed] = await shownTimeline(page);
    // What Rust ran: the first transaction committed, then the handler died.
    assert.deepEqual(crashed.ops, ['begin:ok', 'insert:ok', 'commit:ok', 'crash:crash']);
    // The retry meets the registered key and answers duplicate: nothing more ran.
    assert.equal(retry.outcome, 'duplicate');
    assert.deepEqual(retry.ops, ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok']);
    assert.equal(await balance(page), 0, 'the credit is lost for good');
  });

  for (const fault of ['after_insert', 'after_update']) {
    test(`a crash ${fault} on attempt 1: nothing kept (shown), then the retry applies`, async () => {
      await fillSender(page, { fault });
      await pressDeliver(page);
      const log = await senderLog(page);
      assert.equal(
        log[0],
        't=0.0 s · attempt 1 → simulated crash, 500' +
          ' | in the database now: no inbox row (provider-a, evt-1); account 1 has balance 0' +
          ' | 500: a temporary failure; retry in 1.0 s',
      );
      assert.match(log[1], /^t=1\.0 s · attempt 2 → applied, 200 · receipt #\d+ \| 200: stop/);
      assert.equal(log.length, 2);
      assert.equal(await senderSummary(page), 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
      const [, crashed] = await shownTimeline(page);
      assert.equal(crashed.outcome, 'simulated_crash');
      assert.match(crashed.answer, /^simulated crash · 500 · retryable · \d+ ms$/);
      assert.deepEqual(crashed.ops.slice(-2), ['crash:crash', 'rollback:rollback']);
      assert.ok(crashed.ops.slice(0, -2).every((op) => op.endsWith(':undone')), crashed.ops.join());
    });
  }

  test('4xx stops at once: payload_conflict is never retried', async () => {
    await pressDeliver(page);
    await clearTimeline(page);
    await fillSender(page, { amount: '700' });
    await pressDeliver(page);
    const log = await senderLog(page);
    assert.equal(log.length, 1);
    assert.match(log[0], /attempt 1 → payload conflict, 422 \| 422: stop, the same request would fail the same way$/);
    assert.equal((await shownTimeline(page)).length, 1);
    assert.equal(await balance(page), 500);
  });

  test('gives up after the policy’s attempts, with doubling waits on the simulated clock', async () => {
    // A stepped delivery holds the write lock, so every other delivery is 503 busy.
    await page.evaluate(() => window.inboxLab.step.start({ source: 's', event_id: 'lock', account_id: 1, amount: 1 }));
    await page.evaluate(() => window.inboxLab.step.next()); // BEGIN IMMEDIATE
    try {
      await fillSender(page, { attempts: '4', first_delay: '0.5' });
      await pressDeliver(page);
      const seen = 'in the database now: no inbox row (provider-a, evt-1); account 1 has balance 0';
      assert.deepEqual(await senderLog(page), [
        `t=0.0 s · attempt 1 → busy, 503 | ${seen} | 503: a temporary failure; retry in 0.5 s`,
        `t=0.5 s · attempt 2 → busy, 503 | ${seen} | 503: a temporary failure; retry in 1.0 s`,
        `t=1.5 s · attempt 3 → busy, 503 | ${seen} | 503: a temporary failure; retry in 2.0 s`,
        `t=3.5 s · attempt 4 → busy, 503 | ${seen} | gave up; attempts made: 4`,
      ]);
      assert.deepEqual(await shownAnswer(page), {
        outcome: 'busy',
        'HTTP status': '503',
        retryable: 'yes: deliver it again later',
        message: 'the database is locked by another connection; nothing was written, retry later',
      });
    } finally {
      await page.evaluate(() => window.inboxLab.step.throw().catch(() => {}));
    }
    assert.deepEqual(await shownTables(page), FRESH);
  });

  test('a policy out of range is refused next to its field, and nothing is sent', async () => {
    await fillSender(page, { attempts: '0', first_delay: 'soon' });
    await pressDeliver(page);
    assert.equal(await page.textContent('#attempts-error'), 'Attempts: a whole number from 1 to 10.');
    assert.equal(await page.textContent('#first_delay-error'), 'First wait: seconds from 0 to 60, such as 1 or 0.5.');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'attempts');
    assert.equal((await shownTimeline(page)).length, 0);
  });

  test('presets fill the form', async () => {
    const form = () =>
      page.$eval('#deliver-form', (f) => [f.source.value, f.event_id.value, f.account_id.value, f.amount.value].join(' '));
    await reveal(page, '[data-preset="provider_b"]');
    await page.click('[data-preset="provider_b"]');
    assert.equal(await form(), 'provider-b evt-1 1 500');
    await reveal(page, '[data-preset="next"]');
    await page.click('[data-preset="next"]');
    assert.equal(await form(), 'provider-b evt-2 1 500');
    await reveal(page, '[data-preset="missing_account"]');
    await page.click('[data-preset="missing_account"]');
    assert.equal(await form(), 'provider-a evt-42 42 500', 'every field its lesson depends on');
    await reveal(page, '[data-preset="amount_zero"]');
    await page.click('[data-preset="amount_zero"]');
    assert.equal(await form(), 'provider-a evt-1 1 0', 'not account 42 left over');
    await reveal(page, '[data-preset="example"]');
    await page.click('[data-preset="example"]');
    assert.equal(await form(), 'provider-a evt-1 1 500');
  });

  test('presets are self-contained: after "redeliver … to another account", "new event" is account 1, amount 500 again, and a crash after INSERT fires', async () => {
    await pressDeliver(page);
    await press(page, '[data-redeliver="amount"]');
    await press(page, '[data-redeliver="account"]');
    assert.deepEqual([await page.inputValue('#account_id'), await page.inputValue('#amount')], ['2', '700']);
    await page.click('[data-preset="next"]');
    assert.deepEqual(
      [await page.inputValue('#event_id'), await page.inputValue('#account_id'), await page.inputValue('#amount')],
      ['evt-2', '1', '500'],
    );
    await fillSender(page, { fault: 'after_insert' });
    await pressDeliver(page);
    const log = await senderLog(page);
    assert.match(log[0], /attempt 1 → simulated crash, 500/, 'the crash fired: the account exists');
    assert.match(log[1], /attempt 2 → applied, 200/);
  });

  test('redeliver the same → duplicate; with another amount or account → 422, the first record stays', async () => {
    assert.equal(await page.isDisabled('[data-redeliver="same"]'), true, 'nothing to redeliver yet');
    await pressDeliver(page);
    await press(page, '[data-redeliver="same"]');
    assert.deepEqual(await shownAnswer(page), { outcome: 'duplicate', 'HTTP status': '200', receipt: '#1, balance after: 500' });

    await press(page, '[data-redeliver="amount"]');
    assert.equal(await page.inputValue('#amount'), '700', 'the form shows what was sent');
    let answer = await shownAnswer(page);
    assert.equal(answer.outcome, 'payload conflict');
    assert.match(answer.message, /amount 500.*amount 700/);

    await fillSender(page, EXAMPLE);
    await press(page, '[data-redeliver="account"]');
    answer = await shownAnswer(page);
    assert.equal(await page.inputValue('#account_id'), '2');
    assert.deepEqual([answer.outcome, answer['HTTP status']], ['payload conflict', '422']);
    assert.deepEqual(await shownTables(page), {
      accounts: [['1', '500']],
      inbox: [['provider-a', 'evt-1', '1', '500', '#1', '500']],
    });
  });

  test('amount 0 is refused (400) next to the field before any SQL, by insert_or_ignore as by atomic', async () => {
    const before = await page.evaluate(() => window.inboxLab.tables());
    for (const handler of ['insert_or_ignore', 'atomic']) {
      await reveal(page, '[data-preset="amount_zero"]');
      await page.click('[data-preset="amount_zero"]');
      await fillSender(page, { handler });
      await pressDeliver(page);
      assert.equal((await shownAnswer(page)).outcome, 'invalid input', handler);
      assert.match(await page.textContent('#amount-error'), /invalid amount/, handler);
      const [entry] = await shownTimeline(page);
      assert.deepEqual([entry.handler, entry.ops], [handler, []], `${handler}: refused before any SQL`);
      assert.match(await page.textContent('#timeline > li:first-child'), /no SQL ran/, handler);
    }
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), before, 'nothing was written');
  });

  test('the handler note says what the chosen handler does', async () => {
    await fillSender(page, { handler: 'two_transactions' });
    assert.match(await page.textContent('#handler-note'), /^Wrong: registers the event in one transaction/);
    await restoreSender(page);
    await page.waitForFunction(() => document.querySelector('#handler-note').textContent.startsWith('The article’s handler'));
  });

  test('the console API does what the buttons do', async () => {
    const event = { source: 'console', event_id: 'c-1', account_id: 1, amount: 7 };
    const sent = await page.evaluate((e) => window.inboxLab.send(e, { loseResponse: true, firstDelayMs: 250 }), event);
    assert.deepEqual(
      sent.attempts.map(({ attempt, at, answer, lost, decision }) => [attempt, at, answer.outcome, lost, decision.action]),
      [
        [1, 0, 'applied', true, 'retry'],
        [2, 250, 'duplicate', false, 'stop'],
      ],
    );
    assert.deepEqual(sent.balance, { account: 1, before: 0, after: 7 });

    const burst = await page.evaluate((e) => window.inboxLab.burst({ ...e, event_id: 'c-2' }, 5), event);
    assert.deepEqual(burst.counts, { applied: 1, duplicate: 4 });
    const distinct = await page.evaluate((e) => window.inboxLab.burstDistinct({ ...e, event_id: 'c-3' }, 30), event);
    assert.deepEqual([distinct.counts, distinct.balance.after - distinct.balance.before], [{ applied: 30 }, 210]);

    await page.evaluate(() => {
      window.inboxLab.setFault('after_insert');
      window.inboxLab.setHandler('check_then_act');
      window.inboxLab.setLoseResponse(true);
    });
    assert.deepEqual(
      await page.$eval('#deliver-form', (f) => [f.fault.value, f.handler.value, f.lose_response.checked]),
      ['after_insert', 'check_then_act', true],
    );
    const refused = await page.evaluate(() => {
      try {
        window.inboxLab.setHandler('yolo');
        return null;
      } catch (error) {
        return error.message;
      }
    });
    assert.match(refused, /^handler must be one of "atomic", "no_dedup"/);
    const timeline = await page.evaluate(() => window.inboxLab.timeline());
    assert.equal(timeline.length, 2 + 5 + 1, 'two attempts, five burst deliveries, one distinct-burst entry');
    assert.deepEqual(timeline[0].steps.map((s) => s.op), ['begin', 'insert', 'credit', 'store_receipt', 'commit']);
    assert.ok(timeline[0].steps.every((s) => s.effect === 'kept'), 'committed: every step kept');
  });

  test('the changed inbox row is highlighted and on top, wherever its key sorts', async () => {
    await fillSender(page, { source: 'zz-last', event_id: 'e1' });
    await pressDeliver(page);
    await fillSender(page, { source: 'aa-first', event_id: 'e1' });
    await pressDeliver(page);
    // The rows already drawn are kept and moved, not built again.
    await page.evaluate(() => (window.drawnBefore = [...document.querySelectorAll('#inbox tbody tr')]));
    await fillSender(page, { source: 'mm-middle', event_id: 'e1' });
    await pressDeliver(page);
    const rows = await page.$$eval('#inbox tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.className, window.drawnBefore.includes(tr)]));
    assert.deepEqual(rows, [
      ['mm-middle', 'current', false],
      ['aa-first', '', true],
      ['zz-last', '', true],
    ]);
    const accounts = await page.$$eval('#accounts tbody tr', (trs) => trs.map((tr) => tr.className));
    assert.deepEqual(accounts, ['current'], 'the credited account is highlighted too');
    // A row a mistaken handler wrote has no receipt, and says why in the reader's language —
    // also when the language changes after it was drawn.
    await fillSender(page, { source: 'nd', event_id: 'e1', handler: 'insert_or_ignore' });
    await pressDeliver(page);
    const receiptCell = () => page.$eval('#inbox tbody tr:first-child td:nth-child(5)', (td) => [td.textContent, td.title]);
    assert.deepEqual(await receiptCell(), ['—', 'No receipt: written by a mistaken handler']);
    await page.evaluate(() => window.inboxLab.setLanguage('ru'));
    assert.deepEqual(await receiptCell(), ['—', 'Квитанции нет: строку записал ошибочный обработчик']);
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
  });
});
