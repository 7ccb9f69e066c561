// Share links made and opened (www/lib/share.js, www/panels/share/): a link
// is built from the page's own address, so these two run on every host the
// e2e layer serves, also on a static host under a sub-path (xtask's
// ON_STATIC_HOST); the other share tests (share.test.mjs) are the same on any
// host. The link is made in one browser profile and opened in a FRESH one
// (another Chromium profile), replayed on a scratch database; "back" returns
// to the opener's own, untouched stored data.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { BASE_URL, assertNoProblems, idle, openPage, tables } from './browser.mjs';
import { fillSender, openLink, outcomes, pressDeliver, shareLink, useMakerAndOpener } from './playground.mjs';

describe('share links on this host', { timeout: 300_000 }, () => {
  let maker;
  let opener;
  useMakerAndOpener((made, opened) => ([maker, opener] = [made, opened]));

  test('a timeline link (a lost response, a crash after INSERT, another payload) replays to the same answers and verdicts; the opener’s stored data is untouched', async () => {
    const page = maker.page;
    await fillSender(page, { event_id: 'tl-1', lose_response: true });
    await pressDeliver(page);
    await fillSender(page, { event_id: 'tl-2', lose_response: false, fault: 'after_insert' });
    await pressDeliver(page);
    await fillSender(page, { event_id: 'tl-2', fault: '', amount: '700' });
    await pressDeliver(page);
    await fillSender(page, { event_id: 'tl-3', amount: '500', handler: 'two_transactions', fault: 'after_insert' });
    await pressDeliver(page);
    const made = await outcomes(page);
    assert.deepEqual(
      made.map((e) => [e.event.event_id, e.attempt, e.heard, e.lost, e.verdict]),
      [
        ['tl-1', 1, 'applied', true, 'correct'],
        ['tl-1', 2, 'duplicate', false, 'correct'],
        ['tl-2', 1, 'simulated_crash/fault', false, 'correct'],
        ['tl-2', 2, 'applied', false, 'correct'],
        ['tl-2', 1, 'payload_conflict/payload_differs', false, 'correct'],
        ['tl-3', 1, 'simulated_crash/fault', false, 'failed_after_commit'],
        ['tl-3', 2, 'duplicate', false, 'credit_lost'],
      ],
      'what the maker saw',
    );
    const madeTables = await tables(page);
    const url = await shareLink(page, 'share-timeline');
    assertNoProblems(maker.problems);

    // The opener has data of its own, stored in OPFS.
    const other = opener.page;
    await fillSender(other, { event_id: 'mine-1', amount: '42' });
    await pressDeliver(other);
    const own = await tables(other);
    assert.deepEqual(own.inbox.map((r) => r.event_id), ['mine-1']);

    await openLink(other, url);
    assert.equal(await other.textContent('#share-note strong'), 'Replayed on a scratch database — your data is untouched.');
    assert.equal(await other.textContent('#share-status'), 'Replayed 4 action(s) from the link: everything below is what the database answered.');
    assert.equal(await other.isVisible('#share-error'), false);
    assert.equal(await other.$eval('main .screen:not([hidden])', (s) => s.dataset.screen), 'deliver');
    assert.deepEqual(await outcomes(other), made, 'the same answers, steps and Rust verdicts, attempt by attempt');
    assert.deepEqual(await tables(other), madeTables, 'the same tables');
    assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'memory');
    // Not in the tabs' coordination: it neither holds nor waits for the owner's lock.
    const locks = await other.evaluate(async () => {
      const { held, pending } = await navigator.locks.query();
      return [...held, ...pending].map((lock) => lock.name);
    });
    assert.deepEqual(locks, []);
    // The answer next to Deliver is the replay's last send's.
    assert.match(await other.textContent('#deliver-form .actions'), /Credit lost/);

    // Back to one's own lab: the same URL without the fragment, the stored data as it was.
    const back = await other.getAttribute('#share-back', 'href');
    assert.equal(back, new URL(BASE_URL).pathname);
    await other.click('#share-back');
    await other.waitForURL((u) => u.hash === '');
    await other.evaluate(() => window.inboxLab.ready);
    await idle(other);
    assert.equal(await other.$('#share-note'), null);
    assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'opfs');
    assert.deepEqual(await tables(other), own, 'nothing of the replay was written to the stored database');
    assertNoProblems(opener.problems);
  });

  test('a share link pasted into a tab on the stored database reloads it as a scratch page; the stored data stays', async () => {
    const page = maker.page;
    await page.click('#share-timeline');
    const url = await page.inputValue('#share-timeline-url');
    const other = opener.page;
    await other.goto('about:blank');
    await openPage(other, '#/deliver');
    assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'opfs');
    const own = await tables(other);
    await Promise.all([other.waitForEvent('load'), other.evaluate((hash) => (location.hash = hash), new URL(url).hash)]);
    await other.evaluate(() => window.inboxLab.ready);
    await idle(other);
    assert.equal((await other.evaluate(() => window.inboxLab.ready)).storage, 'memory');
    assert.match(await other.textContent('#share-status'), /^Replayed \d+ action\(s\) from the link/);
    await other.click('#share-back');
    await other.waitForURL((u) => u.hash === '');
    await other.evaluate(() => window.inboxLab.ready);
    await idle(other);
    assert.deepEqual(await tables(other), own);
    assertNoProblems(opener.problems);
  });
});
