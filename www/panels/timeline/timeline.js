// Draws the timeline (lib/timeline.js): every delivery, newest first,
// with what it answered and a small diagram of the steps Rust says it ran —
// green kept, struck-through undone, red where it went wrong.

import { countsText, el, formatNumber, formatSeconds } from '../../lib/dom.js';
import { outcomeWord } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { verdictElement, verdictNotes, verdictWhy } from '../../lib/verdict.js';
import { opLabel, outcomeOf, stateOf } from '../../lib/timeline.js';

register({
  'timeline.title': { en: 'Timeline: every delivery, newest first', ru: 'Хронология: все доставки, новые сверху' },
  'timeline.clear': { en: 'Clear', ru: 'Очистить' },
  'timeline.empty': { en: 'No deliveries yet.', ru: 'Доставок пока не было.' },
  'timeline.dropped': { en: '{count} older deliveries are no longer shown.', ru: 'Более ранние доставки ({count}) уже не показаны.' },
  'timeline.at': { en: 't={seconds} s', ru: 't={seconds} с' },
  'timeline.attempt': { en: 'attempt {attempt} of {of}', ru: 'попытка {attempt} из {of}' },
  'timeline.via.sender': { en: 'sender', ru: 'отправитель' },
  'timeline.via.step': { en: 'step mode', ru: 'пошаговый режим' },
  'timeline.via.burst': { en: 'burst', ru: 'залп' },
  'timeline.via.webhook': { en: 'webhook', ru: 'вебхук' },
  'timeline.retryable.yes': { en: 'retryable', ru: 'можно повторить' },
  'timeline.retryable.no': { en: 'not retryable', ru: 'повторять бесполезно' },
  'timeline.lost': { en: 'response lost', ru: 'ответ потерян' },
  'timeline.took': { en: '{ms} ms', ru: '{ms} мс' },
  'timeline.no_sql': { en: 'no SQL ran', ru: 'SQL не выполнялся' },
  'timeline.unknown_sql': { en: 'statements not known', ru: 'какие операторы выполнены, неизвестно' },
  'timeline.statements': { en: 'Statements', ru: 'Операторы' },
  'timeline.legend': { en: 'What the boxes mean', ru: 'Что значат рамки' },
  'timeline.burst_distinct': { en: 'burst of {count} different events', ru: 'залп из {count} разных событий' },
  'timeline.state.ok': { en: 'ran, kept', ru: 'выполнен, сохранён' },
  'timeline.state.no_row': { en: 'ran, inserted no row (the key exists)', ru: 'выполнен, строка не вставлена (ключ уже есть)' },
  'timeline.state.undone': { en: 'ran, undone by the rollback', ru: 'выполнен, отменён откатом' },
  'timeline.state.failed': { en: 'went wrong here', ru: 'здесь произошла ошибка' },
  'timeline.state.crash': { en: 'the handler died here', ru: 'здесь обработчик упал' },
  'timeline.state.rollback': { en: 'rolled back', ru: 'откат' },
  'timeline.state.open': { en: 'ran, its transaction still open', ru: 'выполнен, транзакция ещё открыта' },
  'timeline.rows': { en: 'rows changed: {rows}', ru: 'изменено строк: {rows}' },
  'timeline.no_answer': { en: 'no answer', ru: 'нет ответа' },
});

// The page's timeline (lib/timeline.js, `services.timeline`): the sender,
// step mode, bursts and relayed webhooks add to it.
let timeline = null;
let list = null;
let empty = null;

/** Returns `stepsDiagram`, which the race lab draws its deliveries with. */
export function mount(root, services) {
  timeline = services.timeline;
  list = document.querySelector('#timeline');
  empty = document.querySelector('#timeline-empty');
  timeline.subscribe(draw);
  onLanguageChange(draw);
  document.querySelector('#timeline-clear').addEventListener('click', () => timeline.clear());
  legend = document.querySelector('#timeline-legend');
  onLanguageChange(drawLegend);
  drawLegend();
  draw();
  return { stepsDiagram };
}

/** The box states, each drawn as a box of the timeline with its words: nothing left to tooltips. */
const LEGEND = ['ok', 'no_row', 'open', 'undone', 'rollback', 'failed', 'crash'];

let legend = null;

function drawLegend() {
  legend.replaceChildren(
    el(
      'ul',
      { className: 'ops-legend', attrs: { 'aria-labelledby': 'timeline-legend-label' } },
      ...LEGEND.map((state) =>
        el('li', {}, el('span', { className: `op op-${state}`, text: 'SQL', attrs: { 'aria-hidden': 'true' } }), ` ${t(`timeline.state.${state}`)}`),
      ),
    ),
  );
}

function draw() {
  const entries = timeline.entries().reverse();
  const rows = entries.map(entryItem);
  if (timeline.dropped > 0) {
    rows.push(el('li', { className: 'note', text: t('timeline.dropped', { count: formatNumber(timeline.dropped) }) }));
  }
  list.replaceChildren(...rows);
  empty.hidden = entries.length > 0;
}

function entryItem(entry) {
  if (entry.via === 'burst_distinct') {
    return el(
      'li',
      { className: 'entry', data: { seq: entry.seq, via: entry.via } },
      el('p', { className: 'entry-head', text: `#${entry.seq} · ${t('timeline.burst_distinct', { count: formatNumber(entry.count) })}` }),
      el('p', { className: 'entry-answer', text: `${countsText(entry.counts)} · ${t('timeline.took', { ms: formatNumber(Math.round(entry.tookMs)) })}` }),
    );
  }
  const outcome = outcomeOf(entry.answer);
  const { source, event_id, account_id, amount } = entry.event;
  const head = [
    `#${entry.seq}`,
    t('timeline.at', { seconds: formatSeconds(entry.at) }),
    `${source} / ${event_id} → ${account_id}: ${amount}`,
  ].join(' · ');
  const meta = [
    t('timeline.attempt', { attempt: entry.attempt, of: entry.of }),
    entry.handler,
    t(`timeline.via.${entry.via}`),
  ].join(' · ');
  const answer = [
    outcome === 'no_answer' ? t('timeline.no_answer') : outcomeWord(outcome),
    entry.answer?.http_status,
    retryableText(entry.answer),
    // "No answer" already says it all when the worker died before answering.
    entry.lost && outcome !== 'no_answer' ? t('timeline.lost') : undefined,
    t('timeline.took', { ms: formatNumber(Math.round(entry.tookMs)) }),
  ]
    .filter((part) => part !== undefined)
    .join(' · ');
  // What really happened (Rust's verdict), next to what was answered.
  const verdict = entry.answer?.verdict;
  return el(
    'li',
    {
      className: `entry outcome-${outcome}${verdict && verdict.kind !== 'correct' ? ' verdict-wrong' : ''}`,
      data: { seq: entry.seq, outcome, handler: entry.handler, attempt: entry.attempt, verdict: verdict?.kind ?? 'none' },
    },
    el('p', { className: 'entry-head', text: head }),
    el('p', { className: 'entry-meta', text: meta }),
    el('p', { className: 'entry-answer', text: answer }),
    ...(verdict ? [entryVerdict(verdict)] : []),
    stepsDiagram(entry.steps),
  );
}

// The verdict's word on its badge, what is said next to it (what breaks a
// mistake right this time, a crash point not reached); for a mistake, why.
function entryVerdict(verdict) {
  const why = verdict.kind === 'correct' ? [] : [verdictWhy(verdict)];
  const texts = [...verdictNotes(verdict), ...why].flatMap((text, i) => [i === 0 ? ' ' : ' · ', el('span', { className: 'entry-why', text })]);
  return el('p', { className: 'entry-verdict' }, verdictElement(verdict, { short: true }), ...texts);
}

// Errors say whether to retry; a 200 is never retried, so it says nothing.
function retryableText(answer) {
  if (answer === null || answer === undefined || answer.kind === undefined) {
    return undefined;
  }
  return t(answer.retryable ? 'timeline.retryable.yes' : 'timeline.retryable.no');
}

/**
 * The boxes: one per step Rust reported (`[{op, statements, rows, effect}]`),
 * coloured by what became of it; the SQL in its tooltip. A step the page
 * adds itself (`{op: "kill", state}`: the worker was terminated, so nobody
 * could report it) carries its state. The race lab draws its deliveries
 * with it too.
 */
function stepsDiagram(steps) {
  if (steps === null || steps === undefined) {
    return el('p', { className: 'ops-note', text: t('timeline.unknown_sql') });
  }
  if (steps.length === 0) {
    return el('p', { className: 'ops-note', text: t('timeline.no_sql') });
  }
  return el(
    'ol',
    { className: 'ops', attrs: { 'aria-label': t('timeline.statements') } },
    ...steps.map((step) => {
      const state = step.state ?? stateOf(step);
      const sql = (step.statements ?? []).join(';\n');
      const rows = step.rows > 0 ? ` · ${t('timeline.rows', { rows: step.rows })}` : '';
      return el(
        'li',
        { className: `op op-${state}`, title: `${t(`timeline.state.${state}`)}${rows}${sql ? `\n${sql}` : ''}`, data: { op: step.op, state } },
        opLabel(step.op),
        // The colour alone would leave out anyone who cannot see it.
        el('span', { className: 'sr-only', text: `: ${t(`timeline.state.${state}`)}${rows}` }),
      );
    }),
  );
}
