// Screenshots to look at, not a test: issue 23's items (1–8) at 1280×800
// and 390×844, in English and Russian, and every section's height on a
// phone in its empty state. Run by hand against a served site:
//
//   cargo xtask serve --no-build --with-source --port 0    # prints the link
//   INBOX_LAB_URL=<that link> node tests/e2e/screens.mjs [--heights] [folder]
//
// PNGs go to the folder (default /tmp/screens), named
// <item>-<state>-<lang>-<size>.png; the heights are printed. Nothing is
// asserted here: the behaviour is the tests' (playground-layout.test.mjs
// holds the phone-height rule).

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { goTo, idle, launch, openPage, reveal } from './browser.mjs';
import { fillSender, freshPlayground, press, pressDeliver } from './playground.mjs';

const OUT = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? '/tmp/screens';
const SIZES = { '1280x800': { width: 1280, height: 800 }, '390x844': { width: 390, height: 844 } };
const SECTIONS = ['start', 'levels', 'deliver', 'race', 'handler', 'crash', 'scheme-ends', 'webhooks', 'workshop', 'tools'];

const browser = await launch();
const { page } = browser;
page.setDefaultTimeout(60_000);
await mkdir(OUT, { recursive: true });
await openPage(page);

async function language(lang) {
  await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
}

/** Every section's height at 390×844, EN and RU, in its empty state. */
async function heights() {
  await page.setViewportSize(SIZES['390x844']);
  for (const lang of ['en', 'ru']) {
    await language(lang);
    const seen = [];
    for (const section of SECTIONS) {
      await goTo(page, section);
      seen.push(`${section} ${await page.evaluate(() => document.documentElement.scrollHeight)}`);
    }
    console.log(`${lang} 390x844: ${seen.join(', ')}`);
  }
}

/** `name` at both sizes, with `selector` scrolled to the top of the window. */
async function shoot(name, lang, selector) {
  await idle(page);
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    await page.evaluate((selector) => {
      const node = document.querySelector(selector);
      window.scrollTo(0, node === null ? 0 : node.getBoundingClientRect().top + window.scrollY - 60);
    }, selector);
    await page.screenshot({ path: join(OUT, `${name}-${lang}-${size}.png`) });
  }
  await page.setViewportSize(SIZES['1280x800']);
}

/** Each item of issue 23 driven to the state it is about, in `lang`. */
async function items(lang) {
  await page.setViewportSize(SIZES['1280x800']);
  await freshPlayground(page);
  await language(lang);
  // 1. The verdict and the sender's summary of a redelivery agree.
  await fillSender(page, { event_id: `evt-s1-${lang}`, handler: 'insert_or_replace', attempts: '1' });
  await pressDeliver(page);
  await press(page, '[data-redeliver="same"]');
  await shoot('1-redeliver-insert_or_replace', lang, '#heard');
  await shoot('1-redeliver-strip', lang, '.redeliver');
  // 2. The flow: two_transactions crashed after its first transaction.
  await fillSender(page, { event_id: `evt-s2-${lang}`, handler: 'two_transactions', fault: 'after_insert' });
  await pressDeliver(page);
  await page.waitForFunction(() => document.querySelector('#flow').dataset.lit === document.querySelector('#flow').dataset.steps);
  await shoot('2-flow-two_transactions-crash', lang, '#flow');
  // 3. A mistake that happened to be right: "correct this time".
  await fillSender(page, { event_id: `evt-s3-${lang}`, handler: 'check_then_act', fault: '' });
  await pressDeliver(page);
  await shoot('3-correct-this-time', lang, '#answer');
  await shoot('3-timeline', lang, '#timeline-title');
  // 4. A crash point the handler does not have.
  await fillSender(page, { event_id: `evt-s4-${lang}`, handler: 'no_dedup', fault: 'after_insert' });
  await pressDeliver(page);
  await shoot('4-crash-point-unreached', lang, '#answer');
  await fillSender(page, { handler: 'atomic', fault: '' });
  // Deliver's parts shown on demand, open.
  for (const part of ['#step-start', '#burst-same', '#timeline-legend', '#new-account']) {
    await reveal(page, part);
  }
  await press(page, '#step-start');
  await press(page, '#step-next');
  await shoot('deliver-step-open', lang, '#stepper');
  await press(page, '#step-throw');
  await press(page, '#burst-same');
  await shoot('deliver-burst', lang, '#burst');
  // 5. Levels: level 3 played, missed, then its bar.
  await page.evaluate(() => localStorage.removeItem('inbox-lab.levels.v1'));
  await goTo(page, 'levels/3');
  await shoot('5-level-3', lang, '#levels');
  await press(page, '#level-go');
  await pressDeliver(page);
  await shoot('5-level-3-miss', lang, '#level-bar');
  await fillSender(page, { fault: 'after_insert', attempts: '3' });
  await pressDeliver(page);
  await shoot('5-level-3-after-crash', lang, '#level-bar');
  // 6. The judge: atomic without its BEGIN and COMMIT.
  await goTo(page, 'handler');
  const atomic = await page.evaluate(() => window.inboxLab.judge.builtin('atomic'));
  const loose = atomic
    .split('\n')
    .filter((line) => !/^\s*(BEGIN|COMMIT)\b/.test(line))
    .join('\n');
  await page.fill('#handler-text', loose);
  await page.selectOption('#handler-deliveries', '2');
  await page.click('#handler-judge');
  await page.waitForSelector('#handler-judge:not([disabled])', { timeout: 300_000 });
  await shoot('6-judge-verdict', lang, '#handler-result');
  await shoot('6-judge-first-failure', lang, '#handler-result h4');
  // 7. The webhooks level.
  await goTo(page, 'webhooks');
  await page.waitForSelector('#hooks-relay[data-state="connected"]', { state: 'attached' });
  await page.evaluate(() => window.inboxLab.hooks.forget());
  for (const step of ['#hooks-new', '#hooks-forge', '#hooks-genuine']) {
    await press(page, step);
  }
  await shoot('7-webhooks-level', lang, '#hooks-verdict');
  // 8. Where the scheme ends, one experiment at a time; the status line; a business key.
  await goTo(page, 'scheme-ends');
  await shoot('8-scheme-ends', lang, '#scheme-ends');
  for (const chip of ['first', 'second', 'first']) {
    await press(page, `[data-order="${chip}"]`);
    await press(page, '#se-order-form button[type=submit]');
  }
  await shoot('8-business-key', lang, '#se-order-log');
  await goTo(page, 'start');
  await shoot('8-status-line', lang, 'header');
  await goTo(page, 'workshop');
  await shoot('8-workshop', lang, '#workshop');
  await goTo(page, 'crash');
  await shoot('8-crash-lab', lang, '#crash-lab');
}

await heights();
if (!process.argv.includes('--heights')) {
  for (const lang of ['en', 'ru']) {
    await items(lang);
  }
  console.log(`screenshots in ${OUT}`);
}
await browser.close();
