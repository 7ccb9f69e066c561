// The database panel: `accounts` and `inbox` as they are now, and a form to
// add an account.
//
// `refresh()` asks the worker for every account and the inbox rows written
// last, newest first (`inboxLab.tables({newest})`), and redraws them: a new
// row is never somewhere in the middle of a long table, and ten thousand
// rows cost the page no more than two hundred. Rows that are new or changed
// since the last refresh are highlighted (`changes.js`).

import { inboxLab, onTablesChanged } from '../../db/client.js';
import { accountKey, ChangeTracker, inboxKey } from './changes.js';
import { clearErrors, el, field, fold, formatNumber, numberOrText, showError, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'tables.title': { en: 'The database', ru: 'База данных' },
  'tables.new_account': { en: 'New account id', ru: 'id нового счёта' },
  'tables.add_account': { en: 'Add account', ru: 'Добавить счёт' },
  'tables.added': { en: 'Account {id} added at balance 0.', ru: 'Счёт {id} добавлен с балансом 0.' },
  'tables.exists': { en: 'Account {id} already exists.', ru: 'Счёт {id} уже есть.' },
  'tables.empty': { en: 'empty', ru: 'пусто' },
  'tables.no_receipt': { en: '—', ru: '—' },
  'tables.no_receipt_title': { en: 'No receipt: written by a mistaken handler', ru: 'Квитанции нет: строку записал ошибочный обработчик' },
  'tables.more': { en: 'Showing the {shown} rows written last of {total}. The SQL console shows the rest.',
    ru: 'Показаны {shown} строк, записанных последними, из {total}. Остальные покажет SQL-консоль.' },
  'tables.cannot_read': { en: 'Cannot read the tables: {message}', ru: 'Не удаётся прочитать таблицы: {message}' },
  'tables.uncommitted': { en: 'Step mode: this is what the open transaction sees, uncommitted. Nobody else sees it until COMMIT.',
    ru: 'Пошаговый режим: так данные видит открытая транзакция, до фиксации. Никто другой их не видит, пока не выполнен COMMIT.' },
});

/** At most this many inbox rows are read and drawn: ten thousand rows would only slow the page down. */
const SHOWN_ROWS = 200;

const accountsTracker = new ChangeTracker(accountKey);
const inboxTracker = new ChangeTracker(inboxKey);

let error = null;
let more = null;
let view = null;
let accountForm = null;
let note = null;

// The last snapshot drawn, and what writes the note and the error, kept to
// redraw them in another language.
let shown = null;
let noteText = null;
let lastError = null;

// One refresh at a time. A call made while one runs may have changed the
// tables after that one read them, so one more runs afterwards — shared by
// every call made in the meantime: twenty quick calls are two reads.
let running = null;
let queued = null;

/**
 * Reads the tables, draws them, and resolves to what it read:
 * `{accounts, inbox, inbox_total}`, every account and the newest inbox rows
 * (or null if they could not be read; the error is shown above the tables).
 */
export function refresh() {
  if (running === null) {
    running = load().finally(() => {
      running = null;
    });
    return running;
  }
  queued ??= running.then(() => {
    queued = null;
    return refresh();
  });
  return queued;
}

// Writes this page did not ask for — another tab's, forwarded to the tab
// that owns the database (client.js) — change the tables too. Redraw once
// they settle: a burst of writes is one redraw, not thousands.
const SETTLE_MS = 300;
let settleTimer = 0;

async function load() {
  try {
    const snapshot = await inboxLab.tables({ newest: SHOWN_ROWS });
    lastError = null;
    error.hidden = true;
    draw(snapshot, accountsTracker.update(snapshot.accounts), inboxTracker.update(snapshot.inbox));
    return snapshot;
  } catch (failure) {
    lastError = failure;
    error.textContent = t('tables.cannot_read', { message: errorMessage(failure) });
    error.hidden = false;
    return null;
  }
}

/**
 * A send begins (lib/send.js): from here on, the rows it changes are the
 * ones highlighted — and none, if it changes nothing (a duplicate, a
 * refusal), rather than the rows of the change before it.
 */
export function beginChange() {
  accountsTracker.forget();
  inboxTracker.forget();
}

/** Step mode sets this while a transaction is open: the tables then show its uncommitted view. */
export function showUncommitted(on) {
  view.hidden = !on;
  view.parentElement.classList.toggle('uncommitted', on);
}

/** Shows a short note under the tables, written by `text()`; null clears it. */
export function setNote(text) {
  noteText = text;
  note.textContent = text === null ? '' : text();
}

/** Draws `snapshot`'s rows; `accounts` and `inbox`: what each table's tracker found (`changes.js`). */
function draw(snapshot, accounts, inbox) {
  shown = { snapshot, accounts, inbox };
  drawRows('#accounts', snapshot.accounts, accounts, accountKey, (a) => [a.id, a.balance]);
  drawRows('#inbox', snapshot.inbox, inbox, inboxKey, (row) => [
    row.source,
    row.event_id,
    row.account_id,
    row.amount,
    row.receipt ? `#${row.receipt.seq}` : null,
    row.receipt ? row.receipt.balance_after : null,
  ]);
  more.hidden = snapshot.inbox_total <= snapshot.inbox.length;
  more.textContent = t('tables.more', { shown: formatNumber(snapshot.inbox.length), total: formatNumber(snapshot.inbox_total) });
  // Newest first means a new row is at the top: bring the top into view.
  if (inbox.fresh.size > 0) {
    document.querySelector('.inbox-scroll').scrollTop = 0;
  }
}

// The rows each table drew last, by selector: key → tr. A redraw builds only
// the rows the tracker found fresh (new or changed) and moves the others: one
// delivery into a 200-row inbox builds one row, not 200.
const drawn = new Map();

function drawRows(selector, rows, { fresh, changed }, keyOf, cells) {
  const table = document.querySelector(selector);
  const columns = table.tHead.rows[0].cells;
  const before = drawn.get(selector) ?? new Map();
  const now = new Map();
  drawn.set(selector, now);
  if (rows.length === 0) {
    const td = el('td', { className: 'muted', text: t('tables.empty') });
    td.colSpan = columns.length;
    table.tBodies[0].replaceChildren(el('tr', {}, td));
    return;
  }
  table.tBodies[0].replaceChildren(
    ...rows.map((row) => {
      const key = keyOf(row);
      let tr = fresh.has(key) ? undefined : before.get(key);
      if (tr === undefined) {
        const tds = cells(row).map((value, i) =>
          value === null
            ? el('td', { className: `${columns[i].className} muted`, text: t('tables.no_receipt'), title: t('tables.no_receipt_title') })
            : el('td', { className: columns[i].className, text: value }),
        );
        tr = el('tr', {}, ...tds);
      }
      // "current" marks the rows of the latest change.
      tr.className = changed.has(key) ? 'current' : '';
      now.set(key, tr);
      return tr;
    }),
  );
}

async function addAccount() {
  clearErrors(accountForm);
  setNote(null);
  const id = accountForm.elements.account_id.value;
  try {
    const created = await inboxLab.addAccount(numberOrText(id));
    setNote(() => t(created ? 'tables.added' : 'tables.exists', { id }));
  } catch (failure) {
    if (!showError(accountForm, failure)) {
      setNote(() => errorMessage(failure));
    }
  }
  await refresh();
}

/**
 * A table `#id` in its scrolling region, named by its caption; `columns`:
 * [name, className]. An underscore may break a narrow column's name.
 */
function scrollingTable(id, columns, className = 'table-scroll') {
  const head = columns.map(([name, numeric]) =>
    el('th', { className: numeric, attrs: { scope: 'col' } }, ...name.split(/(?<=_)/).flatMap((part, i) => (i ? [el('wbr'), part] : [part]))),
  );
  return el(
    'div',
    { className, attrs: { tabindex: '0', role: 'region', 'aria-labelledby': `${id}-caption` } },
    el('table', { attrs: { id } }, el('caption', { text: id, attrs: { id: `${id}-caption` } }), el('thead', {}, el('tr', {}, ...head)), el('tbody')),
  );
}

/** Builds the tables in `root` (#database). Returns `refresh`, `beginChange`, `showUncommitted` and `setNote`. */
export function mount(root) {
  const line = (id, className) => el('p', { className, attrs: { id, hidden: '' } });
  [error, more] = [line('tables-error', 'field-error'), line('inbox-more', 'note')];
  view = el('p', { className: 'badge', i18n: 'tables.uncommitted', attrs: { id: 'tables-view', hidden: '' } });
  accountForm = el(
    'form',
    { className: 'inline-form', attrs: { id: 'account-form', novalidate: '' } },
    field('new-account', 'tables.new_account', { name: 'account_id', value: '2', inputmode: 'numeric', autocomplete: 'off' }),
    el('button', { i18n: 'tables.add_account', attrs: { type: 'submit' } }),
  );
  note = el('p', { className: 'muted', attrs: { id: 'tables-note', role: 'status' } });
  root.append(
    el('h2', { i18n: 'tables.title', attrs: { id: 'tables-title' } }),
    view,
    error,
    scrollingTable('accounts', [['id', ''], ['balance', 'number']]),
    scrollingTable(
      'inbox',
      [['source', ''], ['event_id', ''], ['account_id', ''], ['amount', 'number'], ['receipt', 'number'], ['balance_after', 'number']],
      'table-scroll inbox-scroll',
    ),
    more,
    fold('account-fold', el('span', { i18n: 'tables.add_account' }), accountForm),
    note,
  );
  onTablesChanged(() => {
    clearTimeout(settleTimer);
    settleTimer = setTimeout(refresh, SETTLE_MS);
  });
  accountForm.addEventListener('submit', (event) => {
    event.preventDefault();
    whileBusy(addAccount);
  });
  onLanguageChange(() => {
    drawn.clear(); // a row without a receipt says so in the reader's language
    if (shown !== null) {
      // Redraw without counting anything as changed again.
      draw(shown.snapshot, shown.accounts, shown.inbox);
    }
    if (noteText !== null) {
      setNote(noteText);
    }
    if (lastError !== null) {
      error.textContent = t('tables.cannot_read', { message: errorMessage(lastError) });
    }
  });
  return { refresh, beginChange, showUncommitted, setNote };
}
