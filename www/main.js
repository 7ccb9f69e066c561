// The page: where the modules meet. It holds no rules of its own: everything
// it shows comes from the database worker through `inboxLab` (client.js),
// the same API the browser console gets.
//
// Reading order, one module per panel:
//   sender.js     the form, lost responses and retries (policy: retry.js)
//   timeline.js   every delivery and the statements it ran (timeline-model.js)
//   tables.js     accounts and inbox, changed rows on top (changes.js)
//   burst.js      many deliveries at once, with a progress bar
//   stepper.js    one delivery statement by statement; kill the worker
//   data.js       export, import, reset
//   sqlconsole.js the read-only SQL console
//   workshop.js   the article's scenario and exercises (exercises.js)
// and here: the status line, the language switch, and the console API.
//
// Everything a user typed or the database returned is rendered with
// textContent, never parsed as HTML (dom.js).

import { calling, inboxLab, onStatus } from './client.js';
import { onPageBusy, whileBusy } from './dom.js';
import { errorMessage } from './errors.js';
import { LANGUAGES, currentLanguage, onLanguageChange, register, setLanguage, t, translatePage } from './i18n.js';
import { burstDistinct, burstSame } from './burst.js';
import './data.js';
import './sqlconsole.js';
import './stepper.js';
import { policyOf, send, setFault, setHandler, setLoseResponse } from './sender.js';
import { refresh as refreshTables } from './tables.js';
import { timeline } from './timeline.js';
import './workshop.js';

register({
  en: {
    'page.title': 'inbox-lab: idempotent event processing with SQLite',
    'page.language': 'Language',
    'page.intro':
      'A sender delivers “credit account A with N units” events. Responses get lost and senders retry, so one event can arrive twice, or twenty times at once. The fix: a unique key (source, event_id) in an inbox table, and registering the event and crediting the balance in ONE SQLite transaction. Real SQLite (this project’s Rust, in WebAssembly) runs in a worker of your browser and keeps its file in OPFS, so it survives a reload.',
    'status.opening': 'Opening the database…',
    'status.restarting': 'The database worker stopped ({message}). Starting a new one…',
    'status.failed': 'Cannot use the database: {message}',
    'status.working': 'Working…',
    'status.opfs': 'Ready. Stored in OPFS: it survives a reload.',
    'status.other': 'Ready. Stored in {storage}: a reload starts from scratch.',
    'status.problem': 'The stored database cannot be used: see the notice below.',
  },
  ru: {
    'page.title': 'inbox-lab: идемпотентная обработка событий на SQLite',
    'page.language': 'Язык',
    'page.intro':
      'Отправитель доставляет события «зачислить на счёт A сумму N». Ответы теряются, отправители повторяют, поэтому одно событие может прийти дважды или двадцать раз одновременно. Решение: уникальный ключ (source, event_id) в таблице inbox, а регистрация события и зачисление на баланс — в ОДНОЙ транзакции SQLite. Настоящий SQLite (Rust этого проекта в WebAssembly) работает в воркере вашего браузера и хранит файл в OPFS, поэтому данные переживают перезагрузку.',
    'status.opening': 'Открываем базу данных…',
    'status.restarting': 'Воркер базы данных остановился ({message}). Запускаем новый…',
    'status.failed': 'Базой данных пользоваться нельзя: {message}',
    'status.working': 'Работаем…',
    'status.opfs': 'Готово. Хранится в OPFS: переживёт перезагрузку.',
    'status.other': 'Готово. Хранится в {storage}: после перезагрузки всё начнётся заново.',
    'status.problem': 'Сохранённой базой данных пользоваться нельзя: см. сообщение ниже.',
  },
});

// ---- Status line ------------------------------------------------------------

const statusLine = document.querySelector('#status');
let status = null;
// Whether a page action (a send, a burst, …) is still running. The worker
// says "busy" and "idle" around every request; during a burst that is
// thousands of flips a second. While the page itself waits, the line just
// says "Working…" — no flicker, no restyling the page on every answer, and
// no screen reader reading the line out thousands of times.
let pageBusy = false;

onStatus((next) => {
  // A new worker after a crash or a kill: whatever was open was rolled back,
  // so show the tables as they really are now.
  if (next.phase === 'ready' && status?.phase === 'restarting') {
    whileBusy(refreshTables);
  }
  status = next;
  showStatus();
});

onPageBusy((busy) => {
  pageBusy = busy;
  showStatus();
});

function showStatus() {
  const busy = status.busy || pageBusy;
  // "problem": the worker runs but the stored database cannot be used
  // (www/recovery.js shows why and the ways out).
  const ready = status.phase === 'ready' && status.problem ? 'problem' : status.phase;
  const phase = busy && ready === 'ready' ? 'working' : ready;
  const text = statusText(phase);
  // Written only when they change: every write makes the browser restyle.
  if (statusLine.dataset.phase !== phase) {
    statusLine.dataset.phase = phase;
  }
  if (statusLine.textContent !== text) {
    statusLine.textContent = text;
  }
}

function statusText(phase) {
  const { storage, error } = status;
  switch (phase) {
    case 'opening':
      return t('status.opening');
    case 'restarting':
      return t('status.restarting', { message: errorMessage(error) });
    case 'failed':
      return t('status.failed', { message: errorMessage(error) });
    case 'working':
      return t('status.working');
    case 'problem':
      return t('status.problem');
    default:
      return storage === 'opfs' ? t('status.opfs') : t('status.other', { storage });
  }
}

// ---- Language switch --------------------------------------------------------

// Two toggle buttons; aria-pressed tells which language is on.
const languageButtons = document.querySelectorAll('[data-lang]');
for (const button of languageButtons) {
  button.addEventListener('click', () => setLanguage(button.dataset.lang));
}

function showLanguage() {
  for (const button of languageButtons) {
    button.setAttribute('aria-pressed', String(button.dataset.lang === currentLanguage()));
  }
  showStatus();
}

onLanguageChange(showLanguage);
translatePage();
showLanguage();

// ---- Console API ------------------------------------------------------------

// `window.inboxLab` (client.js) talks to the database. The page adds what
// its buttons do, so everything on screen can also be done, and scripted,
// from the browser console:
//
//   inboxLab.send(event, {handler, fault, loseResponse, attempts, firstDelayMs})
//       one send with retries, like the Deliver button: resolves to
//       {attempts: [{attempt, at, answer, lost, decision}], balance: {account, before, after}}
//   inboxLab.burst(event, n, {handler})
//       n deliveries of one event at once: {counts, balance, …}
//   inboxLab.burstDistinct(event, n, {handler})
//       n different events (event_id-<run>-1…n), 200 in flight: {counts, ms, balance, …}
//   inboxLab.setFault(null | "after_insert" | "after_update")
//   inboxLab.setHandler("atomic" | "no_dedup" | …)
//   inboxLab.setLoseResponse(true | false)
//       set the sender form, so the next Deliver uses them
//   inboxLab.timeline()      every delivery the page has seen (timeline-model.js)
//   inboxLab.setLanguage("en" | "ru")
//
// client.js's object is frozen; this one is a frozen superset of it. Like
// client.js's calls, these answer every mistake with a rejected promise:
// options are read inside `calling`, which turns a getter that throws into
// a rejection.
window.inboxLab = Object.freeze({
  ...inboxLab,
  send: (event, options = {}) =>
    calling(() => {
      const { handler = 'atomic', fault = null, loseResponse = false, attempts, firstDelayMs } = options;
      return whileBusy(() => send(event, { handler, fault, loseResponse, policy: policyOf({ attempts, firstDelayMs }) }));
    }),
  burst: (event, n, options = {}) =>
    calling(() => {
      const { handler = 'atomic' } = options;
      return whileBusy(() => burstSame(event, n, handler));
    }),
  burstDistinct: (event, n, options = {}) =>
    calling(() => {
      const { handler = 'atomic' } = options;
      return whileBusy(() => burstDistinct(event, n, handler));
    }),
  setFault,
  setHandler,
  setLoseResponse,
  timeline: () => timeline.entries(),
  setLanguage: (lang) => {
    if (!LANGUAGES.includes(lang)) {
      throw new RangeError(`language must be one of ${LANGUAGES.join(', ')}`);
    }
    setLanguage(lang);
  },
});

// ---- Start ------------------------------------------------------------------

whileBusy(() =>
  inboxLab.ready.then(refreshTables, () => {
    // Already on the status line, from onStatus.
  }),
);
