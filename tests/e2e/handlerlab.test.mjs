// "Write your own handler" (www/panels/handler-lab/handlerlab.js) as a reader
// uses it: copy a built-in and judge it, see each check's first failure
// explained and replayed step by step (in English and Russian, in the
// handler's own terms), a typo answered with its line and column, the
// article's handler judged correct (the crash sweep honestly said to run
// natively), and a share link opened in a fresh profile.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { idle, launch, openPage, openPageRetrying, usePage } from './browser.mjs';

const PANEL = '#handler-lab';

async function judge(page, text, deliveries = '2') {
  await page.fill('#handler-text', text);
  await page.selectOption('#handler-deliveries', deliveries);
  await page.click('#handler-judge');
  await idle(page);
  await page.waitForSelector('#handler-judge:not([disabled])');
}

const body = (page, selector) => page.textContent(selector);

describe('write your own handler', { timeout: 300_000 }, () => {
  let page;
  usePage(
    {
      prepare: (opened) => opened.setDefaultTimeout(60_000), // a loaded machine is slow
      open: (opened) => openPageRetrying(opened, '?storage=memory#/handler'),
    },
    (opened) => (page = opened),
  );

  test('a copied built-in is judged broken, and its first failing race is explained and replays step by step', async () => {
    await page.selectOption('#handler-builtin', 'check_then_act');
    await page.waitForFunction(() => document.querySelector('#handler-builtin-text').textContent.includes('# check_then_act'));
    await page.click('#handler-copy');
    const text = await page.inputValue('#handler-text');
    assert.match(text, /^# check_then_act/);
    await judge(page, text);
    assert.equal(await body(page, '#handler-verdict'), 'Verdict: broken');
    const race = await page.textContent(`${PANEL} #handler-table tbody tr:first-child td`);
    const doubles = Number(/(\d+) double credits/.exec(race)?.[1]);
    assert.ok(doubles > 0, race);
    const failure = `${PANEL} .handler-failure[data-check="race"]`;
    assert.match(await body(page, `${failure} .handler-why`), /The account was credited more than once: balance 1000, expected 500\.$/);

    // One step per click, until the last.
    const next = `${failure} .handler-next`;
    assert.equal(await page.$$eval(`${failure} li`, (items) => items.length), 0);
    await page.click(next);
    assert.match(await body(page, `${failure} li`), /^[AB]: SELECT account_id, amount FROM inbox .* → ran \(committed balance 0\)$/);
    const total = Number(/of (\d+)\)$/.exec(await body(page, next))[1]);
    assert.ok(total >= 3, await body(page, next));
    while (!(await page.isDisabled(next))) {
      await page.click(next);
    }
    const steps = await page.$$eval(`${failure} li`, (items) => items.map((li) => li.textContent));
    assert.equal(steps.length, total, steps.join('\n'));
  });

  test('without BEGIN and COMMIT each failing check says why, in English and in Russian, in the handler’s terms', async () => {
    const atomic = await page.evaluate(() => window.inboxLab.judge.builtin('atomic'));
    const loose = atomic
      .split('\n')
      .filter((line) => !line.startsWith('BEGIN') && line.trim() !== 'COMMIT')
      .join('\n');
    const rollback = loose.split('\n').findIndex((line) => line.trim() === 'ROLLBACK') + 1;
    await judge(page, loose);
    assert.equal(await body(page, '#handler-verdict'), 'Verdict: broken');
    const checks = await page.$$eval(`${PANEL} .handler-failure`, (sections) => sections.map((s) => s.dataset.check));
    assert.deepEqual(checks, ['race', 'faults', 'case']);
    const whys = () => page.$$eval(`${PANEL} .handler-why`, (ps) => ps.map((p) => p.textContent));
    const [race, , kase] = await whys();
    assert.match(race, /^B answered duplicate at step \d+ while A's credit was not committed yet; if A then fails, the credit is lost\./);
    assert.match(kase, new RegExp(`ROLLBACK on line ${rollback} runs with no transaction open: the handler's own mistake`));
    await page.click(`${PANEL} .handler-failure[data-check="faults"] .handler-next`);
    assert.match(await body(page, `${PANEL} .handler-failure[data-check="faults"] li`), /^A, line \d+: INSERT INTO inbox/);
    const raw = /storage error|cannot be used|no transaction is active/;
    assert.doesNotMatch(await body(page, PANEL), raw);

    await page.evaluate(() => window.inboxLab.setLanguage('ru'));
    try {
      assert.equal(await body(page, '#handler-verdict'), 'Вердикт: есть ошибки');
      const [ru, faults, ruCase] = await whys();
      assert.match(ru, /^Доставка B ответила «дубликат» на шаге \d+, когда зачисление доставки A ещё не было зафиксировано/);
      assert.match(ruCase, new RegExp(`ROLLBACK в строке ${rollback} выполняется без открытой транзакции: ошибка самого обработчика`));
      for (const why of [ru, faults, ruCase]) {
        assert.doesNotMatch(why, /answered|expected|delivery|balance|failed/, why);
      }
      // The step shown before the switch stays shown, now in Russian.
      assert.match(await body(page, `${PANEL} .handler-failure[data-check="faults"] li`), /^A, строка \d+: INSERT INTO inbox\(.* → выполнен$/);
      assert.doesNotMatch(await body(page, PANEL), raw);
    } finally {
      await page.evaluate(() => window.inboxLab.setLanguage('en'));
    }
  });

  test('a typo is answered with its line, column and what was expected', async () => {
    await judge(page, 'SELECT 1\nIF CHANGED 0\nEND\nANSWER applied\n');
    assert.equal(
      await page.textContent(`${PANEL} .handler-verdict`),
      'Line 2, column 12: expected =, !=, <, <=, > or >=, found "0"',
    );
  });

  test('the article’s handler is correct; the crash sweep is said to run natively, not counted', async () => {
    await page.selectOption('#handler-builtin', 'atomic');
    await page.waitForFunction(() => document.querySelector('#handler-builtin-text').textContent.includes('# atomic'));
    await page.click('#handler-copy');
    await judge(page, await page.inputValue('#handler-text'));
    assert.equal(await body(page, '#handler-verdict'), 'Verdict: correct');
    const rows = await page.$$eval('#handler-table tbody tr', (trs) => trs.map((tr) => tr.textContent));
    assert.match(rows[2], /not run in the browser — run natively: inbox-lab judge/);
    assert.match(rows[3], /all 6 ok/);
  });

  test('the judge tells its progress as each check starts, and the panel shows it', async () => {
    const text = await page.evaluate(() => window.inboxLab.judge.builtin('atomic'));
    const told = await page.evaluate(async (handler) => {
      const seen = [];
      const stop = window.inboxLab.judge.onProgress((p) => seen.push(`${p.check} ${p.done}/${p.total}`));
      await window.inboxLab.judge.run(handler, 3);
      stop();
      return seen;
    }, text);
    assert.deepEqual(told, ['cases 0/3', 'faults 1/3', 'race_3 2/3', 'done 3/3']);

    // The panel: the status says which check runs while the progress bar fills.
    await page.fill('#handler-text', text);
    await page.selectOption('#handler-deliveries', '3');
    const statuses = page.evaluate(
      () =>
        new Promise((resolve) => {
          const seen = [];
          const status = document.querySelector('#handler-status');
          const watch = new MutationObserver(() => {
            seen.push(status.textContent);
            if (document.querySelector('#handler-verdict') !== null) {
              watch.disconnect();
              resolve(seen);
            }
          });
          watch.observe(document.querySelector('#handler-lab'), { childList: true, subtree: true, characterData: true });
        }),
    );
    await page.click('#handler-judge');
    const seen = await statuses;
    assert.ok(seen.includes('Judging (2 of 3 checks done): every interleaving of 3 deliveries…'), seen.join('\n'));
    await page.waitForSelector('#handler-judge:not([disabled])');
    assert.equal(await body(page, '#handler-verdict'), 'Verdict: correct');
    assert.equal(await page.getAttribute('#handler-progress', 'hidden'), '');
  });

  test('a share link made after a race failure carries its schedule, and opening it replays it', async () => {
    await page.selectOption('#handler-builtin', 'check_then_act');
    await page.waitForFunction(() => document.querySelector('#handler-builtin-text').textContent.includes('# check_then_act'));
    await page.click('#handler-copy');
    const text = await page.inputValue('#handler-text');
    await judge(page, text);
    const total = Number(/of (\d+)\)$/.exec(await body(page, `${PANEL} .handler-failure[data-check="race"] .handler-next`))[1]);
    await page.click('#handler-share');
    assert.equal(await body(page, '#handler-status'), 'The link to this handler and its first failing schedule is in the address bar.');
    const hash = await page.evaluate(() => location.hash);
    const state = JSON.parse(Buffer.from(hash.slice('#s='.length), 'base64url').toString('utf8'));
    assert.deepEqual(state, { handler: text, race: state.race, v: 1 });
    const letters = /^2:([AB]+)$/.exec(state.race)[1];
    assert.equal(letters.length, total, 'the schedule replayed on the page, one step per statement');

    const fresh = await launch();
    try {
      fresh.page.setDefaultTimeout(60_000);
      await openPage(fresh.page, `?storage=memory${hash}`);
      assert.equal(await fresh.page.inputValue('#handler-text'), text);
      await fresh.page.waitForSelector('#handler-steps li.handler-end');
      assert.equal(
        await fresh.page.textContent('#handler-status'),
        'Opened a shared handler and its failing schedule, replayed below. Judge it to see its verdict.',
      );
      const steps = await fresh.page.$$eval('#handler-steps li', (items) => items.map((li) => li.textContent));
      assert.equal(steps.length, letters.length + 1, steps.join('\n'));
      assert.match(steps.at(-1), /double credit yes/, steps.join('\n'));
      assert.deepEqual(fresh.problems, []);
    } finally {
      await fresh.close();
    }
  });

  test('a share link opens the handler in a fresh profile', async () => {
    const mine = '# mine <b>not markup</b>\nBEGIN IMMEDIATE\nCOMMIT\nANSWER applied\n';
    await page.fill('#handler-text', mine);
    await page.click('#handler-share');
    const hash = await page.evaluate(() => location.hash);
    assert.match(hash, /^#s=[A-Za-z0-9_-]+$/);

    const fresh = await launch();
    try {
      fresh.page.setDefaultTimeout(60_000);
      await openPage(fresh.page, `?storage=memory${hash}`);
      // A share link opens the handler's screen (www/panels/nav/nav.js), not the start screen.
      assert.equal(await fresh.page.isVisible('#handler-text'), true);
      assert.equal(await fresh.page.getAttribute('nav.sections a[data-route="handler"]', 'aria-current'), 'page');
      assert.equal(await fresh.page.inputValue('#handler-text'), mine);
      assert.equal(await fresh.page.textContent('#handler-status'), 'Opened a shared handler. Judge it to see its verdict.');
      await fresh.page.click('#handler-judge');
      await idle(fresh.page);
      await fresh.page.waitForSelector('#handler-verdict');
      assert.equal(await fresh.page.textContent('#handler-verdict'), 'Verdict: broken');
      assert.equal(await fresh.page.$(`${PANEL} b`), null, 'the text is never markup');
      assert.deepEqual(fresh.problems, []);

      // A damaged link: a clear message, an empty editor, no error thrown.
      // Opened as a new page load (a share link that only changes the hash
      // reloads the page on a scratch database: www/panels/nav/nav.js).
      await fresh.page.goto('about:blank');
      await openPage(fresh.page, '?storage=memory#s=***');
      assert.equal(await fresh.page.textContent('#handler-status'), 'This share link is damaged (not base64url).');
      assert.deepEqual(fresh.problems, []);
    } finally {
      await fresh.close();
    }
  });
});
