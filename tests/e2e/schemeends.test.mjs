// "Where the scheme ends" as a reader uses it: the page's own controls —
// strategy, crash point, Deliver, the dispatcher, the receiver's dedup, the
// order form, the lab clock and the purge — and what the panel then shows,
// checked against the database through the console API. In English and in
// Russian, at 1280×800 and at phone width. Each test starts from a fresh
// database (account 1 at balance 0) in real OPFS and a fresh receiver.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { idle, resetDatabase, reveal, screenshotPath, tables, usePage } from './browser.mjs';

/** Switches the language the way a reader does: the header's EN/RU buttons (console API as a fallback). */
async function setLanguage(page, lang) {
  const button = page.locator(`.languages [data-lang="${lang}"]`);
  if ((await button.count()) > 0) {
    await button.click();
  } else {
    await page.evaluate((l) => window.inboxLab.setLanguage(l), lang);
  }
  assert.equal(await page.getAttribute('html', 'lang'), lang);
}

/** Clicks a control as a reader does: its experiment opened first (one is shown at a time). */
async function click(page, selector) {
  await reveal(page, selector);
  await page.click(selector);
  await idle(page);
}

/** The phone the page is designed for, and the height of its screen. */
const PHONE = { width: 390, height: 844 };

const text = (page, selector) => page.textContent(selector).then((s) => s.trim());

/** The verdict per event: [event, "credited: …", "shown: …", verdict text, verdict name]. */
function verdicts(page) {
  return page.$$eval('#se-verdicts li', (items) =>
    items.map((li) => [
      ...['event', 'credited', 'shown', 'verdict'].map((f) => li.querySelector(`[data-field="${f}"]`).textContent),
      li.dataset.verdict,
    ]),
  );
}

/** What the user saw: one line per notification. */
function shown(page) {
  return page.$$eval('#se-shown li', (items) => items.map((li) => li.textContent));
}

/** The outbox as the panel shows it: [message_id, event_id, amount, sent_at]. */
function outbox(page) {
  return page.$$eval('#se-outbox tbody tr', (rows) => rows.map((tr) => [...tr.cells].map((td) => td.textContent)));
}

async function chooseStrategy(page, strategy) {
  await reveal(page, `#se-strategy-${strategy}`);
  await page.check(`#se-strategy-${strategy}`);
}

async function chooseCrash(page, crash) {
  await reveal(page, '#se-crash');
  await page.selectOption('#se-crash', crash);
}

describe('where the scheme ends', { timeout: 240_000 }, () => {
  let page;
  usePage(
    {
      query: '#/scheme-ends',
      beforeEach: async (opened) => {
        await resetDatabase(opened);
        await setLanguage(opened, 'en');
      },
    },
    (opened) => (page = opened),
  );

  test('the panel explains each experiment and its fix', async () => {
    assert.equal(await page.locator('main > .screen > section#scheme-ends').count(), 1);
    assert.equal(await text(page, '#scheme-ends-title'), 'Where the scheme ends');
    const titles = await page.$$eval('#scheme-ends h3', (hs) => hs.map((h) => h.textContent));
    assert.deepEqual(titles, [
      '1. Side effects: “notify the user” is not in the transaction',
      '2. Business keys: two events, one order',
      '3. Retention: a purged inbox row makes an old event new',
    ]);
    const fixes = await page.$$eval('#scheme-ends .se-fix', (boxes) => boxes.map((b) => b.textContent));
    assert.equal(fixes.length, 3);
    assert.match(fixes[0], /transactional outbox.*at-least-once.*deduplicate by message id/s);
    assert.match(fixes[1], /unique business key.*orders\.order_id/s);
    assert.match(fixes[2], /longer than the sender’s redelivery window and any manual resend/);
    assert.match(fixes[2], /batches of 100 rows, each its own transaction/);
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 0');
    assert.equal(await text(page, '#se-event'), 'Event: shop / pay-1 → account 1, +100');
    await page.locator('#scheme-ends').screenshot({ path: await screenshotPath('schemeends-1280-en.png') });
  });

  test('following the instructions, experiment 2 gets its own event and ends "lost for good"; its crash is not called a rollback', async () => {
    await chooseStrategy(page, 'send_before_commit');
    await chooseCrash(page, 'after_send_before_commit');
    await click(page, '#se-deliver');
    assert.match(await text(page, '#se-answer'), /^pay-1: simulated crash/);

    await chooseStrategy(page, 'send_after_commit');
    assert.equal(await text(page, '#se-deliver'), 'Deliver pay-2', 'a new experiment, a new event');
    await chooseCrash(page, 'after_commit_before_send');
    await click(page, '#se-deliver');
    const crashed = await text(page, '#se-answer');
    assert.match(crashed, /^pay-2: simulated crash · HTTP 500/);
    assert.doesNotMatch(crashed, /rolled back/, 'the credit was committed: nothing says it was rolled back');
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 100');
    await chooseCrash(page, '');
    await click(page, '#se-deliver'); // the sender's retry
    assert.match(await text(page, '#se-answer'), /^pay-2: duplicate · HTTP 200/);
    assert.deepEqual(await verdicts(page), [
      ['pay-1', 'credited: no', 'shown: 1', 'told about a credit that never happened', 'phantom'],
      ['pay-2', 'credited: yes', 'shown: 0', 'credited, never notified: lost for good', 'lost'],
    ]);
  });

  test('send, then COMMIT, failing before COMMIT: the user is told about a credit that never happened', async () => {
    await chooseStrategy(page, 'send_before_commit');
    await chooseCrash(page, 'after_send_before_commit');
    await click(page, '#se-deliver');

    assert.match(await text(page, '#se-answer'), /^pay-1: simulated crash · HTTP 500 — /);
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 0');
    assert.deepEqual(await shown(page), ['+100 to account 1 event:shop/pay-1']);
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: no', 'shown: 1', 'told about a credit that never happened', 'phantom']]);
    assert.deepEqual(await outbox(page), [['empty']]);
    assert.deepEqual((await tables(page)).inbox, [], 'rolled back: no inbox row');

    // The sender heard a 500, so it retries the same event; now it commits — and notifies again.
    assert.equal(await text(page, '#se-deliver'), 'Deliver pay-1');
    await chooseCrash(page, '');
    await click(page, '#se-deliver');
    assert.equal(await text(page, '#se-answer'), 'pay-1: applied · HTTP 200');
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 100');
    assert.deepEqual(await shown(page), [
      '+100 to account 1 event:shop/pay-1',
      '+100 to account 1 event:shop/pay-1 again',
    ]);
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: yes', 'shown: 2', 'notified 2 times for one credit', 'duplicate']]);
    assert.equal(await text(page, '#se-deliver'), 'Deliver pay-2', 'a 200: the sender moves on');
    assert.equal(await text(page, '#se-ret-balance'), 'Balance of account 1: 100', 'one balance, everywhere in the panel');
    const { accounts, inbox } = await tables(page);
    assert.deepEqual(accounts, [{ id: 1, balance: 100 }]);
    assert.deepEqual(
      inbox.map((row) => [row.source, row.event_id]),
      [['shop', 'pay-1']],
    );
  });

  test('COMMIT, then send, crashing in between: credited, never notified — the retry is a duplicate', async () => {
    // The crash between COMMIT and the send exists only for this strategy.
    await chooseStrategy(page, 'send_before_commit');
    assert.equal(await page.isDisabled('#se-crash option[value="after_commit_before_send"]'), true);
    await chooseStrategy(page, 'send_after_commit');
    assert.equal(await page.isDisabled('#se-crash option[value="after_commit_before_send"]'), false);

    await chooseCrash(page, 'after_commit_before_send');
    await click(page, '#se-deliver');
    assert.match(await text(page, '#se-answer'), /^pay-1: simulated crash · HTTP 500/);
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 100');
    assert.deepEqual(await shown(page), []);
    assert.equal(await page.isChecked('#se-dedup'), false, 'the receiver does not deduplicate');

    await chooseCrash(page, '');
    await click(page, '#se-deliver');
    assert.equal(await text(page, '#se-answer'), 'pay-1: duplicate · HTTP 200');
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 100');
    assert.deepEqual(await shown(page), [], 'a duplicate sends nothing');
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: yes', 'shown: 0', 'credited, never notified: lost for good', 'lost']]);

    // Without a crash the same strategy works: credited and notified once.
    await click(page, '#se-deliver');
    assert.equal(await text(page, '#se-answer'), 'pay-2: applied · HTTP 200');
    assert.deepEqual((await verdicts(page)).at(-1), ['pay-2', 'credited: yes', 'shown: 1', 'exactly once', 'once']);
  });

  test('the outbox is at-least-once: a dispatcher crash after sending shows the user the message twice', async () => {
    await chooseStrategy(page, 'outbox');
    // A failure before COMMIT takes the outbox row with the credit: nothing to send, nothing sent.
    await chooseCrash(page, 'after_send_before_commit');
    await click(page, '#se-deliver');
    assert.match(await text(page, '#se-answer'), /^pay-1: simulated crash · HTTP 500/);
    assert.deepEqual(await outbox(page), [['empty']]);
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: no', 'shown: 0', 'rolled back: no credit, no notification', 'nothing']]);

    await chooseCrash(page, '');
    await click(page, '#se-deliver');
    assert.equal(await text(page, '#se-answer'), 'pay-1: applied · HTTP 200');
    assert.deepEqual(await outbox(page), [['1', 'pay-1', '100', 'pending']]);
    assert.deepEqual(await shown(page), [], 'nothing is sent inside the transaction');
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: yes', 'shown: 0', 'credited; the message waits in the outbox', 'pending']]);

    await click(page, '#se-dispatch-crash');
    assert.equal(
      await text(page, '#se-dispatch-note'),
      'The dispatcher sent message 1 and died before marking it sent: the outbox still says pending.',
    );
    assert.deepEqual(await outbox(page), [['1', 'pay-1', '100', 'pending']]);
    assert.deepEqual(await shown(page), ['+100 to account 1 outbox:1']);

    await click(page, '#se-dispatch');
    assert.equal(await text(page, '#se-dispatch-note'), 'Messages sent: 1. The outbox is drained.');
    assert.deepEqual(await outbox(page), [['1', 'pay-1', '100', 'sent']]);
    assert.deepEqual(await shown(page), ['+100 to account 1 outbox:1', '+100 to account 1 outbox:1 again']);
    assert.deepEqual(await verdicts(page), [['pay-1', 'credited: yes', 'shown: 2', 'notified 2 times for one credit', 'duplicate']]);
    const lesson = await text(page, '#se-lesson');
    assert.match(lesson, /^At-least-once: message 1 went out 2 times, because the dispatcher died between sending it and marking it sent\./);
    assert.match(lesson, /This receiver does not deduplicate: the user saw it 2 times\./);

    await click(page, '#se-dispatch');
    assert.equal(await text(page, '#se-dispatch-note'), 'Nothing to send: no message is pending.');
    assert.deepEqual((await tables(page)).accounts, [{ id: 1, balance: 100 }], 'one credit all along');
    await page.locator('#se-effects').screenshot({ path: await screenshotPath('schemeends-outbox-no-dedup.png') });
  });

  test('in Russian, with the receiver’s dedup on: exactly one notification per credit across the crashes', async () => {
    await setLanguage(page, 'ru');
    assert.equal(await text(page, '#scheme-ends-title'), 'Где схема заканчивается');
    assert.equal(await text(page, '#se-deliver'), 'Доставить pay-1');

    // The keyboard is enough: Space toggles the checkbox, Enter presses a button.
    await reveal(page, '#se-dedup');
    await page.focus('#se-dedup');
    await page.keyboard.press('Space');
    await idle(page);
    assert.equal(await page.isChecked('#se-dedup'), true);
    const receiver = await page.evaluate(() => window.inboxLab.scheme.shown());
    assert.deepEqual([receiver.dedup, receiver.shown], [true, []], 'a new, empty receiver with dedup');

    await reveal(page, '#se-strategy-outbox');
    await page.check('#se-strategy-outbox');
    for (const _ of [1, 2]) {
      await reveal(page, '#se-deliver');
      await page.focus('#se-deliver');
      await page.keyboard.press('Enter');
      await idle(page);
      await click(page, '#se-dispatch-crash'); // sent, not marked
      await click(page, '#se-dispatch-crash'); // sent again, still not marked
      await click(page, '#se-dispatch'); // sent a third time, marked
    }
    assert.deepEqual(await outbox(page), [
      ['1', 'pay-1', '100', 'отправлено'],
      ['2', 'pay-2', '100', 'отправлено'],
    ]);
    assert.deepEqual(await shown(page), ['+100 на счёт 1 outbox:1', '+100 на счёт 1 outbox:2']);
    assert.deepEqual(await verdicts(page), [
      ['pay-1', 'зачислено: да', 'показано: 1', 'ровно один раз', 'once'],
      ['pay-2', 'зачислено: да', 'показано: 1', 'ровно один раз', 'once'],
    ]);
    const lessons = await page.$$eval('#se-lesson p', (ps) => ps.map((p) => p.textContent));
    assert.equal(lessons.length, 2);
    for (const [i, lesson] of lessons.entries()) {
      assert.match(lesson, new RegExp(`^Хотя бы один раз: сообщение ${i + 1} ушло несколько раз \\(3\\)`));
      assert.match(lesson, /отбросил повтор: пользователь увидел его один раз\.$/);
    }
    assert.equal(await text(page, '#se-balance'), 'Баланс счёта 1: 200');

    // Back to English: what is on screen is redrawn, not only the static labels.
    await setLanguage(page, 'en');
    assert.deepEqual((await verdicts(page))[0], ['pay-1', 'credited: yes', 'shown: 1', 'exactly once', 'once']);
    assert.equal(await page.isChecked('#se-dedup'), true);
  });

  test('the business key chips only fill the form, like every preset of the page: Activate is the reader’s', async () => {
    await click(page, '[data-order="second"]');
    assert.deepEqual(
      [await page.inputValue('#se-order-event'), await page.inputValue('#se-order-id')],
      ['evt-8', 'A-1'],
      'the chip filled the form',
    );
    assert.equal(await page.$$eval('#se-order-log li', (items) => items.length), 0, 'a chip only fills the form: nothing was activated');
    assert.equal(await page.$eval('[data-order="second"]', (b) => b.className), 'chip', 'drawn as the page’s other presets');
    assert.equal(
      await page.evaluate(() => document.activeElement === document.querySelector('#se-order-form button[type=submit]')),
      true,
      'Activate, focused, is the reader’s to press',
    );
    await page.keyboard.press('Enter');
    await idle(page);
    assert.deepEqual(
      await page.$$eval('#se-order-log li', (items) => items.map((li) => li.dataset.outcome)),
      ['activated'],
      'evt-8 is the first event this order heard of',
    );
  });

  test('one experiment at a time, picked by its link (the keyboard too); each fits two phone screens, the section three, EN and RU', async () => {
    const shownCases = () => page.$$eval('#scheme-ends .se-case', (cases) => cases.filter((c) => !c.hidden).map((c) => c.id));
    assert.equal((await shownCases()).length, 1, 'one experiment is shown at a time');
    await click(page, 'a[href="#/scheme-ends/effects"]');
    assert.deepEqual(await shownCases(), ['se-effects']);
    // The keyboard: Tab to an experiment's link, Enter opens it; back returns.
    await page.focus('a[href="#/scheme-ends/effects"]');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('#se-keys').hidden);
    assert.deepEqual(await shownCases(), ['se-keys']);
    assert.equal(await page.getAttribute('a[href="#/scheme-ends/keys"]', 'aria-current'), 'true');
    assert.equal(await page.getAttribute('a[href="#/scheme-ends/effects"]', 'aria-current'), 'false');
    await page.goBack();
    await page.waitForFunction(() => !document.querySelector('#se-effects').hidden);

    await page.setViewportSize(PHONE);
    try {
      const heights = {};
      for (const lang of ['en', 'ru']) {
        await setLanguage(page, lang);
        for (const name of ['effects', 'keys', 'retention']) {
          await page.click(`a[href="#/scheme-ends/${name}"]`);
          await page.waitForFunction((name) => !document.querySelector(`[data-subroute="scheme-ends/${name}"]`).hidden, name);
          assert.equal((await shownCases()).length, 1);
          heights[`${lang} ${name}`] = await page.evaluate((name) => {
            const part = document.querySelector(`[data-subroute="scheme-ends/${name}"]`);
            return { part: Math.ceil(part.getBoundingClientRect().height), screen: document.documentElement.scrollHeight };
          }, name);
          await page.screenshot({ path: await screenshotPath(`schemeends-${name}-${lang}-390x844.png`), fullPage: true });
        }
      }
      console.log(`# where the scheme ends at 390×844: ${JSON.stringify(heights)}`);
      for (const [which, { part, screen }] of Object.entries(heights)) {
        assert.ok(part <= 2 * PHONE.height, `${which}: the experiment is ${part} px, more than two phone screens`);
        assert.ok(screen <= 3 * PHONE.height, `${which}: the section is ${screen} px, more than three phone screens`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
      await setLanguage(page, 'en');
    }
    for (const lang of ['en', 'ru']) {
      await setLanguage(page, lang);
      await click(page, 'a[href="#/scheme-ends/keys"]');
      await page.screenshot({ path: await screenshotPath(`schemeends-keys-${lang}-1280x800.png`), fullPage: true });
    }
    await setLanguage(page, 'en');
  });

  test('a business key: the second event about one order is already_active (200); replays answer their first result', async () => {
    await setLanguage(page, 'ru');
    const log = () =>
      page.$$eval('#se-order-log li', (items) =>
        items.map((li) => [li.dataset.outcome, li.querySelector('.se-log-head').textContent]),
      );
    const activate = (chip) => click(page, `[data-order="${chip}"]`).then(() => click(page, '#se-order-form button[type=submit]'));
    await activate('first');
    await activate('second');
    await activate('first'); // the replay of the first event
    // Rust's outcome names stay in the data; the reader gets words.
    assert.deepEqual(await log(), [
      ['duplicate', 'evt-7 → заказ A-1: дубликат · HTTP 200'],
      ['already_active', 'evt-8 → заказ A-1: уже активен · HTTP 200'],
      ['activated', 'evt-7 → заказ A-1: активирован · HTTP 200'],
    ]);
    const meanings = await page.$$eval('#se-order-log li .note', (ps) => ps.map((p) => p.textContent));
    assert.match(meanings[0], /снова его первый ответ, активирован/);
    assert.match(meanings[1], /уже активировало событие shop \/ evt-7/);
    assert.match(meanings[1], /код(ом)? 200, а не 500/);

    // The same event about another order is the sender's contract error: 400, nothing written.
    await setLanguage(page, 'en');
    await reveal(page, '#se-order-event');
    await page.fill('#se-order-event', 'evt-8');
    await reveal(page, '#se-order-id');
    await page.fill('#se-order-id', 'B-2');
    await reveal(page, '#se-order-id');
    await page.press('#se-order-id', 'Enter');
    await idle(page);
    const [refused] = await log();
    assert.deepEqual(refused, ['invalid_input', 'evt-8 → order B-2: invalid input · HTTP 400']);
    assert.match(
      await page.textContent('#se-order-log li:first-child .note'),
      /already processed for order "A-1".*Refused, and nothing was written\./s,
    );
    assert.equal(await page.getAttribute('#se-order-log li:first-child', 'class'), 'se-bad');

    // The next order is a new business key: activated again.
    await click(page, '[data-order="next"]');
    assert.equal(await page.inputValue('#se-order-event'), 'evt-9');
    assert.equal(await page.inputValue('#se-order-id'), 'A-2');
    await activate('first');
    assert.deepEqual((await log())[0], ['activated', 'evt-9 → order A-2: activated · HTTP 200']);
    // A replay after the reader reloads: the database remembers.
    assert.deepEqual(await page.evaluate(() => window.inboxLab.scheme.activate('shop', 'evt-8', 'A-1')), {
      outcome: 'duplicate',
      first: 'already_active',
      http_status: 200,
    });
  });

  test('retention: after a purge the same event is applied again — the hazard, and the rule', async () => {
    const logLines = () =>
      page.$$eval('#se-ret-log li', (items) => items.map((li) => [li.dataset.outcome ?? li.dataset.kind, li.textContent]));
    assert.equal(await text(page, '#se-clock'), 'Lab clock: day 0');
    await click(page, '#se-ret-deliver');
    assert.equal(await text(page, '#se-ret-row'), 'Inbox row for ret-1: kept since day 0 — a redelivery is a duplicate.');
    await click(page, '#se-ret-deliver');
    await click(page, '#se-plus-day');
    await click(page, '#se-plus-day');
    assert.equal(await text(page, '#se-clock'), 'Lab clock: day 2');
    assert.equal(await page.evaluate(() => window.inboxLab.scheme.clock()), 2 * 86_400_000);

    // A window longer than the row's age keeps it: the redelivery is still a duplicate.
    await reveal(page, '#se-window');
    await page.selectOption('#se-window', '7');
    await click(page, '#se-purge');
    await click(page, '#se-ret-deliver');
    // A window shorter than the sender's redelivery window: the proof is gone.
    await reveal(page, '#se-window');
    await page.selectOption('#se-window', '1');
    await click(page, '#se-purge');
    assert.equal(await text(page, '#se-ret-row'), 'Inbox row for ret-1: none — not delivered yet, or purged.');
    await click(page, '#se-ret-deliver');

    assert.deepEqual(await logLines(), [
      [
        'applied_again',
        'Day 2: ret-1 → applied AGAIN (HTTP 200): one event, credited 2 times; balance 200. The row that proved it was processed had been purged.',
      ],
      ['purge', 'Day 2: purge with a window of 1 day — inbox rows deleted: 1.'],
      ['duplicate', 'Day 2: ret-1 → duplicate · HTTP 200; balance 100.'],
      ['purge', 'Day 2: purge with a window of 7 days — inbox rows deleted: 0.'],
      ['duplicate', 'Day 0: ret-1 → duplicate · HTTP 200; balance 100.'],
      ['applied', 'Day 0: ret-1 → applied · HTTP 200; balance 100.'],
    ]);
    assert.equal(await page.getAttribute('#se-ret-log li:first-child', 'class'), 'se-hazard');
    assert.equal(await text(page, '#se-ret-balance'), 'Balance of account 1: 200');
    assert.deepEqual((await tables(page)).accounts, [{ id: 1, balance: 200 }], 'paid twice for one event');
    await page.locator('#se-retention').screenshot({ path: await screenshotPath('schemeends-retention-en.png') });

    // The same story in Russian, on the next event.
    await setLanguage(page, 'ru');
    await click(page, '#se-ret-next');
    assert.equal(await text(page, '#se-ret-event'), 'Событие: shop / ret-2 → счёт 1, +100');
    await click(page, '#se-ret-deliver');
    await click(page, '#se-plus-week');
    assert.equal(await text(page, '#se-clock'), 'Часы лаборатории: день 9');
    await reveal(page, '#se-window');
    await page.selectOption('#se-window', '3');
    await click(page, '#se-purge');
    await click(page, '#se-ret-deliver');
    const [again, purged] = await logLines();
    assert.equal(again[0], 'applied_again');
    assert.match(again[1], /^День 9: ret-2 → применено СНОВА \(HTTP 200\): одно и то же событие зачислено уже 2-й раз; баланс 400\./);
    assert.equal(purged[1], 'День 9: очистка с окном 3 дня — удалено строк inbox: 2.');
    assert.match(await text(page, '#se-retention .se-fix'), /Правило: храните строки inbox дольше/);
    assert.match(await text(page, '#se-retention .se-fix'), /пачками по 100 строк, каждая пачка — своя транзакция/);
    await page.locator('#se-retention').screenshot({ path: await screenshotPath('schemeends-retention-ru.png') });
  });

  test('the console API: inboxLab.scheme answers like the page; wrong values are errors, never a crash', async () => {
    const result = await page.evaluate(async () => {
      const lab = window.inboxLab;
      const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));
      const out = {};
      out.receiver = await lab.scheme.resetReceiver({ dedup: true });
      out.delivered = await lab.scheme.deliver(
        { source: 'shop', event_id: 'c-1', account_id: 1, amount: 5 },
        { strategy: 'outbox', crash: null },
      );
      out.outbox = await lab.scheme.outbox();
      out.crash = await settle(lab.scheme.dispatchOne({ crash: 'after_send_before_mark' }));
      out.sent = await lab.scheme.dispatchOne();
      out.drained = await lab.scheme.dispatchOne();
      out.shown = await lab.scheme.shown();
      // Wrong values: answered with error objects by Rust, and the worker keeps working.
      out.badDedup = await settle(lab.scheme.resetReceiver({ dedup: 'yes' }));
      out.badOrder = await settle(lab.scheme.activate('shop', 'evt-1', 7));
      out.badClock = await settle(lab.scheme.advanceClock('86400000'));
      out.badStrategy = await settle(lab.scheme.deliver({ source: 'shop', event_id: 'c-2', account_id: 1, amount: 5 }, { strategy: 'pigeon' }));
      out.clock = await lab.scheme.clock();
      out.purged = await lab.scheme.purge(0);
      // A fresh database starts a fresh receiver (its outbox ids start again at 1), keeping the dedup choice.
      await lab.reset();
      out.afterReset = await lab.scheme.shown();
      return out;
    });
    assert.equal(typeof result.receiver.receiver, 'string', 'the receiver has a name');
    assert.equal(result.receiver.dedup, true);
    assert.equal(result.delivered.outcome, 'applied');
    assert.deepEqual(result.outbox, [
      { message_id: 1, source: 'shop', event_id: 'c-1', account_id: 1, amount: 5, sent_at: null },
    ]);
    assert.equal(result.crash.error.kind, 'simulated_crash');
    assert.equal(result.sent, 1);
    assert.equal(result.drained, null);
    assert.deepEqual(result.shown, {
      receiver: result.receiver.receiver,
      dedup: true,
      shown: [{ message_id: 'outbox:1', account_id: 1, amount: 5 }],
    });
    for (const name of ['badDedup', 'badOrder', 'badClock', 'badStrategy']) {
      assert.equal(result[name].error?.kind, 'invalid_input', name);
      assert.equal(result[name].error?.http_status, 400, name);
    }
    assert.equal(result.badClock.error.code, 'string_for_number');
    assert.equal(result.clock, 0, 'the refused advance did not move the clock');
    assert.equal(result.purged, 0, 'c-1 arrived at day 0, which is now: not older than a zero window');
    assert.deepEqual(result.afterReset.shown, []);
    assert.equal(result.afterReset.dedup, true);
    assert.notEqual(result.afterReset.receiver, result.receiver.receiver, 'a new receiver');
  });

  test('a database reset from elsewhere starts a new story: old verdicts and the retention memory go', async () => {
    await click(page, '#se-deliver');
    await click(page, '#se-ret-deliver');
    assert.deepEqual((await verdicts(page)).map((v) => v[0]), ['pay-1']);
    // What the data panel's reset (or the console) does, behind this panel's back.
    await page.evaluate(() => window.inboxLab.reset());
    // Redrawn on its own, without a click here: writes from elsewhere are announced.
    await page.waitForFunction(
      () => document.querySelector('#se-balance').textContent === 'Balance of account 1: 0' &&
        document.querySelector('#se-ret-balance').textContent === 'Balance of account 1: 0',
    );
    await page.evaluate(() =>
      window.inboxLab.deliver({ source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 }),
    );
    await page.waitForFunction(() => document.querySelector('#se-balance').textContent === 'Balance of account 1: 500');
    await click(page, '#se-ret-deliver');
    const [first] = await page.$$eval('#se-ret-log li', (items) => items.map((li) => li.dataset.outcome));
    assert.equal(first, 'applied', 'a fresh database: ret-1 is new there, not applied again');
    await click(page, '#se-deliver');
    assert.deepEqual(await verdicts(page), [['pay-2', 'credited: yes', 'shown: 1', 'exactly once', 'once']]);
    assert.equal(await text(page, '#se-balance'), 'Balance of account 1: 700');
  });

  test('readable at phone width: nothing overflows the page, and tables scroll in their own box', async () => {
    await chooseStrategy(page, 'outbox');
    await click(page, '#se-deliver');
    await click(page, '#se-dispatch-crash');
    await click(page, '#se-dispatch');
    for (const [width, lang] of [
      [400, 'en'],
      [400, 'ru'],
      [1280, 'ru'],
    ]) {
      await page.setViewportSize({ width, height: 800 });
      await setLanguage(page, lang);
      // Measured on this panel only: the other panels are theirs to check.
      const overflow = await page.evaluate(() => {
        const panel = document.querySelector('#scheme-ends');
        const wider = [...panel.querySelectorAll('*')].filter(
          (node) => node.closest('.table-scroll') === null && node.getBoundingClientRect().right > window.innerWidth,
        );
        return {
          panelRight: Math.max(0, Math.ceil(panel.getBoundingClientRect().right - window.innerWidth)),
          panelScroll: panel.scrollWidth - panel.clientWidth,
          wider: wider.map((node) => node.id || node.className || node.tagName),
        };
      });
      assert.deepEqual(overflow, { panelRight: 0, panelScroll: 0, wider: [] }, `${width}px, ${lang}`);
      await page.locator('#scheme-ends').screenshot({ path: await screenshotPath(`schemeends-${width}-${lang}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
