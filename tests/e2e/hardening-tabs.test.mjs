// Several tabs, one database (www/db/tabs.js, www/db/client.js): pages of one
// browser profile share OPFS, Web Locks and BroadcastChannel, exactly like
// a reader's tabs. One page is the owner and runs the database worker; the
// others forward to it. They deliver concurrently — the same events and
// their own — and every event must be applied exactly once; then the owner
// page is closed in the middle of a stream and nothing may be lost: a call
// is only ever answered "applied"/"duplicate" if it committed, and a
// sender that retries retryable errors ends with every event applied once.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertNoProblems, launch, openPage } from './browser.mjs';

describe('several tabs share one database', { timeout: 300_000 }, () => {
  let browser;
  let context;
  const problems = [];

  before(async () => {
    browser = await launch();
    context = browser.page.context();
  });
  after(() => browser.close());

  /** Opens the page in a new tab of the same profile and waits until it is usable. */
  async function openTab() {
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (error) => problems.push(`page error: ${error.stack ?? error}`));
    page.on('console', (message) => {
      if (message.type() === 'error') {
        problems.push(`console error: ${message.text()}`);
      }
    });
    await openPage(page);
    await watchChanges(page);
    return page;
  }

  test('the first tab owns the database and runs the worker; later tabs forward to it', async () => {
    const owner = browser.page;
    await openPage(owner);
    await watchChanges(owner);
    await owner.evaluate(() => window.inboxLab.reset());
    const second = await openTab();
    const third = await openTab();
    assert.deepEqual(
      await Promise.all([owner, second, third].map(statusOf)),
      [
        { role: 'owner', phase: 'ready', storage: 'opfs' },
        { role: 'follower', phase: 'ready', storage: 'opfs' },
        { role: 'follower', phase: 'ready', storage: 'opfs' },
      ],
    );
    assert.deepEqual(
      [owner, second, third].map((page) => page.workers().length),
      [1, 0, 0],
      'only the owner runs a database worker',
    );
    assert.equal(await third.textContent('#tab-note'), await second.textContent('#tab-note'));
    assert.match(await second.textContent('#tab-note'), /Another tab of this page holds the database/);
    assert.equal(await owner.isHidden('#tab-note'), true);
    // The console API is the same object shape in every tab.
    const shape = (page) =>
      page.evaluate(() => {
        const walk = (o) => Object.keys(o).sort().map((k) => (typeof o[k] === 'object' && o[k] !== null && !(o[k] instanceof Promise) ? [k, walk(o[k])] : k));
        return JSON.stringify(walk(window.inboxLab));
      });
    assert.equal(await shape(second), await shape(owner));
    await Promise.all([second.close(), third.close()]);
    assertNoProblems(problems);
  });

  test('two tabs deliver concurrently: shared events applied once, own events all applied, same tables', async () => {
    const owner = browser.page;
    await owner.evaluate(() => window.inboxLab.reset());
    const other = await openTab();
    const before = await Promise.all([owner, other].map(changesSeen));

    const answers = await Promise.all(
      [owner, other].map((page, tab) => page.evaluate(deliverAll, { own: `two-${tab}`, count: 40, shared: 'two-shared', sharedCount: 20 })),
    );
    checkConcurrentAnswers(answers, 20);
    const tables = await Promise.all([owner, other].map((page) => page.evaluate(() => window.inboxLab.tables())));
    assert.deepEqual(tables[1], tables[0], 'both tabs read the same database');
    checkExactlyOnce(tables[0], [...range('two-0', 40), ...range('two-1', 40), ...range('two-shared', 20)]);
    const afterward = await Promise.all([owner, other].map(changesSeen));
    assert.ok(afterward[1] > before[1], 'the follower was told the tables changed');
    assert.ok(afterward[0] > before[0], 'the owner was told the tables changed');
    // And both pages draw the same live tables without being touched.
    for (const page of [owner, other]) {
      await page.waitForFunction((n) => document.querySelectorAll('#inbox tbody tr').length === n, 100);
      await page.waitForFunction(
        (balance) => [...document.querySelectorAll('#accounts tbody tr')].some((tr) => tr.cells[1]?.textContent.replace(/\D/g, '') === balance),
        String(tables[0].accounts[0].balance),
      );
    }
    await other.close();
    assertNoProblems(problems);
  });

  test('a follower’s running query holds no delivery of either tab; cancel() there rejects it at once and stops it', async () => {
    const owner = browser.page;
    await owner.evaluate(() => window.inboxLab.reset());
    const other = await openTab();
    const endless = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
    await other.evaluate((sql) => {
      window.running = window.inboxLab.query(sql).then((value) => ({ value }), (error) => ({ error }));
      window.queryEnded = false;
      window.running.finally(() => (window.queryEnded = true));
    }, endless);
    await other.waitForTimeout(300);
    // The owner's delivery, while the follower's query runs in the owner's
    // console worker: answered without waiting for it.
    const own = await owner.evaluate(() =>
      window.inboxLab.deliver({ source: 'tabs', event_id: 'owner-during-query', account_id: 1, amount: 5 }),
    );
    assert.equal(own.outcome, 'applied');
    assert.equal(await other.evaluate(() => window.queryEnded), false, 'answered while the query still ran');
    const answer = await other.evaluate(async () => {
      const lab = window.inboxLab;
      const delivered = await lab.deliver({ source: 'tabs', event_id: 'during-query', account_id: 1, amount: 5 });
      const whileRunning = !window.queryEnded;
      const cancelled = await lab.cancel();
      // "At once": settled before the next task, so before any message from
      // the owner tab or a worker could have arrived — whatever the machine's load.
      const first = await Promise.race([window.running.then(() => 'query settled'), new Promise((resolve) => setTimeout(resolve, 0, 'a task ran'))]);
      const { error } = await window.running;
      return { cancelled, code: error?.code, first, outcome: delivered.outcome, whileRunning };
    });
    assert.deepEqual(answer, { cancelled: { cancelled: 1 }, code: 'query_cancelled', first: 'query settled', outcome: 'applied', whileRunning: true });
    assert.deepEqual(await owner.evaluate(() => window.inboxLab.cancel()), { cancelled: 0 }, "the follower's query was not the owner's");
    assert.deepEqual((await owner.evaluate(() => window.inboxLab.query('SELECT 1 AS one'))).rows, [[1]], 'the console runs on');
    await other.close();
    assertNoProblems(problems);
  });

  test('three tabs deliver concurrently: every event applied exactly once', async () => {
    const owner = browser.page;
    await owner.evaluate(() => window.inboxLab.reset());
    const pages = [owner, await openTab(), await openTab()];
    const answers = await Promise.all(
      pages.map((page, tab) => page.evaluate(deliverAll, { own: `three-${tab}`, count: 30, shared: 'three-shared', sharedCount: 15 })),
    );
    checkConcurrentAnswers(answers, 15);
    const tables = await Promise.all(pages.map((page) => page.evaluate(() => window.inboxLab.tables())));
    assert.deepEqual(tables[1], tables[0]);
    assert.deepEqual(tables[2], tables[0]);
    checkExactlyOnce(tables[0], [
      ...range('three-0', 30),
      ...range('three-1', 30),
      ...range('three-2', 30),
      ...range('three-shared', 15),
    ]);
    await Promise.all([pages[1].close(), pages[2].close()]);
    assertNoProblems(problems);
  });

  test('two tabs: the owner closes mid-stream; the other takes over and nothing is lost', async (t) => {
    const owner = browser.page;
    await owner.evaluate(() => window.inboxLab.reset());
    const heir = await openTab();
    const acks = new Acks();
    await acks.listen([owner, heir]);

    // The owner's stream ends with its page: its promise is left to reject.
    startStream(owner, acks, { prefix: 'handover2-owner', count: 400 }).catch(() => null);
    const surviving = startStream(heir, acks, { prefix: 'handover2-heir', count: 80 });
    await acks.waitFor('handover2-heir', 20);
    await owner.close();
    const ownerAcked = acks.of('handover2-owner');
    assert.ok(ownerAcked.size > 0, 'the owner had delivered some before it closed');

    const log = await surviving;
    t.diagnostic(describeStream(log, ownerAcked));
    assert.deepEqual(await statusOf(heir), { role: 'owner', phase: 'ready', storage: 'opfs' });
    assert.equal(heir.workers().length, 1, 'the heir started its own worker');
    assertStreamLog(log, 80);

    const tables = await heir.evaluate(() => window.inboxLab.tables());
    checkHandover(tables, { complete: ['handover2-heir', 80], acked: ownerAcked, partial: 'handover2-owner' });
    browser.page = heir;
    assertNoProblems(problems);
  });

  test('three tabs: two owners close one after the other mid-stream; the last tab ends with every event once', async (t) => {
    const first = browser.page;
    await first.evaluate(() => window.inboxLab.reset());
    const second = await openTab();
    const third = await openTab();
    assert.deepEqual((await Promise.all([first, second, third].map(statusOf))).map((s) => s.role), [
      'owner',
      'follower',
      'follower',
    ]);
    const acks = new Acks();
    await acks.listen([first, second, third]);

    startStream(first, acks, { prefix: 'handover3-a', count: 400 }).catch(() => null);
    startStream(second, acks, { prefix: 'handover3-b', count: 400 }).catch(() => null);
    const surviving = startStream(third, acks, { prefix: 'handover3-c', count: 120 });
    await acks.waitFor('handover3-c', 20);
    await first.close();
    await acks.waitFor('handover3-c', 50);
    assert.equal((await statusOf(second)).role, 'owner', 'the tab that asked next took over');
    await second.close();

    const log = await surviving;
    t.diagnostic(describeStream(log, new Set([...acks.of('handover3-a'), ...acks.of('handover3-b')])));
    assert.deepEqual(await statusOf(third), { role: 'owner', phase: 'ready', storage: 'opfs' });
    assertStreamLog(log, 120);
    const tables = await third.evaluate(() => window.inboxLab.tables());
    checkHandover(tables, {
      complete: ['handover3-c', 120],
      acked: new Set([...acks.of('handover3-a'), ...acks.of('handover3-b')]),
      partial: ['handover3-a', 'handover3-b'],
    });
    // The surviving tab still works normally.
    const last = await third.evaluate(() =>
      window.inboxLab.deliver({ source: 'tabs', event_id: 'after-everything', account_id: 1, amount: 1 }),
    );
    assert.equal(last.outcome, 'applied');
    browser.page = third;
    assertNoProblems(problems);
  });

  test('calls the closing owner took but never answered: writes rejected as retryable (and a retry says they committed), reads repeated', async () => {
    const owner = browser.page;
    const heir = await openTab();
    // The owner takes requests (acks) but its answers never leave it, as if
    // it closed between committing and replying.
    await silence(owner, ['reply']);
    const event = { source: 'tabs', event_id: 'answer-lost-in-handover', account_id: 1, amount: 1 };
    await heir.evaluate((e) => {
      window.__inFlight = {
        deliver: window.inboxLab.deliver(e).then((answer) => ({ answer }), (error) => ({ error })),
        tables: window.inboxLab.tables().then((answer) => ({ answer }), (error) => ({ error })),
      };
    }, event);
    await owner.waitForFunction(async (e) => {
      const { inbox } = await window.inboxLab.tables();
      return inbox.some((row) => row.event_id === e.event_id);
    }, event);
    await owner.close();

    const { deliver, tables } = await heir.evaluate(async () => ({
      deliver: await window.__inFlight.deliver,
      tables: await window.__inFlight.tables,
    }));
    assert.equal(deliver.answer, undefined, 'never answered as done by the tab that went away');
    assert.deepEqual(
      { kind: deliver.error.kind, code: deliver.error.code, retryable: deliver.error.retryable },
      { kind: 'storage', code: 'owner_closed', retryable: true },
    );
    assert.ok(tables.answer.inbox.some((row) => row.event_id === event.event_id), 'the read was simply repeated');
    const retried = await heir.evaluate((e) => window.inboxLab.deliver(e), event);
    assert.equal(retried.outcome, 'duplicate', 'it had committed before the owner went away; applied once');
    assert.equal((await statusOf(heir)).role, 'owner');
    browser.page = heir;
    assertNoProblems(problems);
  });

  test('a request that cannot reach the owner is rejected as retryable, never answered as success', async () => {
    const owner = browser.page;
    const follower = await openTab();
    // The owner stops answering other tabs (as a frozen tab would): the
    // follower's call must end as a retryable error, not hang or succeed.
    await silence(owner, ['ack', 'reply']);
    const started = Date.now();
    const error = await follower.evaluate(() =>
      window.inboxLab.deliver({ source: 'tabs', event_id: 'unheard', account_id: 1, amount: 1 }).catch((e) => e),
    );
    assert.deepEqual(
      { kind: error.kind, code: error.code, retryable: error.retryable, http_status: error.http_status },
      { kind: 'busy', code: 'no_owner', retryable: true, http_status: 503 },
    );
    assert.ok(Date.now() - started >= 9_000, 'it waited for the owner first');
    await follower.close();
    assertNoProblems(problems);
  });
});

// ---- In-page helpers (run inside a tab) --------------------------------------

/** Delivers `count` own events and `sharedCount` events every tab sends, all at once. */
async function deliverAll({ own, count, shared, sharedCount }) {
  const event = (id) => ({ source: 'tabs', event_id: id, account_id: 1, amount: 1 });
  const ids = [
    ...Array.from({ length: count }, (_, i) => `${own}-${i}`),
    ...Array.from({ length: sharedCount }, (_, i) => `${shared}-${i}`),
  ];
  const answers = await Promise.all(
    ids.map((id) =>
      window.inboxLab.deliver(event(id)).then(
        (answer) => ({ id, outcome: answer.outcome, receipt: answer.receipt }),
        (error) => ({ id, error }),
      ),
    ),
  );
  return answers;
}

/**
 * A sender: delivers `count` events one after the other; a retryable error
 * is retried (after a short pause) until the event is answered. Every
 * answer is reported to the test at once through `window[report]`, so what a
 * tab heard is known even after that tab is closed.
 */
async function stream({ prefix, count, report }) {
  const log = [];
  for (let i = 0; i < count; i += 1) {
    const id = `${prefix}-${i}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const answer = await window.inboxLab.deliver({ source: 'tabs', event_id: id, account_id: 1, amount: 1 });
        await window[report](id, answer.outcome);
        log.push({ id, outcome: answer.outcome, attempt });
        break;
      } catch (error) {
        if (!error.retryable || attempt === 100) {
          log.push({ id, error, attempt });
          break;
        }
        log.push({ id, retried: error, attempt });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
  return log;
}

// ---- Test-side helpers ------------------------------------------------------

/** Makes `page` drop its own channel messages of these types (a tab that hears but does not answer). */
function silence(page, types) {
  return page.evaluate((dropped) => {
    const original = BroadcastChannel.prototype.postMessage;
    BroadcastChannel.prototype.postMessage = function silenced(message) {
      return dropped.includes(message?.type) ? undefined : original.call(this, message);
    };
  }, types);
}

function startStream(page, acks, options) {
  return page.evaluate(stream, { ...options, report: acks.name });
}

let acksMade = 0;

/** What each tab heard as answered, by prefix; reported by `stream` as it goes. */
class Acks {
  name = `__ack${(acksMade += 1)}`;
  #seen = new Map();
  #waiters = [];

  async listen(pages) {
    for (const page of pages) {
      await page.exposeFunction(this.name, (id, outcome) => {
        assert.ok(['applied', 'duplicate'].includes(outcome), outcome);
        this.#seen.set(id, outcome);
        this.#waiters = this.#waiters.filter((waiter) => !waiter());
      });
    }
  }

  of(prefix) {
    return new Set([...this.#seen.keys()].filter((id) => id.startsWith(`${prefix}-`)));
  }

  waitFor(prefix, n) {
    return new Promise((resolve) => {
      const done = () => {
        if (this.of(prefix).size >= n) {
          resolve();
          return true;
        }
        return false;
      };
      if (!done()) {
        this.#waiters.push(done);
      }
    });
  }
}

function statusOf(page) {
  return page.evaluate(async () => {
    const { onStatus } = window.inboxLab;
    return new Promise((resolve) => {
      const stop = onStatus(({ role, phase, storage }) => {
        if (phase === 'ready' || phase === 'failed') {
          queueMicrotask(() => stop());
          resolve({ role, phase, storage });
        }
      });
    });
  });
}

/** Counts the tables-changed notices a tab gets (client.js onTablesChanged). */
async function watchChanges(page) {
  await page.evaluate(async () => {
    const { onTablesChanged } = window.inboxLab;
    window.__changes = 0;
    onTablesChanged(() => {
      window.__changes += 1;
    });
  });
}

function changesSeen(page) {
  return page.evaluate(() => window.__changes);
}

/** One line for the test output: what the hand-over looked like from the surviving tab. */
function describeStream(log, ackedToClosed) {
  const retried = log.filter((entry) => entry.retried);
  const codes = {};
  for (const { retried: error } of retried) {
    codes[`${error.kind}/${error.code}`] = (codes[`${error.kind}/${error.code}`] ?? 0) + 1;
  }
  const duplicates = log.filter((entry) => entry.outcome === 'duplicate').length;
  return (
    `surviving tab: ${log.filter((e) => e.outcome).length} answered, ${retried.length} retryable errors ` +
    `${JSON.stringify(codes)}, ${duplicates} duplicates after a retry; ` +
    `${ackedToClosed.size} events acknowledged to closed tabs`
  );
}

function range(prefix, n) {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

/** Every answer is a success; each shared event was applied by exactly one tab. */
function checkConcurrentAnswers(answersPerTab, sharedCount) {
  const appliedShared = new Map();
  for (const answers of answersPerTab) {
    for (const answer of answers) {
      assert.equal(answer.error, undefined, `${answer.id}: ${JSON.stringify(answer.error)}`);
      if (answer.id.includes('-shared-')) {
        if (answer.outcome === 'applied') {
          appliedShared.set(answer.id, (appliedShared.get(answer.id) ?? 0) + 1);
        } else {
          assert.equal(answer.outcome, 'duplicate');
        }
      } else {
        assert.equal(answer.outcome, 'applied', answer.id);
      }
    }
  }
  assert.equal(appliedShared.size, sharedCount, 'every shared event applied by some tab');
  assert.ok([...appliedShared.values()].every((n) => n === 1), 'and by exactly one');
  // Duplicates carry the receipt of the one application.
  const receipts = new Map();
  for (const answer of answersPerTab.flat()) {
    const seen = receipts.get(answer.id);
    if (seen) {
      assert.deepEqual(answer.receipt, seen, answer.id);
    }
    receipts.set(answer.id, answer.receipt);
  }
}

/** The inbox holds exactly `ids`, once each, and the balance is their sum. */
function checkExactlyOnce(tables, ids) {
  const inbox = tables.inbox.map((row) => row.event_id).sort();
  assert.deepEqual(inbox, [...ids].sort());
  const sum = tables.inbox.reduce((total, row) => total + row.amount, 0);
  assert.deepEqual(tables.accounts, [{ id: 1, balance: sum }], 'one credit per row, no more');
  const seqs = new Set(tables.inbox.map((row) => row.receipt.seq));
  assert.equal(seqs.size, tables.inbox.length, 'one receipt per row');
}

/** A stream that retried through a hand-over: every event answered, errors only retryable. */
function assertStreamLog(log, count) {
  const answered = log.filter((entry) => entry.outcome !== undefined);
  assert.equal(answered.length, count, 'every event of the surviving tab was answered');
  for (const entry of log) {
    assert.equal(entry.error, undefined, `${entry.id}: gave up on ${JSON.stringify(entry.error)}`);
    if (entry.retried) {
      assert.equal(entry.retried.retryable, true);
      assert.ok(['busy', 'storage'].includes(entry.retried.kind), JSON.stringify(entry.retried));
    }
    if (entry.outcome !== undefined) {
      // A duplicate here is a retry of a call whose first answer was lost
      // in the hand-over: it had committed, and says so.
      assert.ok(['applied', 'duplicate'].includes(entry.outcome), entry.outcome);
    }
  }
}

/**
 * After a hand-over: the surviving stream's events are all there once; every
 * event a closed tab heard "applied"/"duplicate" for is there (never
 * acknowledged unless committed); events a closed tab sent but never heard
 * back about may or may not be there; nothing else is; balance = rows.
 */
function checkHandover(tables, { complete: [prefix, n], acked, partial }) {
  const partials = [partial].flat();
  const ids = tables.inbox.map((row) => row.event_id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of range(prefix, n)) {
    assert.ok(ids.includes(id), `${id} is missing`);
  }
  for (const id of acked) {
    assert.ok(ids.includes(id), `${id} was acknowledged to a closed tab but is not in the database`);
  }
  for (const id of ids) {
    assert.ok(
      id.startsWith(`${prefix}-`) || partials.some((p) => id.startsWith(`${p}-`)),
      `${id} should not be there`,
    );
  }
  assert.equal(ids.filter((id) => id.startsWith(`${prefix}-`)).length, n);
  const sum = tables.inbox.reduce((total, row) => total + row.amount, 0);
  assert.deepEqual(tables.accounts, [{ id: 1, balance: sum }]);
}

