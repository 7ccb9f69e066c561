// Shared set-up for the end-to-end tests: the system Chromium driven by
// playwright-core (which never downloads a browser of its own), one
// persistent profile per test file so OPFS survives reloads, and a watch for
// page errors and console errors, which fail the test that caused them.
//
// A file of page tests starts its `describe` with `usePage` (below), which
// registers that set-up — launch, open, check for problems after each test,
// close — once, instead of each file writing it again.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

if (!process.env.INBOX_LAB_URL) {
  throw new Error(
    'INBOX_LAB_URL is not set: serve the page (e.g. `cargo xtask serve`) and run\n' +
      '  INBOX_LAB_URL=http://127.0.0.1:8080/ node --test --test-concurrency=1 tests/e2e/\n' +
      'or let `cargo xtask test --only e2e` do both.',
  );
}

// INBOX_LAB_URL may be the link `cargo xtask serve` prints, with the key of
// its webhook relay (`…/?relay=<key>`; `cargo xtask test` passes it so):
// the key is kept apart, and `openPage` opens every page with it, as a reader
// opens that link. BASE_URL is the page without it.
const LINK = new URL(process.env.INBOX_LAB_URL);

/** The relay's key, or null (a static host, or a URL given without it). */
export const RELAY_KEY = LINK.searchParams.get('relay');
LINK.searchParams.delete('relay');

/** The page under test, e.g. http://127.0.0.1:8080/ */
export const BASE_URL = LINK.href;

/**
 * The URL of the database worker's script: www/db/worker.js in the source
 * tree, assets/worker-<hash>.js in the built site (with its ?storage=...).
 */
export const DB_WORKER_SCRIPT = /\/(db\/worker|assets\/worker-[0-9a-f]+)\.js(\?|$)/;

/** Where screenshots go: target/e2e/ at the top of the repository. */
const SCREENSHOTS = fileURLToPath(new URL('../../target/e2e/', import.meta.url));

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // The page's wasm runs on V8's baseline compiler (Liftoff) only. Its optimising
  // tier recompiles the hot part of the module again at every page load, on
  // background threads (wasm.TopTierCompilation: 0.34 core-seconds per load in a
  // trace), and these files load the page hundreds of times on a 2-core machine:
  // a file's CPU drops 10-19 % (playground-verdicts 68 → 55 core-seconds). The
  // code and what it computes are the same; the browser layers (wasm-pack test),
  // the engines layer and `cargo xtask bench` run Chromium as shipped.
  '--js-flags=--liftoff-only',
];

/**
 * Starts Chromium with a fresh profile and opens one page. Returns
 * `{page, problems, close}`; `problems` collects page errors and console
 * errors (see `assertNoProblems`). `options.args` adds Chromium flags.
 */
export async function launch(options = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'inbox-lab-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
    headless: true,
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.stack ?? error}`));
  page.on('console', (message) => {
    if (message.type() === 'error') {
      problems.push(`console error: ${message.text()}`);
    }
  });
  return {
    page,
    problems,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Fails the test if the page logged an error or threw since the last call. */
export function assertNoProblems(problems) {
  const seen = problems.splice(0);
  assert.deepEqual(seen, [], 'the page reported errors');
}

/**
 * Opens the page (`query` e.g. "?storage=memory"; with the relay's key when
 * there is one) and waits until the database is open and the page has drawn
 * the tables. Returns what `inboxLab.ready` gave.
 */
export async function openPage(page, query = '') {
  const url = new URL(query, BASE_URL);
  if (RELAY_KEY !== null) {
    url.searchParams.set('relay', RELAY_KEY);
  }
  await page.goto(url.href);
  return settle(page);
}

/**
 * `openPage`, but a first load that stalls (a loaded machine) is given up
 * after 30 s and tried again, up to three times, rather than waited for.
 */
export async function openPageRetrying(page, query = '') {
  page.setDefaultNavigationTimeout(30_000);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await openPage(page, query);
    } catch (error) {
      if (attempt === 3 || error.name !== 'TimeoutError') {
        throw error;
      }
    }
  }
}

/**
 * The set-up of a file of page tests, registered in the `describe` that
 * calls it:
 *
 * * before its tests: Chromium with a fresh profile (`launch(options.launch)`),
 *   `options.prepare(page, browser)` if given (a longer timeout, an init
 *   script, a listener), then the page opened — `options.open(page)`, by
 *   default `openPage(page, options.query ?? '')`; `open: null` opens nothing.
 *   `use(page, browser)` then receives them;
 * * before each test: `options.beforeEach(page)` if given (a fresh database,
 *   the sender's defaults: `freshPlayground` in playground.mjs);
 * * after each test: no page error or console error (`assertNoProblems`),
 *   unless `options.checkEach` is false (the file checks where it knows
 *   what to expect);
 * * after its tests: the browser closed.
 *
 *   describe('the sender', () => {
 *     let page;
 *     usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));
 *     test(…, async () => { await page.click(…); });
 *   });
 */
export function usePage(options, use) {
  let browser = null;
  before(async () => {
    browser = await launch(options.launch);
    await options.prepare?.(browser.page, browser);
    const open = options.open === undefined ? (page) => openPage(page, options.query ?? '') : options.open;
    await open?.(browser.page);
    use(browser.page, browser);
  });
  after(() => browser?.close());
  if (options.beforeEach !== undefined) {
    beforeEach(() => options.beforeEach(browser.page));
  }
  if (options.checkEach !== false) {
    afterEach(() => assertNoProblems(browser.problems));
  }
}

/**
 * Before any script of the page runs, notes every CSP violation in
 * `window.__violations` (for tests that prove the policy holds).
 */
export function watchViolations(page) {
  return page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`);
    });
  });
}

/** Reloads the page and waits as `openPage` does. */
export async function reloadPage(page) {
  await page.reload();
  return settle(page);
}

async function settle(page) {
  const ready = await page.evaluate(() => window.inboxLab.ready);
  await idle(page);
  return ready;
}

/**
 * Shows the section (`#/name`) a reader would open to reach `selector`, as a
 * reader clicks its link in the section list: the page shows one section at a
 * time (www/panels/nav/nav.js), and a hidden control cannot be pressed. A
 * part of a section shown one at a time (`data-subroute`, e.g. an experiment
 * of "where the scheme ends") is opened by its own link, `#/<subroute>`; a
 * part shown on demand (a closed `<details>`) by a click on its summary.
 */
export async function reveal(page, selector) {
  const { route, part } = await page.evaluate((selector) => {
    const node = document.querySelector(selector);
    const screen = node?.closest('main .screen[data-screen]');
    const part = node?.closest('[data-subroute]');
    return { route: screen?.hidden ? screen.dataset.screen : null, part: part?.hidden ? part.dataset.subroute : null };
  }, selector);
  if (route !== null) {
    await page.click(`nav.sections a[data-route="${route}"]`);
    await page.waitForSelector(`main .screen[data-screen="${route}"]:not([hidden])`);
  }
  if (part !== null) {
    await page.click(`a[href="#/${part}"]`);
    await page.waitForSelector(`[data-subroute="${part}"]:not([hidden])`);
  }
  // A part shown on demand (a closed <details>, e.g. step mode): its
  // summary clicked, the outermost first.
  for (;;) {
    const closed = await page.evaluate((selector) => {
      const node = document.querySelector(selector);
      const boxes = [];
      for (let box = node?.parentElement?.closest('details'); box; box = box.parentElement?.closest('details')) {
        // A summary is in sight while its own disclosure is closed.
        if (!box.querySelector(':scope > summary')?.contains(node)) {
          boxes.unshift(box);
        }
      }
      const box = boxes.find((candidate) => !candidate.open);
      if (box === undefined) {
        return null;
      }
      box.dataset.revealing = '';
      return true;
    }, selector);
    if (closed === null) {
      return;
    }
    await page.click('details[data-revealing] > summary');
    await page.evaluate(() => document.querySelector('details[data-revealing]')?.removeAttribute('data-revealing'));
  }
}

/** Opens the section `route` (e.g. "deliver", "race-lab", "levels/2") through its hash, as a link does. */
export async function goTo(page, route) {
  await page.evaluate((route) => (location.hash = `#/${route}`), route);
  await page.waitForFunction(
    (route) => {
      const screen = document.querySelector(`main .screen[data-screen="${route.split('/')[0]}"]`) ??
        document.getElementById(route)?.closest('main .screen[data-screen]');
      return screen !== null && !screen.hidden;
    },
    route,
  );
}

/** Waits until every action the page started has been answered and drawn. */
export function idle(page) {
  return page.waitForSelector('main[aria-busy="false"]', { state: 'attached' });
}

/** A fresh database through the console API, then the page redrawn from it. */
export async function resetDatabase(page) {
  await page.evaluate(() => window.inboxLab.reset());
  await reloadPage(page);
}

/** Both tables as the page shows them: rows of cell texts. */
export function shownTables(page) {
  return page.evaluate(() => {
    const rows = (id) =>
      [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => [...tr.cells].map((td) => td.textContent));
    return { accounts: rows('accounts'), inbox: rows('inbox') };
  });
}

/** What `inboxLab.tables()` answers. */
export function tables(page) {
  return page.evaluate(() => window.inboxLab.tables());
}

/** Makes sure target/e2e exists and returns the path of `name` in it. */
export async function screenshotPath(name) {
  await mkdir(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, name);
}
