// The read-only SQL console: one SELECT or read-only PRAGMA, results as a
// table.
//
// The page does not decide what is "read-only" — string matching would be
// wrong both ways (a SELECT can call a writing function; "DELETE" can sit in
// a string literal). Rust asks SQLite itself (`sqlite3_stmt_readonly` plus an
// authorizer, src/console.rs) and refuses with a message, shown here next to
// the SQL.
//
// A query cannot hold the page: it ends within its budget (2 s) with a
// query_budget message, and while it runs a Cancel button (and Escape in the
// SQL box) stops it at once — `inboxLab.cancel()`, which replaces the
// database worker (www/db/client.js, "Cancelling a query"). A value too long to
// show in full is cut by Rust and listed in `truncated_values`; its cell is
// marked, and a note under the table says how many, so nothing is ever shown
// shorter without saying so.

import { inboxLab } from '../../db/client.js';
import { clearErrors, dataTable, el, formatNumber, showFieldError, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  en: {
    'sql.title': 'SQL console (read-only)',
    'sql.result': 'The query’s result',
    'sql.label': 'One SELECT or read-only PRAGMA (Ctrl+Enter runs it)',
    'sql.run': 'Run',
    'sql.cancel': 'Cancel',
    'sql.examples': 'Try:',
    'sql.rows': '{count} row(s).',
    'sql.truncated': 'Only the first {count} rows are shown.',
    'sql.cut': '{count} value(s) too long to show in full: only the beginning of each is shown, marked “… (cut)”.',
    'sql.cut_mark': '… (cut)',
    'sql.cut_title': '{bytes} bytes in full; only the beginning is shown',
  },
  ru: {
    'sql.title': 'SQL-консоль (только чтение)',
    'sql.result': 'Результат запроса',
    'sql.label': 'Один SELECT или PRAGMA только для чтения (Ctrl+Enter — выполнить)',
    'sql.run': 'Выполнить',
    'sql.cancel': 'Отменить',
    'sql.examples': 'Попробуйте:',
    'sql.rows': 'Строк: {count}.',
    'sql.truncated': 'Показаны только первые {count} строк.',
    'sql.cut': 'Значений, слишком длинных, чтобы показать их целиком: {count}. От каждого показано только начало с пометкой «… (обрезано)».',
    'sql.cut_mark': '… (обрезано)',
    'sql.cut_title': 'Целиком — {bytes} байт; показано только начало',
  },
});

let form = null;
let textarea = null;
let output = null;
let cancelButton = null;
let shown = null;
// Queries of this panel still waiting for their answer.
let running = 0;

async function run() {
  clearErrors(form);
  running += 1;
  showCancel();
  try {
    draw(await inboxLab.query(textarea.value));
  } catch (error) {
    draw(null);
    // Refused, failed or cancelled, the message is about this SQL: show it
    // right under it.
    showFieldError(form, 'sql', () => errorMessage(error));
  } finally {
    running -= 1;
    showCancel();
  }
}

// Cancel is there while a query runs. When it goes, focus that was on it
// goes back to the SQL, not to the top of the page.
function showCancel() {
  const show = running > 0;
  if (!show && document.activeElement === cancelButton) {
    textarea.focus();
  }
  cancelButton.hidden = !show;
}

function draw(result) {
  shown = result;
  if (result === null) {
    output.replaceChildren();
    return;
  }
  const notes = [el('p', { className: 'note', text: t('sql.rows', { count: formatNumber(result.rows.length) }) })];
  if (result.truncated) {
    notes.push(el('p', { className: 'note', text: t('sql.truncated', { count: formatNumber(result.rows.length) }) }));
  }
  const table = dataTable(result.columns, result.rows);
  const cut = result.truncated_values ?? [];
  for (const { row, column, bytes } of cut) {
    const cell = table.tBodies[0]?.rows[row]?.cells[column];
    if (cell !== undefined) {
      cell.classList.add('cut');
      cell.title = t('sql.cut_title', { bytes: formatNumber(bytes) });
      cell.append(el('span', { className: 'muted', text: ` ${t('sql.cut_mark')}` }));
    }
  }
  if (cut.length > 0) {
    notes.push(el('p', { className: 'note', text: t('sql.cut', { count: formatNumber(cut.length) }) }));
  }
  output.replaceChildren(table, ...notes);
}

export function mount() {
  form = document.querySelector('#sql-form');
  textarea = document.querySelector('#sql');
  output = document.querySelector('#sql-result');
  cancelButton = document.querySelector('#sql-cancel');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    whileBusy(run);
  });
  // Enter makes a new line, as in any editor; Ctrl+Enter (⌘+Enter) runs;
  // Escape cancels a query that is running.
  textarea.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === 'Escape' && running > 0) {
      event.preventDefault();
      inboxLab.cancel();
    }
  });
  cancelButton.addEventListener('click', () => inboxLab.cancel());
  for (const button of form.querySelectorAll('[data-sql]')) {
    button.addEventListener('click', () => {
      textarea.value = button.dataset.sql;
      form.requestSubmit();
    });
  }
  onLanguageChange(() => shown && draw(shown));
}
