// The read-only SQL console: an editor (editor.js, CodeMirror), one SELECT or
// read-only PRAGMA, results as a table; beside it the database's schema and
// the queries run before (history.js).
//
// The page does not decide what is "read-only" — string matching would be
// wrong both ways (a SELECT can call a writing function; "DELETE" can sit in
// a string literal). Rust asks SQLite itself (`sqlite3_stmt_readonly` plus an
// authorizer, src/labs/tools/console.rs) and refuses with a message, shown
// here next to the SQL.
//
// A query cannot hold the page: it ends within its budget (2 s) with a
// query_budget message, and while it runs a Cancel button (and Escape in the
// editor) stops it at once — `inboxLab.cancel()`, which terminates the
// console's own worker (www/db/foreign.js); the database worker goes on. A value too long to
// show in full is cut by Rust and listed in `truncated_values`; its cell is
// marked, and a note under the table says how many, so nothing is ever shown
// shorter without saying so.
//
// The schema is what the database reports — a read-only query through the
// same path (SCHEMA_SQL: sqlite_schema with pragma_table_info and
// pragma_index_info) — read when the Tools screen is shown, and again when a
// write (an import, a reset, any tab's) may have changed the tables. Its
// names complete in the editor; a click on one inserts it.
//
// The editor (editor.js: CodeMirror, most of the page's script by size) is
// imported lazily, when the Tools screen is first shown: the built page
// fetches it as a chunk of its own (xtask/tools/dist.mjs), so it costs the
// other screens nothing.

import { inboxLab, onTablesChanged } from '../../db/client.js';
import { dataTable, el, formatNumber, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { currentLanguage, onLanguageChange, register, t } from '../../lib/i18n.js';
import { History } from './history.js';

register({
  'sql.title': { en: 'SQL console (read-only)', ru: 'SQL-консоль (только чтение)' },
  'sql.result': { en: 'The query’s result', ru: 'Результат запроса' },
  'sql.label': { en: 'One SELECT or read-only PRAGMA', ru: 'Один SELECT или PRAGMA только для чтения' },
  'sql.keys': { en: 'Ctrl+Enter (⌘+Enter) runs it; Escape cancels a running query; names complete as you type (Enter takes one); Tab leaves the editor.',
    ru: 'Ctrl+Enter (⌘+Enter) — выполнить; Escape — отменить выполняемый запрос; имена дополняются при вводе (Enter — выбрать); Tab — выйти из редактора.' },
  'sql.run': { en: 'Run', ru: 'Выполнить' },
  'sql.cancel': { en: 'Cancel', ru: 'Отменить' },
  'sql.examples': { en: 'Try:', ru: 'Попробуйте:' },
  'sql.rows': { en: '{count} row(s).', ru: 'Строк: {count}.' },
  'sql.truncated': { en: 'Only the first {count} rows are shown.', ru: 'Показаны только первые {count} строк.' },
  'sql.cut': { en: '{count} value(s) too long to show in full: only the beginning of each is shown, marked “… (cut)”.',
    ru: 'Значений, слишком длинных, чтобы показать их целиком: {count}. От каждого показано только начало с пометкой «… (обрезано)».' },
  'sql.cut_mark': { en: '… (cut)', ru: '… (обрезано)' },
  'sql.cut_title': { en: '{bytes} bytes in full; only the beginning is shown', ru: 'Целиком — {bytes} байт; показано только начало' },
  'sql.schema': { en: 'Schema', ru: 'Схема' },
  'sql.schema_note': { en: 'As the database reports it. A name inserts itself into the query.',
    ru: 'Такая, какой её сообщает база. Имя по щелчку вставляется в запрос.' },
  'sql.schema_loading': { en: 'Reading the schema…', ru: 'Читаю схему…' },
  'sql.schema_failed': { en: 'The schema could not be read: {message}', ru: 'Схему прочитать не удалось: {message}' },
  'sql.indexes': { en: 'Indexes', ru: 'Индексы' },
  'sql.insert': { en: 'Insert {name}', ru: 'Вставить {name}' },
  'sql.history': { en: 'History', ru: 'История' },
  'sql.history_label': { en: 'Queries run, newest first, kept in this browser (Enter runs the chosen one again)',
    ru: 'Выполненные запросы, новые сверху, хранятся в этом браузере (Enter — выполнить выбранный снова)' },
  'sql.history_empty': { en: 'No queries run yet.', ru: 'Запросов ещё не было.' },
  'sql.history_load': { en: 'Into the editor', ru: 'В редактор' },
  'sql.history_run': { en: 'Run again', ru: 'Выполнить снова' },
  'sql.editor_failed': { en: 'The editor could not be loaded: {message}', ru: 'Редактор не загрузился: {message}' },
});

/** The editor's text when the page opens. */
const INITIAL_SQL = 'SELECT source, event_id, amount, receipt_seq FROM inbox';

/**
 * Every table's and view's columns, then every index's columns, as the
 * database reports them: one row per column.
 */
export const SCHEMA_SQL = `SELECT m.tbl_name AS tbl, m.type AS kind, m.name AS name, p.cid AS seq, p.name AS col
FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS p
WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
UNION ALL
SELECT m.tbl_name, 'index', m.name, i.seqno, i.name
FROM sqlite_schema AS m JOIN pragma_index_info(m.name) AS i
WHERE m.type = 'index'
ORDER BY 1, 2 DESC, 3, 4`;

let form = null;
// The editor once loaded (`loadEditor`), else null.
let editor = null;
let editorLoading = null;
// The message shown when the editor could not be loaded (the function `showError` got), else null.
let loadFailure = null;
let output = null;
let cancelButton = null;
let errorNote = null;
let schemaBox = null;
let historySelect = null;
let historyEmpty = null;
let past = null;
let shown = null;
// The message under the editor, as a function (written again on a language switch).
let shownError = null;
// The schema last read: { tables: [{name, kind, columns, indexes: [{name, columns}]}] }, or { error }.
let schema = null;
// Whether the schema may have changed since it was read.
let schemaStale = true;
let schemaTimer = null;
// Queries of this panel still waiting for their answer.
let running = 0;

async function run(sql) {
  showError(null);
  running += 1;
  showCancel();
  past.add(sql);
  drawHistory();
  try {
    draw(await inboxLab.query(sql));
  } catch (error) {
    draw(null);
    // Refused, failed or cancelled, the message is about this SQL: show it
    // right under it, and put the focus back where the fix is.
    showError(() => errorMessage(error));
    editor?.focus();
  } finally {
    running -= 1;
    showCancel();
  }
}

function showError(text) {
  shownError = text;
  errorNote.textContent = text === null ? '' : text();
  errorNote.hidden = text === null;
  editor?.setInvalid(text !== null);
}

// Cancel is there while a query runs. When it goes, focus that was on it
// goes back to the SQL, not to the top of the page.
function showCancel() {
  const show = running > 0;
  if (!show && document.activeElement === cancelButton) {
    editor?.focus();
  }
  cancelButton.hidden = !show;
}

function cancel() {
  if (running === 0) {
    return false;
  }
  inboxLab.cancel();
  return true;
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

// ---- The schema ---------------------------------------------------------------

/** The schema's rows (SCHEMA_SQL's columns: tbl, kind, name, seq, col) as tables with columns and indexes. */
export function schemaOf(rows) {
  const tables = new Map();
  const indexes = new Map();
  for (const [tbl, kind, name, , col] of rows) {
    if (kind === 'index') {
      const index = indexes.get(name) ?? { name, table: tbl, columns: [] };
      index.columns.push(col ?? '(expression)');
      indexes.set(name, index);
    } else {
      const table = tables.get(name) ?? { name, kind, columns: [], indexes: [] };
      table.columns.push(col);
      tables.set(name, table);
    }
  }
  for (const index of indexes.values()) {
    tables.get(index.table)?.indexes.push({ name: index.name, columns: index.columns });
  }
  return [...tables.values()];
}

async function readSchema() {
  schemaStale = false;
  if (schema === null) {
    schemaBox.replaceChildren(el('p', { className: 'muted', text: t('sql.schema_loading') }));
  }
  try {
    const result = await inboxLab.query(SCHEMA_SQL);
    schema = { tables: schemaOf(result.rows) };
    editor?.setSchema(completionSchema());
  } catch (error) {
    // Cancelled with a query (Escape), or the database is not there: say so,
    // and read it again next time.
    schema = { error };
    schemaStale = true;
  }
  drawSchema();
}

/** The schema as the editor's completion takes it: a table's name → its column names. */
function completionSchema() {
  return Object.fromEntries((schema?.tables ?? []).map((table) => [table.name, table.columns]));
}

function consoleShown() {
  return !form.closest('.screen')?.hidden;
}

function schemaMayHaveChanged() {
  schemaStale = true;
  if (consoleShown()) {
    clearTimeout(schemaTimer);
    schemaTimer = setTimeout(() => whileBusy(readSchema), 200);
  }
}

function nameButton(name) {
  return el('button', {
    className: 'chip sql-name',
    text: name,
    data: { name },
    attrs: { type: 'button', 'aria-label': t('sql.insert', { name }) },
  });
}

function drawSchema() {
  if (schema === null) {
    return;
  }
  if (schema.error !== undefined) {
    schemaBox.replaceChildren(
      el('p', { className: 'field-error', text: t('sql.schema_failed', { message: errorMessage(schema.error) }) }),
    );
    return;
  }
  const list = el('ul', { className: 'sql-tables' });
  for (const table of schema.tables) {
    const columns = el('ul', { className: 'sql-columns' }, ...table.columns.map((name) => el('li', {}, nameButton(name))));
    const item = el('li', {}, nameButton(table.name), columns);
    if (table.indexes.length > 0) {
      const indexes = table.indexes.map((index) => `${index.name} (${index.columns.join(', ')})`).join('; ');
      item.append(el('p', { className: 'note sql-indexes', text: `${t('sql.indexes')}: ${indexes}` }));
    }
    list.append(item);
  }
  schemaBox.replaceChildren(list);
}

// ---- The history ----------------------------------------------------------------

function drawHistory() {
  const entries = past.entries;
  historySelect.replaceChildren(
    ...entries.map((sql, index) => {
      const line = sql.replace(/\s+/g, ' ').trim();
      return el('option', {
        text: line.length > 120 ? `${line.slice(0, 119)}…` : line,
        title: sql,
        attrs: { value: String(index) },
      });
    }),
  );
  if (entries.length > 0) {
    historySelect.selectedIndex = 0;
  }
  const empty = entries.length === 0;
  historyEmpty.hidden = !empty;
  for (const control of [historySelect, ...form.parentElement.querySelectorAll('[data-history]')]) {
    control.disabled = empty;
  }
}

/** The history entry chosen in the list, or null. */
function chosen() {
  return past.entries[historySelect.selectedIndex] ?? null;
}

function loadChosen() {
  const sql = chosen();
  if (sql !== null) {
    withEditor((loaded) => {
      loaded.setText(sql);
      loaded.focus();
    });
  }
}

function runChosen() {
  const sql = chosen();
  if (sql !== null) {
    whileBusy(() =>
      withEditor((loaded) => {
        loaded.setText(sql);
        return run(sql);
      }),
    );
  }
}

// ---- The editor -----------------------------------------------------------------

/** The editor, imported and created on first use; resolves to it. */
function loadEditor() {
  editorLoading ??= import('./editor.js').then(
    ({ createEditor }) => {
      editor = createEditor(document.querySelector('#sql-editor'), {
        doc: INITIAL_SQL,
        id: 'sql',
        describedBy: [document.querySelector('#sql-keys'), errorNote],
        onRun: () => form.requestSubmit(),
        onEscape: cancel,
      });
      editor.setLanguage(currentLanguage(), t('sql.label'));
      editor.setSchema(completionSchema());
      if (shownError === loadFailure) {
        showError(null);
      }
      editor.setInvalid(shownError !== null);
      return editor;
    },
    (error) => {
      // Say so where the editor would be; the next use tries again.
      editorLoading = null;
      loadFailure = () => t('sql.editor_failed', { message: error?.message ?? String(error) });
      showError(loadFailure);
      throw error;
    },
  );
  return editorLoading;
}

/** Runs `action(editor)` once the editor is there; nothing if it could not be loaded (`loadEditor` said so). */
async function withEditor(action) {
  let loaded;
  try {
    loaded = await loadEditor();
  } catch {
    return;
  }
  await action(loaded);
}

/** Shows the console's screen's parts that need the database or the editor. */
function showConsole() {
  whileBusy(() => withEditor(() => {}));
  if (schemaStale) {
    whileBusy(readSchema);
  }
}

// ---- Mounting -------------------------------------------------------------------

export function mount(root, services) {
  form = document.querySelector('#sql-form');
  output = document.querySelector('#sql-result');
  cancelButton = document.querySelector('#sql-cancel');
  errorNote = document.querySelector('#sql-error');
  schemaBox = document.querySelector('#sql-schema');
  historySelect = document.querySelector('#sql-history');
  historyEmpty = document.querySelector('#sql-history-empty');
  past = new History(storage());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    whileBusy(() => withEditor((loaded) => run(loaded.text())));
  });
  cancelButton.addEventListener('click', () => inboxLab.cancel());
  for (const button of form.querySelectorAll('[data-sql]')) {
    button.addEventListener('click', () =>
      withEditor((loaded) => {
        loaded.setText(button.dataset.sql);
        form.requestSubmit();
      }),
    );
  }
  schemaBox.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-name]');
    if (button && editor !== null) {
      editor.insert(button.dataset.name);
      editor.focus();
    }
  });
  document.querySelector('#sql-history-load').addEventListener('click', loadChosen);
  document.querySelector('#sql-history-run').addEventListener('click', runChosen);
  // In the list, Enter runs the chosen query again (the buttons do both).
  historySelect.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      runChosen();
    }
  });
  drawHistory();
  onTablesChanged(schemaMayHaveChanged);
  services.panels.nav.onRoute(({ screen }) => {
    if (screen === 'tools') {
      showConsole();
    }
  });
  onLanguageChange((lang) => {
    editor?.setLanguage(lang, t('sql.label'));
    if (shown) {
      draw(shown);
    }
    if (shownError) {
      errorNote.textContent = shownError();
    }
    drawSchema();
  });
}

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
