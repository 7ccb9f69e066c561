import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage();
const base = 'http://127.0.0.1:8114/';
await page.goto(base + '#/levels/1');
await page.evaluate(() => window.inboxLab.ready);
await page.waitForSelector('main[aria-busy="false"]', { state: 'attached' });
// win level 1 by "show me", then look at level 2 and at the bar on deliver
await page.click('#level-show-me');
await page.waitForFunction(() => document.querySelector('#levels-list > li[data-level="1"]').dataset.won === 'true');
for (const lang of ['en', 'ru']) {
  await page.evaluate((l) => window.inboxLab.setLanguage(l), lang);
  for (const [name, size] of [['1280x800', { width: 1280, height: 800 }], ['400x850', { width: 400, height: 850 }]]) {
    await page.setViewportSize(size);
    await page.evaluate(() => (location.hash = '#/levels/1'));
    await page.waitForTimeout(300);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `/tmp/shots-levels/levels-1-${lang}-${name}.png` });
    await page.evaluate(() => (location.hash = '#/levels/2'));
    await page.waitForTimeout(300);
    await page.screenshot({ path: `/tmp/shots-levels/levels-2-${lang}-${name}.png`, fullPage: true });
    await page.evaluate(() => (location.hash = '#/deliver'));
    await page.waitForTimeout(300);
    await page.screenshot({ path: `/tmp/shots-levels/deliver-bar-${lang}-${name}.png` });
  }
}
await browser.close();
