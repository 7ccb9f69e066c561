// The header: the status line and the language switch.
//
// The status line says in plain words what the database worker is doing
// (client.js's `onStatus`) — opening, ready and whether the data survives a
// reload, working, restarting after a crash, failed — and "Working…" while
// the page itself waits for an action (dom.js's `whileBusy`). How it is
// stored (the journal, the durability) waits behind a disclosure
// beside it. The language switch is two toggle buttons.

import { onStatus } from '../../db/client.js';
import { onPageBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { currentLanguage, onLanguageChange, register, setLanguage, t } from '../../lib/i18n.js';

register({
  'page.title': { en: 'inbox-lab: idempotent event processing with SQLite', ru: 'inbox-lab: идемпотентная обработка событий на SQLite' },
  'page.language': { en: 'Language', ru: 'Язык' },
  'page.intro': { en: 'A sender delivers “credit account A with N units” events. Responses get lost and senders retry, so one event can arrive twice, or twenty times at once. The fix: a unique key (source, event_id) in an inbox table, and registering the event and crediting the balance in ONE SQLite transaction. Real SQLite (this project’s Rust, in WebAssembly) runs in a worker of your browser and, where the browser offers OPFS, keeps its file there, so it survives a reload (the status at the top says where this page keeps it).',
    ru: 'Отправитель доставляет события «зачислить на счёт A сумму N». Ответы теряются, отправители повторяют, поэтому одно событие может прийти дважды или двадцать раз одновременно. Решение: уникальный ключ (source, event_id) в таблице inbox, а регистрация события и зачисление на баланс — в ОДНОЙ транзакции SQLite. Настоящий SQLite (Rust этого проекта в WebAssembly) работает в воркере вашего браузера и, если браузер даёт OPFS, хранит файл там, поэтому данные переживают перезагрузку (где они хранятся на этой странице, сказано вверху).' },
  'status.opening': { en: 'Opening the database…', ru: 'Открываем базу данных…' },
  'status.restarting': { en: 'The database worker stopped ({message}). Starting a new one…',
    ru: 'Воркер базы данных остановился ({message}). Запускаем новый…' },
  'status.failed': { en: 'Cannot use the database: {message}', ru: 'Базой данных пользоваться нельзя: {message}' },
  'status.working': { en: 'Working…', ru: 'Работаем…' },
  'status.opfs': { en: 'Saved in your browser; survives a reload.', ru: 'Сохранено в вашем браузере; переживёт перезагрузку.' },
  'status.other': { en: 'Kept in {storage}; a reload starts from scratch.', ru: 'Хранится в {storage}; после перезагрузки всё начнётся заново.' },
  'status.memory': { en: 'Kept in memory only; a reload starts from scratch.',
    ru: 'Хранится только в памяти; после перезагрузки всё начнётся заново.' },
  'status.problem': { en: 'The stored database cannot be used: see the notice below.',
    ru: 'Сохранённой базой данных пользоваться нельзя: см. сообщение ниже.' },
  'status.details': { en: 'How it is stored', ru: 'Как хранится' },
  'status.stack': { en: 'Journal {journal}, synchronous {synchronous}.', ru: 'Журнал {journal}, synchronous {synchronous}.' },
  'status.coalesced': { en: 'Journal {journal}, synchronous {synchronous}, writes coalesced (proven by the crash lab).',
    ru: 'Журнал {journal}, synchronous {synchronous}, записи объединяются (проверено лабораторией сбоев).' },
  'status.why.wal': { en: 'WAL: one flush per commit, not three.', ru: 'WAL: один flush на коммит, а не три.' },
  'status.why.delete': { en: 'DELETE, as ?journal=delete asks: three flushes per commit, not one.',
    ru: 'DELETE, как просит ?journal=delete: три flush на коммит, а не один.' },
});

let statusLine = null;
let details = null; // the disclosure beside the line, and its text
let stackLine = null;
let status = null;
// Whether a page action (a send, a burst, …) is still running. The worker
// says "busy" and "idle" around every request; during a burst that is
// thousands of flips a second. While the page itself waits, the line just
// says "Working…" — no flicker, no restyling the page on every answer, and
// no screen reader reading the line out thousands of times.
let pageBusy = false;
let languageButtons = [];

export function mount() {
  statusLine = document.querySelector('#status');
  details = document.querySelector('#status-details');
  stackLine = document.querySelector('#status-stack');
  onStatus((next) => {
    status = next;
    showStatus();
  });
  onPageBusy((busy) => {
    pageBusy = busy;
    showStatus();
  });

  // Two toggle buttons; aria-pressed tells which language is on.
  languageButtons = document.querySelectorAll('[data-lang]');
  for (const button of languageButtons) {
    button.addEventListener('click', () => setLanguage(button.dataset.lang));
  }
  onLanguageChange(showLanguage);
  showLanguage();
}

function showStatus() {
  const busy = status.busy || pageBusy;
  // "problem": the worker runs but the stored database cannot be used
  // (../notices/recovery.js shows why and the ways out).
  const ready = status.phase === 'ready' && status.problem ? 'problem' : status.phase;
  const phase = busy && ready === 'ready' ? 'working' : ready;
  const text = statusText(phase);
  // Written only when they change: every write makes the browser restyle.
  // The details stay while the page works, so they do not flicker.
  const stack = ready === 'ready' ? stackText(status.stack) : '';
  if (statusLine.dataset.phase !== phase) {
    statusLine.dataset.phase = phase;
  }
  if (statusLine.textContent !== text) {
    statusLine.textContent = text;
  }
  if (stackLine.textContent !== stack) {
    stackLine.textContent = stack;
    details.hidden = stack === '';
  }
}

/** The status line's words. */
function statusText(phase) {
  const { storage, error } = status;
  if (phase !== 'ready') {
    // opening, working, problem; restarting and failed say why
    return t(`status.${phase}`, error ? { message: errorMessage(error) } : {});
  }
  const key = { opfs: 'status.opfs', memory: 'status.memory' }[storage];
  return key === undefined ? t('status.other', { storage }) : t(key);
}

// Behind the disclosure: the storage stack the worker reports (Rust reads it
// from SQLite): the journal mode, the durability, and whether writes go
// through coalescing; on OPFS also why this journal (WAL by default, DELETE
// when asked for).
function stackText(stack) {
  if (!stack) {
    return '';
  }
  const values = { journal: stack.journal_mode.toUpperCase(), synchronous: stack.synchronous.toUpperCase() };
  const text = t(stack.vfs === 'coalesce' ? 'status.coalesced' : 'status.stack', values);
  const why = { wal: 'status.why.wal', delete: 'status.why.delete' }[stack.journal_mode];
  return stack.vfs === 'memdb' || why === undefined ? text : `${text} ${t(why)}`;
}

function showLanguage() {
  for (const button of languageButtons) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === currentLanguage()));
  }
  showStatus();
}
