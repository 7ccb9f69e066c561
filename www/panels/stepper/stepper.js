// Step mode: one delivery of the sender's event, one statement at a time,
// with the SQL of the next statement highlighted — and three ways to end it:
//
//   Next statement   run it (the last one is COMMIT)
//   Throw here       the handler throws: Rust rolls the transaction back
//   Kill the worker  Worker.terminate() while the transaction is open: no
//                    ROLLBACK runs at all. A new worker reopens the database
//                    from OPFS, and the page compares it with the tables from
//                    before BEGIN: nothing of the killed transaction survived.
//
// The stepped delivery is attempt 1 of an ordinary send (sender.js), so
// whatever ends it, the sender reacts as it always does: a 200 stops it; a
// crash, a throw or a kill (no answer at all) makes it retry — and the retry
// applies the event exactly once.

import { inboxLab } from '../../db/client.js';
import { clearErrors, el, showError, whileBusy } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { formEvent, formOptions, send } from '../sender/sender.js';
import { refresh as refreshTables, showUncommitted } from '../tables/tables.js';

register({
  en: {
    'step.title': 'Step mode',
    'step.intro':
      'Runs the sender’s event with the atomic handler one statement at a time. While the transaction is open it holds the write lock: other deliveries get 503 busy. The tables show what this open transaction sees, uncommitted.',
    'step.start': 'Start step by step',
    'step.next': 'Next statement',
    'step.throw': 'Throw here',
    'step.kill': 'Kill the worker',
    'step.begin': 'take the write lock before reading anything',
    'step.insert': 'register the event: the unique key decides',
    'step.read_stored': 'the key was there: compare the stored payload',
    'step.credit': 'credit the balance, guarded against the limit',
    'step.store_receipt': 'store the first result, the receipt',
    'step.commit': 'make all of it durable at once',
    'step.state.next': 'next',
    'step.state.ok': 'ran',
    'step.state.no_row': 'ran: no row inserted, the key exists',
    'step.state.undone': 'ran, then undone',
    'step.state.failed': 'failed here',
    'step.state.crash': 'the handler died here',
    'step.open': 'Transaction open: {count} statement(s) ran, nothing is committed yet.',
    'step.committed': 'Committed: {outcome}. The sender heard 200 and stops.',
    'step.failed': 'It failed ({kind}) and rolled back. The sender retries by its policy.',
    'step.killing': 'Killing the worker while the transaction is open…',
    'step.killed_same':
      'The worker was killed with the transaction open. A new worker reopened the database from OPFS: the tables are exactly as before BEGIN — nothing of the killed transaction survived. The sender heard nothing and retries.',
    'step.killed_changed':
      'The worker was killed with the transaction open, and the reopened tables differ from those before BEGIN. That must never happen: please report it.',
    'step.refused': 'Refused before any SQL ran: {kind}.',
  },
  ru: {
    'step.title': 'Пошаговый режим',
    'step.intro':
      'Выполняет событие отправителя атомарным обработчиком по одному запросу. Пока транзакция открыта, она держит блокировку записи: другие доставки получают 503 busy. Таблицы показывают то, что видит эта открытая транзакция, ещё не зафиксированное.',
    'step.start': 'Начать по шагам',
    'step.next': 'Следующий запрос',
    'step.throw': 'Бросить исключение',
    'step.kill': 'Убить воркер',
    'step.begin': 'взять блокировку записи до всякого чтения',
    'step.insert': 'зарегистрировать событие: решает уникальный ключ',
    'step.read_stored': 'ключ уже был: сравнить сохранённое содержимое',
    'step.credit': 'зачислить на баланс с проверкой предела',
    'step.store_receipt': 'сохранить первый результат — квитанцию',
    'step.commit': 'зафиксировать всё сразу',
    'step.state.next': 'следующий',
    'step.state.ok': 'выполнен',
    'step.state.no_row': 'выполнен: строка не вставлена, ключ уже есть',
    'step.state.undone': 'выполнен, затем отменён',
    'step.state.failed': 'ошибка здесь',
    'step.state.crash': 'здесь обработчик упал',
    'step.open': 'Транзакция открыта: выполнено запросов — {count}, ничего ещё не зафиксировано.',
    'step.committed': 'Зафиксировано: {outcome}. Отправитель услышал 200 и останавливается.',
    'step.failed': 'Ошибка ({kind}), транзакция откатилась. Отправитель повторит по своей политике.',
    'step.killing': 'Убиваем воркер посреди открытой транзакции…',
    'step.killed_same':
      'Воркер убит при открытой транзакции. Новый воркер заново открыл базу из OPFS: таблицы точно такие же, как до BEGIN, — от убитой транзакции не осталось ничего. Отправитель ответа не услышал и повторяет.',
    'step.killed_changed':
      'Воркер убит при открытой транзакции, и таблицы после перезапуска отличаются от тех, что были до BEGIN. Так быть не должно: сообщите, пожалуйста, об ошибке.',
    'step.refused': 'Отклонено до всякого SQL: {kind}.',
  },
});

let form = null;
let list = null;
let note = null;
// Start, next, throw, kill: `#step-<name>`.
const buttons = {};

// The steps of the latest stepped delivery, `[{step, statements, state}]`;
// while it runs, the last one (state "next") is the one about to run.
let steps = [];
// While a delivery is being stepped: the tables from before BEGIN, how to
// hand attempt 1's result to the sender, and the sender's whole send, which
// the buttons wait for once attempt 1 is over.
let session = null;
// What the note says, kept to redraw it in another language.
let shownNote = null;

async function start() {
  clearErrors(form);
  const options = formOptions();
  if (options === null) {
    return;
  }
  const event = formEvent();
  const before = await refreshTables();
  let settle;
  const attempt = new Promise((resolve) => {
    settle = resolve;
  });
  steps = [];
  session = { before, settle, sending: null };
  setNote(null);
  draw();
  // Step mode runs the atomic handler (Rust's step API is the article's
  // transaction), and so do the sender's retries after it.
  session.sending = send(event, { ...options, handler: 'atomic', firstAttempt: () => attempt });
  try {
    const { next: first } = await inboxLab.step.start(event, { fault: options.fault ?? undefined });
    steps.push({ ...first, state: 'next' });
    enable(true);
    draw();
  } catch (error) {
    // Invalid input: Rust refused it before any SQL ran.
    setNote('step.refused', { kind: error.kind });
    if (error.kind === 'invalid_input') {
      showError(form, error);
    }
    await finish({ answer: error, statements: [] });
  }
}

async function next() {
  const current = steps.at(-1);
  try {
    const { next: following, outcome } = await inboxLab.step.next();
    // An INSERT followed by the stored-payload read inserted nothing.
    current.state = following?.step === 'read_stored' && current.step === 'insert' ? 'no_row' : 'ok';
    if (outcome) {
      setNote('step.committed', { outcome: outcome.outcome });
      await finish({ answer: outcome, statements: steps.map(({ step, state }) => ({ op: step, state })) });
      return;
    }
    steps.push({ ...following, state: 'next' });
    setNote('step.open', { count: steps.length - 1 });
    showUncommitted(true);
    draw();
    await refreshTables();
  } catch (error) {
    // A fault point fires just after its statement ran; any other error is the statement's own.
    const crashed = error.kind === 'simulated_crash';
    current.state = crashed ? 'crash' : 'failed';
    setNote('step.failed', { kind: error.kind });
    await finish({ answer: error, statements: rolledBack(crashed ? [current.step, 'crash'] : [current.step]) });
  }
}

async function throwHere() {
  try {
    await inboxLab.step.throw();
  } catch (error) {
    steps.at(-1).state = 'crash';
    setNote('step.failed', { kind: error.kind });
    await finish({ answer: error, statements: rolledBack(['crash']) });
  }
}

async function kill() {
  setNote('step.killing');
  // Nothing that ran will survive: checked below, after the restart.
  steps.at(-1).state = 'crash';
  const ran = undoRan();
  draw();
  await inboxLab.killWorker();
  const after = await refreshTables();
  const same = JSON.stringify(after) === JSON.stringify(session.before);
  setNote(same ? 'step.killed_same' : 'step.killed_changed');
  // No answer reached the sender: it will retry.
  await finish({ answer: null, statements: [...ran, { op: 'kill', state: 'crash' }] });
}

// Marks the steps that ran as undone (an INSERT that inserted nothing stays
// "no_row") and returns them as timeline statements.
function undoRan() {
  const ran = steps.slice(0, -1);
  for (const s of ran) {
    s.state = s.state === 'no_row' ? 'no_row' : 'undone';
  }
  return ran.map(({ step, state }) => ({ op: step, state }));
}

// The statements of a rolled-back delivery: what ran, undone; then `last` —
// the failing statement, or the statement and the crash just after it, or
// only the crash; then ROLLBACK.
function rolledBack(last) {
  const ran = undoRan();
  const failing = last.map((op, i) =>
    op === 'crash' ? { op, state: 'crash' } : { op, state: i === last.length - 1 ? 'failed' : 'undone' },
  );
  return [...ran, ...failing, { op: 'rollback', state: 'rollback' }];
}

/** Hands attempt 1's result to the sender and waits for the rest of its send. */
async function finish(result) {
  const { settle, sending } = session;
  enable(false);
  showUncommitted(false);
  draw();
  settle(result);
  await sending;
  session = null;
}

function enable(open) {
  buttons.start.disabled = open;
  buttons.next.disabled = !open;
  buttons.throw.disabled = !open;
  buttons.kill.disabled = !open;
}

function setNote(key, params = {}) {
  shownNote = key === null ? null : { key, params };
  note.hidden = key === null;
  note.textContent = key === null ? '' : t(key, params);
}

function draw() {
  list.replaceChildren(
    ...steps.map(({ step, statements, state }) => {
      const item = el(
        'li',
        { className: `step step-${state}`, data: { step, state } },
        el('p', { className: 'step-head' }, el('strong', { text: step }), ` — ${t(`step.${step}`)} `, el('span', { className: 'step-state', text: `(${t(`step.state.${state}`)})` })),
        ...statements.map((sql) => el('pre', {}, el('code', { text: sql }))),
      );
      if (state === 'next') {
        item.setAttribute('aria-current', 'step');
      }
      return item;
    }),
  );
}

export function mount() {
  form = document.querySelector('#deliver-form');
  list = document.querySelector('#step-list');
  note = document.querySelector('#step-note');
  for (const name of ['start', 'next', 'throw', 'kill']) {
    buttons[name] = document.querySelector(`#step-${name}`);
  }
  buttons.start.addEventListener('click', () => whileBusy(start));
  buttons.next.addEventListener('click', () => whileBusy(next));
  buttons.throw.addEventListener('click', () => whileBusy(throwHere));
  buttons.kill.addEventListener('click', () => whileBusy(kill));
  onLanguageChange(() => {
    draw();
    if (shownNote !== null) {
      setNote(shownNote.key, shownNote.params);
    }
  });
}
