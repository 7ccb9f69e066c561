// The page as a reader uses it, through WebDriver: open it, fill the sender's
// form, press its buttons, read what it shows. Only the page's public
// surface is used — its controls, what it draws, and `window.inboxLab`, its
// console API (www/db/client.js, www/app.js) — so these helpers work against
// whatever serves the page.

import { By } from 'selenium-webdriver';

if (!process.env.INBOX_LAB_URL) {
  throw new Error(
    'INBOX_LAB_URL is not set: serve the page (e.g. `cargo xtask serve`) and run\n' +
      '  INBOX_LAB_URL=http://127.0.0.1:8080/ INBOX_LAB_ENGINE=chromium node --test tests/engines/\n' +
      'or let `cargo xtask test --only engines` do both.',
  );
}

/** The page under test, e.g. http://127.0.0.1:8080/ */
export const BASE_URL = process.env.INBOX_LAB_URL;

/** How long one wait for the page may take (a loaded 2-core machine, a cold wasm compile). */
const WAIT_MS = 60_000;

/**
 * Opens the page in the current tab and waits until its database is open and
 * every action has been drawn. Returns what `inboxLab.ready` gave
 * (`{storage: "opfs"}`, or `{storage: "memory", fallback}`). The texts are
 * read in English (`inboxLab.setLanguage`, remembered by the page).
 */
export async function openPage(driver, query = '') {
  await driver.get(new URL(query, BASE_URL).href);
  return settle(driver);
}

/** Reloads the page (the browser's reload) and waits as `openPage` does. */
export async function reloadPage(driver) {
  await driver.navigate().refresh();
  return settle(driver);
}

async function settle(driver) {
  await driver.wait(() => driver.executeScript('return typeof window.inboxLab?.ready?.then === "function"'), WAIT_MS);
  // W3C Execute Script waits for a returned promise.
  const ready = await driver.executeScript('return window.inboxLab.ready');
  await driver.executeScript('window.inboxLab.setLanguage("en")');
  await idle(driver);
  await openDeliver(driver);
  return ready;
}

/**
 * The page shows one section at a time (www/panels/nav/nav.js) and the core
 * path is on "Deliver": opened as a reader does, by its link in the section
 * list (a reload keeps the section, its hash).
 */
async function openDeliver(driver) {
  const shownNow = () => driver.executeScript('return document.querySelector("#deliver-form").closest(".screen").hidden === false');
  if (!(await shownNow())) {
    await domClick(driver, await driver.findElement(By.css('nav.sections a[data-route="deliver"]')));
    await driver.wait(shownNow, WAIT_MS, 'the deliver section did not open');
  }
}

/** Waits until every action the page started has been answered and drawn (`<main aria-busy=false>`). */
export async function idle(driver) {
  await driver.wait(
    () => driver.executeScript('return document.querySelector("main")?.getAttribute("aria-busy") === "false"'),
    WAIT_MS,
    'the page stayed busy',
  );
}

/** Calls `window.inboxLab.<name>(...args)` in the page and returns its (awaited) answer. */
export function lab(driver, name, ...args) {
  return driver.executeScript(
    'const [name, args] = arguments; return window.inboxLab[name](...args);',
    name,
    args,
  );
}

/** A fresh database, the page reloaded from it, the sender at its defaults, an empty timeline. */
export async function freshPlayground(driver) {
  await lab(driver, 'reset');
  await reloadPage(driver);
  await (await reach(driver, driver.findElement(By.css('#deliver-form button[type=reset]')))).click();
  await (await reach(driver, driver.findElement(By.id('timeline-clear')))).click();
  await idle(driver);
}

/**
 * Brings `element` to the middle of the window before it is used, as a reader
 * scrolls to what they click: WebDriver clicks an element already partly in
 * view where it is, and there the sticky section list may cover it (after a
 * reload restored the scroll position).
 */
async function reach(driver, found) {
  const element = await found;
  await driver.executeScript('arguments[0].scrollIntoView({block: "center"})', element);
  return element;
}

/** Fills the sender's form like a reader: typing, choosing an option, ticking a box. */
export async function fillSender(driver, fields) {
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'fault' || name === 'handler') {
      await (await reach(driver, driver.findElement(By.id(name)))).findElement(By.css(`option[value="${value}"]`)).click();
    } else if (name === 'lose_response') {
      const box = await reach(driver, driver.findElement(By.id('lose_response')));
      if ((await box.isSelected()) !== value) {
        await domClick(driver, box);
      }
    } else {
      const input = await reach(driver, driver.findElement(By.id(name)));
      await input.clear();
      await input.sendKeys(String(value));
    }
  }
}

/** Clicks the control `css` and waits until the page has answered and drawn it. */
export async function press(driver, css) {
  await domClick(driver, await reach(driver, driver.findElement(By.css(css))));
  await idle(driver);
}

/**
 * Clicks `element` through the DOM (its own `click()`: the same event a
 * pointer's click dispatches to it, a submit button submitting its form)
 * rather than through WebDriver's pointer. WebKitWebDriver's pointer misses
 * now and then on this page: its hit test at an element's centre can return
 * the section list or another box (seen: the Deliver link reported "not
 * interactable", a press of Deliver that never reached the form), so the
 * core path would fail for a reason that is not the core path's.
 */
async function domClick(driver, element) {
  await driver.executeScript('arguments[0].click()', element);
}

/**
 * Opens the section `route` (#/tools, …) by its link in the section list, as
 * a reader does, and waits until its screen is shown and the page is idle.
 */
export async function openSection(driver, route) {
  await domClick(driver, await driver.findElement(By.css(`nav.sections a[data-route="${route}"]`)));
  await driver.wait(
    () => driver.executeScript('return document.querySelector(`[data-screen="${arguments[0]}"]`)?.hidden === false', route),
    WAIT_MS,
    `the ${route} section did not open`,
  );
  await idle(driver);
}

/** Presses Deliver and waits until the whole send (retries included) is answered and drawn. */
export function pressDeliver(driver) {
  return press(driver, '#deliver-form button[type=submit]');
}

/** What the page shows: the answer box (`{outcome, 'HTTP status', receipt?, message?}`), the sender's log and summary, the tables. */
export function shown(driver) {
  return driver.executeScript(() => {
    const text = (el) => el?.textContent ?? null;
    const rows = (id) => [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => [...tr.cells].map(text));
    const banner = document.querySelector('#storage-banner');
    const note = document.querySelector('#tab-note');
    return {
      answer: Object.fromEntries([...document.querySelectorAll('#answer dd')].map((dd) => [dd.dataset.term, text(dd)])),
      log: [...document.querySelectorAll('#sender-log > li')].map((li) =>
        [...li.querySelectorAll('p')].map(text).join(' | '),
      ),
      summary: document.querySelector('#sender-summary').hidden ? null : text(document.querySelector('#sender-summary')),
      tables: { accounts: rows('accounts'), inbox: rows('inbox') },
      banner: banner.hidden ? null : { reason: banner.dataset.reason, text: text(banner) },
      tabNote: note.hidden ? null : text(note),
      timeline: [...document.querySelectorAll('#timeline > li.entry')].map((li) => ({
        outcome: li.dataset.outcome,
        attempt: li.dataset.attempt === undefined ? null : Number(li.dataset.attempt),
        ops: [...li.querySelectorAll('.op')].map((op) => `${op.dataset.op}:${op.dataset.state}`),
      })),
    };
  });
}
