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

import { button, disclose, el, fold } from '../../lib/dom.js';
import { outcomeWord } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { resultStrip } from '../../lib/strip.js';
import { stateOf } from '../../lib/timeline.js';
import { verdictElement } from '../../lib/verdict.js';
import * as rustSource from './source.js';

register({
  'step.title': { en: 'Step mode', ru: 'Пошаговый режим' },
  'step.intro': { en: 'Runs the sender’s event with the atomic handler one statement at a time. While the transaction is open it holds the write lock: other deliveries get 503 busy. The tables show what this open transaction sees, uncommitted.',
    ru: 'Выполняет событие отправителя атомарным обработчиком по одному оператору. Пока транзакция открыта, она держит блокировку записи: другие доставки получают 503 busy. Таблицы показывают то, что видит эта открытая транзакция, ещё не зафиксированное.' },
  'step.start': { en: 'Start step by step', ru: 'Начать по шагам' },
  'step.next': { en: 'Next statement', ru: 'Следующий оператор' },
  'step.throw': { en: 'Throw here', ru: 'Бросить исключение' },
  'step.kill': { en: 'Kill the worker', ru: 'Убить воркер' },
  'step.begin': { en: 'take the write lock before reading anything', ru: 'взять блокировку записи до всякого чтения' },
  'step.insert': { en: 'register the event: the unique key decides', ru: 'зарегистрировать событие: решает уникальный ключ' },
  'step.read_stored': { en: 'the key was there: compare the stored payload', ru: 'ключ уже был: сравнить сохранённое содержимое' },
  'step.credit': { en: 'credit the balance, guarded against the limit', ru: 'зачислить на баланс с проверкой предела' },
  'step.store_receipt': { en: 'store the first result, the receipt', ru: 'сохранить первый результат — квитанцию' },
  'step.commit': { en: 'make all of it durable at once', ru: 'зафиксировать всё сразу' },
  'step.crash': { en: 'the handler fails on purpose', ru: 'обработчик падает намеренно' },
  'step.rollback': { en: 'undo everything the transaction did', ru: 'отменить всё, что сделала транзакция' },
  'step.state.next': { en: 'next', ru: 'следующий' },
  'step.state.open': { en: 'ran, not committed yet', ru: 'выполнен, ещё не зафиксирован' },
  'step.state.rollback': { en: 'ran', ru: 'выполнен' },
  'step.state.ok': { en: 'ran, committed', ru: 'выполнен, зафиксирован' },
  'step.state.no_row': { en: 'ran: no row inserted, the key exists', ru: 'выполнен: строка не вставлена, ключ уже есть' },
  'step.state.undone': { en: 'ran, then undone', ru: 'выполнен, затем отменён' },
  'step.state.failed': { en: 'failed here', ru: 'ошибка здесь' },
  'step.state.crash': { en: 'the handler died here', ru: 'здесь обработчик упал' },
  'step.open': { en: 'Transaction open: {count} statement(s) ran, nothing is committed yet.',
    ru: 'Транзакция открыта: выполнено операторов — {count}, ничего ещё не зафиксировано.' },
  'step.committed': { en: 'Committed: {outcome}. The sender heard 200 and stops.',
    ru: 'Зафиксировано: {outcome}. Отправитель услышал 200 и останавливается.' },
  'step.failed': { en: 'It failed ({kind}) and rolled back. The sender retries by its policy.',
    ru: 'Ошибка ({kind}), транзакция откатилась. Отправитель повторит по своей политике.' },
  'step.killing': { en: 'Killing the worker while the transaction is open…', ru: 'Убиваем воркер посреди открытой транзакции…' },
  'step.killed_same': { en: 'The worker was killed with the transaction open. A new worker reopened the database from OPFS: the tables are exactly as before BEGIN — nothing of the killed transaction survived. The sender heard nothing and retries.',
    ru: 'Воркер убит при открытой транзакции. Новый воркер заново открыл базу из OPFS: таблицы точно такие же, как до BEGIN, — от убитой транзакции не осталось ничего. Отправитель ответа не услышал и повторяет.' },
  'step.killed_changed': { en: 'The worker was killed with the transaction open, and the reopened tables differ from those before BEGIN. That must never happen: please report it.',
    ru: 'Воркер убит при открытой транзакции, и таблицы после перезапуска отличаются от тех, что были до BEGIN. Так быть не должно: сообщите, пожалуйста, об ошибке.' },
  'step.refused': { en: 'Refused before any SQL ran: {kind}.', ru: 'Отклонено до всякого SQL: {kind}.' },
});

// The page's services (app.js): the database, the tables, the sender, the flow.
let services = null;
let panels = null;
let list = null;
let note = null;
// The answer of the send step mode started (lib/strip.js), next to its buttons.
let strip = null;
// Start, next, throw, kill: `#step-<name>`.
const buttons = {};

// The latest stepped delivery as Rust reported it: `steps` — every step that
// ran, `[{op, statements, rows, effect}]` (src/core/trace.rs) — and
// `upcoming`, the step the next press runs (`{step, statements}`, null once
// it ended). After a kill nobody is left to report: `killed` holds what the
// page saw instead (see `kill`).
let steps = [];
let upcoming = null;
let killed = null;
// While a delivery is being stepped: the tables from before BEGIN, how to
// hand attempt 1's result to the sender, and the sender's whole send, which
// the buttons wait for once attempt 1 is over.
let session = null;
// What the note says, kept to redraw it in another language.
let shownNote = null;
let shownVerdict = null;
let verdictBox = null;
// The last stepped delivery that ended, as a share link holds it
// (www/lib/share.js, kind "step"): {send, next, end}, or {killed: true} —
// a kill cannot be replayed on a scratch database, which lives in the
// killed worker's memory. Null before any ended.
let lastRun = null;

async function start() {
  const options = panels.sender.formOptions();
  if (options === null) {
    return;
  }
  const event = panels.sender.formEvent();
  const before = await services.readTables();
  let settle;
  const attempt = new Promise((resolve) => {
    settle = resolve;
  });
  steps = [];
  upcoming = null;
  killed = null;
  showVerdict(null);
  const shared = {
    event,
    handler: 'atomic',
    fault: options.fault,
    lose: options.loseResponse,
    attempts: options.policy.attempts,
    delay: options.policy.firstDelayMs,
  };
  session = { before, settle, sending: null, shared, presses: 0 };
  setNote(null);
  draw();
  // Step mode runs the atomic handler (Rust's step API is the article's
  // transaction), and so do the sender's retries after it.
  session.sending = panels.sender.send(event, { ...options, handler: 'atomic', firstAttempt: () => attempt, strip });
  try {
    const answer = await services.db.step.start(event, { fault: options.fault ?? undefined });
    ({ steps, next: upcoming } = answer);
    enable(true);
    draw();
  } catch (error) {
    // Invalid input: Rust refused it before any SQL ran.
    setNote('step.refused', { kind: outcomeWord(error.kind) });
    if (error.kind === 'invalid_input') {
      panels.sender.showError(error);
    }
    await finish({ answer: error, steps: error.steps ?? [] });
  }
}

async function next() {
  session.presses += 1;
  try {
    const answer = await services.db.step.next();
    ({ steps, next: upcoming } = answer);
    if (answer.outcome) {
      setNote('step.committed', { outcome: outcomeWord(answer.outcome.outcome) });
      // The verdict comes with the step that finished the delivery.
      await finish({ answer: { ...answer.outcome, verdict: answer.verdict }, steps }, 'commit');
      return;
    }
    setNote('step.open', { count: steps.length });
    panels.tables.showUncommitted(true);
    draw();
    await services.refreshTables();
  } catch (error) {
    await ended(error, 'commit');
  }
}

async function throwHere() {
  try {
    await services.db.step.throw();
  } catch (error) {
    await ended(error, 'throw');
  }
}

// The delivery ended in an error: Rust's steps come with it (a fault fires
// just after its statement ran; "throw" where the delivery stood).
async function ended(error, end) {
  steps = error.steps ?? steps;
  upcoming = null;
  setNote('step.failed', { kind: outcomeWord(error.kind) });
  await finish({ answer: error, steps }, end);
}

async function kill() {
  setNote('step.killing');
  // The worker dies with the transaction open: no ROLLBACK runs, nobody
  // reports. Whether anything survived is checked below, after the restart.
  killed = { at: upcoming, state: 'crash' };
  upcoming = null;
  draw();
  await services.db.killWorker();
  const after = await services.readTables();
  const same = JSON.stringify(after) === JSON.stringify(session.before);
  setNote(same ? 'step.killed_same' : 'step.killed_changed');
  // What ran is undone only if the reopened tables say so.
  killed.ran = same ? 'undone' : 'open';
  draw();
  const ran = steps.map((step) => ({ ...step, state: killed.ran }));
  // No answer reached the sender: it will retry.
  await finish({ answer: null, steps: [...ran, { op: 'kill', statements: [], rows: 0, state: 'crash' }] }, 'kill');
}

/**
 * Hands attempt 1's result to the sender and waits for the rest of its send.
 * `end` is how the stepped delivery ended: "commit" (it ran to its end, or
 * failed on its own: a fault, a refusal), "throw" or "kill".
 */
async function finish(result, end = 'commit') {
  const { settle, sending, shared, presses } = session;
  lastRun = end === 'kill' ? { killed: true } : { send: shared, next: presses, end };
  showVerdict(result.answer?.verdict ?? null);
  enable(false);
  panels.tables.showUncommitted(false);
  draw();
  settle(result);
  await sending;
  session = null;
}

/** Start while no delivery is open; the other three while one is. */
function enable(open) {
  for (const [name, node] of Object.entries(buttons)) {
    node.disabled = name === 'start' ? open : !open;
  }
}

// Rust's verdict on the stepped delivery, once it has ended (none after a
// kill: nobody was left to judge it — the sender's retry is judged).
function showVerdict(verdict) {
  shownVerdict = verdict;
  verdictBox.replaceChildren(...(verdict ? [verdictElement(verdict)] : []));
}

function setNote(key, params = {}) {
  shownNote = key === null ? null : { key, params };
  note.hidden = key === null;
  note.textContent = key === null ? '' : t(key, params);
}

function draw() {
  const stateNow = (step) => killed?.ran ?? stateOf(step);
  const ran = steps.map((step) => ({ step: step.op, statements: step.statements, state: stateNow(step) }));
  const ahead = upcoming === null ? [] : [{ ...upcoming, state: 'next' }];
  const died = killed?.at ? [{ ...killed.at, state: killed.state }] : [];
  // The Rust of the step that runs next, marked in src/core/apply.rs.
  rustSource.mark(upcoming?.step ?? null);
  // The picture of the flow lights up with each statement that ran — while
  // a stepped delivery runs: after it, the picture is the last delivery's.
  if (session !== null) {
    panels.flow.show([
      ...steps.map((step) => ({ ...step, state: stateNow(step) })),
      ...(killed?.at ? [{ op: 'kill', state: killed.state }] : []),
    ]);
  }
  list.replaceChildren(
    ...[...ran, ...ahead, ...died].map(({ step, statements, state }) => {
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

/**
 * Replays a shared stepped delivery through step mode's own code: the form
 * set to `send`, "Start step by step", `next` presses of "Next statement"
 * (fewer if it ends sooner), then "Throw here" if `end` is "throw" and the
 * transaction is still open, or "Next statement" until it ends. Resolves
 * once the sender's whole send is over.
 */
async function replayStep({ send, next: presses, end }) {
  disclose(buttons.start);
  panels.sender.setForm(send);
  await start();
  for (let n = 0; n < presses && session !== null; n += 1) {
    await next();
  }
  if (end === 'throw' && session !== null) {
    await throwHere();
  }
  // A delivery runs a handful of statements; the bound only stops a worker gone wrong.
  for (let n = 0; n < 20 && session !== null; n += 1) {
    await next();
  }
}

/** Builds step mode in `root` (#stepper). Returns `sharedStep` and `replayStep`, for share links. */
export function mount(root, pageServices) {
  services = pageServices;
  panels = services.panels;
  for (const [name, action, className] of [
    ['start', start, ''],
    ['next', next, 'secondary'],
    ['throw', throwHere, 'danger'],
    ['kill', kill, 'danger'],
  ]) {
    buttons[name] = button(`step.${name}`, `step-${name}`, action, className);
    buttons[name].disabled = name !== 'start';
  }
  list = el('ol', { className: 'step-list', attrs: { id: 'step-list' } });
  note = el('p', { className: 'summary', attrs: { id: 'step-note', role: 'status', hidden: '' } });
  verdictBox = el('div', { className: 'step-verdict', attrs: { 'aria-live': 'polite' } });
  // Behind a disclosure, so the Deliver section stays short on a phone.
  root.append(
    fold(
      'step-fold',
      el('h2', { i18n: 'step.title', attrs: { id: 'step-title' } }),
      el('p', { className: 'note', i18n: 'step.intro' }),
      el('div', { className: 'actions' }, ...Object.values(buttons)),
      list,
      note,
      verdictBox,
    ),
  );
  rustSource.mount(verdictBox);
  // The answer of the whole send (the stepped attempt and any retry) next to the buttons.
  strip = resultStrip();
  buttons.kill.after(strip.element);
  onLanguageChange(() => {
    draw();
    if (shownNote !== null) {
      setNote(shownNote.key, shownNote.params);
    }
    showVerdict(shownVerdict);
  });
  return { sharedStep: () => lastRun, replayStep };
}
