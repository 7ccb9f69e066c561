// `window.inboxLab`, the console API readers and outside checks use: the
// article's contract answered by the real worker and the real OPFS database.
// Each test starts from a fresh database (account 1 at balance 0).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openPage, reloadPage, tables, usePage } from './browser.mjs';

const EVENT = { source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 };
const FRESH = { accounts: [{ id: 1, balance: 0 }], inbox: [] };

describe('window.inboxLab', { timeout: 180_000 }, () => {
  let page;
  usePage(
    {
      open: async (opened) =>
        assert.deepEqual(await openPage(opened), { storage: 'opfs' }, 'ready resolves to the storage in use'),
      beforeEach: (opened) => opened.evaluate(() => window.inboxLab.reset()),
    },
    (opened) => (page = opened),
  );

  test('reset leaves account 1 at balance 0 and an empty inbox', async () => {
    await deliver(page, EVENT);
    assert.equal(await page.evaluate(() => window.inboxLab.reset()), undefined);
    assert.deepEqual(await tables(page), FRESH);
  });

  test('a first delivery is applied (200) and its receipt is stored with the inbox row', async () => {
    const { steps, verdict, ...answer } = await deliver(page, EVENT);
    assert.deepEqual(answer, { outcome: 'applied', http_status: 200, receipt: { seq: 1, balance_after: 500 } });
    // And what it really did, judged in Rust: applied once.
    assert.deepEqual(
      [verdict.kind, verdict.heard, verdict.credits, verdict.kept, verdict.balance],
      ['correct', 'applied', 1, { row: true, credit: true }, { account: 1, before: 0, after: 500 }],
    );
    // With the answer, what the handler ran: five steps, all committed.
    assert.deepEqual(
      steps.map(({ op, rows, effect }) => `${op}:${rows}:${effect}`),
      ['begin:0:kept', 'insert:1:kept', 'credit:1:kept', 'store_receipt:2:kept', 'commit:0:kept'],
    );
    assert.deepEqual(await tables(page), {
      accounts: [{ id: 1, balance: 500 }],
      inbox: [{ ...EVENT, receipt: { seq: 1, balance_after: 500 } }],
    });
  });

  test('a repeat is a duplicate (200) with the first receipt, and changes nothing', async () => {
    const first = await deliver(page, EVENT);
    const snapshot = await tables(page);
    const { steps, verdict, ...again } = await deliver(page, EVENT);
    assert.deepEqual(again, { outcome: 'duplicate', http_status: 200, receipt: first.receipt });
    assert.deepEqual([verdict.kind, verdict.heard, verdict.credits_before, verdict.credits], ['correct', 'duplicate', 1, 1]);
    assert.deepEqual(
      steps.map(({ op, rows }) => `${op}:${rows}`),
      ['begin:0', 'insert:0', 'read_stored:0', 'commit:0'],
      'the INSERT found the key: no row changed',
    );
    assert.deepEqual(await tables(page), snapshot);
  });

  test('the same key with another payload is rejected as payload_conflict (422), tables unchanged', async () => {
    await deliver(page, EVENT);
    const snapshot = await tables(page);
    for (const change of [{ amount: 700 }, { account_id: 2 }]) {
      const error = await rejection(page, { ...EVENT, ...change });
      assert.equal(error.kind, 'payload_conflict', JSON.stringify(change));
      assert.equal(error.http_status, 422);
      assert.equal(error.retryable, false);
      assert.equal(typeof error.message, 'string');
    }
    assert.deepEqual(await tables(page), snapshot);
  });

  for (const fault of ['after_insert', 'after_update']) {
    test(`fault ${fault}: simulated_crash (500, retryable), nothing kept, then a retry applies`, async () => {
      const error = await rejection(page, EVENT, { fault });
      assert.deepEqual(
        { kind: error.kind, http_status: error.http_status, retryable: error.retryable },
        { kind: 'simulated_crash', http_status: 500, retryable: true },
      );
      assert.deepEqual(await tables(page), FRESH, 'neither the inbox row nor the credit exists');

      const retried = await deliver(page, EVENT);
      assert.equal(retried.outcome, 'applied');
      assert.equal(retried.receipt.balance_after, 500);
      assert.deepEqual((await tables(page)).accounts, [{ id: 1, balance: 500 }]);
    });
  }

  test('an unknown account is rejected (422) and the inbox stays empty', async () => {
    const error = await rejection(page, { ...EVENT, account_id: 42 });
    assert.equal(error.kind, 'unknown_account');
    assert.equal(error.http_status, 422);
    assert.equal(error.retryable, false);
    assert.deepEqual(await tables(page), FRESH);
  });

  test('20 concurrent deliveries of one event: 1 applied, 19 duplicates, one credit', async () => {
    const answers = await page.evaluate(
      (event) => Promise.all(Array.from({ length: 20 }, () => window.inboxLab.deliver(event))),
      EVENT,
    );
    const count = (outcome) => answers.filter((a) => a.outcome === outcome).length;
    assert.equal(count('applied'), 1);
    assert.equal(count('duplicate'), 19);
    assert.equal(new Set(answers.map((a) => JSON.stringify(a.receipt))).size, 1, 'one receipt for all');
    assert.deepEqual((await tables(page)).accounts, [{ id: 1, balance: 500 }]);
  });

  test('concurrent calls of different kinds each get their own answer', async () => {
    const [applied, conflict, added, snapshot] = await page.evaluate((event) => {
      const lab = window.inboxLab;
      const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));
      return Promise.all([
        settle(lab.deliver(event)),
        settle(lab.deliver({ ...event, amount: 1 })),
        settle(lab.addAccount(2)),
        settle(lab.tables()),
      ]);
    }, EVENT);
    assert.equal(applied.value.outcome, 'applied');
    assert.equal(conflict.error.kind, 'payload_conflict');
    assert.equal(added.value, true);
    assert.equal(snapshot.value.accounts.length, 2, 'requests are answered in the order they were sent');
  });

  test('amount must be an integral JS number: "500", 1.5, NaN, 10n, null, Infinity and a missing amount are invalid_input', async () => {
    // Built inside the page: BigInt and NaN do not survive the trip as JSON.
    const errors = await page.evaluate(async (event) => {
      const amounts = { '"500"': '500', '1.5': 1.5, NaN: NaN, '10n': 10n, null: null, Infinity: Infinity };
      const answers = {};
      for (const [label, amount] of Object.entries(amounts)) {
        answers[label] = await window.inboxLab.deliver({ ...event, amount }).then(
          (value) => ({ resolved: value }),
          (error) => error,
        );
      }
      const { amount: _, ...missing } = event;
      answers.missing = await window.inboxLab.deliver(missing).catch((error) => error);
      return answers;
    }, EVENT);
    for (const [label, error] of Object.entries(errors)) {
      assert.equal(error.kind, 'invalid_input', `amount ${label}: ${JSON.stringify(error)}`);
      assert.equal(error.field, 'amount', `amount ${label}`);
      assert.equal(error.http_status, 400, `amount ${label}`);
      assert.equal(error.retryable, false, `amount ${label}`);
      assert.match(error.message, /^invalid amount: /, `amount ${label}`);
    }
    assert.deepEqual(await tables(page), FRESH);
  });

  test('other fields are checked too: account_id "1", a blank source, an unknown fault', async () => {
    const cases = [
      [{ ...EVENT, account_id: '1' }, undefined, 'account_id'],
      [{ ...EVENT, source: ' ' }, undefined, 'source'],
      [{ ...EVENT, event_id: 7 }, undefined, 'event_id'],
      [{ ...EVENT, extra: true }, undefined, 'event'],
      [EVENT, { fault: 'later' }, 'fault'],
    ];
    for (const [event, options, field] of cases) {
      const error = await rejection(page, event, options);
      assert.equal(error.kind, 'invalid_input', JSON.stringify(event));
      assert.equal(error.field, field, JSON.stringify(event));
    }
    assert.deepEqual(await tables(page), FRESH);
  });

  test('mistakes that never reach Rust still get an answer: uncloneable values, options that are not an object', async () => {
    const [uncloneable, notOptions, after] = await page.evaluate(async (event) => {
      const lab = window.inboxLab;
      return [
        await lab.deliver({ ...event, amount: () => 500 }).catch((error) => error),
        await lab.deliver(event, 'after_insert').catch((error) => error),
        await lab.tables(),
      ];
    }, EVENT);
    assert.equal(uncloneable.kind, 'invalid_input');
    assert.match(uncloneable.message, /cannot send this request to the database worker/);
    assert.deepEqual({ kind: notOptions.kind, field: notOptions.field }, { kind: 'invalid_input', field: 'fault' });
    assert.deepEqual(after, FRESH, 'and the API keeps working');
  });

  test('an options object whose getter throws gives a rejected promise, never a synchronous throw', async () => {
    const answers = await page.evaluate(async (event) => {
      const lab = window.inboxLab;
      const boom = () => {
        throw new Error('boom');
      };
      // Getters that throw, one for each option a call reads, and a Proxy
      // whose every read throws.
      const getter = {};
      for (const name of ['fault', 'handler', 'strategy', 'crash', 'dedup']) {
        Object.defineProperty(getter, name, { get: boom, enumerable: true });
      }
      const proxy = new Proxy({}, { get: boom });
      const calls = {
        deliver: (o) => lab.deliver(event, o),
        deliverJson: (o) => lab.deliverJson(JSON.stringify(event), o),
        'step.start': (o) => lab.step.start(event, o),
        'scheme.deliver': (o) => lab.scheme.deliver(event, o),
        'scheme.dispatchOne': (o) => lab.scheme.dispatchOne(o),
        'scheme.resetReceiver': (o) => lab.scheme.resetReceiver(o),
        send: (o) => lab.send(event, o),
        burst: (o) => lab.burst(event, 2, o),
        burstDistinct: (o) => lab.burstDistinct(event, 2, o),
      };
      const answers = [];
      for (const [name, call] of Object.entries(calls)) {
        for (const [kind, options] of [['getter', getter], ['proxy', proxy]]) {
          let returned;
          try {
            returned = call(options);
          } catch (thrown) {
            answers.push({ name, kind, threw: String(thrown) });
            continue;
          }
          const isPromise = returned instanceof Promise;
          const settled = await Promise.resolve(returned).then(
            (value) => ({ value }),
            (error) => ({ error }),
          );
          answers.push({ name, kind, isPromise, ...settled });
        }
      }
      return { answers, after: await lab.tables() };
    }, EVENT);
    for (const { name, kind, threw, isPromise, value, error } of answers.answers) {
      const what = `${name} with a throwing ${kind}`;
      assert.equal(threw, undefined, `${what} threw synchronously`);
      assert.equal(isPromise, true, `${what} returned no promise`);
      assert.equal(value, undefined, `${what} resolved`);
      assert.deepEqual(
        { kind: error.kind, code: error.code, retryable: error.retryable, http_status: error.http_status },
        { kind: 'invalid_input', code: 'options_unreadable', retryable: false, http_status: 400 },
        what,
      );
      assert.equal(error.message, 'cannot read the options: boom', what);
    }
    assert.equal(answers.answers.length, 18);
    assert.deepEqual(answers.after, FRESH, 'nothing was delivered, and the API keeps working');
  });

  test('cancel(): a running query rejects at once with query_cancelled; deliveries sent behind it are applied exactly once, without waiting for it', async () => {
    const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
    const result = await page.evaluate(
      async ([event, endless]) => {
        const lab = window.inboxLab;
        const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));
        const nothing = await lab.cancel();
        let queryEnded = false;
        const query = settle(lab.query(endless)).finally(() => (queryEnded = true));
        // Sent while the query runs: answered without waiting for it (it runs
        // in the console's own worker), in order.
        const first = settle(lab.deliver(event));
        const second = settle(lab.deliver({ ...event, event_id: 'evt-2' }));
        await Promise.all([first, second]);
        const deliveredWhileRunning = !queryEnded;
        await new Promise((resolve) => setTimeout(resolve, 300));
        const started = performance.now();
        const cancelled = await lab.cancel();
        const queryAnswer = await query;
        const rejectedAfter = performance.now() - started;
        const answers = [await first, await second];
        const repeat = await lab.deliver(event);
        return { nothing, cancelled, queryAnswer, rejectedAfter, answers, deliveredWhileRunning, repeat, tables: await lab.tables() };
      },
      [EVENT, ENDLESS],
    );
    assert.deepEqual(result.nothing, { cancelled: 0 }, 'nothing to cancel at first');
    assert.deepEqual(result.cancelled, { cancelled: 1 });
    const error = result.queryAnswer.error;
    assert.deepEqual(
      { kind: error.kind, code: error.code, field: error.field, retryable: error.retryable },
      { kind: 'invalid_input', code: 'query_cancelled', field: 'sql', retryable: false },
    );
    // "At once": long before the query's 2 s budget would have stopped it (a loaded machine
    // takes its time to replace a worker, so the bound is not a speed target).
    assert.ok(result.rejectedAfter < 1000, `rejected ${result.rejectedAfter} ms after cancel()`);
    assert.deepEqual(
      result.answers.map((a) => a.value?.outcome ?? a.error),
      ['applied', 'applied'],
    );
    assert.equal(result.deliveredWhileRunning, true, 'both deliveries were answered while the query still ran');
    assert.equal(result.repeat.outcome, 'duplicate', 'the first delivery was applied once');
    assert.deepEqual(result.tables.accounts, [{ id: 1, balance: 1000 }]);
    assert.equal(result.tables.inbox.length, 2);
  });

  test('addAccount creates an account once and checks its argument', async () => {
    const [created, again, invalid] = await page.evaluate(async () => {
      const lab = window.inboxLab;
      return [await lab.addAccount(2), await lab.addAccount(2), await lab.addAccount('2').catch((error) => error)];
    });
    assert.equal(created, true);
    assert.equal(again, false);
    assert.deepEqual({ kind: invalid.kind, field: invalid.field }, { kind: 'invalid_input', field: 'account_id' });
    assert.deepEqual((await tables(page)).accounts, [
      { id: 1, balance: 0 },
      { id: 2, balance: 0 },
    ]);
  });

  test('a reload finds the same tables (OPFS), and the receipts keep counting', async () => {
    await deliver(page, EVENT);
    await deliver(page, { ...EVENT, source: 'provider-b' });
    const before = await tables(page);
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
    assert.deepEqual(await tables(page), before);
    const next = await deliver(page, { ...EVENT, event_id: 'evt-2' });
    assert.deepEqual(next.receipt, { seq: 3, balance_after: 1500 });
  });
});

function deliver(page, event, options) {
  return page.evaluate(([e, o]) => window.inboxLab.deliver(e, o), [event, options]);
}

/** The error a delivery is rejected with; fails if it resolves. */
async function rejection(page, event, options) {
  const settled = await page.evaluate(
    ([e, o]) => window.inboxLab.deliver(e, o).then((value) => ({ value }), (error) => ({ error })),
    [event, options],
  );
  assert.ok('error' in settled, `expected a rejection, got ${JSON.stringify(settled.value)}`);
  return settled.error;
}
