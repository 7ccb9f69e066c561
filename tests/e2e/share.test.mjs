// Share links (www/lib/share.js, www/panels/share/): the state of an
// experiment — the sender's deliveries, a stepped race, step mode's crash
// point, a won level — made into a link in one browser profile and opened in
// a FRESH one (another Chromium profile: no OPFS, no localStorage in common),
// where it is replayed on a scratch database and gives the same answers and
// Rust verdicts; the opening profile's own stored database is neither read
// nor written. Hostile fragments are refused with their specific error and
// write nothing at all: not even an OPFS file is created.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';

import { BASE_URL, assertNoProblems, idle, launch, openPage, reveal, tables } from './browser.mjs';
import { fillSender, openLink, outcomes, press, pressDeliver, shareLink, showMe, useMakerAndOpener } from './playground.mjs';

/** What the origin's OPFS holds: the names at its root. */
function opfsNames(page) {
  return page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const names = [];
    for await (const name of root.keys()) {
      names.push(name);
    }
    return names.sort();
  });
}

const AXE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe's violations on the page as it is now (as in a11y.test.mjs). */
async function violations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.evaluate(AXE);
  }
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map((v) => `${v.id} ×${v.nodes.length}: ${v.nodes.map((node) => node.target.join(' ')).join(' | ')}`);
}

const FRESH_TABLES = { accounts: [{ id: 1, balance: 0 }], inbox: [] };

describe('share links', { timeout: 600_000 }, () => {
  let maker;
  let opener;
  useMakerAndOpener((made, opened) => ([maker, opener] = [made, opened]));

  test('a race link replays check_then_act’s stepped race to Rust’s verdict: credited twice', async () => {
    const page = maker.page;
    await reveal(page, '#race-handler');
    await page.selectOption('#race-handler', 'check_then_act');
    await press(page, '#race-start');
    for (const letter of ['a', 'b']) {
      await press(page, `#race-advance-${letter}`);
    }
    for (const letter of ['a', 'b']) {
      while (await page.$eval(`#race-advance-${letter}`, (b) => !b.disabled)) {
        await press(page, `#race-advance-${letter}`);
      }
    }
    const verdict = await page.getAttribute('#race-verdict', 'data-verdict');
    assert.match(verdict, /double_credit/);
    const verdictText = await page.textContent('#race-verdict');
    const log = await page.$$eval('#race-log li', (items) => items.map((li) => li.textContent));
    const url = await shareLink(page, 'share-race');

    const other = opener.page;
    await openLink(other, url);
    assert.equal(await other.$eval('main .screen:not([hidden])', (s) => s.dataset.screen), 'race');
    assert.equal(await other.getAttribute('#race-verdict', 'data-verdict'), verdict);
    assert.equal(await other.textContent('#race-verdict'), verdictText);
    assert.deepEqual(await other.$$eval('#race-log li', (items) => items.map((li) => li.textContent)), log);
    assert.equal(await other.inputValue('#race-handler'), 'check_then_act');
    assertNoProblems(maker.problems);
    assertNoProblems(opener.problems);
  });

  test('a crash-point link replays step mode: the same statements, thrown at the same point, then the retry', async () => {
    const page = maker.page;
    await fillSender(page, { event_id: 'step-1', amount: '300', handler: 'atomic', fault: '' });
    await press(page, '#step-start');
    await press(page, '#step-next'); // BEGIN
    await press(page, '#step-next'); // INSERT
    await press(page, '#step-throw');
    const steps = await page.$$eval('#step-list li', (items) => items.map((li) => `${li.dataset.step}:${li.dataset.state}`));
    assert.deepEqual(steps.slice(0, 2), ['begin:undone', 'insert:undone']);
    const note = await page.textContent('#step-note');
    const made = (await outcomes(page)).filter((e) => e.event.event_id === 'step-1');
    assert.deepEqual(
      made.map((e) => [e.via, e.attempt, e.heard, e.verdict]),
      [
        ['step', 1, 'simulated_crash/fault', 'correct'],
        ['sender', 2, 'applied', 'correct'],
      ],
    );
    const url = await shareLink(page, 'share-step');
    const state = JSON.parse(Buffer.from(new URL(url).hash.slice(3), 'base64url').toString('utf8'));
    assert.deepEqual({ kind: state.kind, next: state.next, end: state.end }, { kind: 'step', next: 2, end: 'throw' });

    const other = opener.page;
    await openLink(other, url);
    assert.equal(await other.$eval('main .screen:not([hidden])', (s) => s.dataset.screen), 'deliver');
    assert.deepEqual(await other.$$eval('#step-list li', (items) => items.map((li) => `${li.dataset.step}:${li.dataset.state}`)), steps);
    assert.equal(await other.textContent('#step-note'), note);
    assert.deepEqual(await outcomes(other), made);
    assertNoProblems(maker.problems);
    assertNoProblems(opener.problems);
  });

  test('a won level’s link shows it won in a fresh profile, judged by the same rules from the replay (levels 1, 2, 3, 4, 5, 6, 8)', async () => {
    const page = maker.page;
    for (const n of [1, 2, 3, 4, 5, 6, 8]) {
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForSelector('#level-show-me');
      await showMe(page);
      await page.waitForFunction((n) => document.querySelector(`#levels-list > li[data-level="${n}"]`).dataset.won === 'true', n);
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForSelector('#share-level');
      const url = await shareLink(page, 'share-level');

      // A fresh profile for each: no progress, no database.
      const fresh = await launch();
      try {
        fresh.page.setDefaultTimeout(60_000);
        await openLink(fresh.page, url);
        assert.equal(await fresh.page.$eval('main .screen:not([hidden])', (s) => s.dataset.screen), 'levels');
        assert.match(await fresh.page.textContent('#level-title'), new RegExp(`^Level ${n}:`));
        assert.equal(await fresh.page.getAttribute('#level-status', 'data-won'), 'true', `level ${n} replayed and won`);
        assert.match(await fresh.page.textContent('#level-status'), /^Won: the database’s answers meet the goal\. /);
        assert.equal(await fresh.page.getAttribute(`#levels-list > li[data-level="${n}"]`, 'data-won'), 'true');
        assert.equal(await fresh.page.isVisible('#share-error'), false);
        // The scratch page kept no progress, and created no stored database.
        assert.equal(await fresh.page.evaluate(() => localStorage.getItem('inbox-lab.levels.v1')), null);
        assert.deepEqual(await opfsNames(fresh.page), []);
        assertNoProblems(fresh.problems);
      } finally {
        await fresh.close();
      }
    }
    assertNoProblems(maker.problems);
  });

  test('levels won with other controls share too: 9 (the outbox) and 10 (retention) replay on the scratch database, 7 (the crash lab) on its own scratch pool; the opener’s inbox database is untouched', async () => {
    const page = maker.page;
    for (const n of [9, 10, 7]) {
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForSelector('#level-show-me');
      await showMe(page);
      await page.waitForFunction((n) => document.querySelector(`#levels-list > li[data-level="${n}"]`).dataset.won === 'true', n, { timeout: 300_000 });
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForSelector('#share-level');
      const url = await shareLink(page, 'share-level');
      const state = JSON.parse(Buffer.from(new URL(url).hash.slice(3), 'base64url').toString('utf8'));
      const expected = {
        9: ['effects:dedup', 'effects:deliver', 'effects:dispatch_crash', 'effects:dispatch'],
        10: ['retention:deliver', 'retention:advance', 'retention:purge', 'retention:deliver'],
        7: ['crash:kills'],
      }[n];
      assert.deepEqual(
        state.actions.map((a) => `${a.do}:${a.control ?? a.run}`),
        expected,
        `level ${n}: the controls pressed, as observed`,
      );

      // A fresh profile with an inbox database of its own, stored in OPFS.
      const fresh = await launch();
      try {
        const other = fresh.page;
        other.setDefaultTimeout(300_000);
        await openPage(other, '#/deliver');
        await fillSender(other, { event_id: `mine-${n}`, amount: '42' });
        await pressDeliver(other);
        const own = await tables(other);
        const stored = await opfsNames(other);
        assert.ok(stored.length > 0, 'the opener has a stored database');

        await openLink(other, url);
        assert.equal(await other.$eval('main .screen:not([hidden])', (s) => s.dataset.screen), 'levels');
        assert.match(await other.textContent('#level-title'), new RegExp(`^Level ${n}:`));
        assert.equal(await other.getAttribute('#level-status', 'data-won'), 'true', `level ${n} replayed and won`);
        assert.equal(await other.textContent('#share-status'), `Replayed ${expected.length} action(s) from the link: everything below is what the database answered.`);
        assert.equal(await other.isVisible('#share-error'), false);
        assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'memory');
        // What the replay wrote to the browser's storage: nothing for 9 and
        // 10; for 7 the crash lab's own scratch pool, and the note says so.
        assert.equal(await other.isVisible('#share-crash-pool'), n === 7);
        const after = await opfsNames(other);
        assert.deepEqual(after, n === 7 ? [...new Set([...stored, '.inbox-lab-crash'])].sort() : stored);
        if (n === 7) {
          assert.match(await other.textContent('#share-crash-pool'), /^This link runs the crash lab: its own worker writes only the crash lab’s scratch files/);
        }

        await other.click('#share-back');
        await other.waitForURL((u) => u.hash === '');
        await other.evaluate(() => window.inboxLab.ready);
        await idle(other);
        assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'opfs');
        assert.deepEqual(await tables(other), own, `level ${n}: nothing of the replay was written to the stored database`);
        assertNoProblems(fresh.problems);
      } finally {
        await fresh.close();
      }
    }
    assertNoProblems(maker.problems);
  });

  test('a wrong path is not won by its link: level 9 without the receiver’s dedup, level 10 purging too early or delivering another event after the purge', async () => {
    const json = (value) => `#s=${Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')}`;
    const fx = (control) => ({ do: 'effects', control, strategy: 'outbox', crash: null, dedup: false });
    const cases = [
      [9, [fx('deliver'), fx('dispatch_crash'), fx('dispatch')]],
      [
        10,
        [
          { do: 'retention', control: 'deliver', next: false },
          { do: 'retention', control: 'purge', days: 1 },
          { do: 'retention', control: 'deliver', next: false },
        ],
        // Nothing was old enough to purge: the second Deliver is a duplicate.
        /^Day 0: ret-1 → duplicate .*\nDay 0: purge with a window of 1 day — inbox rows deleted: 0\.\nDay 0: ret-1 → applied /,
      ],
      [
        10,
        [
          { do: 'retention', control: 'deliver', next: false },
          { do: 'retention', control: 'advance', days: 7 },
          { do: 'retention', control: 'purge', days: 1 },
          { do: 'retention', control: 'deliver', next: true },
        ],
        // The purge deleted the row, but the second Deliver was of the next event, applied once.
        /^Day 7: ret-2 → applied .*\nDay 7: purge with a window of 1 day — inbox rows deleted: 1\.\nDay 0: ret-1 → applied /,
      ],
    ];
    const fresh = await launch();
    try {
      const other = fresh.page;
      other.setDefaultTimeout(60_000);
      for (const [n, actions, log] of cases) {
        await openLink(other, new URL(json({ v: 1, kind: 'level', level: n, actions }), BASE_URL).href);
        assert.equal(await other.textContent('#share-status'), `Replayed ${actions.length} action(s) from the link: everything below is what the database answered.`);
        assert.match(await other.textContent('#level-title'), new RegExp(`^Level ${n}:`));
        assert.equal(await other.getAttribute('#level-status', 'data-won'), 'false', `level ${n}: replayed, not won`);
        assert.equal(await other.getAttribute(`#levels-list > li[data-level="${n}"]`, 'data-won'), 'false');
        if (log !== undefined) {
          // What the replay did is on the panel, as the database answered it (newest first).
          const lines = await other.$$eval('#se-ret-log li', (items) => items.map((li) => li.textContent));
          assert.match(lines.join('\n'), log, lines.join(' | '));
        }
      }
      assert.deepEqual(await opfsNames(other), []);
      assertNoProblems(fresh.problems);
    } finally {
      await fresh.close();
    }
  });

  test('where the clipboard refuses, the link is selected in its field, and the answer says so', async () => {
    const page = maker.page;
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));
    });
    await reveal(page, '#share-timeline');
    await page.click('#share-timeline');
    await page.waitForFunction(() => document.querySelector('#share-timeline-answer').textContent.startsWith('The clipboard'));
    assert.equal(
      await page.textContent('#share-timeline-answer'),
      'The clipboard is not available here: the link is selected in the field — copy it from there.',
    );
    const field = await page.evaluate(() => {
      const input = document.querySelector('#share-timeline-url');
      return { focused: document.activeElement === input, start: input.selectionStart, end: input.selectionEnd, length: input.value.length, readOnly: input.readOnly };
    });
    assert.deepEqual(field, { focused: true, start: 0, end: field.length, length: field.length, readOnly: true });
    assert.ok(field.length > 100);
    assertNoProblems(maker.problems);
  });

  test('“Share this win” works for every level won in this visit, also after other levels were opened and played', async () => {
    const page = maker.page;
    await page.evaluate(() => (location.hash = '#/levels/1'));
    await page.waitForSelector('#levels-reset');
    await page.click('#levels-reset');
    for (const n of [1, 2]) {
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForSelector('#level-show-me');
      await showMe(page);
      await page.waitForFunction((n) => document.querySelector(`#levels-list > li[data-level="${n}"]`).dataset.won === 'true', n);
    }
    await page.evaluate(() => (location.hash = '#/levels/3')); // opened, nothing played
    await page.waitForFunction(() => document.querySelector('#level-title')?.textContent.startsWith('Level 3:'));
    for (const n of [1, 2]) {
      await page.evaluate((n) => (location.hash = `#/levels/${n}`), n);
      await page.waitForFunction((n) => document.querySelector('#level-title')?.textContent.startsWith(`Level ${n}:`), n);
      const url = await shareLink(page, 'share-level');
      const state = JSON.parse(Buffer.from(new URL(url).hash.slice(3), 'base64url').toString('utf8'));
      assert.equal(state.level, n);
      assert.deepEqual(
        state.actions.map((a) => [a.do, a.lose]),
        n === 1 ? [['send', false], ['send', false]] : [['send', true]],
        `level ${n}: the actions that won it`,
      );
    }
    assertNoProblems(maker.problems);
  });

  test('a level not won offers no Share; one won with step mode, which a link cannot replay, says so', async () => {
    const page = maker.page;
    await page.evaluate(() => (location.hash = '#/levels/1'));
    await page.waitForSelector('#levels-reset');
    await page.click('#levels-reset');
    await page.waitForSelector('#level-show-me');
    assert.equal(await page.$('#share-level'), null, 'not won: no Share');
    // Level 1 played with a step-mode delivery among the sends, then won by "Show me".
    await fillSender(page, { event_id: 'lvl1-step', amount: '100', handler: 'atomic', fault: '' });
    await press(page, '#step-start');
    await press(page, '#step-throw');
    await page.evaluate(() => (location.hash = '#/levels/1'));
    await page.waitForSelector('#level-show-me');
    await showMe(page);
    await page.waitForFunction(() => document.querySelector('#levels-list > li[data-level="1"]').dataset.won === 'true');
    await page.evaluate(() => (location.hash = '#/levels/1'));
    await page.click('#share-level');
    assert.equal(
      await page.textContent('#share-level-answer'),
      'This win cannot be shared as a link: it was won with step mode or with a race replayed from a link, which a level’s link does not replay.',
    );
    assert.equal(await page.isVisible('#share-level-url'), false, 'no link');
    assertNoProblems(maker.problems);
  });

  test('a replayed page and the Share controls have no accessibility violation (axe-core), EN and RU', async () => {
    const page = opener.page;
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    // A level link made here, replayed: the note, a won level with its Share, then every Share pressed.
    await page.goto('about:blank');
    await openPage(page, '?storage=memory#/levels/1');
    await showMe(page);
    await page.evaluate(() => (location.hash = '#/levels/1'));
    const url = await shareLink(page, 'share-level');
    await openLink(page, url);
    assert.equal(await page.getAttribute('#level-status', 'data-won'), 'true');
    await shareLink(page, 'share-level');
    await shareLink(page, 'share-timeline');
    await reveal(page, '#share-step');
    await page.click('#share-step');
    assert.equal(await page.textContent('#share-step-answer'), 'Nothing to share yet: step a delivery to its end (Next statement or Throw here).');
    await reveal(page, '#share-race');
    await page.click('#share-race');
    assert.equal(await page.textContent('#share-race-answer'), 'Nothing to share yet: start a race and advance it.');
    const found = {};
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const route of ['levels/1', 'deliver', 'race']) {
        await page.evaluate((route) => (location.hash = `#/${route}`), route);
        await page.waitForSelector(`main .screen[data-screen="${route.split('/')[0]}"]:not([hidden])`);
        const seen = await violations(page);
        if (seen.length > 0) {
          found[`${lang} #/${route}`] = seen;
        }
      }
    }
    assert.equal(await page.textContent('#share-race-answer'), 'Делиться пока нечем: начните гонку и продвиньте её.');
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    assert.deepEqual(found, {});
    // axe itself tries inline styles, which the page's policy refuses (as in a11y.test.mjs).
    const axeOwn = /^console error: Applying inline style violates the following Content Security Policy directive 'style-src 'self''/;
    assert.deepEqual(opener.problems.splice(0).filter((problem) => !axeOwn.test(problem)), []);
  });

  describe('hostile fragments: a specific error next to the note, nothing replayed, nothing written', () => {
    const json = (value) => `#s=${Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')}`;
    const send = (event, more = {}) => ({ event, handler: 'atomic', fault: null, lose: false, attempts: 5, delay: 1000, ...more });
    const good = { source: 'provider-a', event_id: 'h-1', account_id: 1, amount: 100 };
    const cases = [
      ['bad base64', '#s=***', 'Nothing was replayed and nothing was written: This share link is damaged (not base64url).'],
      ['too long', `#s=${'A'.repeat(25_000)}`, 'Nothing was replayed and nothing was written: Too long to share as a link.'],
      ['not JSON', `#s=${Buffer.from('{kind: timeline', 'utf8').toString('base64url')}`, 'Nothing was replayed and nothing was written: This share link is damaged (not JSON).'],
      [
        'unknown kind',
        json({ v: 1, kind: 'rm -rf' }),
        'Nothing was replayed and nothing was written: This share link holds an experiment this page does not know (rm -rf).',
      ],
      [
        'unknown handler',
        json({ v: 1, kind: 'timeline', sends: [send(good, { handler: 'drop_table' })] }),
        'Nothing was replayed and nothing was written: This share link names an unknown handler: “drop_table”.',
      ],
      [
        'unknown fault',
        json({ v: 1, kind: 'timeline', sends: [send(good, { fault: 'after_everything' })] }),
        'Nothing was replayed and nothing was written: This share link names an unknown crash point: “after_everything”.',
      ],
      [
        '1000 deliveries',
        // Counted before anything in them is read: a thousand of anything is refused.
        json({ v: 1, kind: 'timeline', sends: Array.from({ length: 1000 }, () => 0) }),
        'Nothing was replayed and nothing was written: Too many to share: 1000 deliveries or steps, at most 50.',
      ],
      [
        'a burst of 1000 in a level',
        json({ v: 1, kind: 'level', level: 4, actions: [{ do: 'burst', event: good, handler: 'atomic', count: 1000 }] }),
        'Nothing was replayed and nothing was written: Too many to share: 1000 deliveries or steps, at most 100.',
      ],
      [
        'a race of 1000 steps',
        json({ v: 1, kind: 'race', handler: 'atomic', deliveries: 2, order: 'AB'.repeat(500) }),
        'Nothing was replayed and nothing was written: Too many to share: 1000 deliveries or steps, at most 200.',
      ],
      [
        'an invalid event after a valid one (Rust’s rules, as on Deliver)',
        json({ v: 1, kind: 'timeline', sends: [send(good), send({ ...good, event_id: 'h-2', amount: -5 })] }),
        /^Nothing was replayed and nothing was written: Delivery 2 of this share link is invalid: .*amount/,
      ],
      [
        'an event with a field too many',
        json({ v: 1, kind: 'timeline', sends: [send({ ...good, amount: 1, extra: 'x' })] }),
        'Nothing was replayed and nothing was written: This share link is damaged: “sends[0].event” is not what it should be.',
      ],
      [
        'an outbox action with an unknown control',
        json({ v: 1, kind: 'level', level: 9, actions: [{ do: 'effects', control: 'drop_outbox', strategy: 'outbox', crash: null, dedup: true }] }),
        'Nothing was replayed and nothing was written: This share link asks for something this page does not have: “drop_outbox” as actions[0].control.',
      ],
      [
        'a retention purge with a window of a billion days, after a valid delivery',
        json({ v: 1, kind: 'level', level: 10, actions: [{ do: 'retention', control: 'deliver', next: false }, { do: 'retention', control: 'purge', days: 1e9 }] }),
        'Nothing was replayed and nothing was written: This share link asks for something this page does not have: “1000000000” as actions[1].days.',
      ],
      [
        'a million random kills in the crash lab',
        json({ v: 1, kind: 'level', level: 7, actions: [{ do: 'crash', run: 'kills', mode: 'wal', trials: 1e6 }] }),
        'Nothing was replayed and nothing was written: Too many to share: 1000000 deliveries or steps, at most 100.',
      ],
      [
        'a crash-lab sweep in an unknown journal mode',
        json({ v: 1, kind: 'level', level: 7, actions: [{ do: 'crash', run: 'sweep', mode: 'off', events: 1, control: false }] }),
        'Nothing was replayed and nothing was written: This share link asks for something this page does not have: “off” as actions[0].mode.',
      ],
      [
        'a level that does not exist',
        json({ v: 1, kind: 'level', level: 99, actions: [{ do: 'send', ...send(good) }] }),
        'Nothing was replayed and nothing was written: This share link names a level that does not exist: 99.',
      ],
    ];
    let browser;
    before(async () => {
      browser = await launch();
      browser.page.setDefaultTimeout(60_000);
    });
    after(() => browser?.close());

    for (const [name, fragment, expected] of cases) {
      test(name, async () => {
        const page = browser.page;
        await openLink(page, new URL(fragment, BASE_URL).href);
        const error = await page.textContent('#share-error');
        if (expected instanceof RegExp) {
          assert.match(error, expected);
        } else {
          assert.equal(error, expected);
        }
        assert.equal(await page.isVisible('#share-error'), true);
        assert.equal(await page.getAttribute('#share-note', 'data-state'), 'refused');
        assert.deepEqual(await tables(page), FRESH_TABLES, 'nothing written to the scratch database');
        assert.deepEqual(await page.evaluate(() => window.inboxLab.timeline()), [], 'nothing delivered');
        assert.deepEqual(await opfsNames(page), [], 'no stored database created or opened');
        assertNoProblems(browser.problems);
      });
    }

    test('the error is in Russian too', async () => {
      const page = browser.page;
      await openLink(page, new URL(cases[4][1], BASE_URL).href);
      await page.evaluate(() => window.inboxLab.setLanguage('ru'));
      assert.equal(await page.textContent('#share-error'), 'Ничего не повторено и ничего не записано: В ссылке неизвестный обработчик: «drop_table».');
      assert.equal(await page.textContent('#share-note strong'), 'Повторено на черновой базе — ваши данные не тронуты.');
      await page.evaluate(() => window.inboxLab.setLanguage('en'));
      assertNoProblems(browser.problems);
    });
  });
});
