// The database worker's message protocol (documented at the top of
// www/db/worker.js), spoken directly to a worker the test starts itself, and
// what the page does when its worker crashes.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { BASE_URL, DB_WORKER_SCRIPT, idle, openPage, reloadPage, tables, usePage } from './browser.mjs';

const EVENT = { source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 };

describe('the database worker', { timeout: 180_000 }, () => {
  let page;
  usePage({ open: null }, (opened) => (page = opened));

  test('announces that its script runs, then answers every request once, in order, after announcing ready — even requests sent before it was open', async () => {
    await openPage(page, '?storage=memory');
    const requests = [
      { id: 1, op: 'tables' },
      { id: 'two', op: 'deliver', args: { event: EVENT } },
      { id: 3, op: 'deliver', args: { event: EVENT, fault: null } },
      { id: 4, op: 'addAccount', args: { account_id: 2 } },
      { id: 5, op: 'drop table inbox' },
      { id: 6, op: 'deliver' },
      { id: 7, op: 'deliver', args: null },
      { id: 8, op: 'reset' },
      null,
    ];
    const messages = await talkToWorker(page, 'memory', requests);

    // "started" first, before its wasm loads: the page builds its panels then.
    assert.deepEqual(messages[0], { type: 'started' });
    const { start, ...ready } = messages[1];
    assert.deepEqual([ready, messages[2]], [
      // `stack`: the storage stack as SQLite reports it (memdb keeps its journal in memory).
      { type: 'ready', storage: 'memory', stack: { vfs: 'memdb', journal_mode: 'memory', synchronous: 'full' } },
      { type: 'busy', busy: true },
    ]);
    // `start`: how the start went, for the benchmark: its steps in order, no pool in memory.
    assert.ok(start.at.script <= start.at.wasm && start.at.wasm <= start.at.opened, JSON.stringify(start));
    assert.equal(start.opfs_ms, 0);
    assert.ok(start.check_ms >= 0 && start.check_ms <= start.at.opened - start.at.wasm + 1, JSON.stringify(start));
    assert.deepEqual(messages.at(-1), { type: 'busy', busy: false });
    const replies = messages.slice(3, -1);
    assert.deepEqual(
      replies.map((reply) => reply.id),
      [1, 'two', 3, 4, 5, 6, 7, 8, undefined],
      'one reply per request, echoing its id, in arrival order',
    );
    const [tablesReply, applied, duplicate, added, unknownOp, noArgs, nullArgs, reset, garbage] = replies;
    assert.deepEqual(tablesReply, { id: 1, ok: true, result: { accounts: [{ id: 1, balance: 0 }], inbox: [] } });
    const { steps, verdict, ...result } = applied.result;
    assert.deepEqual(result, { outcome: 'applied', http_status: 200, receipt: { seq: 1, balance_after: 500 } });
    assert.equal(steps.length, 5, 'the steps it ran come with the answer');
    assert.equal(verdict.kind, 'correct', 'and its verdict');
    assert.equal(duplicate.result.outcome, 'duplicate');
    assert.deepEqual(added, { id: 4, ok: true, result: true });
    assert.equal(unknownOp.ok, false);
    assert.equal(unknownOp.error.kind, 'invalid_input');
    assert.match(unknownOp.error.message, /unknown op "drop table inbox"/);
    for (const reply of [noArgs, nullArgs]) {
      assert.equal(reply.ok, false);
      assert.deepEqual([reply.error.kind, reply.error.field], ['invalid_input', 'event']);
    }
    assert.deepEqual(reset, { id: 8, ok: true, result: undefined });
    assert.equal(garbage.ok, false);
  });

  test('announces fatal when it cannot open the database, and answers requests with that error', async () => {
    await openPage(page, '?storage=memory');
    const messages = await talkToWorker(page, 'floppy', [{ id: 1, op: 'tables' }]);
    const [started, fatal, , reply] = messages;
    assert.deepEqual(started, { type: 'started' });
    assert.equal(fatal.type, 'fatal');
    assert.equal(fatal.error.kind, 'storage');
    assert.match(fatal.error.message, /unknown storage "floppy"/);
    assert.deepEqual(reply, { id: 1, ok: false, error: fatal.error });
  });

  test('the page builds its panels once its worker runs its script, not before (at most 500 ms after starting it)', async () => {
    // Building every panel is one long task, and a module worker's script is handed over
    // through the page's thread: built first, they held the worker back (www/db/client.js).
    for (const throttle of [1, 4]) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
      try {
        // From a blank page, as a reader arrives: the page before is gone, and with it its
        // hold on the tabs' lock (a tab that finds the lock held builds its panels at once,
        // as a follower, and starts no worker then).
        await page.goto('about:blank');
        await openPage(page);
        const marks = await page.evaluate(() =>
          Object.fromEntries(
            ['page', 'worker', 'panels'].map((name) => [name, performance.getEntriesByName(`inbox-lab:${name}`)[0]?.startTime]),
          ),
        );
        assert.ok(marks.page <= marks.worker, JSON.stringify(marks));
        assert.ok(marks.worker <= marks.panels || marks.panels - marks.page >= 500, `CPU ${throttle}×: ${JSON.stringify(marks)}`);
      } finally {
        await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
        await cdp.detach();
      }
    }
  });

  test('a worker that cannot even start fails the page clearly: ready rejects, calls reject at once', async () => {
    // A service worker would answer the script from its cache before any route: let none
    // control the page.
    const script = DB_WORKER_SCRIPT;
    await page.evaluate(async () => {
      for (const registration of (await navigator.serviceWorker?.getRegistrations()) ?? []) {
        await registration.unregister();
      }
    });
    await page.route(script, (route) => route.fulfill({ status: 404, body: 'gone' }));
    try {
      await page.goto(new URL('?storage=memory', BASE_URL).href);
      const [readyError, callError] = await page.evaluate(async () => [
        await window.inboxLab.ready.catch((error) => error),
        await window.inboxLab.tables().catch((error) => error),
      ]);
      assert.deepEqual(
        { kind: readyError.kind, http_status: readyError.http_status, retryable: readyError.retryable },
        { kind: 'storage', http_status: 500, retryable: true },
      );
      assert.match(readyError.message, /the database worker stopped/);
      assert.deepEqual(callError, readyError);
      await idle(page);
      assert.equal(await page.getAttribute('#status', 'data-phase'), 'failed');
      assert.match(await page.textContent('#status'), /Cannot use the database/);
    } finally {
      await page.unroute(script);
    }
  });

  test('?storage=memory runs in memory: the page says so, and a reload starts from scratch', async () => {
    assert.deepEqual(await openPage(page, '?storage=memory'), { storage: 'memory' });
    assert.equal(await page.textContent('#status'), 'Kept in memory only; a reload starts from scratch.');
    await page.evaluate((event) => window.inboxLab.deliver(event), EVENT);
    assert.equal((await tables(page)).inbox.length, 1);
    await reloadPage(page);
    assert.deepEqual(await tables(page), { accounts: [{ id: 1, balance: 0 }], inbox: [] });
  });

  test('after a crash the page starts a new worker on the same database; the unconfirmed call is rejected as retryable, and retrying it is safe', async () => {
    await openPage(page);
    await page.evaluate(() => window.inboxLab.reset());
    await page.evaluate((event) => window.inboxLab.deliver(event), EVENT);
    const [crashing] = page.workers();
    assert.equal(page.workers().length, 1);

    // Rust cannot be made to panic on purpose, so the test makes the worker
    // announce a crash just before its next reply, as worker.js does after a
    // trap. The delivery itself still commits: exactly the case of a sender
    // whose answer got lost.
    await crashing.evaluate(() => {
      const post = self.postMessage.bind(self);
      self.postMessage = (message) => {
        if ('id' in message) {
          const error = { kind: 'storage', message: 'RuntimeError: unreachable', http_status: 500, retryable: true };
          post({ type: 'crashed', error });
        }
        post(message);
      };
    });
    const second = { ...EVENT, event_id: 'evt-2', amount: 7 };
    const lost = await page.evaluate((event) => window.inboxLab.deliver(event).catch((error) => error), second);
    assert.equal(lost.kind, 'storage');
    assert.equal(lost.http_status, 500);
    assert.equal(lost.retryable, true);
    assert.match(lost.message, /retrying it is safe/);

    const retried = await page.evaluate((event) => window.inboxLab.deliver(event), second);
    assert.equal(retried.outcome, 'duplicate', 'the first attempt had committed; the retry says so');
    assert.deepEqual((await tables(page)).accounts, [{ id: 1, balance: 507 }]);
    await page.waitForSelector('#status[data-phase="ready"]');
    assert.equal(page.workers().length, 1);
    assert.notEqual(page.workers()[0], crashing, 'a new worker took over');
  });
});

/**
 * Starts a worker of its own in the page (storage `storage`), posts all
 * `requests` at once before it has opened the database, and returns every
 * message it sent until it answered them all and said it is no longer busy.
 */
function talkToWorker(page, storage, requests) {
  return page.evaluate(
    ({ storage, requests }) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(new URL(`www/db/worker.js?storage=${storage}`, window.location.href), {
          type: 'module',
        });
        const messages = [];
        let replies = 0;
        worker.addEventListener('message', ({ data }) => {
          messages.push(data);
          replies += 'id' in data ? 1 : 0;
          if (replies === requests.length && data.type === 'busy' && !data.busy) {
            worker.terminate();
            resolve(messages);
          }
        });
        worker.addEventListener('error', (event) => reject(new Error(`worker error: ${event.message}`)));
        for (const request of requests) {
          worker.postMessage(request);
        }
      }),
    { storage, requests },
  );
}
