// The crash lab on real OPFS in headless Chromium: a worker stopped at every
// storage operation of a commit, terminated, and a new worker reopening the
// database — every crash point must recover atomically, in both journal
// modes; the control (a lock check that always says "held") must be caught;
// and a stream of deliveries killed at random moments, again and again, must
// never leave a half-applied event, lose an answered one, or let the balance
// drift from the sum of the distinct events applied.
//
// Random kills: 200 kills at a random storage operation (fast: the worker
// stops exactly there, then is terminated) in DELETE mode, 100 in WAL mode,
// and 12 `terminate()` calls at a random time while the worker is busy (slow:
// the browser takes about two seconds to stop a busy worker). The full run
// of wall-clock kills is a separate command:
//
//   INBOX_LAB_CLOCK_KILLS=200 INBOX_LAB_URL=… node --test tests/e2e/crashlab.test.mjs
//
// (about 2.5 s per kill).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openPageRetrying, reveal, usePage } from './browser.mjs';

const CLOCK_KILLS = Number(process.env.INBOX_LAB_CLOCK_KILLS ?? 12);

describe('the crash lab', { timeout: 1_800_000 }, () => {
  let page;
  usePage(
    {
      prepare: (opened) => opened.setDefaultTimeout(120_000), // a loaded machine is slow
      open: (opened) => openPageRetrying(opened, '#/crash-lab'), // its section; a first load that stalls is tried again
    },
    (opened) => (page = opened),
  );

  for (const [mode, events] of [
    ['delete', 1],
    ['wal', 1],
    ['delete', 3],
    ['wal', 3],
  ]) {
    test(`the OPFS sweep in ${mode.toUpperCase()} mode, ${events === 1 ? 'one event' : 'a burst of 3'}: every crash point recovers atomically`, async () => {
      const summary = await runSweep(page, { mode, events, control: false });
      assert.deepEqual(Object.keys(summary), ['mode', 'crash_points', 'atomic', 'partial', 'lost_acknowledged'], 'the native summary line');
      assert.equal(summary.mode, mode);
      // A rollback-journal commit touches the journal and the database
      // several times; a WAL commit, its frames coalesced into one write, is
      // at least a write and a sync (as tests/crash.rs says natively).
      const least = mode === 'delete' ? 10 * events : 2 * events + 2;
      assert.ok(summary.crash_points >= least, `only ${summary.crash_points} crash points`);
      assert.equal(summary.atomic, summary.crash_points, JSON.stringify(summary));
      assert.equal(summary.partial, 0);
      assert.equal(summary.lost_acknowledged, 0);
      assert.equal(await text(page, '#crash-verdict'), 'Every crash point recovered atomically; no answered event was lost.');

      const rows = await tableRows(page);
      assert.equal(rows.length, summary.crash_points, 'one table row per crash point');
      assert.deepEqual(rows.map((r) => Number(r.k)), rows.map((_, i) => i + 1));
      assert.ok(rows.every((r) => r.result === 'atomic'));
      const files = new Set(rows.map((r) => r.file));
      assert.ok(files.has(mode === 'delete' ? 'journal' : 'WAL'), `the log names the ${mode} file: ${[...files]}`);
      assert.ok(rows.some((r) => r.op === 'sync'), 'synchronous=FULL syncs');
      assert.ok(rows.some((r) => r.op === 'write' && Number(r.len) > 0));
      // The page's stack is under test: write coalescing merges the WAL frame
      // headers (24 bytes) and journal page numbers (4) with their pages.
      const lone = rows.filter((r) => r.op === 'write' && ['24', '4'].includes(r.len));
      assert.deepEqual(lone, [], 'no uncoalesced write reaches storage');
      // Before the commit point nothing is there; once it is passed, every event is.
      assert.equal(rows[0].committed, '0');
      assert.equal(rows.at(-1).committed, String(events));
      assert.equal(rows.at(-1).acks, String(events));

      const boxes = await page.$$eval('#crash-picture li', (items) => items.map((li) => li.dataset.outcome));
      assert.equal(boxes.length, summary.crash_points, 'one box per operation');
      assert.ok(boxes.every((b) => b === 'atomic'));
      assert.equal(await page.getAttribute('#crash-progress', 'value'), String(summary.crash_points));
    });
  }

  test('the control — recovery through a lock check that always says "held" — is caught leaving partial commits', async () => {
    const summary = await runSweep(page, { mode: 'delete', events: 1, control: true });
    assert.ok(summary.partial > 0, JSON.stringify(summary));
    assert.equal(summary.atomic + summary.partial + summary.lost_acknowledged, summary.crash_points);
    assert.equal(
      await text(page, '#crash-verdict'),
      `The control is caught: the hot journal was not rolled back, and half a commit was left. Crash points where that happened: ${summary.partial}.`,
    );
    const rows = await tableRows(page);
    const partial = rows.filter((r) => r.result === 'partial');
    assert.equal(partial.length, summary.partial);
    // The partial points are crashes among the database writes, with the journal still there.
    assert.ok(partial.every((r) => r.file === 'database' && r.op === 'write'), JSON.stringify(partial));
    const boxes = await page.$$eval('#crash-picture li[data-outcome="partial"]', (items) => items.length);
    assert.equal(boxes, summary.partial);
    assert.match(await page.getAttribute('#crash-picture li[data-outcome="partial"]', 'title'), /— partial$/);
  });

  test('the coalescing control — a commit returns with its last bytes held back — is caught losing acknowledged events (WAL)', async () => {
    const { summary, rows } = await page.evaluate(() =>
      window.inboxCrashLab.sweep({ mode: 'wal', events: 3, writeControl: 'holds-commits' }),
    );
    assert.ok(summary.lost_acknowledged > 0, JSON.stringify(summary));
    assert.equal(rows.filter((r) => r.outcome === 'lost_acknowledged').length, summary.lost_acknowledged);
    assert.ok(rows.every((r) => r.acks > 0 || r.outcome !== 'lost_acknowledged'));
    // The same sweep on the real coalescing (the page's stack) loses nothing.
    const clean = await page.evaluate(() => window.inboxCrashLab.sweep({ mode: 'wal', events: 3 }));
    assert.equal(clean.summary.atomic, clean.summary.crash_points, JSON.stringify(clean.summary));
  });

  test('200 kills at random storage operations of a stream, DELETE mode: nothing partial, nothing answered lost', async () => {
    const summary = await kills(page, { trials: 200, mode: 'delete', kill: 'io' });
    assertKills(summary, 200);
    assert.ok(summary.killed_mid_stream >= 150, `most kills land mid-stream: ${summary.killed_mid_stream}`);
    // Kills landed inside commits, in the journal and the database file.
    assert.ok((summary.kill_points['journal write'] ?? 0) > 0, JSON.stringify(summary.kill_points));
    assert.ok((summary.kill_points['db write'] ?? 0) > 0, JSON.stringify(summary.kill_points));
    assert.ok(summary.retried_after_lost_answer > 0, 'lost answers were retried and came back "duplicate"');
  });

  test('100 kills at random storage operations of a stream, WAL mode', async () => {
    const summary = await kills(page, { trials: 100, mode: 'wal', kill: 'io' });
    assertKills(summary, 100);
    assert.ok((summary.kill_points['wal write'] ?? 0) > 0, JSON.stringify(summary.kill_points));
  });

  test(`${CLOCK_KILLS} terminate() calls at random moments while the worker is busy delivering`, async () => {
    const summary = await kills(page, { trials: CLOCK_KILLS, mode: 'delete', kill: 'clock' });
    assertKills(summary, CLOCK_KILLS);
    assert.equal(summary.killed_mid_stream, CLOCK_KILLS, 'every kill landed while the stream ran');
    assert.ok(summary.applied > summary.acknowledged, 'answers sent after terminate() are lost, as a dead handler’s are');
  });

  test('random kills from the panel', async () => {
    await reveal(page, '#crash-mode-delete');
    await page.check('#crash-mode-delete');
    await reveal(page, '#crash-kills-trials');
    await page.fill('#crash-kills-trials', '0');
    await reveal(page, '#crash-kills-run');
    await page.click('#crash-kills-run');
    assert.equal(await text(page, '#crash-kills-trials-error'), 'Kills must be a whole number from 1 to 1000.');
    await reveal(page, '#crash-kills-trials');
    await page.fill('#crash-kills-trials', '10');
    await reveal(page, '#crash-kills-run');
    await page.click('#crash-kills-run');
    await page.waitForSelector('#crash-kills-status[data-state="done"]', { timeout: 300_000 });
    const status = await text(page, '#crash-kills-status');
    assert.match(status, /^Kills: 10, in the middle of the stream: \d+; journal mode DELETE\. Half-applied events: 0; answered events lost: 0\. Balance (\d+) = the sum of the distinct events applied \((\d+)\)/);
  });

  test('the verdicts come from the crash worker (Rust): a lost acknowledged event and a hole are found, the summary is counted', async () => {
    const answers = await page.evaluate(async () => {
      const { Caller } = await import(new URL('www/lib/rpc.js', location.href).href);
      const worker = new Caller(new Worker(new URL('www/panels/crash-lab/crashworker.js', location.href), { type: 'module' }), { name: 'the crash worker' });
      const refused = (promise) => promise.then(() => null, (error) => error.kind);
      try {
        await worker.call('open', { mode: 'delete', events: 1 });
        await worker.call('killsReset');
        const empty = await worker.call('killsOpen', { acknowledged: [0] });
        // kill-0 and kill-1, then kill-3: kill-2 never arrives.
        await worker.call('killsStream', { first: 0, count: 2 });
        await worker.call('killsStream', { first: 3, count: 1 });
        const holed = await worker.call('killsOpen', { acknowledged: [0, 1, 5] });
        const summary = await worker.call('summary', { outcomes: ['atomic', 'partial', 'atomic', 'lost_acknowledged'] });
        const badOutcome = await refused(worker.call('summary', { outcomes: ['fine'] }));
        const badIndex = await refused(worker.call('killsOpen', { acknowledged: [-1] }));
        return { empty, holed, summary, badOutcome, badIndex };
      } finally {
        worker.terminate();
      }
    });
    assert.deepEqual(answers.empty, { partial: [], lost: ['kill-0 was acknowledged but is gone'], balance: 0, expected: 0, applied: 0 });
    assert.deepEqual(answers.holed, {
      partial: [],
      lost: ['kill-5 was acknowledged but is gone', 'kill-2 is missing although later events were applied'],
      balance: 1 + 2 + 4,
      expected: 7,
      applied: 3,
    });
    assert.equal(JSON.stringify(answers.summary), '{"mode":"delete","crash_points":4,"atomic":2,"partial":1,"lost_acknowledged":1}');
    assert.equal(answers.badOutcome, 'invalid_input');
    assert.equal(answers.badIndex, 'invalid_input');
  });
});

/** Runs the sweep through the panel, as a reader does; returns the summary line, parsed. */
async function runSweep(page, { mode, events, control }) {
  await reveal(page, `#crash-mode-${mode}`);
  await page.check(`#crash-mode-${mode}`);
  await reveal(page, `#crash-events-${events}`);
  await page.check(`#crash-events-${events}`);
  await reveal(page, '#crash-control');
  await page.setChecked('#crash-control', control);
  await reveal(page, '#crash-run');
  await page.click('#crash-run');
  await page.waitForSelector('#crash-summary[data-state="running"]', { state: 'attached' });
  await page.waitForSelector('#crash-summary[data-state="done"], #crash-error:not([hidden])', {
    state: 'attached',
    timeout: 600_000,
  });
  assert.equal(await page.isHidden('#crash-error'), true, await page.textContent('#crash-error'));
  assert.equal(await page.getAttribute('#crash-lab', 'aria-busy'), 'false');
  return JSON.parse(await page.textContent('#crash-summary'));
}

async function tableRows(page) {
  const rows = await page.$$eval('#crash-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  return rows.map(([k, file, op, offset, len, committed, acks, result]) => ({ k, file, op, offset, len, committed, acks, result }));
}

function kills(page, options) {
  return page.evaluate((options) => window.inboxCrashLab.randomKills(options), options);
}

/** What every random-kill run must show, whatever the kill style. */
function assertKills(summary, trials) {
  assert.equal(summary.trials, trials);
  assert.deepEqual(summary.failures, []);
  assert.equal(summary.partial, 0, 'no half-applied event after any kill');
  assert.equal(summary.lost_acknowledged, 0, 'no answered event lost after any kill');
  assert.equal(summary.balance, summary.expected_balance, 'balance = the sum of the distinct events applied');
  assert.ok(summary.applied >= summary.acknowledged, 'every answered event is applied');
  assert.ok(summary.acknowledged > 0, 'the stream made progress');
}

function text(page, selector) {
  return page.textContent(selector).then((s) => s.trim());
}
