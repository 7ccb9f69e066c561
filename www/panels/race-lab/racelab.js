// The race lab: two (or three) deliveries of the same event, each on its own
// real SQLite connection, advanced one statement at a time by the reader.
//
// The connections live in the database worker (Rust `RaceLab`, over SQLite's
// `memdb` VFS, which gives real locks between connections in one worker);
// this module only calls `inboxLab.race` (client.js; the answers' shapes are
// in www/db/worker.js) and draws the answers (and `inboxLab.judge.handlers()`
// once: a build with the workshop's handler in Rust lists it as "workshop").
//
// What to watch: with `atomic`, the second BEGIN IMMEDIATE has to wait for the
// write lock, so the deliveries cannot interleave inside the transaction, and
// every schedule ends correct. With the mistakes, some schedule ends in a
// double credit, a lost credit or a wrong answer — "Explore every
// interleaving" finds it, and "Replay" walks through it step by step.
//
// Keyboard: the buttons are ordinary buttons; inside the panel, the keys A, B
// and C (whatever the keyboard layout) advance delivery A, B or C.
//
// Everything the worker returns is rendered with textContent (dom.js).

import { inboxLab } from '../../db/client.js';
import { button, dataTable, el, exclusive, replaceKeepingFocus, whileBusy } from '../../lib/dom.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';
import { HANDLERS, LETTERS } from '../../lib/share.js';

register({
  'racelab.title': { en: 'Race lab: deliveries interleaved one statement at a time', ru: 'Гонки: доставки вперемешку, по одному оператору' },
  'racelab.intro': { en: 'The same event arrives twice at once. Each delivery runs on its own real SQLite connection to one shared database; you decide which one runs its next statement. A statement that needs the write lock while the other connection holds it has to wait — press its button again later to retry it.',
    ru: 'Одно и то же событие приходит дважды одновременно. Каждая доставка работает через своё настоящее соединение SQLite с общей базой; вы решаете, чей следующий оператор выполнить. Оператор, которому нужна блокировка записи, пока её держит другое соединение, ждёт — нажмите его кнопку ещё раз позже, и он повторится.' },
  'racelab.event': { en: 'Every delivery carries the same event: provider-a / evt-1, credit account 1 with 500.',
    ru: 'Все доставки несут одно событие: provider-a / evt-1, зачислить 500 на счёт 1.' },
  'racelab.handler': { en: 'Handler', ru: 'Обработчик' },
  'racelab.deliveries': { en: 'Deliveries', ru: 'Доставки' },
  'racelab.deliveries.2': { en: 'two (A, B)', ru: 'две (A, B)' },
  'racelab.deliveries.3': { en: 'three (A, B, C)', ru: 'три (A, B, C)' },
  'racelab.start': { en: 'Start the race', ru: 'Начать гонку' },
  'racelab.restart': { en: 'Start again', ru: 'Начать заново' },
  'racelab.explore': { en: 'Explore every interleaving', ru: 'Перебрать все порядки' },
  'racelab.explore.locked': { en: 'Exploring every interleaving unlocks once you have made a race go wrong yourself:',
    ru: 'Перебор всех порядков откроется, когда вы сами заставите гонку ошибиться:' },
  'racelab.explore.level': { en: 'level 5', ru: 'уровень 5' },
  'racelab.stopped': { en: 'Stopped here: the explorer took over the connections. Start again to race anew.',
    ru: 'Остановлено здесь: соединения заняты перебором. Начните заново, чтобы устроить новую гонку.' },
  'racelab.exploring': { en: 'Exploring every interleaving on real connections…', ru: 'Перебираю все порядки на настоящих соединениях…' },
  'racelab.h.atomic': { en: 'atomic — the article’s handler', ru: 'atomic — обработчик из статьи' },
  'racelab.h.no_dedup': { en: 'no_dedup — no deduplication', ru: 'no_dedup — без дедупликации' },
  'racelab.h.check_then_act': { en: 'check_then_act — SELECT, then act', ru: 'check_then_act — сначала SELECT, потом действие' },
  'racelab.h.two_transactions': { en: 'two_transactions — register, then credit', ru: 'two_transactions — регистрация, потом зачисление' },
  'racelab.h.insert_or_ignore': { en: 'insert_or_ignore — INSERT OR IGNORE', ru: 'insert_or_ignore — INSERT OR IGNORE' },
  'racelab.h.insert_or_replace': { en: 'insert_or_replace — INSERT OR REPLACE', ru: 'insert_or_replace — INSERT OR REPLACE' },
  'racelab.h.workshop': { en: 'workshop — yours, in Rust (workshop/handler.rs)', ru: 'workshop — ваш, на Rust (workshop/handler.rs)' },
  'racelab.why.workshop': { en: 'The workshop’s handler, written in Rust in workshop/handler.rs and compiled into this build (cargo xtask workshop). Race it and see whether it holds.',
    ru: 'Обработчик воркшопа: написан на Rust в workshop/handler.rs и собран в эту сборку (cargo xtask workshop). Устройте гонку и посмотрите, выдержит ли он.' },
  'racelab.why.atomic': { en: 'Correct: the unique key decides who is first, and the INSERT, the credit and the receipt commit in one transaction; BEGIN IMMEDIATE takes the write lock before anything is read.',
    ru: 'Правильно: уникальный ключ решает, кто первый, а INSERT, зачисление и квитанция фиксируются одной транзакцией; BEGIN IMMEDIATE берёт блокировку записи раньше, чем что-либо прочитано.' },
  'racelab.why.no_dedup': { en: 'Mistake: no deduplication at all — every delivery credits again.',
    ru: 'Ошибка: дедупликации нет вовсе — каждая доставка зачисляет деньги заново.' },
  'racelab.why.check_then_act': { en: 'Mistake: SELECT, then act — each statement commits on its own, so both deliveries can see “not there yet”, and both credit.',
    ru: 'Ошибка: «сначала SELECT, потом действие» — каждый оператор фиксируется отдельно, поэтому обе доставки могут увидеть «ещё нет» и обе зачислить.' },
  'racelab.why.two_transactions': { en: 'Mistake: registers the event in one transaction and credits in another — in between, a repeat answers “duplicate” before the money is there (and a crash there loses the credit).',
    ru: 'Ошибка: событие регистрируется в одной транзакции, а зачисляется в другой — в промежутке повтор отвечает «дубликат», хотя денег ещё нет (а сбой в этот момент теряет зачисление).' },
  'racelab.why.insert_or_ignore': { en: 'Mistake: INSERT OR IGNORE takes “no row inserted” for “seen before” and never compares payloads — a redelivery of a known key with another amount comes back as “duplicate” instead of “payload conflict”. Identical concurrent deliveries, as raced here, survive: see the demonstration below.',
    ru: 'Ошибка: INSERT OR IGNORE принимает «строка не вставлена» за «уже было» и никогда не сравнивает содержимое — повторная доставка известного ключа с другой суммой возвращается как «дубликат» вместо «конфликта данных». Одинаковые одновременные доставки, как в этой гонке, он переживает: см. демонстрацию ниже.' },
  'racelab.why.insert_or_replace': { en: 'Mistake: INSERT OR REPLACE deletes the first record and writes the new one, so every repeat is credited again.',
    ru: 'Ошибка: INSERT OR REPLACE удаляет первую запись и пишет новую, поэтому каждый повтор зачисляется снова.' },
  'racelab.delivery': { en: 'Delivery {letter}', ru: 'Доставка {letter}' },
  'racelab.connection': { en: 'its own connection', ru: 'своё соединение' },
  'racelab.next': { en: 'Next statement', ru: 'Следующий оператор' },
  'racelab.not_started': { en: 'Press “Start the race”.', ru: 'Нажмите «Начать гонку».' },
  'racelab.finished': { en: 'Finished: nothing more to run.', ru: 'Готово: выполнять больше нечего.' },
  'racelab.advance': { en: 'Advance {letter}', ru: 'Шаг {letter}' },
  'racelab.last': { en: 'Last step: {result}', ru: 'Последний шаг: {result}' },
  'racelab.last.none': { en: 'Last step: none yet', ru: 'Последний шаг: пока нет' },
  'racelab.answer': { en: 'Answer: {answer}', ru: 'Ответ: {answer}' },
  'racelab.answer.none': { en: 'Answer: not yet', ru: 'Ответ: пока нет' },
  'racelab.result.ran': { en: 'ran', ru: 'выполнен' },
  'racelab.result.waiting': { en: 'waiting for the write lock — advance it again to retry',
    ru: 'ждёт блокировку записи — сделайте шаг ещё раз, чтобы повторить' },
  'racelab.result.answered': { en: 'answered “{answer}”', ru: 'ответ «{answer}»' },
  'racelab.result.failed': { en: 'failed: {kind} ({message})', ru: 'ошибка: {kind} ({message})' },
  'racelab.answer.failed': { en: 'error {kind}', ru: 'ошибка {kind}' },
  'racelab.committed': { en: 'Committed, as another connection reads it: balance {balance}, inbox rows {rows}.',
    ru: 'Зафиксировано, как видит другое соединение: баланс {balance}, строк во inbox {rows}.' },
  'racelab.committed.locked': { en: 'Committed, as another connection reads it: locked — a write transaction is open, so no other connection can read just now.',
    ru: 'Зафиксировано, как видит другое соединение: заблокировано — открыта пишущая транзакция, и читать другим соединениям сейчас нельзя.' },
  'racelab.committed.start': { en: 'Committed at the start: balance 0, inbox empty.', ru: 'Зафиксировано в начале: баланс 0, inbox пуст.' },
  'racelab.log': { en: 'Steps', ru: 'Шаги' },
  'racelab.log.empty': { en: 'No steps yet.', ru: 'Шагов пока нет.' },
  'racelab.log.committed': { en: 'committed: balance {balance}, inbox rows {rows}', ru: 'зафиксировано: баланс {balance}, строк во inbox {rows}' },
  'racelab.log.locked': { en: 'committed: locked', ru: 'зафиксировано: заблокировано' },
  'racelab.verdict': { en: 'Verdict', ru: 'Итог' },
  'racelab.verdict.correct': { en: 'Correct: credited once, one “applied”, the rest “duplicate”.',
    ru: 'Верно: зачислено один раз, один ответ «применено», остальные — «дубликат».' },
  'racelab.verdict.double_credit': { en: 'Double credit: the balance grew by more than one amount.',
    ru: 'Двойное зачисление: баланс вырос больше чем на одну сумму.' },
  'racelab.verdict.lost_credit': { en: 'Lost credit: the balance grew by less than the amount.',
    ru: 'Потерянное зачисление: баланс вырос меньше чем на сумму.' },
  'racelab.verdict.wrong_answer': { en: 'Wrong answer: not exactly one “applied” and the rest “duplicate”, or a “duplicate” said before the credit was committed.',
    ru: 'Неверный ответ: не ровно одно «применено» при остальных «дубликат», или «дубликат» сказан раньше, чем зачисление зафиксировано.' },
  'racelab.answers': { en: 'Answers: {answers}', ru: 'Ответы: {answers}' },
  'racelab.final': { en: 'The final tables', ru: 'Таблицы в конце' },
  'racelab.accounts': { en: 'accounts', ru: 'accounts' },
  'racelab.inbox': { en: 'inbox', ru: 'inbox' },
  'racelab.inbox.rows': { en: 'rows for provider-a / evt-1', ru: 'строк для provider-a / evt-1' },
  'racelab.explorer': { en: 'Every interleaving', ru: 'Все порядки' },
  'racelab.explorer.summary': { en: '{handler}, {deliveries} deliveries: {total} schedules the locks allow.',
    ru: '{handler}, доставок: {deliveries}. Порядков, которые допускают блокировки: {total}.' },
  'racelab.explorer.double': { en: '{n} of {total} schedules end in a double credit',
    ru: '{n} из {total} порядков заканчиваются двойным зачислением' },
  'racelab.explorer.lost': { en: '{n} of {total} schedules end in a lost credit',
    ru: '{n} из {total} порядков заканчиваются потерянным зачислением' },
  'racelab.explorer.wrong': { en: '{n} of {total} schedules end in a wrong answer', ru: '{n} из {total} порядков заканчиваются неверным ответом' },
  'racelab.explorer.none': { en: 'No schedule ends badly: whatever the order, the result is correct.',
    ru: 'Ни один порядок не заканчивается плохо: при любом порядке результат верный.' },
  'racelab.explorer.failing': { en: 'A failing schedule (who runs each statement):', ru: 'Порядок с ошибкой (кто выполняет каждый оператор):' },
  'racelab.replay': { en: 'Replay it step by step', ru: 'Повторить по шагам' },
  'racelab.replay.next': { en: 'Next step of the schedule ({letter})', ru: 'Следующий шаг порядка ({letter})' },
  'racelab.replay.position': { en: 'Step {n} of {total}', ru: 'Шаг {n} из {total}' },
  'racelab.replay.done': { en: 'Replayed: the verdict above is this schedule’s.', ru: 'Повторено: итог выше — итог этого порядка.' },
  'racelab.demo.title': { en: 'Where INSERT OR IGNORE goes wrong', ru: 'Где INSERT OR IGNORE ошибается' },
  'racelab.demo.text': { en: 'A sender redelivers a known event with another amount. Three real deliveries to the page’s database, under a new event id each time (source race-lab-demo, account 1): insert_or_ignore delivers amount 500; then the same key arrives with amount 700, once by insert_or_ignore and once by the atomic handler. What gets written: one credit of 500 to account 1, by the first delivery; the two redeliveries write nothing.',
    ru: 'Отправитель повторно доставляет известное событие с другой суммой. Три настоящие доставки в базу страницы, каждый раз с новым идентификатором события (источник race-lab-demo, счёт 1): insert_or_ignore доставляет сумму 500; затем тот же ключ приходит с суммой 700 — один раз к insert_or_ignore, один раз к атомарному обработчику. Что записывается: одно зачисление 500 на счёт 1, первой доставкой; повторные доставки ничего не пишут.' },
  'racelab.demo.run': { en: 'Deliver 500, then 700 under the same key', ru: 'Доставить 500, затем 700 с тем же ключом' },
  'racelab.demo.first': { en: '1. insert_or_ignore, amount 500: {answer}', ru: '1. insert_or_ignore, сумма 500: {answer}' },
  'racelab.demo.ignore': { en: '2. insert_or_ignore, the same key with amount 700: {answer}',
    ru: '2. insert_or_ignore, тот же ключ с суммой 700: {answer}' },
  'racelab.demo.atomic': { en: '3. atomic, the same key with amount 700: {answer}', ru: '3. atomic, тот же ключ с суммой 700: {answer}' },
  'racelab.demo.outcome': { en: '{outcome} ({status})', ru: '{outcome} ({status})' },
  'racelab.demo.refused': { en: '{kind} ({status}) — {message}', ru: '{kind} ({status}) — {message}' },
  'racelab.demo.written': { en: 'In the database: the inbox row {source} / {event_id} holds amount {amount}; the balance of account 1 went from {before} to {after}.',
    ru: 'В базе: строка inbox {source} / {event_id} хранит сумму {amount}; баланс счёта 1 изменился с {before} на {after}.' },
  'racelab.demo.nothing': { en: 'In the database: no inbox row for {source} / {event_id}; the balance of account 1 went from {before} to {after}.',
    ru: 'В базе: строки inbox для {source} / {event_id} нет; баланс счёта 1 изменился с {before} на {after}.' },
  'racelab.demo.lesson': { en: 'INSERT OR IGNORE answered “duplicate” to a different payload: the sender’s amount 700 was silently accepted as a repeat of 500, and the sender stops sending it. The atomic handler compares the stored payload and answers “payload conflict” (422): the sender learns that something is wrong.',
    ru: 'INSERT OR IGNORE ответил «дубликат» на другое содержимое: сумма 700 от отправителя молча принята за повтор суммы 500, и отправитель перестаёт её слать. Атомарный обработчик сравнивает сохранённое содержимое и отвечает «конфликт данных» (422): отправитель узнаёт, что что-то не так.' },
  'racelab.error': { en: 'The worker answered an error: {kind} — {message}', ru: 'Воркер ответил ошибкой: {kind} — {message}' },
});

// The race event (Rust: race::race_payload): shown in the final tables.
const RACE_KEY = { source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 };
// The INSERT OR IGNORE demonstration delivers to the page's own database:
// a new event (this source, a fresh `demo-<n>` id per click) with amount
// 500, then the same key with amount 700 — the redelivery with another
// payload that INSERT OR IGNORE takes for a repeat.
const DEMO_SOURCE = 'race-lab-demo';
const DEMO_FIRST = 500;
const DEMO_OTHER = 700;
// The last demo id's number: milliseconds since 1970, so a reload (the
// database outlives the page) never reuses one, and at least one more than
// the previous click's.
let demoNumber = 0;

// Everything shown comes from here; `render()` draws it again after each
// answer and after a language switch.
const state = {
  deliveries: 2,
  handler: 'atomic',
  busy: false,
  error: null,
  // The race in progress: {handler, next: [statements | null], last: [step | null],
  // answers: [string | null], log: [step], committed: {balance, inbox_rows} | null | 'start',
  // verdict: null | {...}, moved: index of the delivery that moved last}
  race: null,
  explored: null, // the explorer's summary
  explorerShown: false, // "Explore every interleaving" is shown once level 5 is won (panels/levels/)
  replay: null, // {schedule, position}
  exploring: false,
  // The demonstration's last run: {key: {source, event_id}, first, ignore,
  // atomic (each a reply or an error object), row: the inbox row or null,
  // before, after: balances of account 1}
  demo: null,
};

// The page's services (app.js): the tables, and the timeline's step boxes.
let services = null;

/**
 * Builds the lab in `root` (#race-lab). Returns the actions levels and
 * share links drive it with: `showExplorer`, `playRace`, `sharedRace`,
 * `replayRace`.
 */
export function mount(root, pageServices) {
  services = pageServices;
  build(root);
  return { showExplorer, playRace, sharedRace, replayRace };
}

/** The lab's controls once built: a level's "show me" plays a race through them. */
let built = null;

function build(root) {
  const ui = {};
  built = ui;
  const text = (tag, key, className) => el(tag, { className, i18n: key });

  ui.handler = el('select', { attrs: { id: 'race-handler', 'aria-describedby': 'race-why' } });
  for (const handler of HANDLERS) {
    ui.handler.append(el('option', { i18n: `racelab.h.${handler}`, attrs: { value: handler } }));
  }
  // The workshop's handler in Rust, when this build has it (`cargo xtask workshop`).
  inboxLab.judge.handlers().then(
    (names) => {
      if (names.includes('workshop')) {
        ui.handler.append(el('option', { i18n: 'racelab.h.workshop', attrs: { value: 'workshop' } }));
      }
    },
    () => {}, // no worker: the lab's own controls say so when used
  );
  ui.why = el('p', { className: 'race-why', attrs: { id: 'race-why' } });
  ui.deliveryRadios = [2, 3].map((n) =>
    el('input', { attrs: { type: 'radio', name: 'race-deliveries', value: String(n), id: `race-deliveries-${n}` } }),
  );
  ui.deliveryRadios[0].checked = true;
  ui.start = el('button', { attrs: { type: 'button', id: 'race-start' } });
  ui.explore = button('racelab.explore', 'race-explore');
  ui.locked = el(
    'p',
    { className: 'note race-locked', attrs: { id: 'race-explore-locked' } },
    text('span', 'racelab.explore.locked'),
    ' ',
    el('a', { i18n: 'racelab.explore.level', attrs: { href: '#/levels/5' } }),
  );

  ui.columns = LETTERS.map((letter, i) => {
    const column = {};
    column.title = el('h3', {});
    column.sql = el('code', {});
    column.last = el('p', { className: 'race-last' });
    column.answer = el('p', { className: 'race-answer' });
    // What this delivery ran so far, as Rust reports it: open while its
    // transaction is, then kept or undone.
    column.steps = el('div', { className: 'race-ran' });
    column.button = el('button', {
      className: 'race-advance',
      attrs: { type: 'button', 'aria-keyshortcuts': letter, id: `race-advance-${letter.toLowerCase()}` },
    });
    column.button.addEventListener('click', () => advance(i));
    column.root = el(
      'div',
      { className: 'race-column', data: { delivery: i } },
      column.title,
      text('p', 'racelab.next', 'race-label'),
      el('pre', { className: 'race-sql' }, column.sql),
      column.last,
      column.answer,
      column.steps,
      column.button,
    );
    return column;
  });

  ui.columnsGroup = el('div', { className: 'race-columns', attrs: { role: 'group' } }, ...ui.columns.map((c) => c.root));
  ui.committed = el('p', { className: 'race-committed', attrs: { id: 'race-committed', role: 'status' } });
  ui.log = el('ol', { className: 'race-log', attrs: { id: 'race-log' } });
  ui.verdict = el('div', { className: 'race-verdict', attrs: { id: 'race-verdict', 'aria-live': 'polite' } });
  ui.error = el('p', { className: 'field-error', attrs: { id: 'race-error', role: 'alert' } });
  ui.explorer = el('div', { className: 'race-explorer', attrs: { id: 'race-explorer', 'aria-live': 'polite' } });
  ui.replayNext = el('button', { attrs: { type: 'button', id: 'race-replay-next' } });
  ui.replayNext.addEventListener('click', replayStep);

  ui.demoRun = button('racelab.demo.run', 'race-demo-run');
  ui.demoResult = el('div', { attrs: { id: 'race-demo-result', 'aria-live': 'polite' } });
  ui.demo = el(
    'div',
    { className: 'race-demo', attrs: { id: 'race-demo' } },
    text('h3', 'racelab.demo.title'),
    text('p', 'racelab.demo.text', 'note'),
    ui.demoRun,
    ui.demoResult,
  );

  root.append(
    text('p', 'racelab.intro', 'note'),
    el(
      'div',
      { className: 'race-setup' },
      el('div', { className: 'field' }, el('label', { i18n: 'racelab.handler', attrs: { for: 'race-handler' } }), ui.handler),
      el(
        'fieldset',
        { className: 'race-deliveries' },
        text('legend', 'racelab.deliveries'),
        ...ui.deliveryRadios.map((radio, i) =>
          el('label', { attrs: { for: radio.id } }, radio, ' ', el('span', { i18n: `racelab.deliveries.${i + 2}` })),
        ),
      ),
      ui.why,
      text('p', 'racelab.event', 'race-event'),
      el('div', { className: 'actions' }, ui.start, ui.explore),
      ui.locked,
    ),
    ui.error,
    ui.columnsGroup,
    ui.committed,
    ui.verdict,
    el('details', { className: 'race-steps', attrs: { open: '' } }, text('summary', 'racelab.log'), ui.log),
    ui.explorer,
    ui.demo,
  );

  ui.handler.addEventListener('change', () => {
    Object.assign(state, { handler: ui.handler.value, race: null, explored: null, replay: null });
    render(ui);
  });
  for (const radio of ui.deliveryRadios) {
    radio.addEventListener('change', () => {
      if (radio.checked) {
        // The choice shows at once (render() draws the radios from state,
        // and it runs before the worker answers); it is undone if the
        // worker refuses.
        const previous = state.deliveries;
        Object.assign(state, { deliveries: Number(radio.value), race: null, explored: null, replay: null });
        run(ui, async () => {
          try {
            await inboxLab.race.reset(state.deliveries);
          } catch (error) {
            state.deliveries = previous;
            throw error;
          }
        });
      }
    });
  }
  ui.start.addEventListener('click', () => run(ui, () => start(state.handler)));
  ui.explore.addEventListener('click', () => run(ui, explore));
  ui.demoRun.addEventListener('click', () => run(ui, demo));

  // A, B, C advance a delivery — by physical key, so a Russian layout works too.
  root.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) {
      return;
    }
    if (event.target.closest('input, select, textarea, summary')) {
      return;
    }
    const i = ['KeyA', 'KeyB', 'KeyC'].indexOf(event.code);
    if (i >= 0 && i < state.deliveries && !ui.columns[i].button.disabled) {
      event.preventDefault();
      ui.columns[i].button.click();
    }
  });

  function advance(i) {
    run(ui, () => step(i)).then(() => keepFocus(ui, i));
  }

  function replayStep() {
    const replay = state.replay;
    if (replay === null || replay.position >= replay.schedule.length) {
      return;
    }
    run(ui, async () => {
      await step(replay.schedule[replay.position]);
      replay.position += 1;
    });
  }

  onLanguageChange(() => render(ui));
  render(ui);
}

/** Shows or hides "Explore every interleaving" (a level unlocks it: panels/levels/levels.js). */
function showExplorer(on) {
  state.explorerShown = Boolean(on);
  if (built !== null) {
    render(built);
  }
}

/**
 * Plays a race through the lab's own controls, in sight (a level's "show
 * me"): chooses `handler`, starts, advances the deliveries in `order`
 * (indexes: 0 is A), then each unfinished one to its end, A first. Resolves
 * once the last step is drawn; Rust's answers decide what happened.
 */
async function playRace(handler, order) {
  const ui = built;
  if (ui === null || state.busy) {
    return;
  }
  chooseHandler(ui, handler);
  await run(ui, () => start(handler));
  for (const i of order) {
    await run(ui, () => step(i));
  }
  for (let i = 0; i < state.deliveries; i += 1) {
    // A delivery runs a handful of statements; the bound only stops a worker gone wrong.
    for (let n = 0; n < 20 && state.error === null && state.race?.next[i]; n += 1) {
      await run(ui, () => step(i));
    }
  }
}

/**
 * The race on screen as a share link holds it (www/lib/share.js): {handler,
 * deliveries, order} — which delivery each press advanced — or null before
 * a race was stepped, or once the explorer took its connections.
 */
function sharedRace() {
  const race = state.race;
  return race === null || race.stopped || race.log.length === 0 ? null : raceSteps(race);
}

/** A race as its presses: `{handler, deliveries, order}`, the delivery each press advanced. */
function raceSteps(race) {
  return { handler: race.handler, deliveries: race.next.length, order: race.log.map((r) => r.delivery) };
}

/**
 * Replays a shared race through the lab's own controls: `deliveries`
 * connections, `handler`, then exactly the presses of `order`. Resolves to
 * the error the worker answered (shown in the lab too), or null.
 */
async function replayRace(handler, deliveries, order) {
  const ui = built;
  if (state.deliveries !== deliveries) {
    await run(ui, async () => {
      await inboxLab.race.reset(deliveries);
      Object.assign(state, { deliveries, race: null, explored: null, replay: null });
    });
  }
  chooseHandler(ui, handler);
  await run(ui, () => start(handler));
  for (const i of order) {
    if (state.error !== null) {
      break;
    }
    await run(ui, () => step(i));
  }
  return state.error;
}

/** Chooses `handler` in the lab's select, as the reader would. */
function chooseHandler(ui, handler) {
  if (ui.handler.value !== handler) {
    ui.handler.value = handler;
    ui.handler.dispatchEvent(new Event('change'));
  }
}

/** Runs one action against the worker: busy while it runs, errors shown, then redrawn. */
function run(ui, action) {
  return whileBusy(() => exclusive(state, () => render(ui), action));
}

// A finished delivery's button is disabled; a keyboard user continues on
// the next delivery that can still move (or on "Start again").
function keepFocus(ui, i) {
  const button = ui.columns[i].button;
  if (document.activeElement !== button && document.activeElement !== document.body) {
    return;
  }
  if (!button.disabled) {
    button.focus();
    return;
  }
  const next = ui.columns.find((column, j) => j < state.deliveries && !column.button.disabled);
  (next?.button ?? ui.start).focus();
}

async function start(handler) {
  const next = await inboxLab.race.start(handler);
  state.deliveries = next.length; // the worker's count, even if the console changed it
  state.race = {
    handler,
    next,
    last: next.map(() => null),
    answers: next.map(() => null),
    log: [],
    committed: 'start',
    verdict: null,
    moved: null,
  };
  state.replay = null;
}

async function step(i) {
  const reply = await inboxLab.race.step(i);
  const race = state.race;
  race.next[i] = reply.next;
  race.last[i] = reply;
  race.log.push(reply);
  race.committed = reply.committed;
  race.moved = i;
  if (reply.result === 'answered') {
    race.answers[i] = { answer: reply.answer };
  } else if (reply.result === 'failed') {
    race.answers[i] = { kind: reply.kind };
  }
  if (reply.verdict) {
    race.verdict = reply.verdict;
    observe('race', { ...raceSteps(race), verdict: reply.verdict, replayed: state.replay !== null });
  }
}

async function explore() {
  // The race the reader stepped stays on screen — its columns, log and
  // verdict — but it cannot go on: the explorer reuses its connections.
  if (state.race !== null) {
    state.race = { ...state.race, stopped: true };
  }
  state.replay = null;
  state.explored = null;
  state.exploring = true;
  try {
    state.explored = await inboxLab.race.explore(state.handler);
    state.deliveries = state.explored.deliveries;
  } finally {
    state.exploring = false;
  }
}

// Three real deliveries; what is shown is what the worker answered and what
// the tables hold afterwards, never an expectation.
async function demo() {
  demoNumber = Math.max(Date.now(), demoNumber + 1);
  const key = { source: DEMO_SOURCE, event_id: `demo-${demoNumber}` };
  const deliver = (amount, handler) =>
    inboxLab.deliver({ ...key, account_id: 1, amount }, { handler }).then(
      (reply) => reply,
      (error) => error,
    );
  const balance = (tables) => tables?.accounts.find((a) => a.id === 1)?.balance ?? '—';
  const before = balance(await inboxLab.tables({ newest: 0 }));
  const first = await deliver(DEMO_FIRST, 'insert_or_ignore');
  const ignore = await deliver(DEMO_OTHER, 'insert_or_ignore');
  const atomic = await deliver(DEMO_OTHER, 'atomic');
  const tables = (await services.readTables()) ?? (await inboxLab.tables());
  const row = tables.inbox.find((r) => r.source === key.source && r.event_id === key.event_id) ?? null;
  state.demo = { key, first, ignore, atomic, row, before, after: balance(tables) };
}

/** A demonstration answer: `applied (200)`, or `payload conflict (422) — …` in the reader's language. */
function demoAnswer(answer) {
  return answer.outcome
    ? t('racelab.demo.outcome', { outcome: outcomeWord(answer.outcome), status: answer.http_status })
    : t('racelab.demo.refused', { kind: outcomeWord(answer.kind), status: answer.http_status, message: errorMessage(answer) });
}

// ---- drawing ------------------------------------------------------------------------------

function render(ui) {
  const race = state.race;
  const section = ui.handler.closest('section');
  section.setAttribute('aria-busy', String(state.busy));
  ui.handler.value = state.handler;
  ui.handler.disabled = state.busy;
  for (const radio of ui.deliveryRadios) {
    radio.checked = Number(radio.value) === state.deliveries;
    radio.disabled = state.busy;
  }
  ui.why.textContent = t(`racelab.why.${state.handler}`);
  ui.columnsGroup.setAttribute('aria-label', t('racelab.deliveries'));
  ui.start.textContent = t(race === null ? 'racelab.start' : 'racelab.restart');
  ui.start.disabled = state.busy;
  ui.explore.disabled = state.busy;
  ui.explore.hidden = !state.explorerShown;
  ui.locked.hidden = state.explorerShown;

  ui.error.hidden = state.error === null;
  ui.error.textContent =
    state.error === null ? '' : t('racelab.error', { kind: outcomeWord(state.error.kind ?? 'error'), message: errorMessage(state.error) });

  const replaying = state.replay !== null && state.replay.position < state.replay.schedule.length;
  ui.columns.forEach((column, i) => {
    column.root.hidden = i >= state.deliveries;
    column.title.textContent = `${t('racelab.delivery', { letter: LETTERS[i] })} · ${t('racelab.connection')}`;
    column.button.textContent = t('racelab.advance', { letter: LETTERS[i] });
    const next = race?.next[i];
    const last = race?.last[i] ?? null;
    column.sql.textContent =
      race === null
        ? t('racelab.not_started')
        : next && race.stopped
          ? t('racelab.stopped')
          : next
            ? next.join(';\n')
            : t('racelab.finished');
    column.last.textContent = last === null ? t('racelab.last.none') : t('racelab.last', { result: resultText(last) });
    const answer = race?.answers[i] ?? null;
    column.answer.textContent = answer === null ? t('racelab.answer.none') : t('racelab.answer', { answer: answerText(answer) });
    column.steps.replaceChildren(...(last?.steps?.length ? [services.panels.timeline.stepsDiagram(last.steps)] : []));
    column.button.disabled = state.busy || race === null || !next || race.stopped === true || replaying;
    column.root.dataset.state = last?.result ?? (race === null ? 'idle' : 'ready');
    column.root.classList.toggle('race-moved', race !== null && race.moved === i);
    if (replaying && state.replay.schedule[state.replay.position] === i) {
      column.root.dataset.upNext = 'true';
    } else {
      delete column.root.dataset.upNext;
    }
  });

  const committed = race === null ? 'start' : race.committed;
  ui.committed.dataset.locked = String(committed === null);
  ui.committed.textContent =
    committed === 'start'
      ? t('racelab.committed.start')
      : committed === null
        ? t('racelab.committed.locked')
        : t('racelab.committed', { balance: committed.balance, rows: committed.inbox_rows });

  ui.log.replaceChildren(
    ...(race === null || race.log.length === 0
      ? [el('li', { className: 'muted', text: t('racelab.log.empty') })]
      : race.log.map((s) =>
          el(
            'li',
            { data: { result: s.result } },
            el('span', { className: 'race-who', text: `${LETTERS[s.delivery]}: ` }),
            el('code', { text: s.statements.join('; ') }),
            el('span', { text: ` → ${resultText(s)} · ${committedText(s.committed)}` }),
          ),
        )),
  );

  renderVerdict(ui, race);
  renderExplorer(ui);

  ui.demo.hidden = state.handler !== 'insert_or_ignore';
  ui.demoRun.disabled = state.busy;
  ui.demoResult.replaceChildren(...(state.demo === null ? [] : demoResult(state.demo)));
}

function demoResult({ key, first, ignore, atomic, row, before, after }) {
  const line = (textKey, answer, step) => el('p', { text: t(textKey, { answer: demoAnswer(answer) }), data: { step } });
  const written = row
    ? t('racelab.demo.written', { ...key, amount: row.amount, before, after })
    : t('racelab.demo.nothing', { ...key, before, after });
  const shown = [
    line('racelab.demo.first', first, 'first'),
    line('racelab.demo.ignore', ignore, 'ignore'),
    line('racelab.demo.atomic', atomic, 'atomic'),
    el('p', { text: written, data: { step: 'written' } }),
  ];
  // The lesson is said only when the answers show it.
  if (ignore.outcome === 'duplicate' && atomic.kind === 'payload_conflict') {
    shown.push(el('p', { className: 'note', text: t('racelab.demo.lesson'), data: { step: 'lesson' } }));
  }
  return shown;
}

function renderVerdict(ui, race) {
  const verdict = race?.verdict ?? null;
  ui.verdict.hidden = verdict === null;
  if (verdict === null) {
    ui.verdict.replaceChildren();
    return;
  }
  const flags = ['double_credit', 'lost_credit', 'wrong_answer'].filter((flag) => verdict[flag]);
  ui.verdict.dataset.verdict = flags.length === 0 ? 'correct' : flags.join(' ');
  const answers = race.answers
    .map((answer, i) => `${LETTERS[i]} ${answer === null ? '—' : answerText(answer)}`)
    .join(', ');
  ui.verdict.replaceChildren(
    el('h3', { text: t('racelab.verdict') }),
    ...(flags.length === 0
      ? [el('p', { className: 'race-flag', text: t('racelab.verdict.correct'), data: { flag: 'correct' } })]
      : flags.map((flag) => el('p', { className: 'race-flag', text: t(`racelab.verdict.${flag}`), data: { flag } }))),
    el('p', { text: t('racelab.answers', { answers }) }),
    el('h4', { text: t('racelab.final') }),
    el(
      'div',
      { className: 'race-tables' },
      smallTable(t('racelab.accounts'), ['id', 'balance'], [[RACE_KEY.account_id, verdict.balance]], 'race-final-accounts'),
      smallTable(t('racelab.inbox'), [t('racelab.inbox.rows')], [[verdict.inbox_rows]], 'race-final-inbox'),
    ),
  );
}

function renderExplorer(ui) {
  const summary = state.explored;
  ui.explorer.hidden = summary === null && !state.exploring;
  if (summary === null) {
    ui.explorer.replaceChildren(...(state.exploring ? [el('p', { className: 'muted', text: t('racelab.exploring') })] : []));
    return;
  }
  const total = summary.interleavings;
  const counts = [
    ['double', summary.double_credits],
    ['lost', summary.lost_credits],
    ['wrong', summary.wrong_answers],
  ];
  const children = [
    el('h3', { text: t('racelab.explorer') }),
    el('p', { text: t('racelab.explorer.summary', { handler: summary.handler, deliveries: summary.deliveries, total }) }),
    el(
      'ul',
      { className: 'race-counts' },
      ...counts.map(([kind, n]) => el('li', { text: t(`racelab.explorer.${kind}`, { n, total }), data: { kind, bad: n > 0 } })),
    ),
  ];
  const schedule = summary.failing_schedule;
  if (!schedule) {
    children.push(el('p', { className: 'race-flag', text: t('racelab.explorer.none'), data: { flag: 'correct' } }));
  } else {
    const position = state.replay?.position ?? -1;
    children.push(
      el('p', { text: t('racelab.explorer.failing') }),
      el(
        'ol',
        { className: 'race-schedule', attrs: { id: 'race-schedule' } },
        ...schedule.map((i, n) => {
          const chip = el('li', { text: LETTERS[i], data: { delivery: i } });
          if (n < position) {
            chip.dataset.done = 'true';
          }
          if (n === position - 1) {
            chip.setAttribute('aria-current', 'step');
          }
          return chip;
        }),
      ),
    );
    const replayButton = el('button', { className: 'secondary', text: t('racelab.replay'), attrs: { type: 'button', id: 'race-replay' } });
    replayButton.disabled = state.busy;
    replayButton.addEventListener('click', () =>
      run(ui, async () => {
        await start(summary.handler);
        state.replay = { schedule, position: 0 };
      }),
    );
    children.push(el('div', { className: 'actions' }, replayButton));
    if (state.replay !== null) {
      const done = state.replay.position >= schedule.length;
      ui.replayNext.textContent = done
        ? t('racelab.replay.done')
        : t('racelab.replay.next', { letter: LETTERS[schedule[state.replay.position]] });
      ui.replayNext.disabled = state.busy || done;
      children.push(
        el('p', {
          className: 'race-position',
          text: t('racelab.replay.position', { n: state.replay.position, total: schedule.length }),
          attrs: { id: 'race-replay-position' },
        }),
        ui.replayNext,
      );
    }
  }
  replaceKeepingFocus(ui.explorer, children);
}

function smallTable(caption, columns, rows, id) {
  const table = dataTable(columns, rows);
  table.id = id;
  table.prepend(el('caption', { text: caption }));
  return table;
}

function resultText(s) {
  const params = s.result === 'answered' ? { answer: outcomeWord(s.answer) } : { kind: s.kind, message: s.message };
  return ['ran', 'waiting', 'answered', 'failed'].includes(s.result) ? t(`racelab.result.${s.result}`, params) : String(s.result);
}

function answerText(answer) {
  return answer.answer ? outcomeWord(answer.answer) : t('racelab.answer.failed', { kind: outcomeWord(answer.kind) });
}

function committedText(committed) {
  return committed === null
    ? t('racelab.log.locked')
    : t('racelab.log.committed', { balance: committed.balance, rows: committed.inbox_rows });
}
