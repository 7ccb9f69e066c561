import { chromium } from 'playwright-core';
const url = 'http://127.0.0.1:8190/';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
for (const [w, h, lang] of [[1280, 800, 'en'], [400, 850, 'ru']]) {
  const ctx = await browser.newContext({ viewport: { width: w, height: h } });
  const page = await ctx.newPage();
  await page.goto(url + '?storage=memory');
  await page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('Ready') || document.querySelector('#status')?.textContent.startsWith('Готов'));
  if (lang === 'ru') { await page.evaluate(() => window.inboxLab.setLanguage?.('ru')); const b = await page.$('button[lang="ru"], [data-lang="ru"]'); if (b) await b.click(); }
  await page.selectOption('#deliver-form [name="handler"]', 'two_transactions');
  await page.selectOption('#deliver-form [name="fault"]', 'after_insert');
  await page.click('#deliver-form button[type="submit"]');
  await page.waitForTimeout(2500);
  await page.locator('#timeline').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `/tmp/shots/timeline-${w}-${lang}.png` });
  // step mode with throw
  await page.selectOption('#deliver-form [name="handler"]', 'atomic');
  await page.selectOption('#deliver-form [name="fault"]', '');
  await page.fill('#deliver-form [name="event_id"]', 'evt-9');
  await page.click('#step-start'); await page.waitForTimeout(300);
  for (let i = 0; i < 3; i++) { await page.click('#step-next'); await page.waitForTimeout(300); }
  await page.locator('#step-list').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `/tmp/shots/step-open-${w}-${lang}.png` });
  await page.click('#step-throw'); await page.waitForTimeout(2500);
  await page.locator('#step-list').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `/tmp/shots/step-thrown-${w}-${lang}.png` });
  // race lab
  await page.selectOption('#race-lab select', 'check_then_act');
  await page.click('#race-start'); await page.waitForTimeout(300);
  for (const l of ['a', 'b', 'a', 'b', 'a', 'b']) { await page.click(`#race-advance-${l}`); await page.waitForTimeout(250); }
  await page.locator('#race-lab .race-columns').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `/tmp/shots/race-${w}-${lang}.png` });
  await ctx.close();
}
await browser.close();
