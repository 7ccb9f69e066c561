// Bursts: the article's 20 concurrent deliveries of one event (1 applied,
// 19 duplicates, credited once — and what no_dedup makes of it), and many
// different events with a progress bar while the page stays responsive.
//
// 10,000 different events run on `?storage=memory`: on OPFS every commit
// waits for the disk (DELETE journal, synchronous=FULL), about 10 ms per
// event on the test machine — a minute and a half for 10,000, a measure of
// the disk, not of the page. The page's side (the window of deliveries in
// flight, the progress bar, the frame rate) is the same code on both; 1,000
// events check OPFS.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { idle, reveal, screenshotPath, usePage } from './browser.mjs';
import { balance, fillSender, freshPlayground, shownTimeline } from './playground.mjs';

/** The burst result lines. */
function burstResult(page) {
  return page.$$eval('#burst-result p', (ps) => ps.map((p) => p.textContent));
}

/**
 * Presses "N different events" for `count` events while watching the main
 * thread: the longest gap between two animation frames, and the progress
 * values drawn. Resolves to `{summary, balanceLine, longestFrameGap,
 * progress}`.
 */
async function distinctBurst(page, count) {
  await reveal(page, '#burst-count');
  await page.fill('#burst-count', String(count));
  await page.evaluate(() => {
    const watch = { longestFrameGap: 0, progress: [], running: true };
    let last = performance.now();
    const frame = (now) => {
      watch.longestFrameGap = Math.max(watch.longestFrameGap, now - last);
      last = now;
      if (!document.querySelector('#burst-progress-box').hidden) {
        watch.progress.push(document.querySelector('#burst-progress').value);
      }
      if (watch.running) {
        requestAnimationFrame(frame);
      }
    };
    requestAnimationFrame(frame);
    window.burstWatch = watch;
  });
  await reveal(page, '#burst-distinct');
  await page.click('#burst-distinct');
  await page.waitForFunction((n) => window.burstWatch.progress.some((v) => v > 0 && v < n), count, { timeout: 60_000 });
  await page.waitForSelector('main[aria-busy="false"]', { state: 'attached', timeout: 180_000 });
  const watch = await page.evaluate(() => {
    window.burstWatch.running = false;
    return window.burstWatch;
  });
  const [summary, balanceLine] = await burstResult(page);
  return { summary, balanceLine, longestFrameGap: watch.longestFrameGap, progress: watch.progress };
}

describe('bursts', { timeout: 300_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  test('the same event 20 times at once: applied 1, duplicate 19, credited once', async () => {
    assert.equal(await page.inputValue('#burst-count'), '20', 'the article’s 20 is the default');
    await reveal(page, '#burst-same');
    await page.click('#burst-same');
    await idle(page);
    assert.deepEqual(await burstResult(page), [
      '20 deliveries of (provider-a, evt-1) at once: applied 1, duplicate 19.',
      'Balance of account 1: 0 → 500 (+500): credited once.',
    ]);
    assert.equal(await balance(page), 500);
    const timeline = await shownTimeline(page);
    assert.equal(timeline.length, 20, 'every delivery is a row');
    assert.deepEqual(
      timeline.map((e) => e.outcome).sort(),
      ['applied', ...Array(19).fill('duplicate')],
    );
    assert.ok(timeline.every((e) => /· atomic · burst$/.test(e.meta)));
  });

  test('the same burst with no_dedup credits 20 times', async () => {
    await fillSender(page, { handler: 'no_dedup', amount: '5' });
    await reveal(page, '#burst-same');
    await page.click('#burst-same');
    await idle(page);
    assert.deepEqual(await burstResult(page), [
      '20 deliveries of (provider-a, evt-1) at once: applied 20.',
      'Balance of account 1: 0 → 100: credited 20 times!',
    ]);
    assert.equal(await balance(page), 100);
  });

  test('N is checked next to its field', async () => {
    await reveal(page, '#burst-count');
    await page.fill('#burst-count', '0');
    await reveal(page, '#burst-same');
    await page.click('#burst-same');
    assert.equal(await page.textContent('#burst-count-error'), 'N: a whole number from 1 to 20,000.');
    await reveal(page, '#burst-count');
    await page.fill('#burst-count', '20');
  });

  test('"N different events" can be cancelled: it stops between transactions and says how many were done', async () => {
    await fillSender(page, { amount: '3' });
    await page.fill('#burst-count', '20000');
    assert.equal(await page.isVisible('#burst-cancel'), false, 'nothing to cancel yet');
    await page.click('#burst-distinct');
    await page.waitForFunction(() => Number(document.querySelector('#burst-progress').value) >= 50, null, { timeout: 60_000 });
    await page.click('#burst-cancel');
    await idle(page);
    const [summary, balanceLine] = await burstResult(page);
    const match = /^Cancelled: ([\d,]+) of 20,000 different events were delivered in [\d.]+ s, each in its own transaction; none was cut in half\. applied ([\d,]+)\.$/.exec(summary);
    assert.ok(match, summary);
    const done = Number(match[1].replaceAll(',', ''));
    assert.ok(done >= 50 && done < 20_000, `stopped early: ${done}`);
    assert.equal(match[2], match[1], 'every delivered event was applied');
    assert.equal(await balance(page), 3 * done, 'the balance is exactly the events delivered');
    assert.match(balanceLine, /Exact\.$/);
    assert.equal((await page.evaluate(() => window.inboxLab.tables())).inbox.length, done, 'one inbox row per event delivered');
    assert.equal(await page.isVisible('#burst-cancel'), false);
  });

  test('1,000 different events on OPFS: all applied, the balance exact', async () => {
    await fillSender(page, { amount: '3' });
    const result = await distinctBurst(page, 1000);
    assert.match(result.summary, /^1,000 different events in [\d.]+ s \([\d,]+ per second\): applied 1,000\.$/);
    assert.equal(result.balanceLine, 'Balance of account 1: 0 → 3,000 = 3 × 1,000 applied. Exact.');
    assert.equal(await balance(page), 3000);
    console.log(`# 1,000 distinct events on OPFS: ${result.summary} Longest frame gap ${Math.round(result.longestFrameGap)} ms.`);
  });
});

describe('a burst of 10,000 different events (in-memory storage)', { timeout: 300_000 }, () => {
  let page;
  usePage({ query: '?storage=memory' }, (opened) => (page = opened));

  test('all applied, the balance exact, the progress bar moving, and the page never freezes', async () => {
    await fillSender(page, { amount: '3' });
    const started = Date.now();
    const result = await distinctBurst(page, 10_000);
    const seconds = (Date.now() - started) / 1000;
    await page.screenshot({ path: await screenshotPath('playground-burst-10000.png') });

    assert.match(result.summary, /^10,000 different events in [\d.]+ s \([\d,]+ per second\): applied 10,000\.$/);
    assert.equal(result.balanceLine, 'Balance of account 1: 0 → 30,000 = 3 × 10,000 applied. Exact.');
    assert.equal(await balance(page), 30_000);
    assert.equal(await page.getAttribute('#burst-progress', 'value'), '10000');
    assert.equal(await page.textContent('#burst-progress-label'), 'Delivered 10,000 of 10,000');
    const drawn = new Set(result.progress);
    assert.ok(drawn.size >= 10, `the progress bar moved through many values, saw ${drawn.size}`);
    // A frozen page draws nothing for seconds. On an idle machine the gaps
    // stay near a frame (16 ms); a test machine busy with builds stretches
    // some to a few hundred ms, hence the generous bound.
    assert.ok(result.longestFrameGap < 1000, `the longest gap between frames was ${Math.round(result.longestFrameGap)} ms`);
    const [entry] = await shownTimeline(page);
    assert.match(entry.head, /burst of 10,000 different events/);
    assert.equal(await page.textContent('#inbox-more'), 'Showing the 200 most recently changed rows of 10,000. The SQL console shows the rest.');
    assert.equal(await page.$$eval('#inbox tbody tr', (trs) => trs.length), 200);
    // On record in the test output.
    console.log(`# 10,000 distinct events: ${result.summary} Wall clock ${seconds.toFixed(1)} s, longest frame gap ${Math.round(result.longestFrameGap)} ms.`);
  });
});
