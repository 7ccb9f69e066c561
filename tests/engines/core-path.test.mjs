// The page's core path in one browser engine (INBOX_LAB_ENGINE: chromium,
// firefox or webkit; engines.mjs starts its WebDriver server): deliver,
// replay, another payload, a crash after the INSERT, a lost response and the
// retry, a reload, two tabs, the SQL console's editor. Each test drives the page's real controls and
// checks what the page shows, and the database through `inboxLab`.
//
// Where the engine has OPFS (Chromium, Firefox) the database is kept across
// a reload and shared by two tabs (one owner tab runs the worker, the other
// forwards to it: www/db/tabs.js). MiniBrowser (WebKitGTK) has no OPFS here:
// the page runs on its memory fallback and says so with its banner, and the
// tests assert exactly that: the banner, the core path in memory, and that a
// reload keeps nothing.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import { engineOfRun, openSession } from './engines.mjs';
import { fillSender, freshPlayground, lab, openPage, openSection, press, pressDeliver, reloadPage, shown } from './page.mjs';

const engine = engineOfRun();

const INBOX_ROW = ['provider-a', 'evt-1', '1', '500', '#1', '500'];

describe(`the core path in ${engine.name}`, { timeout: 600_000 }, () => {
  let session;
  let driver;
  let ready;
  before(async () => {
    session = await openSession(engine);
    driver = session.driver;
    ready = await openPage(driver);
  });
  after(() => session?.close());
  beforeEach(() => freshPlayground(driver));

  test(engine.opfs ? 'opens on OPFS, with no banner' : 'opens on the memory fallback, and its banner says nothing will be kept', async () => {
    const page = await shown(driver);
    if (engine.opfs) {
      assert.deepEqual(ready, { storage: 'opfs' });
      assert.equal(page.banner, null);
    } else {
      assert.equal(ready.storage, 'memory');
      assert.deepEqual([ready.fallback.kind, ready.fallback.code], ['storage', 'no_opfs']);
      assert.equal(page.banner?.reason, 'no_opfs');
      assert.match(page.banner.text, /^Nothing will be kept\. This page keeps its database in memory/);
    }
    assert.deepEqual(page.tables, { accounts: [['1', '0']], inbox: [['empty']] });
  });

  test('deliver: applied, 200, the inbox row and the credit shown', async () => {
    await pressDeliver(driver);
    const page = await shown(driver);
    assert.deepEqual(page.answer, { outcome: 'applied', 'HTTP status': '200', receipt: '#1, balance after: 500' });
    assert.deepEqual(page.tables, { accounts: [['1', '500']], inbox: [INBOX_ROW] });
    assert.equal(page.summary, 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
    assert.deepEqual(page.timeline[0].ops, ['begin:ok', 'insert:ok', 'credit:ok', 'store_receipt:ok', 'commit:ok']);
  });

  test('replay: the same event again is a duplicate carrying the first receipt', async () => {
    await pressDeliver(driver);
    const first = await lab(driver, 'tables');
    await press(driver, '[data-redeliver="same"]');
    const page = await shown(driver);
    assert.deepEqual(page.answer, { outcome: 'duplicate', 'HTTP status': '200', receipt: '#1, balance after: 500' });
    assert.deepEqual(page.timeline[0].ops, ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok']);
    assert.deepEqual(await lab(driver, 'tables'), first, 'nothing changed');
  });

  test('another payload under the same key: payload_conflict, 422, the first record stays', async () => {
    await pressDeliver(driver);
    await press(driver, '[data-redeliver="amount"]');
    const page = await shown(driver);
    assert.deepEqual([page.answer.outcome, page.answer['HTTP status']], ['payload conflict', '422']);
    assert.match(page.answer.message, /amount 500.*amount 700/);
    assert.equal(page.log.length, 1, '4xx is not retried');
    assert.deepEqual(page.tables, { accounts: [['1', '500']], inbox: [INBOX_ROW] });
  });

  test('a crash after the INSERT: nothing stayed (read back from the database), the retry applies once', async () => {
    await fillSender(driver, { fault: 'after_insert' });
    await pressDeliver(driver);
    const page = await shown(driver);
    assert.equal(
      page.log[0],
      't=0.0 s · attempt 1 → simulated crash, 500' +
        ' | in the database now: no inbox row (provider-a, evt-1); account 1 has balance 0' +
        ' | 500: a temporary failure; retry in 1.0 s',
    );
    assert.match(page.log[1], /^t=1\.0 s · attempt 2 → applied, 200 · receipt #\d+ \| 200: stop/);
    const crashed = page.timeline[1];
    assert.deepEqual([crashed.attempt, crashed.outcome], [1, 'simulated_crash']);
    assert.deepEqual(crashed.ops, ['begin:undone', 'insert:undone', 'crash:crash', 'rollback:rollback']);
    const { accounts, inbox } = await lab(driver, 'tables');
    assert.deepEqual([accounts[0].balance, inbox.length], [500, 1], 'credited once, by the retry');
  });

  test('a lost response and the retry: applied (response lost), then duplicate, credited once', async () => {
    await fillSender(driver, { lose_response: true });
    await pressDeliver(driver);
    const page = await shown(driver);
    assert.deepEqual(page.log, [
      't=0.0 s · attempt 1 → applied, 200 · response lost' +
        ' | in the database now: the inbox row (provider-a, evt-1) is there; account 1 has balance 500' +
        ' | no answer: it may or may not have been applied; retry in 1.0 s',
      't=1.0 s · attempt 2 → duplicate, 200 · receipt #1 | 200: stop, the handler took responsibility',
    ]);
    assert.equal(page.summary, 'provider-a / evt-1: credited once. Balance of account 1: 0 → 500.');
    const { accounts, inbox } = await lab(driver, 'tables');
    assert.deepEqual([accounts[0].balance, inbox.length], [500, 1]);
  });

  if (engine.opfs) {
    test('a reload keeps the delivered event (OPFS), and the replay after it is still a duplicate', async () => {
      await pressDeliver(driver);
      assert.deepEqual(await reloadPage(driver), { storage: 'opfs' });
      assert.deepEqual((await shown(driver)).tables, { accounts: [['1', '500']], inbox: [INBOX_ROW] });
      await pressDeliver(driver);
      assert.deepEqual((await shown(driver)).answer.outcome, 'duplicate');
    });
  } else {
    test('a reload keeps nothing (memory fallback): empty tables again, and the banner still says so', async () => {
      await pressDeliver(driver);
      assert.equal((await lab(driver, 'tables')).inbox.length, 1);
      assert.equal((await reloadPage(driver)).storage, 'memory');
      const page = await shown(driver);
      assert.deepEqual(page.tables, { accounts: [['1', '0']], inbox: [['empty']] });
      assert.equal(page.banner?.reason, 'no_opfs');
      await pressDeliver(driver);
      assert.equal((await shown(driver)).answer.outcome, 'applied', 'the same event is new to the new database');
    });
  }

  test('the SQL console: its editor (CodeMirror, loaded with the Tools screen) is styled under the CSP and runs a query', async () => {
    await pressDeliver(driver);
    await driver.executeScript(() => {
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    await openSection(driver, 'tools');
    const editor = () =>
      driver.executeScript(() => {
        const root = document.querySelector('#sql-editor')?.shadowRoot;
        const view = root?.querySelector('.cm-editor');
        return view ? { display: getComputedStyle(view).display, text: root.querySelector('.cm-content').textContent } : null;
      });
    await driver.wait(async () => (await editor()) !== null, 60_000, 'the editor did not appear');
    // CodeMirror's own styles (a constructed stylesheet in its shadow root) applied: its editor is a flex column.
    assert.equal((await editor()).display, 'flex');
    await press(driver, '#sql-form button[data-sql="SELECT * FROM accounts"]');
    assert.equal((await editor()).text, 'SELECT * FROM accounts');
    const result = await driver.executeScript(() =>
      [...document.querySelectorAll('#sql-result tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent)),
    );
    assert.deepEqual(result, [['1', '500']]);
    assert.deepEqual(await driver.executeScript('return window.__violations'), [], 'no CSP violation');
    await openSection(driver, 'deliver');
  });

  test('two tabs: one database — a delivery in the second tab shows in the first, whose replay is a duplicate', async () => {
    const first = await driver.getWindowHandle();
    await driver.switchTo().newWindow('tab');
    try {
      await openPage(driver);
      const second = await shown(driver);
      assert.match(second.tabNote ?? '', /^Another tab of this page holds the database\./, 'the second tab forwards');
      await pressDeliver(driver);
      assert.equal((await shown(driver)).answer.outcome, 'applied');
    } finally {
      await driver.close();
      await driver.switchTo().window(first);
    }
    await driver.wait(async () => (await shown(driver)).tables.inbox[0]?.[0] === 'provider-a', 30_000, 'the first tab redraws');
    assert.deepEqual((await shown(driver)).tables, { accounts: [['1', '500']], inbox: [INBOX_ROW] });
    await pressDeliver(driver);
    assert.deepEqual((await shown(driver)).answer, { outcome: 'duplicate', 'HTTP status': '200', receipt: '#1, balance after: 500' });
  });
});
