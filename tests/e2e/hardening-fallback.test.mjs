// No OPFS, and OPFS held by someone else: the page never goes blank.
//
// Each way OPFS can be missing is forced for real:
// * `?storage=memory` — asked for;
// * a worker whose `navigator.storage.getDirectory()` rejects with a
//   SecurityError (what a private window does), so Rust's pool install really
//   fails: www/db/opfs-refused.js, a test-only module that no page imports (the
//   static build has no test switch), started bare beside the page;
// * `navigator.storage.getDirectory` deleted by an init script — a browser
//   without OPFS;
// * an insecure origin — the same server reached as http://inbox-lab.test
//   (Chromium's host resolver maps the name to 127.0.0.1): not a secure
//   context, so no OPFS, no Web Locks, no crypto.randomUUID.
// Each time the database opens in memory, a banner says nothing will be
// kept and why, and the page works. Then: the OPFS database held by a worker
// outside the tab election (NoModificationAllowedError) is waited for and
// retried, and — if it is never released — explained, not hung.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { BASE_URL, assertNoProblems, launch, openPage, reloadPage, usePage } from './browser.mjs';

const EVENT = { source: 'fallback', event_id: 'evt-1', account_id: 1, amount: 500 };

/** What the banner says, and whether it shows. */
function banner(page) {
  return page.evaluate(() => {
    const el = document.querySelector('#storage-banner');
    return { shown: !el.hidden, reason: el.dataset.reason, text: el.textContent };
  });
}

/** The page is alive: its status line says ready and it has content. */
async function assertUsable(page) {
  // Ready (perhaps briefly "working" while the tables are drawn), not failed.
  await page.waitForSelector('#status[data-phase="ready"]');
  assert.ok((await page.evaluate(() => document.body.innerText.length)) > 200, 'not a blank page');
  const answer = await page.evaluate((e) => window.inboxLab.deliver(e), EVENT);
  assert.equal(answer.outcome, 'applied');
  assert.equal((await page.evaluate(() => window.inboxLab.tables())).inbox.length, 1);
}

describe('when OPFS cannot be used, the database is in memory and the page says so', { timeout: 240_000 }, () => {
  let page;
  usePage({ open: null }, (opened) => (page = opened));

  test('with OPFS: no banner, and an event survives a reload', async () => {
    assert.deepEqual(await openPage(page), { storage: 'opfs' });
    await page.evaluate(() => window.inboxLab.reset());
    await page.evaluate((e) => window.inboxLab.deliver({ ...e, event_id: 'kept' }), EVENT);
    assert.equal((await banner(page)).shown, false);
    await reloadPage(page);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['kept']);
  });

  test('?storage=memory: banner "nothing will be kept", works, gone after a reload; OPFS untouched', async () => {
    assert.deepEqual(await openPage(page, '?storage=memory'), { storage: 'memory' });
    const shown = await banner(page);
    assert.deepEqual([shown.shown, shown.reason], [true, 'requested']);
    assert.match(shown.text, /^Nothing will be kept\. .*in memory.*\?storage=memory/);
    await assertUsable(page);
    // The first race-lab op hands the database to the full module: in memory, its bytes go along.
    const before = await page.evaluate(() => window.inboxLab.tables());
    assert.equal(await page.evaluate(() => window.inboxLab.race.explore('atomic').then((r) => r.double_credits)), 0);
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), before, 'handed over with its rows');
    await reloadPage(page);
    assert.equal((await page.evaluate(() => window.inboxLab.tables())).inbox.length, 0, 'nothing was kept');
    assert.equal((await banner(page)).shown, true, 'the banner stays');
    await openPage(page);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['kept']);
  });

  test('OPFS refused (www/db/opfs-refused.js): the pool install really fails; memory, with the reason', async () => {
    await openPage(page, '?storage=memory'); // takes no part in the owner election
    const answers = await page.evaluate(
      (event) =>
        new Promise((resolve) => {
          const url = new URL('www/db/opfs-refused.js?storage=opfs', window.location.href);
          const worker = new Worker(url, { type: 'module' });
          const seen = { replies: [] };
          worker.addEventListener('message', ({ data }) => {
            if (data.type === 'ready') {
              seen.ready = data;
              worker.postMessage({ id: 1, op: 'deliver', args: { event } });
              worker.postMessage({ id: 2, op: 'tables' });
            } else if ('id' in data) {
              seen.replies.push(data);
              if (seen.replies.length === 2) {
                worker.terminate();
                resolve(seen);
              }
            }
          });
        }),
      EVENT,
    );
    const { ready, replies } = answers;
    assert.equal(ready.storage, 'memory');
    assert.deepEqual(
      { kind: ready.fallback.kind, code: ready.fallback.code, retryable: ready.fallback.retryable },
      { kind: 'storage', code: 'opfs_unavailable', retryable: true },
    );
    assert.match(ready.fallback.message, /OPFS storage is unavailable: .*SecurityError.*refused OPFS/);
    assert.equal(replies[0].result.outcome, 'applied', 'it works, in memory');
    assert.equal(replies[1].result.inbox.length, 1);
    // The reader's stored database was never touched.
    await openPage(page);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['kept']);
  });

  test('a database file held outside the tab election: waited for, retried, opened once released', async () => {
    await page.goto('about:blank'); // this profile's owner tab lets go of the database
    const holder = await holdDatabase(page.context());
    await page.goto(BASE_URL);
    await page.waitForSelector('#tab-note:not([hidden])');
    assert.match(await page.textContent('#tab-note'), /Waiting for another tab or worker to release the database file \(attempt \d+ of 20\)/);
    await holder.release();
    assert.deepEqual(await page.evaluate(() => window.inboxLab.ready), { storage: 'opfs' });
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['kept']);
    assert.equal(await page.isHidden('#tab-note'), true);
  });

  test('never released: after the retries the page explains (storage/in_use), it does not hang', async () => {
    await page.goto('about:blank');
    const holder = await holdDatabase(page.context());
    await page.goto(BASE_URL);
    const error = await page.evaluate(() => window.inboxLab.ready.catch((e) => e));
    assert.deepEqual(
      { kind: error.kind, code: error.code, retryable: error.retryable },
      { kind: 'storage', code: 'in_use', retryable: true },
    );
    assert.match(error.message, /held by another tab, window or worker .* not released within [\d.]+ s; close the other inbox-lab tabs and reload \(.*NoModificationAllowedError/);
    await page.waitForSelector('#status[data-phase="failed"]');
    const call = await page.evaluate(() => window.inboxLab.tables().catch((e) => e));
    assert.equal(call.code, 'in_use', 'calls are answered with the explanation');
    await holder.release();
    assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
  });

  test('reloads racing the old worker keep the database', async () => {
    await openPage(page);
    for (let i = 0; i < 5; i += 1) {
      assert.deepEqual(await reloadPage(page), { storage: 'opfs' });
    }
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).inbox.map((r) => r.event_id), ['kept']);
  });
});

describe('a browser without OPFS (getDirectory missing)', { timeout: 120_000 }, () => {
  let browser;
  before(async () => {
    browser = await launch();
    await browser.page.addInitScript(() => {
      delete StorageManager.prototype.getDirectory;
    });
  });
  after(() => browser.close());

  test('opens in memory with the banner: no_opfs', async () => {
    const ready = await openPage(browser.page);
    assert.equal(ready.storage, 'memory');
    assert.deepEqual([ready.fallback.code, ready.fallback.retryable], ['no_opfs', false]);
    const shown = await banner(browser.page);
    assert.deepEqual([shown.shown, shown.reason], [true, 'no_opfs']);
    assert.match(shown.text, /Nothing will be kept\..*no origin private file system/);
    await assertUsable(browser.page);
    assertNoProblems(browser.problems);
  });
});

describe('an insecure origin (http, not localhost)', { timeout: 120_000 }, () => {
  let browser;
  // The page's own URL with another host name (the path kept: it may be under a sub-path).
  const insecure = new URL(BASE_URL);
  insecure.hostname = 'inbox-lab.test';
  before(async () => {
    browser = await launch({ args: ['--host-resolver-rules=MAP inbox-lab.test 127.0.0.1'] });
  });
  after(() => browser.close());

  test('opens in memory with the banner: insecure_context; the tab keeps its own worker', async () => {
    const page = browser.page;
    await page.goto(insecure.href);
    assert.equal(await page.evaluate(() => window.isSecureContext), false);
    const ready = await page.evaluate(() => window.inboxLab.ready);
    assert.equal(ready.storage, 'memory');
    assert.deepEqual([ready.fallback.code, ready.fallback.retryable], ['insecure_context', false]);
    await page.waitForSelector('main[aria-busy="false"]', { state: 'attached' });
    const shown = await banner(page);
    assert.deepEqual([shown.shown, shown.reason], [true, 'insecure_context']);
    assert.match(shown.text, /not served from a secure origin/);
    assert.equal(page.workers().length, 1, 'no Web Locks here: every tab is on its own');
    await assertUsable(page);
    assertNoProblems(browser.problems);
  });
});

/**
 * Starts, in a page of its own that takes no part in the owner election
 * (`?storage=memory`), a bare database worker on OPFS: it holds the file's
 * access handles like a worker of another, older copy of the page would.
 * Returns `{release()}`, which terminates it.
 */
async function holdDatabase(context) {
  const page = await context.newPage();
  await page.goto(new URL('?storage=memory', BASE_URL).href);
  await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(new URL('www/db/worker.js?storage=opfs', window.location.href), { type: 'module' });
        window.__holder = worker;
        worker.addEventListener('message', ({ data }) => {
          if (data.type === 'ready') {
            resolve();
          } else if (data.type === 'fatal') {
            reject(new Error(JSON.stringify(data.error)));
          }
        });
      }),
  );
  return {
    async release() {
      await page.evaluate(() => window.__holder.terminate());
      await page.close();
    },
  };
}
