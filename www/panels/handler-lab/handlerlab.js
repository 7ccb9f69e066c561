// Write your own handler: a handler text (docs/handler-language.md) judged by
// the race explorer, the fault points and the article's cases — in the
// judge's own worker (www/db/guest.js), on an in-memory database of its
// own (Rust `judgeHandler`), never the reader's:
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
import { HANDLERS, LETTERS, decodeShare, encodeShare, isShare, orderOf, orderText } from '../../lib/share.js';

register({
  'handlerlab.title': { en: 'Write your own handler, and let the lab judge it', ru: 'Напишите свой обработчик — и пусть лаборатория его проверит' },
  'handlerlab.intro': { en: 'One SQL statement or one control word (IF, ELSE, END, ANSWER) per line; parameters :source, :event_id, :account_id, :amount. The judge runs every interleaving of 2 or 3 deliveries, a fault after every statement with the retry, and the article’s cases, on a scratch database.',
    ru: 'Один SQL-оператор или одно управляющее слово (IF, ELSE, END, ANSWER) на строку; параметры :source, :event_id, :account_id, :amount. Судья прогоняет все чередования 2 или 3 доставок, сбой после каждого оператора с повтором и случаи из статьи — на черновой базе.' },
  'handlerlab.builtin': { en: 'Built-in handler (read-only)', ru: 'Встроенный обработчик (только чтение)' },
  'handlerlab.copy': { en: 'Copy and edit', ru: 'Скопировать и править' },
  'handlerlab.text': { en: 'Your handler', ru: 'Ваш обработчик' },
  'handlerlab.deliveries': { en: 'Deliveries in the race', ru: 'Доставок в гонке' },
  'handlerlab.judge': { en: 'Judge', ru: 'Проверить' },
  'handlerlab.judging': { en: 'Judging: every interleaving on real connections…', ru: 'Проверяем: все чередования на настоящих соединениях…' },
  'handlerlab.judge.workshop': { en: 'Judge the workshop’s handler (Rust)', ru: 'Проверить обработчик воркшопа (Rust)' },
  'handlerlab.progress': { en: 'Judging ({done} of {total} checks done): {check}…', ru: 'Проверяем (готово проверок: {done} из {total}): {check}…' },
  'handlerlab.progress.cases': { en: 'the article’s cases', ru: 'случаи из статьи' },
  'handlerlab.progress.faults': { en: 'a fault after every statement', ru: 'сбой после каждого оператора' },
  'handlerlab.progress.race_2': { en: 'every interleaving of 2 deliveries', ru: 'все чередования 2 доставок' },
  'handlerlab.progress.race_3': { en: 'every interleaving of 3 deliveries', ru: 'все чередования 3 доставок' },
  'handlerlab.progress.done': { en: 'counting', ru: 'подсчёт' },
  'handlerlab.judged.workshop': { en: 'Judged: the workshop’s handler in Rust (workshop/handler.rs), not the text above.',
    ru: 'Проверен обработчик воркшопа на Rust (workshop/handler.rs), а не текст выше.' },
  'handlerlab.crash.workshop': { en: 'not run in the browser — run natively: cargo xtask workshop',
    ru: 'в браузере не запускается — запустите локально: cargo xtask workshop' },
  'handlerlab.shared.race': { en: 'The link to this handler and its first failing schedule is in the address bar.',
    ru: 'Ссылка на этот обработчик и его первый ошибочный порядок — в адресной строке.' },
  'handlerlab.opened.race': { en: 'Opened a shared handler and its failing schedule, replayed below. Judge it to see its verdict.',
    ru: 'Открыт присланный обработчик и его ошибочный порядок — он повторён ниже. Нажмите «Проверить», чтобы увидеть вердикт.' },
  'share.race': { en: 'The schedule in this share link is damaged; the handler is opened without it.',
    ru: 'Порядок в ссылке повреждён; обработчик открыт без него.' },
  'handlerlab.share': { en: 'Share link', ru: 'Ссылка, чтобы поделиться' },
  'handlerlab.shared': { en: 'The link to this handler is in the address bar.', ru: 'Ссылка на этот обработчик — в адресной строке.' },
  'handlerlab.opened': { en: 'Opened a shared handler. Judge it to see its verdict.',
    ru: 'Открыт присланный обработчик. Нажмите «Проверить», чтобы увидеть вердикт.' },
  'handlerlab.verdict.correct': { en: 'Verdict: correct', ru: 'Вердикт: верно' },
  'handlerlab.verdict.broken': { en: 'Verdict: broken', ru: 'Вердикт: есть ошибки' },
  'handlerlab.parse': { en: 'Line {line}, column {column}: {text}', ru: 'Строка {line}, столбец {column}: {text}' },
  'handlerlab.stopped': { en: 'Stopped: {text}', ru: 'Остановлено: {text}' },
  'handlerlab.col.check': { en: 'Check', ru: 'Проверка' },
  'handlerlab.col.counts': { en: 'What it counted', ru: 'Что насчитали' },
  'handlerlab.check.race': { en: 'Race', ru: 'Гонка' },
  'handlerlab.check.faults': { en: 'Faults', ru: 'Сбои' },
  'handlerlab.check.crash': { en: 'Crash sweep', ru: 'Обрывы записи' },
  'handlerlab.check.cases': { en: 'Article’s cases', ru: 'Случаи из статьи' },
  'handlerlab.race': { en: '{interleavings} interleavings: {double_credits} double credits, {lost_credits} lost credits, {wrong_answers} wrong answers, {deadlocks} deadlocks',
    ru: 'чередований: {interleavings}; двойных зачислений: {double_credits}, потерянных: {lost_credits}, неверных ответов: {wrong_answers}, взаимных блокировок: {deadlocks}' },
  'handlerlab.faults': { en: '{points} fault points: {lost_credits} lost credits, {double_credits} double credits, {wrong_answers} wrong answers',
    ru: 'точек сбоя: {points}; потерянных зачислений: {lost_credits}, двойных: {double_credits}, неверных ответов: {wrong_answers}' },
  'handlerlab.crash.native': { en: 'not run in the browser — run natively: inbox-lab judge --handler FILE',
    ru: 'в браузере не запускается — запустите локально: inbox-lab judge --handler ФАЙЛ' },
  'handlerlab.cases.ok': { en: 'all {n} ok', ru: 'все {n} в порядке' },
  'handlerlab.cases.bad': { en: '{bad} of {n} failed (the first is explained below)', ru: 'не прошли {bad} из {n} (первый объяснён ниже)' },
  'handlerlab.first': { en: 'First failure', ru: 'Первая ошибка' },
  'handlerlab.first.none': { en: 'No failure found.', ru: 'Ошибок не найдено.' },
  'handlerlab.failures': { en: 'What went wrong, and why (the first failure of each check)',
    ru: 'Что пошло не так и почему (первая ошибка каждой проверки)' },
  'handlerlab.next': { en: 'Next step ({shown} of {total})', ru: 'Следующий шаг ({shown} из {total})' },
  'handlerlab.first.race': { en: 'A race of {deliveries} deliveries, schedule {schedule} (delivery of each statement)',
    ru: 'Гонка из {deliveries} доставок, порядок {schedule} (чей оператор по очереди)' },
  'handlerlab.replay': { en: 'Replay it step by step', ru: 'Повторить по шагам' },
  'handlerlab.replay.deadlock': { en: 'Every unfinished delivery now waits for a lock another one holds: a deadlock.',
    ru: 'Каждая незавершённая доставка ждёт блокировку, которую держит другая: взаимная блокировка.' },
  'handlerlab.replay.verdict': { en: 'End: balance {balance}, double credit {double_credit}, lost credit {lost_credit}, wrong answer {wrong_answer}',
    ru: 'Итог: баланс {balance}; двойное зачисление — {double_credit}, потерянное — {lost_credit}, неверный ответ — {wrong_answer}' },
  'share.too_long': { en: 'Too long to share as a link.', ru: 'Слишком длинно, чтобы поделиться ссылкой.' },
  'share.not_base64': { en: 'This share link is damaged (not base64url).', ru: 'Ссылка повреждена (это не base64url).' },
  'share.not_json': { en: 'This share link is damaged (not JSON).', ru: 'Ссылка повреждена (это не JSON).' },
  'share.not_object': { en: 'This share link holds nothing this page can open.', ru: 'В ссылке нет ничего, что эта страница может открыть.' },
  'share.version': { en: 'This share link was made by another version of the page.', ru: 'Ссылку сделала другая версия страницы.' },
  'share.field': { en: 'This share link holds no handler text.', ru: 'В ссылке нет текста обработчика.' },
  'handlerlab.yes': { en: 'yes', ru: 'да' },
  'handlerlab.no': { en: 'no', ru: 'нет' },
});

export function mount(root) {
  const label = (key, target) => el('label', { i18n: key, attrs: { for: target } });
  const option = (value) => el('option', { text: value, attrs: { value } });
  const ui = {
    builtin: el('select', { attrs: { id: 'handler-builtin' } }, ...HANDLERS.map(option)),
    builtinText: el('pre', { className: 'handler-builtin-text', attrs: { id: 'handler-builtin-text', tabindex: '0' } }),
    copy: button('handlerlab.copy', 'handler-copy'),
    text: el('textarea', {
      className: 'handler-text',
      attrs: { id: 'handler-text', rows: '16', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off' },
    }),
    deliveries: el('select', { attrs: { id: 'handler-deliveries' } }, ...['2', '3'].map(option)),
    judge: button('handlerlab.judge', 'handler-judge', null, ''),
    judgeWorkshop: button('handlerlab.judge.workshop', 'handler-judge-workshop'),
    share: button('handlerlab.share', 'handler-share'),
    status: el('p', { className: 'handler-status', attrs: { id: 'handler-status', role: 'status' } }),
    progress: el('progress', { attrs: { id: 'handler-progress', hidden: '' } }),
    result: el('div', { className: 'handler-result', attrs: { id: 'handler-result', 'aria-live': 'polite' } }),
  };
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
    const race = failure?.check === 'race' ? `${failure.deliveries}:${orderText(failure.schedule)}` : null;
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
  const schedule = orderOf(m[2]);
  return schedule.every((i) => i < deliveries) ? { deliveries, schedule } : null;
}

/** What a step did, in the race lab's words (racelab.js registers them). */
function stepResult(step) {
  return t(`racelab.result.${step.result}`, { answer: step.answer, kind: step.kind, message: step.message });
}

function yes(flag) {
  return t(flag ? 'handlerlab.yes' : 'handlerlab.no');
}
