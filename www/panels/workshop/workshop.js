// The workshop: the article's scenario in one click, its three exercises
// as tasks the reader does, and a fourth outside the page: probing the
// reader's own receiver with `inbox-lab probe` (docs/probe.md, "Check your own
// receiver"), which only the command line can do.
//
// Each exercise is a disclosure: opened, it says what to do, and from then on
// it records what the reader does with the sender (with the handler chosen
// there, so a mistaken handler can fail an exercise for real). Exercises 1
// and 2 offer chips that only fill the sender's form — pressing Deliver is
// the reader's part; exercise 3 ("store and replay the first result") has
// none. Its check (exercises.js) then looks at the tables and at the
// reader's own deliveries since the exercise was opened — nothing delivered
// before, nor by a webhook or a burst — and says whether the expected
// result happened.

import { el, whileBusy } from '../../lib/dom.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { checkMissingAccount, checkReplayReturnsFirstReceipt, checkSourceIsPartOfKey, ownDeliveries } from './exercises.js';
import { has, onLanguageChange, register, t } from '../../lib/i18n.js';
import { EXAMPLE } from '../../lib/send.js';

register({
  'workshop.title': { en: 'Workshop', ru: 'Практикум' },
  'workshop.scenario': { en: 'The article’s scenario', ru: 'Сценарий из статьи' },
  'workshop.scenario.intro': { en: 'Runs the article’s script on a scratch database next to yours (yours stays as it is): first delivery, repeat, another amount, a crash after INSERT and its retry, 20 deliveries of one event.',
    ru: 'Запускает скрипт из статьи на отдельной черновой базе (ваша остаётся как есть): первая доставка, повтор, другая сумма, сбой после INSERT и повтор, 20 доставок одного события.' },
  'workshop.scenario.run': { en: 'Run the article’s scenario', ru: 'Запустить сценарий из статьи' },
  'workshop.check': { en: 'check', ru: 'проверка' },
  'workshop.expected': { en: 'expected', ru: 'ожидалось' },
  'workshop.got': { en: 'got', ru: 'получено' },
  'workshop.check_button': { en: 'Check', ru: 'Проверить' },
  'workshop.result': { en: 'result', ru: 'итог' },
  'workshop.passed': { en: '✓ Done.', ru: '✓ Готово.' },
  // The names of the scenario's checks, as Rust's src/labs/tools/scenario.rs calls them.
  'scenario.evt-1 first delivery': { en: 'evt-1 first delivery', ru: 'evt-1: первая доставка' },
  'scenario.evt-1 repeat': { en: 'evt-1 repeat', ru: 'evt-1: повтор' },
  'scenario.evt-1 with amount 700': { en: 'evt-1 with amount 700', ru: 'evt-1 с суммой 700' },
  'scenario.evt-2 failing after INSERT': { en: 'evt-2 failing after INSERT', ru: 'evt-2: сбой после INSERT' },
  'scenario.evt-2 retry': { en: 'evt-2 retry', ru: 'evt-2: повторная доставка' },
  'scenario.evt-3 burst applied': { en: 'evt-3 burst applied', ru: 'evt-3, залп: применено' },
  'scenario.evt-3 burst duplicate': { en: 'evt-3 burst duplicate', ru: 'evt-3, залп: дубликатов' },
  'scenario.evt-3 burst other answers': { en: 'evt-3 burst other answers', ru: 'evt-3, залп: другие ответы' },
  'scenario.balance of account 1': { en: 'balance of account 1', ru: 'баланс счёта 1' },
  'scenario.inbox rows': { en: 'inbox rows', ru: 'строк в inbox' },
  'workshop.not_passed': { en: '✗ Not yet.', ru: '✗ Пока нет.' },
  'workshop.counts': { en: 'Check counts only what you deliver with the sender after opening this exercise.',
    ru: 'Проверка учитывает только то, что вы доставили отправителем после того, как открыли это упражнение.' },
  'ex1.title': { en: 'Exercise 1. The source is part of the key', ru: 'Упражнение 1. Источник — часть ключа' },
  'ex1.task': { en: 'Deliver evt-1 from provider-a, then evt-1 from provider-b. Expected: two different events, both applied, each with its own receipt — the balance grows twice.',
    ru: 'Доставьте evt-1 от provider-a, затем evt-1 от provider-b. Ожидается: это два разных события, оба применены, у каждого своя квитанция — баланс вырастет дважды.' },
  'ex1.do1': { en: 'evt-1 from provider-a', ru: 'evt-1 от provider-a' },
  'ex1.do2': { en: 'evt-1 from provider-b', ru: 'evt-1 от provider-b' },
  'workshop.fills': { en: 'Put in the sender’s form:', ru: 'Вписать в форму отправителя:' },
  'ex1.passed': { en: '{event_id} is two events: {first} (receipt #{first_receipt}, balance after {first_balance}) and {second} (receipt #{second_receipt}, balance after {second_balance}).',
    ru: '{event_id} — это два события: {first} (квитанция №{first_receipt}, баланс после — {first_balance}) и {second} (квитанция №{second_receipt}, баланс после — {second_balance}).' },
  'ex1.not_yet': { en: 'Since you opened this exercise, no event_id was delivered from two sources and applied both times.',
    ru: 'С тех пор как вы открыли это упражнение, ни один event_id не был доставлен из двух источников и применён оба раза.' },
  'ex2.title': { en: 'Exercise 2. A missing account', ru: 'Упражнение 2. Несуществующий счёт' },
  'ex2.task': { en: 'Deliver an event to account 42, which does not exist. Expected: 422 “unknown account”, and the inbox stays as it was — the foreign key refuses the row.',
    ru: 'Доставьте событие на счёт 42, которого нет. Ожидается: 422 «нет такого счёта», а inbox остаётся прежним — внешний ключ не пропускает строку.' },
  'ex2.do1': { en: 'evt-42 to account 42', ru: 'evt-42 на счёт 42' },
  'ex2.passed': { en: 'Account {account_id}: answered {status} {outcome}, and the inbox has no row ({source}, {event_id}).',
    ru: 'Счёт {account_id}: ответ {status} {outcome}, строки ({source}, {event_id}) в inbox нет.' },
  'ex2.not_yet': { en: 'No delivery to a missing account since you opened this exercise.',
    ru: 'С тех пор как вы открыли это упражнение, доставки на несуществующий счёт не было.' },
  'ex2.row_kept': { en: 'Account {account_id} does not exist, yet the inbox has a row ({source}, {event_id}).',
    ru: 'Счёта {account_id} нет, а строка ({source}, {event_id}) в inbox есть.' },
  'ex2.wrong_answer': { en: 'Account {account_id}: expected 422 “unknown account”, got {status} {outcome}.',
    ru: 'Счёт {account_id}: ожидался ответ 422 «нет такого счёта», получен {status} {outcome}.' },
  'ex3.title': { en: 'Exercise 3. A replay returns the first receipt', ru: 'Упражнение 3. Повтор возвращает первую квитанцию' },
  'ex3.task': { en: 'With the sender, deliver an event, then the same event again (or tick “Lose the first response” and deliver once). Expected: the repeat answers duplicate with the receipt stored by the first application — the handler stored the first result and replays it.',
    ru: 'С помощью отправителя доставьте событие, а затем то же событие ещё раз (или включите «Потерять первый ответ» и доставьте один раз). Ожидается: повтор отвечает duplicate с квитанцией, которую сохранило первое применение, — обработчик сохранил первый результат и вернул его снова.' },
  'ex3.passed': { en: 'The replay of ({source}, {event_id}) answered duplicate with receipt #{seq}, balance after {balance_after}: the receipt stored with the first application.',
    ru: 'Повтор ({source}, {event_id}) ответил duplicate с квитанцией №{seq}, баланс после — {balance_after}: это квитанция первого применения.' },
  'ex3.not_yet': { en: 'No duplicate answer since you opened this exercise.',
    ru: 'С тех пор как вы открыли это упражнение, ответа duplicate не было.' },
  'ex3.no_receipt': { en: 'The replay of ({source}, {event_id}) answered duplicate, but there is no stored receipt to return.',
    ru: 'Повтор ({source}, {event_id}) ответил duplicate, но сохранённой квитанции, которую можно вернуть, нет.' },
  'ex3.different': { en: 'The replay answered receipt #{seq}, but the stored one is #{stored}.',
    ru: 'Повтор вернул квитанцию №{seq}, а сохранена №{stored}.' },
  'ex4.title': { en: 'Exercise 4. Probe your own receiver', ru: 'Упражнение 4. Проверьте свой приёмник' },
  'ex4.task': { en: 'Write the receiver in your language, on your database: POST /hooks/{source} checking the Standard Webhooks signature, then the inbox row and the credit in one transaction. Start two instances on one database and probe both with the command below (docs/probe.md, “Check your own receiver”). Exit 0: idempotent. Exit 1 names the first scenario that broke it, in these words: Credited twice (credited_twice) — a repeat, a retry or a burst was paid again; Credit lost (credit_lost) — a genuine event was never paid (deduplicated on the body, or its id taken first by a forgery); forged_credit — a forged or stale request was paid.',
    ru: 'Напишите приёмник на своём языке, со своей базой: POST /hooks/{source} проверяет подпись Standard Webhooks, затем строка inbox и зачисление — в одной транзакции. Запустите два экземпляра на одной базе и проверьте оба командой ниже (docs/probe.md, «Check your own receiver»). Код 0: идемпотентен. Код 1 называет первый сценарий, на котором приёмник ошибся, этими словами: «Зачислено дважды» (credited_twice) — повтор, повторная попытка или залп оплачены снова; «Зачисление потеряно» (credit_lost) — подлинное событие так и не оплачено (дедупликация по телу или id, занятый подделкой); forged_credit — оплачен поддельный или просроченный запрос.' },
});

const EXERCISES = [
  {
    id: 'ex1',
    actions: [
      { key: 'ex1.do1', event: EXAMPLE },
      { key: 'ex1.do2', event: { ...EXAMPLE, source: 'provider-b' } },
    ],
    check: (tables, entries) => checkSourceIsPartOfKey(tables, entries),
  },
  {
    id: 'ex2',
    actions: [{ key: 'ex2.do1', event: { ...EXAMPLE, event_id: 'evt-42', account_id: 42 } }],
    check: (tables, entries) => checkMissingAccount(tables, entries),
  },
  {
    id: 'ex3',
    actions: [], // storing and replaying the first result is the reader's to do
    check: (tables, entries) => checkReplayReturnsFirstReceipt(tables, entries),
  },
  {
    id: 'ex4',
    actions: [],
    // No check here: the probe's exit code is the verdict.
    command:
      'cargo run --release -- probe http://127.0.0.1:9000/hooks/provider-a http://127.0.0.1:9001/hooks/provider-a --secret whsec_… --state sqlite:receiver.db',
  },
];

// The page's services (app.js): the database, the tables, the timeline, the sender.
let services = null;
let scenarioOutput = null;
// Results on screen, kept to redraw them in another language.
let scenario = null;
const verdicts = new Map();
// The open exercises: id → the timeline's last entry number when it was opened.
const opened = new Map();

async function runScenario() {
  try {
    scenario = await services.db.runScenario();
  } catch (error) {
    scenario = { error };
  }
  drawScenario();
}

function drawScenario() {
  if (scenario.error) {
    scenarioOutput.replaceChildren(el('p', { className: 'field-error', text: errorMessage(scenario.error) }));
    return;
  }
  const head = el(
    'tr',
    {},
    ...['workshop.check', 'workshop.expected', 'workshop.got', 'workshop.result'].map((key) =>
      el('th', { text: t(key), attrs: { scope: 'col' } }),
    ),
  );
  const rows = scenario.checks.map(({ name, expected, got }) =>
    el(
      'tr',
      { className: expected === got ? '' : 'failed' },
      // A check this page has no words for yet shows Rust's own name.
      el('td', { text: has(`scenario.${name}`) ? t(`scenario.${name}`) : name }),
      el('td', { text: expected }),
      el('td', { text: got }),
      el('td', { text: expected === got ? '✓' : '✗' }),
    ),
  );
  scenarioOutput.replaceChildren(
    el('div', { className: 'table-scroll' }, el('table', { className: 'checks' }, el('thead', {}, head), el('tbody', {}, ...rows))),
    el('p', { className: `summary ${scenario.passed ? 'passed' : 'failed'}`, text: scenario.summary, attrs: { id: 'scenario-summary' } }),
  );
}

function drawExercises() {
  const list = document.querySelector('#exercises');
  list.replaceChildren(
    ...EXERCISES.map(({ id, actions, check: checks, command }) => {
      // Chips only fill the sender's form (base.css: .chip); Deliver is the reader's.
      const chips = actions.map(({ key, event }) => {
        const chip = el('button', { className: 'chip', text: t(key), attrs: { type: 'button' }, data: { fill: key } });
        chip.addEventListener('click', () => services.panels.sender.fillFormForReader(event));
        return chip;
      });
      const checkButton = el('button', { text: t('workshop.check_button'), attrs: { type: 'button' }, data: { check: id } });
      checkButton.addEventListener('click', () => whileBusy(() => check(id)));
      const done = [el('div', { className: 'actions' }, checkButton), verdictNode(id)];
      const details = el(
        'details',
        { attrs: opened.has(id) ? { open: '' } : {} },
        el('summary', {}, el('h3', { text: t(`${id}.title`) })),
        el('p', { text: t(`${id}.task`) }),
        ...(chips.length === 0
          ? []
          : [el('div', { className: 'chips', attrs: { role: 'group', 'aria-label': t('workshop.fills') } }, el('span', { className: 'group-label', text: t('workshop.fills') }), ...chips)]),
        ...(command ? [el('pre', { className: 'exercise-command' }, el('code', { text: command }))] : []),
        ...(checks ? [el('p', { className: 'note', text: t('workshop.counts') }), ...done] : []),
      );
      // Opening starts the record afresh; a redraw (another language) keeps it. Each change of
      // `open` is seen, in order: a close and a quick reopen fire only one `toggle` event.
      new MutationObserver((changes) => {
        for (const { oldValue } of changes) {
          if (oldValue !== null) {
            opened.delete(id);
          } else if (!opened.has(id)) {
            opened.set(id, services.timeline.entries().at(-1)?.seq ?? 0);
            verdicts.delete(id);
            details.querySelector(`[data-verdict="${id}"]`)?.replaceWith(verdictNode(id));
          }
        }
      }).observe(details, { attributeFilter: ['open'], attributeOldValue: true });
      return el('li', { className: 'exercise', data: { exercise: id } }, details);
    }),
  );
}

function verdictNode(id) {
  const verdict = verdicts.get(id);
  const node = el('p', { className: 'verdict', attrs: { 'aria-live': 'polite' }, data: { verdict: id } });
  if (verdict !== undefined) {
    node.classList.add(verdict.passed ? 'passed' : 'failed');
    node.dataset.passed = String(verdict.passed);
    // An outcome is said in words, not as the code names it.
    const params = verdict.params?.outcome === undefined ? verdict.params : { ...verdict.params, outcome: outcomeWord(verdict.params.outcome) };
    node.textContent = `${t(verdict.passed ? 'workshop.passed' : 'workshop.not_passed')} ${t(verdict.result, params)}`;
  }
  return node;
}

async function check(id) {
  const tables = await services.readTables();
  if (tables === null) {
    return; // the tables panel already says why
  }
  const exercise = EXERCISES.find((e) => e.id === id);
  verdicts.set(id, exercise.check(tables, ownDeliveries(services.timeline.entries(), opened.get(id) ?? Infinity)));
  document.querySelector(`[data-verdict="${id}"]`).replaceWith(verdictNode(id));
}

export function mount(root, pageServices) {
  services = pageServices;
  scenarioOutput = document.querySelector('#scenario-result');
  document.querySelector('#scenario-run').addEventListener('click', () => whileBusy(runScenario));
  drawExercises();
  onLanguageChange(() => {
    drawExercises();
    if (scenario !== null) {
      drawScenario();
    }
  });
}
