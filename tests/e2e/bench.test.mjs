// The Bench panel runs the short benchmark of the real apply path in this
// browser (its own OPFS database, never the reader's) and shows sane
// figures: a chart bar and a table row per setting, every rate above zero,
// p50 never above p99, and the reader's database untouched.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { tables, usePage } from './browser.mjs';

const SETTINGS = ['delete-full', 'wal-full', 'wal-normal'];

describe('the Bench panel', { timeout: 180_000 }, () => {
  let page;
  usePage({ query: '#/bench' }, (opened) => (page = opened));

  test('runs the short benchmark and shows a bar and a row of sane numbers per setting', async () => {
    const before = await tables(page);
    const button = page.locator('#bench-run');
    await button.scrollIntoViewIfNeeded();
    await button.click();
    await page.waitForSelector('#bench-results:not([hidden])', { timeout: 120_000 });

    assert.equal(await page.isHidden('#bench-progress'), true, 'the progress bar goes away when done');
    assert.equal(await button.isEnabled(), true);
    assert.match(await page.textContent('#bench-status'), /^Done: 200 events per setting, SQLite 3\.\d+\.\d+\.$/);

    const rows = await page.$$eval('#bench-results tbody tr', (trs) =>
      trs.map((tr) => [...tr.cells].map((cell) => cell.textContent)),
    );
    assert.equal(rows.length, SETTINGS.length);
    for (const [label, applied, p50, p99, duplicates, dupP50, dupP99] of rows) {
      const number = (text) => Number(text.replace(/[^\d.]/g, ''));
      assert.ok(number(applied) > 0, `${label}: new events/s ${applied}`);
      assert.ok(number(duplicates) > 0, `${label}: duplicates/s ${duplicates}`);
      assert.ok(number(p50) <= number(p99), `${label}: p50 ${p50} ≤ p99 ${p99}`);
      assert.ok(number(dupP50) <= number(dupP99), `${label}: duplicate p50 ${dupP50} ≤ p99 ${dupP99}`);
    }
    assert.equal(await page.locator('#bench-chart svg rect').count(), SETTINGS.length * 2, 'two bars per setting');

    assert.deepEqual(await tables(page), before, "the reader's database is not touched");
  });

  test('the API answers the same shape: every event applied once, then every one a duplicate', async () => {
    const results = await page.evaluate(() => window.inboxLabBench.run({ events: 50 }));
    assert.deepEqual(
      results.map((r) => r.setting),
      SETTINGS,
    );
    for (const r of results) {
      assert.deepEqual(r.tally, { balance: 50, inbox: 50, last_receipt: 50 }, r.setting);
      assert.equal(r.settings.journal_mode, r.setting.startsWith('wal') ? 'wal' : 'delete');
      assert.equal(r.settings.synchronous, r.setting.endsWith('normal') ? 'normal' : 'full');
      for (const phase of [r.apply, r.duplicate]) {
        assert.equal(phase.events, 50);
        assert.ok(phase.events_per_s > 0);
        assert.ok(phase.p50_ms <= phase.p99_ms && phase.p99_ms <= phase.max_ms, JSON.stringify(phase));
      }
    }
  });
});
