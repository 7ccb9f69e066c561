// When the stored database cannot be used: say what is wrong, offer the
// ways out.
//
// A database file can be damaged on disk, written by another program or a
// newer inbox-lab, or hold a value of the wrong type (an import by an older
// inbox-lab that adopted foreign files). Rust checks it before the page uses
// it (src/core/health.rs); if it fails, the worker still starts and says why
// (`status.problem`, www/db/client.js) instead of failing on every call and on
// every reload. This notice, at the top of the page, then shows
//
// * what is wrong, in the reader's language (the error's code → text, like
//   every other error: www/lib/errors.js), and the technical detail as Rust wrote
//   it (kind/code and its English message), for a bug report;
// * "Export as is": the stored file's bytes exactly as they are, downloaded
//   as a .sqlite3 file, so nothing is lost by what comes next;
// * "Keep what is sound…": after a confirmation, rebuild the database from the
//   rows that pass the import's checks (src/labs/tools/transfer.rs, salvage);
//   the notice then says what was kept and lists every row left out, each as
//   the error an import would have given for it, until it is closed;
// * "Reset…": after a confirmation, delete the file and start afresh (the
//   same reset as the data panel's, ../data/data.js). When it works the notice
//   goes away — in every tab: the owner tab's status reaches the others.
//
// While one of them runs, the note under the buttons says so (role=status)
// and the buttons refuse a second click (aria-disabled, so the focus stays
// where it is). Everything goes in through textContent.

import { inboxLab, onStatus } from '../../db/client.js';
import { button, downloadBytes, el, formatNumber, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'recovery.title': { en: 'The stored database cannot be used.', ru: 'Сохранённой базой данных пользоваться нельзя.' },
  'recovery.explain': { en: "The page started anyway, but nothing can be read or written until the database is repaired or reset. Export it as is to keep a copy of the file (for example to look at it with the sqlite3 tool); then keep what is sound (the rows that pass inbox-lab's checks; every row left out is listed) or reset it to start again with account 1 at balance 0.",
    ru: 'Страница всё равно запустилась, но читать и записывать ничего нельзя, пока базу не починить или не сбросить. Выгрузите её как есть, чтобы сохранить копию файла (например, чтобы посмотреть на неё утилитой sqlite3); затем сохраните исправное (строки, которые проходят проверки inbox-lab; каждая отброшенная строка будет названа) или сбросьте её, чтобы начать заново со счётом 1 и балансом 0.' },
  'recovery.detail': { en: 'Technical detail:', ru: 'Технические подробности:' },
  'recovery.export': { en: 'Export as is', ru: 'Выгрузить как есть' },
  'recovery.reset': { en: 'Reset…', ru: 'Сбросить…' },
  'recovery.salvage': { en: 'Keep what is sound…', ru: 'Сохранить исправное…' },
  'recovery.salvage_confirm': { en: "Rebuild the database from the rows that pass inbox-lab's checks and leave out the others? Every row left out is listed afterwards. Export it as is first if you want to keep every byte.",
    ru: 'Собрать базу заново из строк, которые проходят проверки inbox-lab, и отбросить остальные? Каждая отброшенная строка будет названа. Если хотите сохранить файл целиком, сначала выгрузите его как есть.' },
  'recovery.salvaging': { en: 'Reading the rows that are sound…', ru: 'Читаем исправные строки…' },
  'recovery.salvage_failed': { en: 'Nothing could be kept: {message}', ru: 'Сохранить ничего не удалось: {message}' },
  'recovery.salvaged_title': { en: 'The database was rebuilt from what was sound.', ru: 'База собрана заново из исправных строк.' },
  'recovery.salvaged': { en: 'Kept {accounts} accounts, {inbox} inbox rows, {outbox} outbox messages and {orders} orders. Rows left out: {dropped}.',
    ru: 'Сохранено: счетов — {accounts}, строк inbox — {inbox}, сообщений outbox — {outbox}, заказов — {orders}. Отброшено строк: {dropped}.' },
  'recovery.close': { en: 'Close', ru: 'Закрыть' },
  'recovery.confirm': { en: 'Delete the stored database, which cannot be used, and start again with account 1 at balance 0? Export it as is first if you want to keep it.',
    ru: 'Удалить сохранённую базу, которой нельзя пользоваться, и начать заново со счётом 1 и балансом 0? Если хотите её сохранить, сначала выгрузите её как есть.' },
  'recovery.exporting': { en: 'Reading the stored file…', ru: 'Читаем сохранённый файл…' },
  'recovery.exported': { en: 'Saved the stored file as it is: {bytes} bytes, as {name}.',
    ru: 'Сохранённый файл выгружен как есть: байт — {bytes}, файл {name}.' },
  'recovery.export_failed': { en: 'Export failed: {message}', ru: 'Выгрузить не удалось: {message}' },
  'recovery.resetting': { en: 'Resetting the database…', ru: 'Сбрасываем базу данных…' },
  'recovery.reset_failed': { en: 'Reset failed: {message}', ru: 'Сбросить не удалось: {message}' },
});

/** The name "export as is" saves under: not the data panel's, so neither overwrites the other. */
export const RAW_EXPORT_NAME = 'inbox-lab-as-is.sqlite3';

// The page's services (app.js): its Reset is the data panel's.
let services = null;
let notice = null;

const title = el('h2', { attrs: { id: 'db-problem-title' } });
const what = el('p', { className: 'db-problem-what' });
const detailCode = el('code');
const detailMessage = el('span');
const detail = el('p', { className: 'db-problem-detail' }, el('span', { i18n: 'recovery.detail' }), ' ', detailCode, ' ', detailMessage);
const explain = el('p', { i18n: 'recovery.explain' });
const exportButton = button('recovery.export', 'db-problem-export', null, '');
const resetButton = button('recovery.reset', 'db-problem-reset', null, '');
const salvageButton = button('recovery.salvage', 'db-problem-salvage', null, '');
const closeButton = button('recovery.close', 'db-problem-close', null, '');
const droppedList = el('ul', { attrs: { id: 'db-problem-dropped' } });
const note = el('p', { className: 'db-problem-note', attrs: { id: 'db-problem-note', role: 'status' } });

// The problem shown (an error object), or null; what writes the note.
let problem = null;
// What "keep what is sound" answered, shown once the problem is gone, or null.
let salvaged = null;
let noteText = null;
let working = false;

export function mount(root, pageServices) {
  services = pageServices;
  notice = root;
  if (notice === null) {
    return;
  }
  const actions = el('div', { className: 'db-problem-actions' }, exportButton, salvageButton, resetButton, closeButton);
  notice.append(title, what, detail, explain, actions, note, droppedList);
  // Salvage and reset ask first, in a native dialog (as the data panel's
  // reset): keyboard- and screen-reader-friendly with no code of ours.
  const ways = [[exportButton, exportAsIs, null], [salvageButton, salvage, 'recovery.salvage_confirm'], [resetButton, reset, 'recovery.confirm']];
  for (const [way, action, confirmKey] of ways) {
    way.addEventListener('click', () => {
      if (!working && (confirmKey === null || window.confirm(t(confirmKey)))) {
        whileBusy(action);
      }
    });
  }
  closeButton.addEventListener('click', () => {
    salvaged = null;
    noteText = null;
    render();
  });
  onStatus((status) => {
    const next = status.problem ?? null;
    if (JSON.stringify(next) !== JSON.stringify(problem)) {
      problem = next;
      if (next !== null) {
        salvaged = null; // an account of an earlier salvage
      }
      if (!working) {
        noteText = null; // a note about the previous problem, or none
      }
      render();
    }
  });
  onLanguageChange(render);
}

async function exportAsIs() {
  setWorking(true, () => t('recovery.exporting'));
  try {
    const bytes = await inboxLab.exportRaw();
    downloadBytes(bytes, RAW_EXPORT_NAME);
    setWorking(false, () => t('recovery.exported', { bytes: formatNumber(bytes.length), name: RAW_EXPORT_NAME }));
  } catch (error) {
    setWorking(false, () => t('recovery.export_failed', { message: errorMessage(error) }));
  }
}

async function salvage() {
  setWorking(true, () => t('recovery.salvaging'));
  try {
    salvaged = await inboxLab.salvage();
    const counts = { ...salvaged.kept, dropped: salvaged.dropped.length };
    setWorking(false, () => t('recovery.salvaged', counts));
  } catch (error) {
    setWorking(false, () => t('recovery.salvage_failed', { message: errorMessage(error) }));
  }
}

async function reset() {
  setWorking(true, () => t('recovery.resetting'));
  const failure = await services.panels.data.reset();
  // On success the notice is already hidden: the worker announced that the
  // problem is gone before it answered.
  setWorking(false, failure === null ? null : () => t('recovery.reset_failed', { message: errorMessage(failure) }));
}

function setWorking(on, text) {
  working = on;
  for (const button of [exportButton, salvageButton, resetButton]) {
    button.setAttribute('aria-disabled', String(on));
  }
  notice.setAttribute('aria-busy', String(on));
  noteText = text;
  render();
}

function render() {
  const open = problem !== null;
  notice.hidden = !open && salvaged === null;
  notice.dataset.code = problem?.code ?? '';
  for (const [part, shown] of [[what, open], [detail, open], [explain, open], [exportButton, open], [salvageButton, open], [resetButton, open], [closeButton, !open]]) {
    part.hidden = !shown;
  }
  title.textContent = t(open ? 'recovery.title' : 'recovery.salvaged_title');
  droppedList.replaceChildren(...(open ? [] : (salvaged?.dropped ?? [])).map((row) => el('li', {}, errorMessage(row))));
  what.textContent = problem === null ? '' : errorMessage(problem);
  detailCode.textContent = problem === null ? '' : `${problem.kind}/${problem.code}`;
  detailMessage.textContent = problem?.message ?? '';
  note.textContent = noteText === null ? '' : noteText();
}
