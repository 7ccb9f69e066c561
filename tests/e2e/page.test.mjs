// The page as a reader uses it: type into the form, press Deliver, read the
// answer and the tables. Each test starts from a fresh database (account 1 at
// balance 0, empty inbox) in real OPFS storage, with a sender that makes one
// attempt only, so every answer here is the handler's first one (retries,
// lost responses and the rest of the playground: playground-*.test.mjs).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { idle, reloadPage, resetDatabase, reveal, screenshotPath, shownTables, usePage } from './browser.mjs';

const EXAMPLE = { source: 'provider-a', event_id: 'evt-1', account_id: '1', amount: '500', fault: '' };
const FRESH = { accounts: [['1', '0']], inbox: [['empty']] };
const AFTER_EXAMPLE = {
  accounts: [['1', '500']],
  inbox: [['provider-a', 'evt-1', '1', '500', '#1', '500']],
};

describe('the page', { timeout: 180_000 }, () => {
  let page;
  usePage(
    {
      query: '#/deliver', // the section with the sender and the tables
      beforeEach: async (opened) => {
        await resetDatabase(opened);
        await reveal(opened, '#attempts');
        await opened.fill('#attempts', '1');
      },
    },
    (opened) => (page = opened),
  );

  test('opens the database in OPFS and shows account 1 at balance 0', async () => {
    assert.equal(await page.textContent('#status'), 'Saved in your browser; survives a reload.');
    // The stack as SQLite reports it, behind the disclosure beside the line: the page's journal mode and durability, through write coalescing, and why this journal.
    assert.match(
      await page.textContent('#status-stack'),
      /Journal WAL, synchronous FULL, writes coalesced \(proven by the crash lab\)\. WAL: one flush per commit, not three\.$/,
    );
    assert.deepEqual(await shownTables(page), FRESH);
  });

  test('the form starts with the example, and "Restore the example" brings it back', async () => {
    await fill(page, { source: 'x', event_id: 'y', account_id: '7', amount: '9', fault: 'after_update' });
    await page.getByRole('button', { name: 'Restore the example' }).click();
    assert.deepEqual(await formValues(page), { ...EXAMPLE, handler: 'atomic', attempts: '5', first_delay: '1' });
    await reveal(page, '#attempts');
    await page.fill('#attempts', '1');
  });

  test('delivering the example applies it: 200, balance 500, and the inbox row holds the receipt', async () => {
    const answer = await deliver(page, EXAMPLE);
    assert.deepEqual(answer, { outcome: 'applied', 'HTTP status': '200', receipt: '#1, balance after: 500' });
    assert.deepEqual(await shownTables(page), AFTER_EXAMPLE);
    assert.equal(await page.getAttribute('#inbox tbody tr', 'class'), 'current', 'the delivered row is pointed out');
  });

  test('delivering it again is a duplicate with the same receipt, and nothing changes', async () => {
    await deliver(page, EXAMPLE);
    const again = await deliver(page, EXAMPLE);
    assert.deepEqual(again, { outcome: 'duplicate', 'HTTP status': '200', receipt: '#1, balance after: 500' });
    assert.deepEqual(await shownTables(page), AFTER_EXAMPLE);
    assert.equal(await highlighted(page), 0, 'a send that changed nothing points out no row (not the rows of the change before it)');
  });

  test('the same key with another amount is a payload_conflict (422) and nothing changes', async () => {
    await deliver(page, EXAMPLE);
    const conflict = await deliver(page, { ...EXAMPLE, amount: '700' });
    assert.equal(conflict.outcome, 'payload conflict');
    assert.equal(conflict['HTTP status'], '422');
    assert.equal(conflict.retryable, 'no: fix the request');
    assert.match(conflict.message, /amount 500.*amount 700/);
    assert.deepEqual(await shownTables(page), AFTER_EXAMPLE);
    assert.equal(await highlighted(page), 0);
  });

  for (const fault of ['after_insert', 'after_update']) {
    test(`a crash ${fault} rolls back both the inbox row and the credit, and a retry applies`, async () => {
      const crashed = await deliver(page, { ...EXAMPLE, fault });
      assert.equal(crashed.outcome, 'simulated crash');
      assert.equal(crashed['HTTP status'], '500');
      assert.equal(crashed.retryable, 'yes: deliver it again later');
      assert.deepEqual(await shownTables(page), FRESH);

      const retried = await deliver(page, EXAMPLE);
      assert.equal(retried.outcome, 'applied');
      assert.match(retried.receipt, /^#\d+, balance after: 500$/);
      assert.deepEqual((await shownTables(page)).accounts, [['1', '500']]);
    });
  }

  test('an unknown account is refused (422) and the inbox stays as it was', async () => {
    const refused = await deliver(page, { ...EXAMPLE, account_id: '42' });
    assert.equal(refused.outcome, 'unknown account');
    assert.equal(refused['HTTP status'], '422');
    assert.equal(refused.retryable, 'no: fix the request');
    assert.deepEqual(await shownTables(page), FRESH);
  });

  test('the same event_id from another source is another event: the balance grows', async () => {
    await deliver(page, EXAMPLE);
    const other = await deliver(page, { ...EXAMPLE, source: 'provider-b' });
    assert.deepEqual(other, { outcome: 'applied', 'HTTP status': '200', receipt: '#2, balance after: 1000' });
    assert.deepEqual(await shownTables(page), {
      accounts: [['1', '1000']],
      inbox: [
        // The row that changed last comes first.
        ['provider-b', 'evt-1', '1', '500', '#2', '1000'],
        ['provider-a', 'evt-1', '1', '500', '#1', '500'],
      ],
    });
  });

  test('invalid input is reported next to the field at fault, which gets the focus, and changes nothing', async () => {
    const cases = [
      ['amount', '1.5', /invalid amount: must be a number, got the string "1\.5"/],
      ['amount', '05', /invalid amount/],
      ['amount', '0', /invalid amount: must be between 1 and 1000000000/],
      ['amount', '1000000001', /invalid amount: must be between 1 and 1000000000/],
      ['amount', '', /invalid amount/],
      ['account_id', 'abc', /invalid account_id/],
      ['account_id', '-1', /invalid account_id/],
      ['source', '', /invalid source/],
      ['event_id', '   ', /invalid event_id/],
    ];
    for (const [field, value, message] of cases) {
      const answer = await deliver(page, { ...EXAMPLE, [field]: value });
      const label = `${field} = ${JSON.stringify(value)}`;
      assert.equal(answer.outcome, 'invalid input', label);
      assert.equal(answer['HTTP status'], '400', label);
      assert.match(await page.textContent(`#${field}-error`), message, label);
      assert.equal(await page.getAttribute(`#${field}`, 'aria-invalid'), 'true', label);
      assert.equal(await page.evaluate(() => document.activeElement.id), field, label);
      const visibleNotes = await page.$$eval('#deliver-form .field-error:not([hidden])', (notes) =>
        notes.map((note) => note.id),
      );
      assert.deepEqual(visibleNotes, [`${field}-error`], label);
      assert.deepEqual(await shownTables(page), FRESH, label);
    }

    await deliver(page, EXAMPLE);
    assert.deepEqual(
      await page.$$eval('#deliver-form [aria-invalid], #deliver-form .field-error:not([hidden])', (els) => els.length),
      0,
      'a valid delivery clears the old message',
    );
  });

  test('accounts can be added, and an added account can be credited', async () => {
    const added = await addAccount(page, '2');
    assert.equal(added, 'Account 2 added at balance 0.');
    assert.equal(await addAccount(page, '2'), 'Account 2 already exists.');

    await addAccount(page, '2.0');
    assert.match(await page.textContent('#new-account-error'), /invalid account_id/);
    assert.equal(await page.getAttribute('#new-account', 'aria-invalid'), 'true');

    const credited = await deliver(page, { ...EXAMPLE, account_id: '2', amount: '7' });
    assert.equal(credited.outcome, 'applied');
    assert.deepEqual((await shownTables(page)).accounts, [
      ['1', '0'],
      ['2', '7'],
    ]);
  });

  test('Reset asks first; declining keeps the data, accepting starts afresh', async () => {
    await deliver(page, EXAMPLE);
    const reset = page.getByRole('button', { name: 'Reset the database…' });

    await reveal(page, '#reset'); // on the tools section
    page.once('dialog', (dialog) => dialog.dismiss());
    await reset.click();
    await idle(page);
    assert.deepEqual(await shownTables(page), AFTER_EXAMPLE);

    page.once('dialog', (dialog) => dialog.accept());
    await reset.click();
    await idle(page);
    assert.deepEqual(await shownTables(page), FRESH);
    assert.equal(await page.textContent('#answer'), 'Nothing delivered yet.');
  });

  test('a reload shows the same tables: the database lives in OPFS', async () => {
    await deliver(page, EXAMPLE);
    await deliver(page, { ...EXAMPLE, source: 'provider-b' });
    const before = await shownTables(page);
    await reloadPage(page);
    assert.deepEqual(await shownTables(page), before);
    assert.equal(before.inbox.length, 2);
  });

  test('the first op the start module leaves out hands the database to the full module, and nothing delivered is lost', async () => {
    // A fresh worker (beforeEach reloaded the page) runs the start module: step mode is not in it.
    await deliver(page, EXAMPLE);
    const raced = () => page.evaluate(() => window.inboxLab.race.explore('atomic').then((r) => r.double_credits, (e) => e.kind));
    const stepped = { source: 'provider-b', event_id: 'evt-1', account_id: 1, amount: 500 };
    await page.evaluate((event) => window.inboxLab.step.start(event), stepped);
    assert.equal(await raced(), 0, 'handed over before the stepped delivery began: the race lab runs while it is open');
    await page.evaluate(() => window.inboxLab.step.throw().catch(() => null));
    await deliver(page, { ...EXAMPLE, source: 'provider-c' });
    const mistaken = await page.evaluate((event) => window.inboxLab.deliver(event, { handler: 'no_dedup' }).then((r) => r.verdict.kind), stepped);
    assert.equal(mistaken, 'correct', 'a first delivery by a mistaken handler credits once');
    const held = () => page.evaluate(() => window.inboxLab.tables());
    const before = await held();
    assert.deepEqual(before.accounts, [{ id: 1, balance: 1500 }]);
    // no_dedup credits without an inbox row (its mistake); the stepped delivery was rolled back.
    assert.deepEqual(before.inbox.map((row) => row.source).sort(), ['provider-a', 'provider-c']);
    await reloadPage(page);
    assert.deepEqual(await held(), before, 'what both modules committed is in OPFS');
  });

  test('works from the keyboard alone, with a visible focus', async () => {
    // From the amount field on (the full order is in playground-layout.test.mjs).
    await reveal(page, '#amount');
    await page.focus('#amount');
    const order = [];
    for (let i = 0; i < 6; i += 1) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement.id || document.activeElement.textContent));
    }
    assert.deepEqual(order, ['handler', 'fault', 'lose_response', 'attempts', 'first_delay', 'Deliver']);
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'the focused button shows an outline');

    await page.keyboard.press('Enter');
    await idle(page);
    assert.equal((await shownAnswer(page)).outcome, 'applied');
  });

  test('layout: side by side at 1280×800, one column without sideways scrolling at 400px', async () => {
    await deliver(page, EXAMPLE);
    await deliver(page, { ...EXAMPLE, source: 'provider-b' });
    await deliver(page, { ...EXAMPLE, amount: '1.5' });

    await page.setViewportSize({ width: 1280, height: 800 });
    const form = await page.locator('#deliver-form').boundingBox();
    const tablesBox = await page.locator('#accounts').boundingBox();
    assert.ok(tablesBox.x > form.x + form.width, 'the tables stand to the right of the form');
    await page.screenshot({ path: await screenshotPath('page-1280x800.png') });
    await page.screenshot({ path: await screenshotPath('page-1280-full.png'), fullPage: true });

    await page.setViewportSize({ width: 400, height: 800 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.equal(overflow, 0, 'the page does not scroll sideways at 400px');
    await page.screenshot({ path: await screenshotPath('page-400x800.png') });
    await page.screenshot({ path: await screenshotPath('page-400-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});

/** Types `fields` into the delivery form. */
async function fill(page, { source, event_id, account_id, amount, fault }) {
  await reveal(page, '#source');
  await page.fill('#source', source);
  await reveal(page, '#event_id');
  await page.fill('#event_id', event_id);
  await reveal(page, '#account_id');
  await page.fill('#account_id', account_id);
  await reveal(page, '#amount');
  await page.fill('#amount', amount);
  await reveal(page, '#fault');
  await page.selectOption('#fault', fault);
}

function formValues(page) {
  return page.$eval('#deliver-form', (form) => Object.fromEntries(new FormData(form)));
}

/** Fills the form, presses Deliver, waits for the answer and the tables, returns the answer. */
async function deliver(page, fields) {
  await fill(page, fields);
  await page.getByRole('button', { name: 'Deliver', exact: true }).click();
  await idle(page);
  return shownAnswer(page);
}

/** The answer box as `{outcome, 'HTTP status', retryable?, message?, receipt?}`. */
function shownAnswer(page) {
  return page.$$eval('#answer dd', (dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.term, dd.textContent])));
}

/** How many rows of the two tables are pointed out as changed by the last send. */
function highlighted(page) {
  return page.$$eval('#accounts tbody tr.current, #inbox tbody tr.current', (rows) => rows.length);
}

async function addAccount(page, id) {
  await reveal(page, '#new-account');
  await page.fill('#new-account', id);
  await page.getByRole('button', { name: 'Add account' }).click();
  await idle(page);
  return page.textContent('#tables-note');
}
