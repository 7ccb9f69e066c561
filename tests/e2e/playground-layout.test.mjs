// English and Russian, the keyboard, and the layout: the language switch
// redraws everything (static text and what the page drew), every key of the
// page exists in both languages, and the main states read well at 1280×800
// and at 400px (screenshots under target/e2e/).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { goTo, idle, reloadPage, reveal, screenshotPath } from './browser.mjs';
import { WIDE, fillSender, press, pressDeliver, restoreSender, senderLog, useWidePlayground } from './playground.mjs';

/** Every section of the page (www/panels/nav/nav.js), in the order of the section list. */
const SECTIONS = ['start', 'levels', 'levels/1', 'deliver', 'race', 'handler', 'crash', 'scheme-ends', 'webhooks', 'workshop', 'tools'];

/** Both sizes the page is designed for. */
const NARROW = { width: 400, height: 850 };
/** The phone of issue 23's rule: no section but Tools taller than three of its screens in its empty state. */
const PHONE = { width: 390, height: 844 };

async function sideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

describe('languages, keyboard and layout', { timeout: 240_000 }, () => {
  let page;
  useWidePlayground((opened) => (page = opened));

  test('RU switches static text and what the page drew, and the choice survives a reload', async () => {
    await fillSender(page, { lose_response: true });
    await pressDeliver(page);
    await press(page, '[data-lang="ru"]');
    assert.equal(await page.getAttribute('html', 'lang'), 'ru');
    assert.equal(await page.getAttribute('[data-lang="ru"]', 'aria-pressed'), 'true');
    assert.equal(await page.getAttribute('[data-lang="en"]', 'aria-pressed'), 'false');
    assert.equal(await page.textContent('#sender-title'), 'Отправитель');
    assert.equal(await page.textContent('#deliver-form button[type=submit]'), 'Доставить');
    assert.equal(await page.textContent('#status'), 'Сохранено в вашем браузере; переживёт перезагрузку.');
    assert.equal(
      await page.textContent('#status-stack'),
      'Журнал WAL, synchronous FULL, записи объединяются (проверено лабораторией сбоев). WAL: один flush на коммит, а не три.',
    );
    assert.equal(await page.textContent('#sender-summary'), 'provider-a / evt-1: зачислено один раз. Баланс счёта 1: 0 → 500.');
    assert.match((await senderLog(page))[0], /^t=0,0 с · попытка 1 → применено, 200 · ответ потерян/);
    assert.match(await page.textContent('#timeline'), /попытка 2 из 5 · atomic · отправитель/);
    assert.match(await page.textContent('#handler-note'), /^Обработчик из статьи/);
    assert.equal(await page.title(), 'inbox-lab: идемпотентная обработка событий на SQLite');
    await page.screenshot({ path: await screenshotPath('playground-ru-1280x800.png') });

    await reloadPage(page);
    assert.equal(await page.textContent('#sender-title'), 'Отправитель', 'remembered');
    await page.setViewportSize(NARROW);
    assert.equal(await sideways(page), 0, 'Russian is longer, and still no sideways scrolling at 400px');
    await page.screenshot({ path: await screenshotPath('playground-ru-400-full.png'), fullPage: true });
    await press(page, '[data-lang="en"]');
    assert.equal(await page.textContent('#sender-title'), 'Sender');
  });

  test('the status line is plain words; how the database is stored waits behind a disclosure, EN and RU', async () => {
    const stack = {
      en: 'Journal WAL, synchronous FULL, writes coalesced (proven by the crash lab). WAL: one flush per commit, not three.',
      ru: 'Журнал WAL, synchronous FULL, записи объединяются (проверено лабораторией сбоев). WAL: один flush на коммит, а не три.',
    };
    const line = { en: 'Saved in your browser; survives a reload.', ru: 'Сохранено в вашем браузере; переживёт перезагрузку.' };
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const size of [WIDE, { width: 390, height: 844 }]) {
        await page.setViewportSize(size);
        assert.equal(await page.textContent('#status'), line[lang]);
        assert.equal(await page.isVisible('#status-stack'), false, 'the journal is behind the disclosure');
        await page.click('#status-details summary');
        assert.equal(await page.textContent('#status-stack'), stack[lang]);
        assert.equal(await page.isVisible('#status-stack'), true);
        assert.equal(await sideways(page), 0);
        await page.screenshot({ path: await screenshotPath(`status-${lang}-${size.width}x${size.height}.png`) });
        await page.click('#status-details summary');
      }
    }
    await page.setViewportSize(WIDE);
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
  });

  test('every data-i18n key of the page is registered, in both languages, and none shows as a raw key', async () => {
    const report = await page.evaluate(async () => {
      const i18n = window.inboxLab.texts;
      const { en, ru } = i18n.keys();
      const used = [...document.querySelectorAll('[data-i18n]')].map((el) => el.dataset.i18n);
      const attrs = [...document.querySelectorAll('[data-i18n-attr]')].flatMap((el) =>
        el.dataset.i18nAttr.split(',').map((pair) => pair.split(':')[1].trim()),
      );
      const raw = [...document.querySelectorAll('body *')]
        .filter((el) => el.children.length === 0 && i18n.has(el.textContent.trim()))
        .map((el) => el.textContent.trim());
      return {
        missing: [...used, ...attrs].filter((key) => !i18n.has(key)),
        onlyEn: en.filter((key) => !ru.includes(key)),
        onlyRu: ru.filter((key) => !en.includes(key)),
        raw,
        count: used.length,
      };
    });
    assert.ok(report.count > 40, `${report.count} translated elements`);
    assert.deepEqual(report.missing, []);
    assert.deepEqual(report.onlyEn, []);
    assert.deepEqual(report.onlyRu, []);
    assert.deepEqual(report.raw, []);
  });

  test('the keyboard reaches the storage details, the language switch, the form and Deliver in order', async () => {
    await page.click('h1');
    const focused = () => page.evaluate(() => document.activeElement.dataset.lang ?? (document.activeElement.id || document.activeElement.parentElement.id));
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'status-details', 'how the database is stored, beside the status line');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'en');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'ru');
    await page.keyboard.press('Enter');
    assert.equal(await page.textContent('#sender-title'), 'Отправитель');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Space');
    assert.equal(await page.textContent('#sender-title'), 'Sender');

    await reveal(page, '#source');
    await page.focus('#source');
    const order = ['source'];
    for (let i = 0; i < 9; i += 1) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement.id || document.activeElement.textContent));
    }
    assert.deepEqual(order, [
      'source',
      'event_id',
      'account_id',
      'amount',
      'handler',
      'fault',
      'lose_response',
      'attempts',
      'first_delay',
      'Deliver',
    ]);
    await page.keyboard.press('Enter');
    await idle(page);
    assert.match((await senderLog(page))[0], /attempt 1 → applied, 200/);
  });

  test('screenshots: the main states at 1280×800 and 400px, never sideways scrolling', async () => {
    // The opening story, a crash, a duplicate: a full timeline.
    await fillSender(page, { lose_response: true });
    await pressDeliver(page);
    await fillSender(page, { lose_response: false, event_id: 'evt-2', fault: 'after_update' });
    await pressDeliver(page);
    await restoreSender(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: await screenshotPath('playground-1280x800.png') });
    const sender = await page.locator('#sender').boundingBox();
    const heard = await page.locator('#heard').boundingBox();
    const database = await page.locator('#database').boundingBox();
    const deliver = await page.locator('#deliver-form button[type=submit]').boundingBox();
    assert.ok(sender.x + sender.width <= database.x, 'the sender and the database side by side');
    assert.ok(heard.y >= sender.y + sender.height && heard.x === sender.x, 'what the sender heard under the sender');
    assert.ok(database.y < 200 && sender.y < 200, 'the loop starts in the first screen');
    assert.ok(deliver.y + deliver.height <= WIDE.height, `Deliver in the first screen (bottom at ${deliver.y + deliver.height})`);
    await page.screenshot({ path: await screenshotPath('playground-1280-full.png'), fullPage: true });

    // Step mode with the transaction open.
    await press(page, '#step-start');
    await press(page, '#step-next');
    await press(page, '#step-next');
    await page.locator('#stepper').scrollIntoViewIfNeeded();
    assert.equal(await page.isVisible('#tables-view'), true, 'the tables beside step mode show the open transaction');
    await page.screenshot({ path: await screenshotPath('playground-step-open.png') });
    await press(page, '#step-kill');
    await page.locator('#stepper').scrollIntoViewIfNeeded();
    await page.screenshot({ path: await screenshotPath('playground-step-killed.png') });

    await page.setViewportSize(NARROW);
    assert.equal(await sideways(page), 0, 'no sideways scrolling at 400px');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: await screenshotPath('playground-400x800.png') });
    await page.screenshot({ path: await screenshotPath('playground-400-full.png'), fullPage: true });
  });

  test('screenshots of every section at 1280×800 and 400×850, EN and RU; no section needs 12,000 px on a phone', async () => {
    const heights = {};
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const [name, size] of [['1280x800', WIDE], ['400x850', NARROW]]) {
        await page.setViewportSize(size);
        for (const section of SECTIONS) {
          await goTo(page, section);
          await page.evaluate(() => window.scrollTo(0, 0));
          assert.equal(await sideways(page), 0, `${lang} ${name} #/${section}: no sideways scrolling`);
          heights[`${lang} ${name} ${section}`] = await page.evaluate(() => document.documentElement.scrollHeight);
          await page.screenshot({ path: await screenshotPath(`section-${section.replace('/', '-')}-${lang}-${name}.png`) });
        }
      }
    }
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    const tall = Object.entries(heights).filter(([, height]) => height > 6000);
    assert.deepEqual(tall, [], 'every section is well under 12,000 px, on a phone too');
  });

  test('on a 390×844 phone, no section but Tools is taller than three screens in its empty state, EN and RU', async () => {
    // A fresh playground (beforeEach), no level played (its bar would show
    // on every section: a new visitor's progress), every part shown on
    // demand closed.
    await page.evaluate(() => localStorage.removeItem('inbox-lab.levels.v1'));
    await reloadPage(page);
    await page.setViewportSize(PHONE);
    const tall = [];
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const section of SECTIONS.filter((name) => !name.includes('/') && name !== 'tools')) {
        await goTo(page, section);
        const height = await page.evaluate(() => document.documentElement.scrollHeight);
        if (height > 3 * PHONE.height) {
          tall.push(`${lang} #/${section}: ${height} px`);
        }
      }
    }
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    assert.deepEqual(tall, [], `every section but Tools fits ${3 * PHONE.height} px`);

    // What keeps Deliver short: parts shown on demand, closed until asked
    // for — from the keyboard, or by a link to the panel.
    const open = (id) => page.evaluate((id) => document.getElementById(id).open, id);
    const folds = ['timeline-legend-fold', 'account-fold', 'step-fold', 'burst-fold'];
    await goTo(page, 'deliver');
    assert.deepEqual(await Promise.all(folds.map(open)), [false, false, false, false], 'closed at first');
    await page.focus('#step-fold > summary');
    await page.keyboard.press('Enter');
    assert.equal(await open('step-fold'), true, 'Enter on its heading opens step mode');
    assert.equal(await page.isVisible('#step-start'), true);
    await goTo(page, 'burst');
    assert.equal(await open('burst-fold'), true, 'a link to the panel (#/burst) opens it');
    assert.equal(await page.isVisible('#burst-same'), true);
    await page.setViewportSize(WIDE);
  });
});
