// The read-only SQL console: one SELECT or read-only PRAGMA, results as a
// table.
//
// The page does not decide what is "read-only" — string matching would be
// wrong both ways (a SELECT can call a writing function; "DELETE" can sit in
// a string literal). Rust asks SQLite itself (`sqlite3_stmt_readonly` plus an
// authorizer, src/console.rs) and refuses with a message, shown here next to
// the SQL.

import { inboxLab } from './client.js';
import { clearErrors, dataTable, el, formatNumber, showFieldError, whileBusy } from './dom.js';
import { errorMessage } from './errors.js';
import { onLanguageChange, register, t } from './i18n.js';

register({
  en: {
    'sql.title': 'SQL console (read-only)',
    'sql.label': 'One SELECT or read-only PRAGMA (Ctrl+Enter runs it)',
    'sql.run': 'Run',
    'sql.examples': 'Try:',
    'sql.rows': '{count} row(s).',
    'sql.truncated': 'Only the first {count} rows are shown.',
  },
  ru: {
    'sql.title': 'SQL-консоль (только чтение)',
    'sql.label': 'Один SELECT или PRAGMA только для чтения (Ctrl+Enter — выполнить)',
    'sql.run': 'Выполнить',
    'sql.examples': 'Попробуйте:',
    'sql.rows': 'Строк: {count}.',
    'sql.truncated': 'Показаны только первые {count} строк.',
  },
});

const form = document.querySelector('#sql-form');
const textarea = document.querySelector('#sql');
const output = document.querySelector('#sql-result');
let shown = null;

form.addEventListener('submit', (event) => {
  event.preventDefault();
  whileBusy(run);
});

// Enter makes a new line, as in any editor; Ctrl+Enter (⌘+Enter) runs.
textarea.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    form.requestSubmit();
  }
});

for (const button of form.querySelectorAll('[data-sql]')) {
  button.addEventListener('click', () => {
    textarea.value = button.dataset.sql;
    form.requestSubmit();
  });
}

async function run() {
  clearErrors(form);
  try {
    draw(await inboxLab.query(textarea.value));
  } catch (error) {
    draw(null);
    // Refused or failed, the message is about this SQL: show it right under it.
    showFieldError(form, 'sql', () => errorMessage(error));
  }
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
  output.replaceChildren(dataTable(result.columns, result.rows), ...notes);
}

onLanguageChange(() => shown && draw(shown));
