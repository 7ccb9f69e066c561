// Keep, move, start over: export the database as a `.sqlite3` file, import
// one, or reset.
//
// The page checks nothing about an imported file: Rust does. It reads the
// file read-only on a private connection (SQLite header, integrity_check,
// the version, every cell of inbox-lab's tables with a typed check), writes
// the rows into a fresh inbox-lab database and only then replaces the live
// one (src/labs/tools/transfer.rs). The file's own schema is never adopted: anything
// else it holds (a trigger, an index, a view) is listed as not copied. A bad
// file is refused with a message next to the file field, and the current
// database stays exactly as it was.

import { clearErrors, downloadBytes, showError, showFieldError, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'data.title': { en: 'Keep, move, start over', ru: 'Сохранить, перенести, начать заново' },
  'data.export': { en: 'Export .sqlite3', ru: 'Экспорт .sqlite3' },
  'data.reset': { en: 'Reset the database…', ru: 'Сбросить базу…' },
  'data.import_label': { en: 'Import a .sqlite3 file', ru: 'Импорт файла .sqlite3' },
  'data.import': { en: 'Import', ru: 'Импортировать' },
  'data.exported': { en: 'Exported {bytes} bytes as {name}.', ru: 'Выгружено байт: {bytes}, файл {name}.' },
  'data.imported': { en: 'Imported {name}: the tables now come from that file (accounts: {accounts}, inbox rows: {inbox}; rebuilt in a fresh inbox-lab database).',
    ru: 'Файл {name} импортирован: таблицы теперь из него (счетов: {accounts}, строк inbox: {inbox}; записаны заново в свежую базу inbox-lab).' },
  'data.ignored': { en: 'Not copied, not part of inbox-lab’s schema: {objects}.',
    ru: 'Не скопировано, так как не входит в схему inbox-lab: {objects}.' },
  'data.no_file': { en: 'Choose a .sqlite3 file first.', ru: 'Сначала выберите файл .sqlite3.' },
  'data.confirm': { en: 'Delete the database and start again with account 1 at balance 0?',
    ru: 'Удалить базу и начать заново со счётом 1 и балансом 0?' },
  'data.reset_done': { en: 'The database was reset: account 1, balance 0, empty inbox.', ru: 'База сброшена: счёт 1, баланс 0, inbox пуст.' },
  'data.reset_failed': { en: 'Reset failed: {message}', ru: 'Сбросить не удалось: {message}' },
});

/** The name an export is saved under. */
const EXPORT_NAME = 'inbox-lab.sqlite3';

// The page's services (app.js): the database, the tables, the sender.
let services = null;
let importForm = null;
let note = null;
// What writes the note, kept to write it again in another language.
let noteText = null;

async function exportDatabase() {
  try {
    const bytes = await services.db.exportDatabase();
    downloadBytes(bytes, EXPORT_NAME);
    setNote(() => t('data.exported', { bytes: bytes.length, name: EXPORT_NAME }));
  } catch (error) {
    setNote(() => errorMessage(error));
  }
}

async function importDatabase() {
  clearErrors(importForm);
  setNote(null);
  const file = importForm.elements.file.files[0];
  if (file === undefined) {
    showFieldError(importForm, 'file', () => t('data.no_file'));
    return;
  }
  try {
    const report = await services.db.importDatabase(new Uint8Array(await file.arrayBuffer()));
    const counts = { name: file.name, accounts: String(report.accounts), inbox: String(report.inbox) };
    const objects = report.ignored.join(', ');
    setNote(() => t('data.imported', counts) + (objects === '' ? '' : ` ${t('data.ignored', { objects })}`));
    importForm.reset();
  } catch (error) {
    // Rust names the field "file" for a file it refuses; anything else
    // (a storage failure) goes in the note.
    if (!showError(importForm, error)) {
      setNote(() => errorMessage(error));
    }
  }
  await services.refreshTables();
}

/**
 * Resets the database (after the caller asked for confirmation), clears what
 * the page showed about the old one and redraws the tables. Resolves to null,
 * or to the error if the reset failed (also written under the tables).
 * The notice for a database that cannot be used (recovery.js) uses it too.
 */
async function resetDatabase() {
  let failure = null;
  try {
    await services.db.reset();
    services.panels.sender.clearShown();
    for (const form of document.querySelectorAll('form')) {
      clearErrors(form); // messages about data that is gone
    }
    services.panels.tables.setNote(() => t('data.reset_done'));
  } catch (error) {
    failure = error;
    services.panels.tables.setNote(() => t('data.reset_failed', { message: errorMessage(error) }));
  }
  await services.refreshTables();
  return failure;
}

/** Writes the note with `text()`; null clears it. */
function setNote(text) {
  noteText = text;
  note.textContent = text === null ? '' : text();
}

/** Returns `reset`, which the notice for a database that cannot be used offers too. */
export function mount(root, pageServices) {
  services = pageServices;
  importForm = document.querySelector('#import-form');
  note = document.querySelector('#data-note');
  document.querySelector('#export').addEventListener('click', () => whileBusy(exportDatabase));
  importForm.addEventListener('submit', (event) => {
    event.preventDefault();
    whileBusy(importDatabase);
  });
  document.querySelector('#reset').addEventListener('click', () => {
    // A native dialog: keyboard- and screen-reader-friendly with no code of ours.
    if (window.confirm(t('data.confirm'))) {
      whileBusy(resetDatabase);
    }
  });
  onLanguageChange(() => noteText && setNote(noteText));
  return { reset: resetDatabase };
}
