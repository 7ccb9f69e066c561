// axe-core (npm, pinned in package.json) on every section of the page, in
// English and in Russian, with the page's own Content-Security-Policy left on
// (axe runs through the DevTools protocol, as the test's own script, not as
// a script the page loads). Each section is scanned after it has been used —
// a delivery with a lost response, step mode open, a burst, a race started,
// the article's scenario, a query — so what the panels draw is checked too,
// not only the empty page.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { goTo, idle, reveal, usePage } from './browser.mjs';
import { fillSender, freshPlayground, press, pressDeliver } from './playground.mjs';

const AXE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const SECTIONS = ['start', 'levels', 'levels/1', 'deliver', 'race', 'handler', 'crash', 'scheme-ends', 'webhooks', 'workshop', 'tools'];

/** axe's violations on the page as it is now: "rule ×n: targets". */
async function violations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.evaluate(AXE);
  }
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map(
    (v) => `${v.id} ×${v.nodes.length}: ${v.nodes.map((node) => node.target.join(' ')).join(' | ')}`,
  );
}

describe('accessibility (axe-core) of every section, EN and RU', { timeout: 300_000 }, () => {
  let page;
  let problems;
  // Checked here, not after each test: axe itself tries inline styles, which
  // the page's policy refuses (and the browser logs) — the price of leaving
  // the policy on. Everything else the page logs still fails the test.
  usePage({ beforeEach: freshPlayground, checkEach: false }, (opened, browser) => {
    page = opened;
    problems = browser.problems;
  });

  test('axe finds no violation in any section, in either language, with the CSP on', async () => {
    // Its header from `cargo xtask serve`; on a static host (run 2), which
    // sends none, the <meta> policy that dist/ carries.
    const header = (await page.request.get(page.url())).headers()['content-security-policy'];
    const meta = await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content);
    assert.match(header ?? meta ?? '', /script-src 'self'/, 'the page runs under its policy');
    // Use the panels first, so what they draw is scanned too.
    await fillSender(page, { lose_response: true });
    await pressDeliver(page);
    await fillSender(page, { lose_response: false, event_id: 'evt-2' });
    await reveal(page, '#burst-count');
    await page.fill('#burst-count', '3');
    await press(page, '#burst-same');
    await press(page, '#step-start');
    await press(page, '#step-next');
    await goTo(page, 'race-lab');
    await press(page, '#race-start');
    await press(page, '#scenario-run');
    await goTo(page, 'console');
    await page.fill('#sql', 'SELECT * FROM accounts');
    await press(page, '#sql-form button[type=submit]');
    assert.deepEqual(problems.splice(0), [], 'the page logged no error while it was used');

    const found = {};
    let scanned = 0;
    for (const lang of ['en', 'ru']) {
      await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
      for (const section of SECTIONS) {
        await goTo(page, section);
        await idle(page);
        const seen = await violations(page);
        scanned += 1;
        if (seen.length > 0) {
          found[`${lang} #/${section}`] = seen;
        }
      }
    }
    await page.evaluate(() => window.inboxLab.setLanguage('en'));
    const axeOwn = /^console error: Applying inline style violates the following Content Security Policy directive 'style-src 'self''/;
    assert.deepEqual(
      problems.splice(0).filter((problem) => !axeOwn.test(problem)),
      [],
      'nothing but the styles axe itself tried was logged',
    );
    assert.equal(scanned, SECTIONS.length * 2);
    assert.deepEqual(found, {});
  });
});
