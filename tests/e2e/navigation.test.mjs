// One screen per section (www/panels/nav/nav.js): deep links, back and
// forward, the skip link, every section reachable by keyboard; the answer
// next to the action (www/lib/strip.js) in view after acting, at 1280×800
// and at 400×850; the flow picture (www/panels/flow/flow.js) lit step by
// step from the steps Rust returned; the focus kept when a button disables
// itself (www/lib/focus.js).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { goTo, idle, openPage, reloadPage, reveal } from './browser.mjs';
import { stateOf } from '../../www/lib/timeline.js';
import { WIDE, fillSender, press, pressDeliver, useWidePlayground } from './playground.mjs';

const PHONE = { width: 400, height: 850 };

/** Every section, in the order of the section list. */
const SECTIONS = ['start', 'levels', 'deliver', 'race', 'handler', 'crash', 'scheme-ends', 'webhooks', 'workshop', 'tools'];

/** The section shown, and which link says so. */
function shown(page) {
  return page.evaluate(() => ({
    screens: [...document.querySelectorAll('main .screen')].filter((s) => !s.hidden).map((s) => s.dataset.screen),
    current: [...document.querySelectorAll('nav.sections a[aria-current="page"]')].map((a) => a.dataset.route),
  }));
}

/** Whether the element is wholly inside the window (no scrolling needed to see it). */
async function inView(page, selector) {
  const seen = await page.evaluate((selector) => {
    const box = document.querySelector(selector).getBoundingClientRect();
    return box.height > 0 && box.top >= -1 && box.bottom <= window.innerHeight + 1 && box.left >= 0 && box.right <= window.innerWidth
      ? true
      : `top ${box.top}, bottom ${box.bottom}, height ${box.height}, window ${window.innerWidth}×${window.innerHeight}`;
  }, selector);
  return seen;
}

/** The table each op touches in the flow picture. */
const TABLE_OF = { insert: 'inbox', insert_or_ignore: 'inbox', insert_or_replace: 'inbox', check: 'inbox', read_stored: 'inbox', store_receipt: 'inbox', credit: 'accounts' };

/**
 * The transactions the steps ran, read from their BEGIN, COMMIT and ROLLBACK
 * alone, as "transaction<n>:<tables>:<state of its last boundary>", and the
 * statements outside any as "outside:<tables>:idle"; then each transaction
 * a crash left out before it began (Rust's `not_reached`) as
 * "transaction<n>:<tables>:not_reached"; with each step's transaction (null
 * outside any).
 */
function transactionsOf(steps, notReached = []) {
  const groups = [];
  let open = null;
  let count = 0;
  const tx = steps.map((step) => {
    if (step.op === 'begin' && open === null) {
      count += 1;
      open = count;
    }
    const table = TABLE_OF[step.op];
    const mine = open;
    if (mine !== null || table !== undefined) {
      const name = mine === null ? 'outside' : `transaction${mine}`;
      if (groups.at(-1)?.name !== name) {
        groups.push({ name, tables: [], state: 'idle' });
      }
      const group = groups.at(-1);
      if (table !== undefined && !group.tables.includes(table)) {
        group.tables.push(table);
      }
      if (['begin', 'commit', 'rollback'].includes(step.op)) {
        group.state = stateOf(step);
      }
    }
    if (step.op === 'commit' || step.op === 'rollback') {
      open = null;
    }
    return mine;
  });
  for (const { op, tx } of notReached) {
    if (tx !== null && tx > count) {
      if (groups.at(-1)?.name !== `transaction${tx}`) {
        groups.push({ name: `transaction${tx}`, tables: [], state: 'not_reached' });
      }
      const table = TABLE_OF[op];
      if (table !== undefined && !groups.at(-1).tables.includes(table)) {
        groups.at(-1).tables.push(table);
      }
    }
  }
  const order = ['inbox', 'accounts'];
  return {
    groups: groups.map((g) => `${g.name}:${order.filter((t) => g.tables.includes(t)).join('+')}:${g.state}`),
    tx,
  };
}

const focused = (page) =>
  page.evaluate(() => {
    const active = document.activeElement;
    return active.id || active.dataset.route || active.className || active.tagName;
  });

describe('navigation, the answer next to the action, the flow picture', { timeout: 240_000 }, () => {
  let page;
  useWidePlayground((opened) => (page = opened));

  test('a deep link opens its section (or the section holding a panel); anything else opens the start', async () => {
    for (const route of SECTIONS) {
      await openPage(page, `#/${route}`);
      assert.deepEqual(await shown(page), { screens: [route], current: [route] }, route);
    }
    await openPage(page, '#/race-lab');
    assert.deepEqual(await shown(page), { screens: ['race'], current: ['race'] });
    assert.equal(await inView(page, '#race-lab-title'), true, 'scrolled to the panel, not hidden under the sticky list');
    await openPage(page, '#/stepper');
    assert.deepEqual((await shown(page)).screens, ['deliver']);
    for (const unknown of ['#/no-such-section', '#/', '#stepper', '#/timeline', '#/../deliver']) {
      await openPage(page, unknown);
      assert.deepEqual(await shown(page), { screens: ['start'], current: ['start'] }, unknown);
    }
    // The start screen leads into the lab, and to the first level, in one click.
    // (A link's hashchange is handled a task after the click: wait for the screen it opens.)
    const opened = (screen) => page.waitForFunction((screen) => document.querySelector(`[data-screen="${screen}"]`)?.hidden === false, screen);
    await page.click('#start a.button[href="#/deliver"]');
    await opened('deliver');
    assert.deepEqual((await shown(page)).screens, ['deliver']);
    await openPage(page, '#/start');
    await page.click('#start a.button[href="#/levels/1"]');
    await opened('levels');
    assert.deepEqual(await shown(page), { screens: ['levels'], current: ['levels'] });
    // A level's own link opens the levels screen with that level.
    await openPage(page, '#/levels/3');
    assert.deepEqual(await shown(page), { screens: ['levels'], current: ['levels'] });
    assert.match(await page.textContent('#level-title'), /^Level 3:/);
  });

  test('the section list changes the hash, and back and forward walk through the sections', async () => {
    await openPage(page, '#/start');
    await page.click('nav.sections a[data-route="deliver"]');
    await page.click('nav.sections a[data-route="tools"]');
    await page.click('nav.sections a[data-route="crash"]');
    assert.equal(new URL(page.url()).hash, '#/crash');
    await page.goBack();
    assert.deepEqual((await shown(page)).screens, ['tools']);
    await page.goBack();
    assert.deepEqual((await shown(page)).screens, ['deliver']);
    await page.goForward();
    assert.deepEqual(await shown(page), { screens: ['tools'], current: ['tools'] });
  });

  test('a hidden section keeps working: a delivery sent from the console API shows when its section opens', async () => {
    await goTo(page, 'tools');
    await page.evaluate(() => window.inboxLab.send({ source: 'provider-a', event_id: 'evt-9', account_id: 1, amount: 9 }));
    await goTo(page, 'deliver');
    assert.match(await page.textContent('#timeline'), /evt-9/);
    assert.equal(await page.textContent('#accounts tbody td.number'), '9');
  });

  test('keyboard: the skip link comes first and lands in the section; every section is reachable; Deliver in 16 keys', async () => {
    await goTo(page, 'deliver');
    await reloadPage(page);
    await page.keyboard.press('Tab'); // the first key on a page just loaded
    assert.equal(await focused(page), 'skip-link');
    assert.equal(await inView(page, '.skip-link'), true, 'shown while focused');
    await page.keyboard.press('Enter');
    assert.equal(await focused(page), 'screen-deliver-title');
    assert.equal(new URL(page.url()).hash, '#/deliver', 'the skip link does not change the section');
    // From there: the five presets, the nine fields, Deliver.
    for (let i = 0; i < 15; i += 1) {
      await page.keyboard.press('Tab');
    }
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Deliver');
    await page.keyboard.press('Enter');
    await idle(page);
    assert.match(await page.textContent('#deliver-form .strip'), /^provider-a \/ evt-1 · applied · HTTP 200/);

    // Every section through the section list, by keyboard alone.
    await page.click('h1');
    await page.keyboard.press('Tab'); // how the database is stored, beside the status line
    await page.keyboard.press('Tab'); // EN
    await page.keyboard.press('Tab'); // RU
    for (const route of SECTIONS) {
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), route);
      await page.keyboard.press('Enter');
      await page.waitForSelector(`main .screen[data-screen="${route}"]:not([hidden])`);
      assert.deepEqual(await shown(page), { screens: [route], current: [route] });
    }
  });

  for (const [name, size] of [['1280×800', WIDE], ['400×850', PHONE]]) {
    test(`the answer shows next to the button that acted, in view at ${name}`, async () => {
      await page.setViewportSize(size);
      await fillSender(page, { lose_response: true });
      await pressDeliver(page);
      assert.equal(await inView(page, '#deliver-form .strip'), true, 'Deliver');
      assert.equal(
        await page.textContent('#deliver-form .strip'),
        'provider-a / evt-1 · duplicate · HTTP 200 · account 1: 0 → 500 · Correct',
        'the last answer (the retry of a lost response), the balance read before and after',
      );
      assert.equal(await page.getAttribute('#deliver-form .strip', 'data-state'), 'ok');

      await press(page, '[data-redeliver="amount"]');
      assert.equal(await inView(page, '.redeliver + .strip'), true, 'redeliver');
      assert.equal(await page.textContent('.redeliver + .strip'), 'provider-a / evt-1 · payload conflict · HTTP 422 · account 1: 500 → 500 · Correct');
      assert.equal(await page.getAttribute('.redeliver + .strip', 'data-state'), 'refused');

      await reveal(page, '#burst-count');
      await page.fill('#burst-count', '5');
      await fillSender(page, { event_id: 'evt-7', amount: '10' });
      await press(page, '#burst-same');
      assert.equal(await inView(page, '#burst .strip'), true, 'burst');
      assert.equal(await page.textContent('#burst .strip'), 'applied 1, duplicate 4 · account 1: 500 → 510');

      await fillSender(page, { event_id: 'evt-8', amount: '1', lose_response: false });
      await press(page, '#step-start');
      assert.equal(await page.textContent('#stepper .strip'), 'working…', 'the send is under way while it is stepped');
      for (let i = 0; i < 5; i += 1) {
        await press(page, '#step-next');
      }
      assert.equal(await inView(page, '#stepper .strip'), true, 'step mode');
      assert.equal(await page.textContent('#stepper .strip'), 'provider-a / evt-8 · applied · HTTP 200 · account 1: 510 → 511 · Correct');

      await page.click('[data-lang="ru"]');
      assert.equal(await page.textContent('#stepper .strip'), 'provider-a / evt-8 · применено · HTTP 200 · счёт 1: 510 → 511 · Верно');
      await page.click('[data-lang="en"]');
    });
  }

  test('the strip shows the verdict Rust attached to the answer, the same one the answer box shows', async () => {
    const strip = async () => ({
      text: await page.textContent('#deliver-form .strip'),
      state: await page.getAttribute('#deliver-form .strip', 'data-state'),
      verdict: await page.getAttribute('#deliver-form .strip .strip-verdict', 'data-verdict'),
      answerBox: await page.getAttribute('#answer .judged', 'data-verdict'),
    });
    await fillSender(page, { handler: 'no_dedup' });
    await pressDeliver(page);
    assert.deepEqual(await strip(), {
      text: 'provider-a / evt-1 · applied · HTTP 200 · account 1: 0 → 500 · Correct this time · a repeat of this event breaks it',
      state: 'ok',
      verdict: 'correct',
      answerBox: 'correct',
    });
    await pressDeliver(page);
    assert.deepEqual(
      await strip(),
      {
        text: 'provider-a / evt-1 · applied · HTTP 200 · account 1: 500 → 1,000 · Credited twice',
        state: 'wrong',
        verdict: 'credited_twice',
        answerBox: 'credited_twice',
      },
      'a 200 that paid the event again is not "ok"',
    );
    await page.click('[data-lang="ru"]');
    assert.match(await page.textContent('#deliver-form .strip'), /^provider-a \/ evt-1 · применено · HTTP 200 · счёт 1: 500 → 1\s000 · Зачислено дважды$/);
    await page.click('[data-lang="en"]');
  });

  test('the flow picture lights up with each step Rust returned, in step mode one press at a time', async () => {
    const part = (name) => page.getAttribute(`#flow [data-part="${name}"]`, 'data-state');
    assert.equal(await part('inbox'), 'idle');
    await press(page, '#step-start');
    assert.equal(await page.$('#flow [data-part="transaction"]'), null, 'nothing ran yet: no transaction drawn');
    await press(page, '#step-next'); // BEGIN IMMEDIATE
    assert.equal(await part('transaction'), 'open');
    assert.equal(await page.$('#flow [data-part="inbox"]'), null, 'no table touched yet');
    await press(page, '#step-next'); // INSERT
    assert.equal(await part('inbox'), 'open');
    assert.equal(await page.$('#flow [data-part="accounts"]'), null);
    await press(page, '#step-next'); // UPDATE
    assert.equal(await part('accounts'), 'open');
    await press(page, '#step-next'); // receipt
    await press(page, '#step-next'); // COMMIT
    await page.waitForSelector('#flow[data-lit="5"][data-steps="5"]', { state: 'attached' });
    assert.deepEqual(
      await Promise.all(['transaction', 'inbox', 'accounts', 'handler'].map(part)),
      ['ok', 'ok', 'ok', 'ok'],
    );

    // A crash after the INSERT: the first attempt's steps, one after the other.
    const steps = await page.evaluate(async () => {
      const answer = await window.inboxLab
        .deliver({ source: 'provider-a', event_id: 'evt-3', account_id: 1, amount: 5 }, { fault: 'after_insert' })
        .catch((error) => error);
      return answer.steps.map((step) => step.op);
    });
    assert.deepEqual(steps.slice(0, 2), ['begin', 'insert']);
    await fillSender(page, { event_id: 'evt-4', fault: 'after_insert', attempts: '1' });
    await pressDeliver(page);
    await page.waitForSelector(`#flow[data-lit="${steps.length}"]`, { state: 'attached' });
    assert.equal(await part('inbox'), 'undone', 'the INSERT ran and was rolled back');
    assert.equal(await page.$('#flow [data-part="accounts"]'), null, 'the crash came before the UPDATE');
    assert.match(await page.textContent('#flow figcaption'), new RegExp(`^Step ${steps.length} of ${steps.length}: `));
  });

  test('the flow picture draws one box per transaction the handler ran, and what ran outside any unframed', async () => {
    const drawn = () =>
      page.$$eval('#flow [data-part="transaction"], #flow [data-part="outside"]', (groups) =>
        groups.map((g) => {
          const tables = [...g.querySelectorAll('[data-part="inbox"], [data-part="accounts"]')].map((p) => p.dataset.part);
          return `${g.dataset.part}${g.dataset.tx ?? ''}:${tables.join('+')}:${g.dataset.state}`;
        }),
      );
    /** Delivers with the sender, waits until every step is lit; the steps. */
    const deliver = async (fields) => {
      await fillSender(page, { attempts: '1', ...fields });
      await pressDeliver(page);
      const { steps, notReached } = (await page.evaluate(() => window.inboxLab.timeline())).at(-1);
      await page.waitForSelector(`#flow[data-lit="${steps.length}"][data-steps="${steps.length}"]`, { state: 'attached' });
      return { steps, notReached };
    };
    const handlers = ['atomic', 'no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace'];
    let n = 0;
    for (const handler of handlers) {
      for (const fault of ['none', 'after_insert', 'after_update']) {
        n += 1;
        const { steps, notReached } = await deliver({ event_id: `evt-flow-${n}`, handler, fault });
        const want = transactionsOf(steps, notReached);
        const label = `${handler}, crash ${fault}: ${steps.map((s) => s.op).join(' ')}`;
        assert.deepEqual(steps.map((s) => s.tx), want.tx, `${label}: Rust says which transaction each step ran in`);
        assert.deepEqual(await drawn(), want.groups, label);
      }
    }
    // The lesson of two_transactions, drawn: the first committed, the crash
    // after it, outside any transaction, and the second not reached — as
    // Rust reported it, not as the page supposes.
    const two = await deliver({ event_id: 'evt-flow-two', handler: 'two_transactions', fault: 'after_insert' });
    assert.deepEqual(
      two.notReached.map((u) => `${u.op}@${u.tx}`),
      ['begin@2', 'credit@2', 'commit@2'],
      'Rust says what the crash left out, in which transaction',
    );
    assert.deepEqual(await drawn(), ['transaction1:inbox:ok', 'transaction2:accounts:not_reached']);
    assert.equal(await page.getAttribute('#flow [data-part="handler"]', 'data-state'), 'crash');
    assert.equal(
      await page.textContent('#flow figcaption'),
      'Step 4 of 4: CRASH — the handler died here, outside any transaction. Not reached: transaction 2 (BEGIN, UPDATE, COMMIT) — the handler crashed before it.',
    );
    assert.equal(await page.textContent('#flow [data-tx="2"] > text'), 'transaction 2: not reached');
    await deliver({ event_id: 'evt-flow-two-b', fault: 'none' });
    assert.deepEqual(await drawn(), ['transaction1:inbox:ok', 'transaction2:accounts:ok']);
    await deliver({ event_id: 'evt-flow-none', handler: 'no_dedup' });
    assert.deepEqual(await drawn(), ['outside:accounts:idle']);
  });

  test('a button that disables itself keeps the keyboard near it, not on <body>', async () => {
    await reveal(page, '#step-start');
    await page.focus('#step-start');
    await page.keyboard.press('Enter');
    await idle(page);
    assert.equal(await focused(page), 'step-next', 'Start went off; the next control of its group took the focus');
    await page.click('#step-throw');
    await idle(page);

    await reveal(page, '#burst-count');
    await page.fill('#burst-count', '3');
    await page.focus('#burst-same');
    await page.keyboard.press('Enter');
    await idle(page);
    await page.waitForFunction(() => document.activeElement.id === 'burst-same');
    assert.equal(await focused(page), 'burst-same', 'back on the button once it is on again');
  });
});
