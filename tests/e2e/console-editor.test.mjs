// The SQL console's editor (www/panels/console/editor.js, CodeMirror 6), its
// schema and its history (sqlconsole.js, history.js), as a reader uses them
// from the keyboard, with the page's own CSP on: typing and Ctrl+Enter (or
// Cmd+Enter) run; Escape cancels a running query; completion offers the
// database's real column names; the schema lists what the database reports
// and a click inserts a name; the history survives a reload, re-runs from
// the keyboard, and a hostile stored value is dropped without a word; Tab
// leaves the editor; no `securitypolicyviolation` anywhere, and the editor is
// styled (its constructed stylesheet applied); the editor is fetched only
// when the console is first shown.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { goTo, idle, openPage, reloadPage, usePage, watchViolations } from './browser.mjs';

const HISTORY_KEY = 'inbox-lab.sql-history.v1';
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

/** The editor's text. */
function editorText(page) {
  return page.$eval('#sql', (content) => [...content.querySelectorAll('.cm-line')].map((line) => line.textContent).join('\n'));
}

/** Replaces the editor's text by typing it, as a reader does: click, select all, type. */
async function typeSql(page, sql) {
  await page.click('#sql');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(sql);
}

/** The result table's data cells. */
function cells(page) {
  return page.$$eval('#sql-result td', (tds) => tds.map((td) => td.textContent));
}

/** The history list's entries, as shown. */
function historyShown(page) {
  return page.$$eval('#sql-history option', (options) => options.map((option) => option.textContent));
}

/**
 * The completion list once it is the one for the text typed: while typing, CodeMirror may open
 * a list for an earlier prefix (on a busy machine, "S" offers only `SELECT`), so the list is read
 * until `settled(list)` holds or 10 s have passed; the caller asserts on what it returns.
 */
async function completionList(page, settled) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await page.waitForSelector('.cm-tooltip-autocomplete li');
    const list = await page.$$eval('.cm-tooltip-autocomplete li', (items) => items.map((item) => item.textContent));
    if (settled(list) || Date.now() > deadline) return list;
    await page.waitForTimeout(50);
  }
}

/** Waits until the schema is drawn (its first table button). */
function schemaDrawn(page) {
  return page.waitForSelector('#sql-schema .sql-tables button[data-name]');
}

describe('the SQL console’s editor, schema and history', { timeout: 180_000 }, () => {
  let page;
  let problems;
  usePage({ prepare: watchViolations, open: null }, (opened, browser) => {
    page = opened;
    problems = browser.problems;
  });

  test('the editor is styled, named, and the page sees no CSP violation while it is used', async () => {
    // The editor is a chunk of its own, fetched when the console is first shown.
    const editorFetches = () =>
      page.evaluate(() => performance.getEntriesByType('resource').filter((entry) => /\/assets\/editor-[\w-]+\.js$/.test(entry.name)).length);
    await openPage(page, '?storage=memory');
    assert.equal(await editorFetches(), 0, 'not fetched for the start screen');
    assert.equal(await page.$('#sql'), null);
    await goTo(page, 'tools');
    await page.waitForSelector('#sql');
    await schemaDrawn(page);
    assert.equal(await editorFetches(), 1, 'fetched once the Tools screen is shown');
    // CodeMirror's own rules (a constructed stylesheet in the editor's shadow
    // root) and the page's theme are applied.
    const look = await page.$eval('#sql', (content) => {
      const keyword = [...content.querySelectorAll('span')].find((span) => span.textContent === 'SELECT');
      return {
        whiteSpace: getComputedStyle(content).whiteSpace,
        border: getComputedStyle(content.closest('.cm-editor')).borderTopStyle,
        keyword: keyword ? getComputedStyle(keyword).color : null,
        text: getComputedStyle(content).color,
        sheets: content.getRootNode().adoptedStyleSheets.length,
        styleElements: document.querySelectorAll('style').length + content.getRootNode().querySelectorAll('style').length,
        role: content.getAttribute('role'),
        name: content.getAttribute('aria-label'),
      };
    });
    assert.match(look.whiteSpace, /^(pre-wrap|break-spaces)$/, 'CodeMirror’s base theme applies');
    assert.equal(look.border, 'solid', 'the page’s theme applies');
    assert.ok(look.keyword !== null && look.keyword !== look.text, `SELECT is highlighted (${look.keyword} vs ${look.text})`);
    assert.ok(look.sheets > 0, 'the styles come from a constructed stylesheet');
    assert.equal(look.styleElements, 0, 'no <style> element anywhere');
    assert.deepEqual([look.role, look.name], ['textbox', 'One SELECT or read-only PRAGMA']);

    // Use it: type over a selection, complete, run, insert from the schema, switch the language.
    await typeSql(page, 'SELECT bal');
    await page.waitForSelector('.cm-tooltip-autocomplete');
    await page.keyboard.press('Enter');
    await page.keyboard.type(' FROM accounts');
    await page.keyboard.press('Control+Enter');
    await idle(page);
    await page.click('#sql-schema button[data-name="inbox"]');
    await page.evaluate(() => window.inboxLab.setLanguage('ru'));
    assert.equal(await page.getAttribute('#sql', 'aria-label'), 'Один SELECT или PRAGMA только для чтения');
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });

  test('typing and Ctrl+Enter run the query; Cmd+Enter too; the result shows under it', async () => {
    await typeSql(page, 'SELECT 6 * 7 AS answer');
    await page.keyboard.press('Control+Enter');
    await idle(page);
    assert.deepEqual(await cells(page), ['42']);
    await typeSql(page, 'SELECT 7 * 8');
    await page.keyboard.press('Meta+Enter');
    await idle(page);
    assert.deepEqual(await cells(page), ['56']);
    assert.equal(await editorText(page), 'SELECT 7 * 8', 'Ctrl/Cmd+Enter ran the query and added no new line');
  });

  test('completion offers the real column names, bare and after a table’s name', async () => {
    // The schema is read by a console query of its own: let it arrive first,
    // or it replaces the completion list under the keyboard.
    await schemaDrawn(page);
    await idle(page);
    await typeSql(page, 'SELECT receipt_s');
    const offered = await completionList(page, (list) => list.includes('receipt_seqinbox'));
    assert.ok(offered.includes('receipt_seqinbox'), `offered: ${offered.join(' | ')}`);
    // CodeMirror ignores Enter for 75 ms after a list opens (its `interactionDelay`, so a fast
    // typist's Enter is not taken as a choice): wait that out, as a person's pause would.
    await page.waitForTimeout(150);
    await page.keyboard.press('Enter');
    assert.equal(await editorText(page), 'SELECT receipt_seq');

    await page.keyboard.type(', accounts.');
    const ownColumns = (list) => list.some((c) => c.startsWith('balance')) && list.some((c) => c.startsWith('id'));
    const columns = await completionList(page, (list) => ownColumns(list) && !list.some((c) => c.startsWith('receipt_seq')));
    assert.ok(ownColumns(columns), `after "accounts.": ${columns.join(' | ')}`);
    assert.ok(!columns.some((c) => c.startsWith('receipt_seq')), 'only the table’s own columns after its name');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.cm-tooltip-autocomplete', { state: 'detached' });
  });

  test('the schema lists the database’s tables, columns and indexes; a click inserts a name', async () => {
    const tables = await page.$$eval('#sql-schema .sql-tables > li', (items) =>
      items.map((item) => [item.querySelector('button').textContent, [...item.querySelectorAll('.sql-columns button')].map((b) => b.textContent)]),
    );
    const byName = Object.fromEntries(tables);
    assert.deepEqual(byName.accounts, ['id', 'balance']);
    assert.deepEqual(byName.inbox, ['source', 'event_id', 'account_id', 'amount', 'receipt_seq', 'balance_after', 'received_at']);
    assert.ok(!tables.some(([name]) => name.startsWith('sqlite_')), 'SQLite’s own tables are left out');
    // What the database itself reports, table for table.
    const reported = await page.evaluate(() =>
      window.inboxLab.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"),
    );
    assert.deepEqual(tables.map(([name]) => name), reported.rows.map(([name]) => name));
    assert.match(await page.textContent('#sql-schema .sql-tables > li:nth-child(2) .sql-indexes'), /sqlite_autoindex_inbox_\d \(source, event_id\)/);

    await typeSql(page, 'SELECT  FROM accounts');
    for (let i = 0; i < ' FROM accounts'.length; i += 1) {
      await page.keyboard.press('ArrowLeft');
    }
    await page.click('#sql-schema button[data-name="balance"]');
    assert.equal(await editorText(page), 'SELECT balance FROM accounts');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'sql-editor', 'the focus is back in the editor');
  });

  test('the schema is read again after a reset', async () => {
    // Each reading draws a new list: the one shown now goes when it is read again.
    const shown = await page.$('#sql-schema .sql-tables');
    await page.evaluate(() => window.inboxLab.reset());
    await page.waitForFunction((list) => !list.isConnected, shown);
    await idle(page);
    await schemaDrawn(page);
    assert.ok((await page.$$('#sql-schema .sql-tables > li')).length > 0);
  });

  test('Escape in the editor cancels a running query', async () => {
    await typeSql(page, ENDLESS);
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('#sql-cancel', { state: 'visible' });
    await page.keyboard.press('Escape');
    await page.waitForSelector('#sql-error:not([hidden])');
    assert.equal(await page.textContent('#sql-error'), 'You cancelled the query before it finished; nothing was changed.');
    assert.equal(await page.getAttribute('#sql', 'aria-invalid'), 'true');
    await page.waitForSelector('#sql-cancel', { state: 'hidden' });
    await idle(page);
    // The next query runs on the new worker, and the message goes.
    await typeSql(page, 'SELECT 1');
    await page.keyboard.press('Control+Enter');
    await idle(page);
    assert.deepEqual(await cells(page), ['1']);
    assert.equal(await page.isHidden('#sql-error'), true);
    assert.equal(await page.getAttribute('#sql', 'aria-invalid'), null);
  });

  test('Tab leaves the editor (to Run), Shift+Tab comes back; the editor never takes a tab', async () => {
    await typeSql(page, 'SELECT 1');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.matches('#sql-form button[type=submit]')), true);
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'sql-editor');
    assert.equal(await page.evaluate(() => document.activeElement.shadowRoot.activeElement?.id), 'sql');
    assert.equal(await editorText(page), 'SELECT 1');
  });

  test('the history keeps every query run, newest first, survives a reload, and re-runs from the keyboard', async () => {
    for (const sql of ['SELECT 1 AS one', 'SELECT 2 AS two', 'SELEKT broken', 'SELECT 1 AS one']) {
      await typeSql(page, sql);
      await page.keyboard.press('Control+Enter');
      await idle(page);
    }
    const before = await historyShown(page);
    assert.deepEqual(before.slice(0, 3), ['SELECT 1 AS one', 'SELEKT broken', 'SELECT 2 AS two'], 'newest first, one entry per text, refused ones too');

    await reloadPage(page);
    await goTo(page, 'tools');
    assert.deepEqual(await historyShown(page), before, 'the same list after a reload');
    // From the keyboard: into the list, the third entry, Enter runs it again.
    await page.focus('#sql-history');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await idle(page);
    assert.equal(await editorText(page), 'SELECT 2 AS two');
    assert.deepEqual(await cells(page), ['2']);
    assert.equal((await historyShown(page))[0], 'SELECT 2 AS two', 'a re-run moves it to the top');
    // "Into the editor" loads one without running it.
    await page.focus('#sql-history');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    assert.equal(await editorText(page), 'SELECT 1 AS one');
    assert.deepEqual(await cells(page), ['2'], 'loaded, not run');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'sql-editor');
  });

  test('a hostile or garbled stored history is dropped, never thrown on; a long one is cut to 50', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `SELECT ${i}`);
    for (const [raw, shown] of [
      ['{', []],
      ['null', []],
      ['{"length": 3}', []],
      ['"SELECT 1"', []],
      ['[1, 2]', []],
      ['["SELECT 1", {"toString": null}]', []],
      ['[""]', []],
      [JSON.stringify(['x'.repeat(10_001)]), []],
      ['["<img src=x onerror=alert(1)>"]', ['<img src=x onerror=alert(1)>']],
      [JSON.stringify(long), long.slice(0, 50)],
    ]) {
      await page.evaluate(([key, value]) => localStorage.setItem(key, value), [HISTORY_KEY, raw]);
      await reloadPage(page);
      await goTo(page, 'tools');
      assert.deepEqual(await historyShown(page), shown, raw.slice(0, 40));
      assert.equal(await page.isHidden('#sql-history-empty'), shown.length > 0, raw.slice(0, 40));
      assert.equal(await page.$$eval('#sql-history img', (images) => images.length), 0, 'text, never markup');
    }
    // And a query run after a garbled value stores a clean list.
    await page.evaluate((key) => localStorage.setItem(key, '{garbage'), HISTORY_KEY);
    await reloadPage(page);
    await goTo(page, 'tools');
    await typeSql(page, 'SELECT 3');
    await page.keyboard.press('Control+Enter');
    await idle(page);
    assert.deepEqual(JSON.parse(await page.evaluate((key) => localStorage.getItem(key), HISTORY_KEY)), ['SELECT 3']);
    assert.deepEqual(problems, [], 'nothing thrown');
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
  });
});
