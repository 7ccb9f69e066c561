// Small DOM helpers shared by the page's modules.
//
// Everything here writes text with textContent, never innerHTML: source,
// event_id and SQL results are whatever a reader typed, and must show as
// text, never run as markup.

import { errorMessage, outcomeWord } from './errors.js';
import { currentLanguage, onLanguageChange, t } from './i18n.js';

/**
 * `el('p', {className: 'note', text: 'hi', data: {term: 'x'}}, child, …)`;
 * `i18n: key` writes the text of `key` and marks it for translatePage().
 */
export function el(tag, { className, text, i18n, title, data, attrs } = {}, ...children) {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (i18n !== undefined) {
    node.textContent = t(i18n);
    node.dataset.i18n = i18n;
  } else if (text !== undefined) {
    node.textContent = String(text);
  }
  if (title !== undefined) {
    node.title = title;
  }
  for (const [key, value] of Object.entries(data ?? {})) {
    node.dataset[key] = String(value);
  }
  for (const [key, value] of Object.entries(attrs ?? {})) {
    node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

/** `svg('rect', {x: 0, width: 10}, child, …)`: an SVG element, its attributes set as text. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) {
    node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

/**
 * A `type=button` button `#id` labelled with the text of `key`; a click runs
 * `onClick` (if given) while the page shows busy (whileBusy).
 */
export function button(key, id, onClick = null, className = 'secondary') {
  const node = el('button', { className, i18n: key, attrs: { type: 'button', id } });
  if (onClick !== null) {
    node.addEventListener('click', () => whileBusy(onClick));
  }
  return node;
}

/**
 * A form field `<div class=field>`: its label (the text of `key`; a plain
 * string, e.g. a column name, as it is), the input `#id` with `attrs`, and
 * the line `#id-error` where showFieldError writes what is wrong with it.
 */
export function field(id, key, attrs, { className = 'field', input = 'input' } = {}) {
  const label = key.includes('.') ? { i18n: key } : { text: key };
  return el(
    'div',
    { className },
    el('label', { ...label, attrs: { for: id } }),
    el(input, { attrs: { id, spellcheck: 'false', ...attrs, 'aria-describedby': `${attrs['aria-describedby'] ?? ''} ${id}-error`.trim() } }),
    el('p', { className: 'field-error', attrs: { id: `${id}-error`, hidden: '' } }),
  );
}

/**
 * A part shown on demand: `<details class="fold" #id>`, closed by default,
 * whose `<summary>` is `head` (the part's heading, so it stays in the
 * outline and in sight). The keyboard opens it as any <details> does (Tab to
 * the summary, Enter or Space). Whatever drives a control inside it from
 * elsewhere — a level, a share link's replay, a link to the panel — opens it
 * first (`disclose`), so what it does is in sight.
 */
export function fold(id, head, ...children) {
  return el('details', { className: 'fold', attrs: { id } }, el('summary', {}, head), ...children);
}

/** Opens `node` if it is a closed <details>, and every closed <details> around it. */
export function disclose(node) {
  for (let box = node?.closest('details'); box; box = box.parentElement?.closest('details')) {
    box.open = true;
  }
}

/** Redraws `node` with `children`; the focus, if it was inside, goes back to the element of the same id. */
export function replaceKeepingFocus(node, children, focusOptions) {
  const focused = node.contains(document.activeElement) ? document.activeElement.id : '';
  node.replaceChildren(...children);
  document.getElementById(focused)?.focus(focusOptions);
}

/** A number written the reader's way: 10,000 or 10 000. */
export function formatNumber(n) {
  return typeof n === 'number' ? n.toLocaleString(currentLanguage()) : String(n);
}

/** Outcome counts in words: "applied 1, duplicate 19". */
export function countsText(counts) {
  return Object.entries(counts)
    .map(([outcome, n]) => `${outcomeWord(outcome)} ${formatNumber(n)}`)
    .join(', ');
}

/** Simulated milliseconds as seconds with one decimal: "t=1.0 s" reads better than 1000. */
export function formatSeconds(ms) {
  return (ms / 1000).toLocaleString(currentLanguage(), { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

// Actions still waiting for the database. While any is, <main> is
// aria-busy, so assistive technology (and the end-to-end tests, through
// `idle()`) wait for the whole update.
let inFlight = 0;
const busyListeners = new Set();

/** Runs `action` with <main> marked busy until it settles. */
export async function whileBusy(action) {
  const main = document.querySelector('main');
  inFlight += 1;
  if (inFlight === 1) {
    main.setAttribute('aria-busy', 'true');
    busyListeners.forEach((listener) => listener(true));
  }
  try {
    return await action();
  } finally {
    inFlight -= 1;
    if (inFlight === 0) {
      main.setAttribute('aria-busy', 'false');
      busyListeners.forEach((listener) => listener(false));
    }
  }
}

/**
 * Runs `action` unless `state.busy`: `state.busy` meanwhile, a throw kept as
 * `state.error`, and `redraw()` before and after. For a panel's experiment
 * that must not overlap itself; wrap it in whileBusy to make the page wait too.
 */
export async function exclusive(state, redraw, action) {
  if (state.busy) {
    return;
  }
  state.busy = true;
  state.error = null;
  redraw();
  try {
    await action();
  } catch (error) {
    state.error = error;
  } finally {
    state.busy = false;
    redraw();
  }
}

/**
 * Saves `bytes` as a file called `name`: a download is a link to the bytes,
 * clicked; the URL is freed once the browser has taken them.
 */
export function downloadBytes(bytes, name, type = 'application/vnd.sqlite3') {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Calls `listener(busy)` when the page starts or stops waiting for actions. */
export function onPageBusy(listener) {
  busyListeners.add(listener);
}

// The messages on screen next to their fields, each with the function that
// writes it, so a language switch can write it again.
const shownErrors = new Map();
onLanguageChange(() => shownErrors.forEach((text, note) => (note.textContent = text())));

/**
 * Puts a message next to the control it is about — `field` is the control's
 * name, which is also what Rust calls it in `invalid_input` — and moves the
 * focus there, so a keyboard user lands where the fix is. `text()` writes the
 * message (again after a language switch). Returns whether the form has such
 * a control.
 */
export function showFieldError(form, field, text) {
  const control = field ? form.elements.namedItem(field) : null;
  if (control === null || control === undefined) {
    return false;
  }
  const note = document.getElementById(`${control.id}-error`);
  note.textContent = text();
  note.hidden = false;
  shownErrors.set(note, text);
  control.setAttribute('aria-invalid', 'true');
  control.focus();
  return true;
}

/** `showFieldError` for an error object from the database: next to `error.field`, in the reader's language. */
export function showError(form, error) {
  return showFieldError(form, error.field, () => errorMessage(error));
}

/** Removes every message `showFieldError` put in `form`. */
export function clearErrors(form) {
  for (const control of form.querySelectorAll('[aria-invalid]')) {
    control.removeAttribute('aria-invalid');
  }
  for (const note of form.querySelectorAll('.field-error')) {
    note.hidden = true;
    note.textContent = '';
    shownErrors.delete(note);
  }
}

/** A table's head: one `<th scope=col>` per column, each column `{text | i18n, className}` as `el` takes them. */
export function tableHead(columns) {
  return el('thead', {}, el('tr', {}, ...columns.map((column) => el('th', { ...column, attrs: { scope: 'col' } }))));
}

/** A table of plain values; null shows as a muted NULL. */
export function dataTable(columns, rows) {
  const head = el('tr', {}, ...columns.map((name) => el('th', { text: name, attrs: { scope: 'col' } })));
  const body = rows.map((row) =>
    el(
      'tr',
      {},
      ...row.map((value) =>
        value === null
          ? el('td', { className: 'muted', text: 'NULL' })
          : el('td', { className: typeof value === 'number' ? 'number' : '', text: value }),
      ),
    ),
  );
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...body));
}

// A number field becomes a JS number only if it is written the way an integer
// is written. Anything else ("1.5", "05", " 5", "1e3", "") is passed on as the
// string it is, so Rust rejects it and says why, instead of the page quietly
// turning "05" into 5. (Digits past 2^53 round to a number Rust rejects as
// out of range, so they are not silently accepted either.)
const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** The text of a number field as Rust should see it (see CANONICAL_INTEGER). */
export function numberOrText(text) {
  return CANONICAL_INTEGER.test(text) ? Number(text) : text;
}
