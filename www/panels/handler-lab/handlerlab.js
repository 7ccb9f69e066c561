// Write your own handler: a handler text (docs/handler-language.md) judged by
// the race explorer, the fault points and the article's cases — in the
// database worker, on an in-memory database of its own (Rust
// `judgeHandler`), never the reader's:
//
//   judge.builtin(name)                   → a built-in handler's text (shown read-only)
//   judge.run(text, 2 | 3)                → {result: "report", report, crash_sweep}
//                                           | {result: "parse_error", line, column, en, ru};
//                                           report.failures: each check's first failure
//                                           with `why` and `steps` ({en, ru}, from Rust),
//                                           shown one step per click
//   judge.replay(text, deliveries, schedule) → {steps, verdict}: a shared race
//                                           schedule, one statement per row
//   judge.handlers()                      → includes "workshop" in a build with the
//                                           workshop's handler in Rust (cargo xtask
//                                           workshop): then a button judges it
//                                           (judge.runWorkshop, judge.replayWorkshop)
//
// The crash sweep kills a process at every storage operation; the browser
// cannot do that to this worker, so the result says "run natively" and shows
// no crash count. The handler's text travels in a share link
// (www/lib/share.js, "#s=…"), with its first failing race schedule once the
// judge found one ("race": "2:ABAB"); opening one fills the editor and
// replays that schedule step by step.
//
// Everything shown is rendered with textContent (dom.js): the text is
// whatever someone typed or pasted.

import { inboxLab } from '../../db/client.js';
import { button, el, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { currentLanguage, onLanguageChange, register, t } from '../../lib/i18n.js';
import { decodeShare, encodeShare, isShare } from '../../lib/share.js';

register({
  en: {
    'handlerlab.title': 'Write your own handler, and let the lab judge it',
    'handlerlab.intro':
      'One SQL statement or one control word (IF, ELSE, END, ANSWER) per line; parameters :source, :event_id, :account_id, :amount. The judge runs every interleaving of 2 or 3 deliveries, a fault after every statement with the retry, and the article’s cases, on a scratch database.',
    'handlerlab.builtin': 'Built-in handler (read-only)',
    'handlerlab.copy': 'Copy and edit',
    'handlerlab.text': 'Your handler',
    'handlerlab.deliveries': 'Deliveries in the race',
    'handlerlab.judge': 'Judge',
    'handlerlab.judging': 'Judging: every interleaving on real connections…',
    'handlerlab.judge.workshop': 'Judge the workshop’s handler (Rust)',
    'handlerlab.progress': 'Judging ({done} of {total} checks done): {check}…',
    'handlerlab.progress.cases': 'the article’s cases',
    'handlerlab.progress.faults': 'a fault after every statement',
    'handlerlab.progress.race_2': 'every interleaving of 2 deliveries',
    'handlerlab.progress.race_3': 'every interleaving of 3 deliveries',
    'handlerlab.progress.done': 'counting',
    'handlerlab.judged.workshop': 'Judged: the workshop’s handler in Rust (workshop/handler.rs), not the text above.',
    'handlerlab.crash.workshop': 'not run in the browser — run natively: cargo xtask workshop',
    'handlerlab.shared.race': 'The link to this handler and its first failing schedule is in the address bar.',
    'handlerlab.opened.race': 'Opened a shared handler and its failing schedule, replayed below. Judge it to see its verdict.',
    'share.race': 'The schedule in this share link is damaged; the handler is opened without it.',
    'handlerlab.share': 'Share link',
    'handlerlab.shared': 'The link to this handler is in the address bar.',
    'handlerlab.opened': 'Opened a shared handler. Judge it to see its verdict.',
    'handlerlab.verdict.correct': 'Verdict: correct',
    'handlerlab.verdict.broken': 'Verdict: broken',
    'handlerlab.parse': 'Line {line}, column {column}: {text}',
    'handlerlab.stopped': 'Stopped: {text}',
    'handlerlab.col.check': 'Check',
    'handlerlab.col.counts': 'What it counted',
    'handlerlab.check.race': 'Race',
    'handlerlab.check.faults': 'Faults',
    'handlerlab.check.crash': 'Crash sweep',
    'handlerlab.check.cases': 'Article’s cases',
    'handlerlab.race':
      '{interleavings} interleavings: {double_credits} double credits, {lost_credits} lost credits, {wrong_answers} wrong answers, {deadlocks} deadlocks',
    'handlerlab.faults':
      '{points} fault points: {lost_credits} lost credits, {double_credits} double credits, {wrong_answers} wrong answers',
    'handlerlab.crash.native': 'not run in the browser — run natively: inbox-lab judge --handler FILE',
    'handlerlab.cases.ok': 'all {n} ok',
    'handlerlab.cases.bad': '{bad} of {n} failed (the first is explained below)',
    'handlerlab.first': 'First failure',
    'handlerlab.first.none': 'No failure found.',
    'handlerlab.failures': 'What went wrong, and why (the first failure of each check)',
    'handlerlab.next': 'Next step ({shown} of {total})',
    'handlerlab.first.race': 'A race of {deliveries} deliveries, schedule {schedule} (delivery of each statement)',
    'handlerlab.replay': 'Replay it step by step',
    'handlerlab.replay.deadlock': 'Every unfinished delivery now waits for a lock another one holds: a deadlock.',
    'handlerlab.replay.verdict':
      'End: balance {balance}, double credit {double_credit}, lost credit {lost_credit}, wrong answer {wrong_answer}',
    'share.too_long': 'Too long to share as a link.',
    'share.not_base64': 'This share link is damaged (not base64url).',
    'share.not_json': 'This share link is damaged (not JSON).',
    'share.not_object': 'This share link holds nothing this page can open.',
    'share.version': 'This share link was made by another version of the page.',
    'share.field': 'This share link holds no handler text.',
    'handlerlab.yes': 'yes',
    'handlerlab.no': 'no',
  },
  ru: {
    'handlerlab.title': 'Напишите свой обработчик — и пусть лаборатория его проверит',
    'handlerlab.intro':
      'Один SQL-оператор или одно управляющее слово (IF, ELSE, END, ANSWER) на строку; параметры :source, :event_id, :account_id, :amount. Судья прогоняет все чередования 2 или 3 доставок, сбой после каждого оператора с повтором и случаи из статьи — на черновой базе.',
    'handlerlab.builtin': 'Встроенный обработчик (только чтение)',
    'handlerlab.copy': 'Скопировать и править',
    'handlerlab.text': 'Ваш обработчик',
    'handlerlab.deliveries': 'Доставок в гонке',
    'handlerlab.judge': 'Проверить',
    'handlerlab.judging': 'Проверяем: все чередования на настоящих соединениях…',
    'handlerlab.judge.workshop': 'Проверить обработчик воркшопа (Rust)',
    'handlerlab.progress': 'Проверяем (готово проверок: {done} из {total}): {check}…',
    'handlerlab.progress.cases': 'случаи из статьи',
    'handlerlab.progress.faults': 'сбой после каждого оператора',
    'handlerlab.progress.race_2': 'все чередования 2 доставок',
    'handlerlab.progress.race_3': 'все чередования 3 доставок',
    'handlerlab.progress.done': 'подсчёт',
    'handlerlab.judged.workshop': 'Проверен обработчик воркшопа на Rust (workshop/handler.rs), а не текст выше.',
    'handlerlab.crash.workshop': 'в браузере не запускается — запустите локально: cargo xtask workshop',
    'handlerlab.shared.race': 'Ссылка на этот обработчик и его первый ошибочный порядок — в адресной строке.',
    'handlerlab.opened.race': 'Открыт присланный обработчик и его ошибочный порядок — он повторён ниже. Нажмите «Проверить», чтобы увидеть вердикт.',
    'share.race': 'Порядок в ссылке повреждён; обработчик открыт без него.',
    'handlerlab.share': 'Ссылка, чтобы поделиться',
    'handlerlab.shared': 'Ссылка на этот обработчик — в адресной строке.',
    'handlerlab.opened': 'Открыт присланный обработчик. Нажмите «Проверить», чтобы увидеть вердикт.',
    'handlerlab.verdict.correct': 'Вердикт: верно',
    'handlerlab.verdict.broken': 'Вердикт: есть ошибки',
    'handlerlab.parse': 'Строка {line}, столбец {column}: {text}',
    'handlerlab.stopped': 'Остановлено: {text}',
    'handlerlab.col.check': 'Проверка',
    'handlerlab.col.counts': 'Что насчитали',
    'handlerlab.check.race': 'Гонка',
    'handlerlab.check.faults': 'Сбои',
    'handlerlab.check.crash': 'Обрывы записи',
    'handlerlab.check.cases': 'Случаи из статьи',
    'handlerlab.race':
      'чередований: {interleavings}; двойных зачислений: {double_credits}, потерянных: {lost_credits}, неверных ответов: {wrong_answers}, взаимных блокировок: {deadlocks}',
    'handlerlab.faults':
      'точек сбоя: {points}; потерянных зачислений: {lost_credits}, двойных: {double_credits}, неверных ответов: {wrong_answers}',
    'handlerlab.crash.native': 'в браузере не запускается — запустите локально: inbox-lab judge --handler ФАЙЛ',
    'handlerlab.cases.ok': 'все {n} в порядке',
    'handlerlab.cases.bad': 'не прошли {bad} из {n} (первый объяснён ниже)',
    'handlerlab.first': 'Первая ошибка',
    'handlerlab.first.none': 'Ошибок не найдено.',
    'handlerlab.failures': 'Что пошло не так и почему (первая ошибка каждой проверки)',
    'handlerlab.next': 'Следующий шаг ({shown} из {total})',
    'handlerlab.first.race': 'Гонка из {deliveries} доставок, порядок {schedule} (чей оператор по очереди)',
    'handlerlab.replay': 'Повторить по шагам',
    'handlerlab.replay.deadlock': 'Каждая незавершённая доставка ждёт блокировку, которую держит другая: взаимная блокировка.',
    'handlerlab.replay.verdict':
      'Итог: баланс {balance}; двойное зачисление — {double_credit}, потерянное — {lost_credit}, неверный ответ — {wrong_answer}',
    'share.too_long': 'Слишком длинно, чтобы поделиться ссылкой.',
    'share.not_base64': 'Ссылка повреждена (это не base64url).',
    'share.not_json': 'Ссылка повреждена (это не JSON).',
    'share.not_object': 'В ссылке нет ничего, что эта страница может открыть.',
    'share.version': 'Ссылку сделала другая версия страницы.',
    'share.field': 'В ссылке нет текста обработчика.',
    'handlerlab.yes': 'да',
    'handlerlab.no': 'нет',
  },
});

const HANDLERS = ['atomic', 'no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace'];
const LETTERS = ['A', 'B', 'C'];

export function mount() {
  const section = document.querySelector('#handler-lab');
  if (section !== null) {
    build(section);
  }
}

function build(root) {
  const label = (key, target) => el('label', { i18n: key, attrs: { for: target } });
  const ui = {
    builtin: el('select', { attrs: { id: 'handler-builtin' } }),
    builtinText: el('pre', { className: 'handler-builtin-text', attrs: { id: 'handler-builtin-text', tabindex: '0' } }),
    copy: button('handlerlab.copy', 'handler-copy'),
    text: el('textarea', {
      className: 'handler-text',
      attrs: { id: 'handler-text', rows: '16', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off' },
    }),
    deliveries: el('select', { attrs: { id: 'handler-deliveries' } }),
    judge: button('handlerlab.judge', 'handler-judge', null, ''),
    judgeWorkshop: button('handlerlab.judge.workshop', 'handler-judge-workshop'),
    share: button('handlerlab.share', 'handler-share'),
    status: el('p', { className: 'handler-status', attrs: { id: 'handler-status', role: 'status' } }),
    progress: el('progress', { attrs: { id: 'handler-progress', hidden: '' } }),
    result: el('div', { className: 'handler-result', attrs: { id: 'handler-result', 'aria-live': 'polite' } }),
  };
  for (const name of HANDLERS) {
    ui.builtin.append(el('option', { text: name, attrs: { value: name } }));
  }
  for (const n of [2, 3]) {
    ui.deliveries.append(el('option', { text: String(n), attrs: { value: String(n) } }));
  }
  root.append(
    el('p', { i18n: 'handlerlab.intro' }),
    el('div', { className: 'handler-field' }, label('handlerlab.builtin', 'handler-builtin'), ui.builtin),
    ui.builtinText,
    el('div', { className: 'actions' }, ui.copy),
    el('div', { className: 'handler-field' }, label('handlerlab.text', 'handler-text'), ui.text),
    el('div', { className: 'handler-field' }, label('handlerlab.deliveries', 'handler-deliveries'), ui.deliveries),
    el('div', { className: 'actions' }, ui.judge, ui.judgeWorkshop, ui.share),
    ui.progress,
    ui.status,
    ui.result,
  );

  // The last judgement, redrawn on a language change: {source, answer}, where
  // source is {text} or {workshop: true} (the workshop's handler in Rust).
  let last = null;
  const showBuiltin = async () => {
    try {
      ui.builtinText.textContent = await inboxLab.judge.builtin(ui.builtin.value);
    } catch (error) {
      ui.builtinText.textContent = errorMessage(error);
    }
  };
  ui.builtin.addEventListener('change', showBuiltin);
  ui.copy.addEventListener('click', () => {
    ui.text.value = ui.builtinText.textContent;
    ui.text.focus();
  });
  const judge = async (source) => {
    const deliveries = Number(ui.deliveries.value);
    ui.judge.disabled = true;
    ui.judgeWorkshop.disabled = true;
    ui.progress.hidden = false;
    ui.progress.removeAttribute('value'); // indeterminate until the worker tells
    ui.status.textContent = t('handlerlab.judging');
    ui.result.replaceChildren();
    const stop = inboxLab.judge.onProgress(({ done, total, check }) => {
      ui.progress.max = total;
      ui.progress.value = done;
      ui.status.textContent = t('handlerlab.progress', { done, total, check: t(`handlerlab.progress.${check}`) });
    });
    try {
      const answer = await whileBusy(() =>
        source.workshop ? inboxLab.judge.runWorkshop(deliveries) : inboxLab.judge.run(source.text, deliveries),
      );
      last = { source, answer, shown: (answer.report?.failures ?? []).map(() => 0) };
      ui.status.textContent = '';
      draw(ui, last);
    } catch (error) {
      ui.status.textContent = errorMessage(error);
    } finally {
      stop();
      ui.judge.disabled = false;
      ui.judgeWorkshop.disabled = false;
      ui.progress.hidden = true;
    }
  };
  ui.judge.addEventListener('click', () => judge({ text: ui.text.value }));
  ui.judgeWorkshop.hidden = true;
  ui.judgeWorkshop.addEventListener('click', () => judge({ workshop: true }));
  inboxLab.judge.handlers().then(
    (names) => {
      ui.judgeWorkshop.hidden = !names.includes('workshop');
    },
    () => {}, // no worker: Judge says so when pressed
  );
  ui.share.addEventListener('click', () => {
    // The first failing race schedule travels too, when the judge found one
    // for exactly this text.
    const failure = last?.source.text === ui.text.value ? last.answer.report?.first_failure : null;
    const race = failure?.check === 'race' ? `${failure.deliveries}:${failure.schedule.map((i) => LETTERS[i]).join('')}` : null;
    const made = encodeShare(race === null ? { handler: ui.text.value } : { handler: ui.text.value, race });
    if (made.error) {
      ui.status.textContent = t(made.error);
      return;
    }
    history.replaceState(null, '', made.fragment);
    ui.status.textContent = t(race === null ? 'handlerlab.shared' : 'handlerlab.shared.race');
  });
  onLanguageChange(() => {
    if (last !== null) {
      draw(ui, last);
    }
  });

  showBuiltin();
  if (isShare(location.hash)) {
    const opened = decodeShare(location.hash, ['handler'], ['race']);
    if (opened.error) {
      ui.status.textContent = t(opened.error);
    } else {
      const text = opened.state.handler;
      ui.text.value = text;
      const race = opened.state.race === undefined ? null : raceOf(opened.state.race);
      if (race === null) {
        ui.status.textContent = t(opened.state.race === undefined ? 'handlerlab.opened' : 'share.race');
      } else {
        ui.status.textContent = t('handlerlab.opened.race');
        const view = replayView(text, race.deliveries, race.schedule);
        ui.result.replaceChildren(el('h3', { text: t('handlerlab.first') }), ...view.nodes);
        view.replay();
      }
      root.scrollIntoView();
    }
  }
}

function draw(ui, { source, answer, shown }) {
  const out = [];
  if (answer.result === 'parse_error') {
    const sentence = currentLanguage() === 'ru' ? answer.ru : answer.en;
    out.push(el('p', { className: 'handler-verdict broken', text: t('handlerlab.parse', { line: answer.line, column: answer.column, text: sentence }) }));
    ui.result.replaceChildren(...out);
    return;
  }
  const r = answer.report;
  if (source.workshop) {
    out.push(el('p', { attrs: { id: 'handler-judged' }, text: t('handlerlab.judged.workshop') }));
  }
  out.push(el('p', { className: `handler-verdict ${r.verdict}`, attrs: { id: 'handler-verdict' }, text: t(`handlerlab.verdict.${r.verdict}`) }));
  if (r.stopped) {
    out.push(el('p', { text: t('handlerlab.stopped', { text: r.stopped }) }));
  }
  const cases = Object.entries(r.cases ?? {});
  const bad = cases.filter(([, what]) => what !== 'ok');
  const rows = [
    ['handlerlab.check.race', t('handlerlab.race', r.race)],
    ['handlerlab.check.faults', t('handlerlab.faults', r.faults)],
    ['handlerlab.check.crash', t(source.workshop ? 'handlerlab.crash.workshop' : 'handlerlab.crash.native')],
    ['handlerlab.check.cases', t(bad.length === 0 ? 'handlerlab.cases.ok' : 'handlerlab.cases.bad', { bad: bad.length, n: cases.length })],
  ];
  const table = el(
    'table',
    { className: 'handler-table', attrs: { id: 'handler-table' } },
    el('thead', {}, el('tr', {}, el('th', { text: t('handlerlab.col.check'), attrs: { scope: 'col' } }), el('th', { text: t('handlerlab.col.counts'), attrs: { scope: 'col' } }))),
    el('tbody', {}, ...rows.map(([key, value]) => el('tr', {}, el('th', { text: t(key), attrs: { scope: 'row' } }), el('td', { text: value })))),
  );
  out.push(table, el('h3', { text: t('handlerlab.failures') }));
  if (r.failures.length === 0) {
    out.push(el('p', { text: t('handlerlab.first.none') }));
  }
  // Each check's first failure, explained and replayed in Rust's words; the
  // steps shown so far survive a language change (`shown`).
  const lang = currentLanguage() === 'ru' ? 'ru' : 'en';
  r.failures.forEach((f, i) => {
    const steps = el('ol', { className: 'handler-steps' });
    const next = el('button', { className: 'handler-next', attrs: { type: 'button' } });
    const reveal = () => {
      steps.replaceChildren(...f.steps.slice(0, shown[i]).map((s) => el('li', { text: s[lang] })));
      next.textContent = t('handlerlab.next', { shown: shown[i], total: f.steps.length });
      next.disabled = shown[i] >= f.steps.length;
    };
    next.addEventListener('click', () => {
      shown[i] += 1;
      reveal();
    });
    reveal();
    const check = f.check === 'case' ? 'cases' : f.check;
    out.push(
      el('section', { className: 'handler-failure', attrs: { 'data-check': f.check } },
        el('h4', { text: t(`handlerlab.check.${check}`) }),
        el('p', { className: 'handler-why', text: f.why[lang] }),
        next,
        steps,
      ),
    );
  });
  ui.result.replaceChildren(...out);
}

/**
 * A shared race schedule of `text` with a button that replays it on fresh
 * connections (the article's event), one statement per row: {nodes, replay}.
 */
function replayView(text, deliveries, schedule) {
  const first = el('p', {
    attrs: { id: 'handler-first' },
    text: t('handlerlab.first.race', { deliveries, schedule: schedule.map((i) => LETTERS[i]).join(' ') }),
  });
  const button = el('button', { text: t('handlerlab.replay'), attrs: { type: 'button', id: 'handler-replay' } });
  const steps = el('ol', { className: 'handler-steps', attrs: { id: 'handler-steps' } });
  const replay = async () => {
    button.disabled = true;
    try {
      const run = await whileBusy(() => inboxLab.judge.replay(text, deliveries, schedule));
      steps.replaceChildren(...run.steps.map((s) => el('li', { text: `${LETTERS[s.delivery]}: ${(s.statements ?? []).join('; ')} → ${stepResult(s)}` })));
      const end = run.verdict
        ? t('handlerlab.replay.verdict', {
            balance: run.verdict.balance,
            double_credit: yes(run.verdict.double_credit),
            lost_credit: yes(run.verdict.lost_credit),
            wrong_answer: yes(run.verdict.wrong_answer),
          })
        : t('handlerlab.replay.deadlock');
      steps.append(el('li', { className: 'handler-end', text: end }));
    } catch (error) {
      steps.replaceChildren(el('li', { text: errorMessage(error) }));
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener('click', replay);
  return { nodes: [first, button, steps], replay };
}

/** A shared schedule "2:ABAB" → {deliveries, schedule: [0, 1, 0, 1]}, or null. */
function raceOf(text) {
  const m = /^([23]):([ABC]{1,10000})$/.exec(text);
  if (m === null) {
    return null;
  }
  const deliveries = Number(m[1]);
  const schedule = [...m[2]].map((letter) => LETTERS.indexOf(letter));
  return schedule.every((i) => i < deliveries) ? { deliveries, schedule } : null;
}

/** What a step did, in the race lab's words (racelab.js registers them). */
function stepResult(step) {
  return t(`racelab.result.${step.result}`, { answer: step.answer, kind: step.kind, message: step.message });
}

function yes(flag) {
  return t(flag ? 'handlerlab.yes' : 'handlerlab.no');
}
