// Helpers for the playground's end-to-end tests (playground-*.test.mjs):
// drive the page the way a reader does — fill the form, press buttons — and
// read back what the page shows.

import assert from 'node:assert/strict';

import { after, before } from 'node:test';

import { BASE_URL, idle, launch, openPage, resetDatabase, reveal, usePage } from './browser.mjs';

export const EXAMPLE = { source: 'provider-a', event_id: 'evt-1', account_id: '1', amount: '500' };

/**
 * Before each playground test: a fresh database, the sender back to its
 * defaults and an empty timeline, so a test reads only what it did.
 */
export async function freshPlayground(page) {
  await resetDatabase(page);
  await restoreSender(page);
  await clearTimeline(page);
}

/** The laptop size the page is designed for (the other is 400×850). */
export const WIDE = { width: 1280, height: 800 };

/**
 * `usePage` for tests of the whole page as a reader first sees it: 1280×800,
 * English, a fresh playground before each test.
 */
export function useWidePlayground(use) {
  usePage(
    {
      beforeEach: async (opened) => {
        await opened.setViewportSize(WIDE);
        await opened.evaluate(() => window.inboxLab.setLanguage('en'));
        await freshPlayground(opened);
      },
    },
    use,
  );
}

/** Fills the sender form; only the fields given are touched. */
export async function fillSender(page, fields) {
  await reveal(page, '#deliver-form');
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'fault' || name === 'handler') {
      await page.selectOption(`#${name}`, value);
    } else if (name === 'lose_response') {
      await page.setChecked('#lose_response', value);
    } else {
      await page.fill(`#${name}`, String(value));
    }
  }
}

/** Puts the sender back to its defaults: the example, atomic, no crash, nothing lost, 5 attempts, 1 s. */
export async function restoreSender(page) {
  await reveal(page, '#deliver-form');
  await page.click('#deliver-form button[type=reset]');
}

/** Presses Deliver and waits until the whole send (retries included) is answered and drawn. */
export async function pressDeliver(page) {
  await reveal(page, '#deliver-form');
  await page.click('#deliver-form button[type=submit]');
  await idle(page);
}

/** Presses a button by its CSS selector and waits for the page to settle. */
export async function press(page, selector) {
  await reveal(page, selector);
  await page.click(selector);
  await idle(page);
}

/** The sender's log: one string per attempt, its lines joined by " | ". */
export function senderLog(page) {
  return page.$$eval('#sender-log > li', (items) =>
    items.map((li) => [...li.querySelectorAll('p')].map((p) => p.textContent).join(' | ')),
  );
}

/** The balance line under the log. */
export function senderSummary(page) {
  return page.textContent('#sender-summary');
}

/** The answer box as `{outcome, 'HTTP status', retryable?, message?, receipt?}`. */
export function shownAnswer(page) {
  return page.$$eval('#answer dd', (dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.term, dd.textContent])));
}

/**
 * The timeline as the page shows it, newest first: `{seq, outcome, handler,
 * attempt, head, meta, answer, ops: ["begin:ok", …]}`.
 */
export function shownTimeline(page) {
  return page.$$eval('#timeline > li.entry', (items) =>
    items.map((li) => ({
      seq: Number(li.dataset.seq),
      outcome: li.dataset.outcome,
      handler: li.dataset.handler,
      attempt: li.dataset.attempt === undefined ? undefined : Number(li.dataset.attempt),
      head: li.querySelector('.entry-head').textContent,
      meta: li.querySelector('.entry-meta')?.textContent,
      answer: li.querySelector('.entry-answer').textContent,
      ops: [...li.querySelectorAll('.op')].map((op) => `${op.dataset.op}:${op.dataset.state}`),
    })),
  );
}

/** The page's timeline model through the console API (oldest first). */
export function timelineEntries(page) {
  return page.evaluate(() => window.inboxLab.timeline());
}

/** Clears the page's timeline so a test reads only its own deliveries. */
export async function clearTimeline(page) {
  await reveal(page, '#timeline-clear');
  await page.click('#timeline-clear');
}

/** The balance of `id` as `inboxLab.tables()` answers. */
export async function balance(page, id = 1) {
  const { accounts } = await page.evaluate(() => window.inboxLab.tables());
  return accounts.find((a) => a.id === id)?.balance ?? null;
}

/** Presses "Show me", then "Next step" after each step, until the show is over. */
export async function showMe(page) {
  await page.click('#level-show-me');
  for (;;) {
    await page.waitForFunction(() => document.querySelector('#level-show-next') || !document.querySelector('#level-show-state'), null, { timeout: 300_000 });
    if ((await page.$('#level-show-next')) === null) {
      break;
    }
    await page.click('#level-show-next');
  }
  await idle(page);
}

// ---- share links (share.test.mjs, share-links.test.mjs) ----

/**
 * Inside a share `describe`: two browser profiles, handed to `use(maker,
 * opener)` before the tests — the maker, whose page makes the links (on a
 * scratch database), and the opener, a fresh profile (no OPFS, no
 * localStorage in common) with a stored database of its own.
 */
export function useMakerAndOpener(use) {
  let maker;
  let opener;
  before(async () => {
    maker = await launch();
    opener = await launch();
    maker.page.setDefaultTimeout(60_000);
    opener.page.setDefaultTimeout(60_000);
    await openPage(maker.page, '?storage=memory');
    await openPage(opener.page);
    use(maker, opener);
  });
  after(async () => {
    await maker?.close();
    await opener?.close();
  });
}

/** The timeline through the console API, reduced to what a replay must reproduce. */
export function outcomes(page) {
  return page.evaluate(() =>
    window.inboxLab.timeline().map((e) => ({
      event: e.event,
      handler: e.handler,
      attempt: e.attempt,
      via: e.via,
      heard: e.answer === null ? null : (e.answer.outcome ?? `${e.answer.kind}/${e.answer.code}`),
      status: e.answer?.http_status ?? null,
      lost: e.lost,
      verdict: e.answer?.verdict?.kind ?? null,
      steps: (e.steps ?? []).map((s) => `${s.op}:${s.effect}`),
    })),
  );
}

/** Presses a "Share" button and returns the link it made (the field next to it holds it either way). */
export async function shareLink(page, id) {
  await reveal(page, `#${id}`);
  await page.click(`#${id}`);
  await page.waitForSelector(`#${id}-url:not([hidden])`);
  // The field shows the link at once; the answer follows the clipboard's (asynchronous) reply.
  await page.waitForFunction((id) => document.getElementById(`${id}-answer`)?.textContent !== '', id);
  const answer = await page.textContent(`#${id}-answer`);
  assert.match(answer, /^(Link copied to the clipboard\.|The clipboard is not available here)/);
  const url = await page.inputValue(`#${id}-url`);
  assert.ok(url.startsWith(new URL(BASE_URL).origin), url);
  assert.match(new URL(url).hash, /^#s=[A-Za-z0-9_-]+$/);
  return url;
}

/** Opens `url` in `page` as a new page load (never a same-document hash change). */
export async function openLink(page, url) {
  await page.goto('about:blank');
  await page.goto(url);
  await page.evaluate(() => window.inboxLab.ready);
  await idle(page);
}
