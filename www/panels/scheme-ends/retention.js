// Experiment 3, retention: purging inbox rows makes old events new again
// (src/labs/scheme_ends/retention.rs), on the lab's simulated clock. Rust's
// story counts how often it saw one event applied: twice is the hazard.

import { el, formatNumber } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { currentLanguage, t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';
import { ACCOUNT, AMOUNT, SOURCE, act, answerOf, caseHeader, fixBox, isError, showBalance, tx } from './parts.js';

const DAY_MS = 86_400_000;
const WINDOWS_DAYS = [1, 3, 7, 30];

/** The retention experiment on `db` (the database client); `load` redraws the whole panel. */
export function retention(db, load) {
  const state = {
    next: 1, // the number of the ret-N event
    now: 0,
    windowDays: 1,
    receivedAt: null, // when the current event's inbox row was received; null: no row
    log: [], // newest first
    tables: null,
  };
  const nodes = {
    clock: el('p', { className: 'se-clock', attrs: { id: 'se-clock', 'aria-live': 'polite' } }),
    window: el('select', { attrs: { id: 'se-window', name: 'window' } }),
    event: el('p', { className: 'se-event', attrs: { id: 'se-ret-event' } }),
    row: el('p', { className: 'se-row', attrs: { id: 'se-ret-row' } }),
    balance: el('p', { className: 'se-balance', attrs: { id: 'se-ret-balance' } }),
    log: el('ol', { className: 'se-log', attrs: { id: 'se-ret-log', 'aria-live': 'polite' } }),
    note: el('p', { className: 'field-error', attrs: { role: 'status' } }),
  };

  const currentEvent = () => ({ source: SOURCE, event_id: `ret-${state.next}`, account_id: ACCOUNT, amount: AMOUNT });

  async function advance(days) {
    await db.scheme.advanceClock(days * DAY_MS);
    await load();
    observe('retention', { action: 'advance', at: state.now, days });
  }

  async function deliver() {
    const event = currentEvent();
    const reply = await answerOf(db.scheme.redeliver(event));
    const entry = { kind: 'deliver', at: state.now, event_id: event.event_id, reply };
    state.log.unshift(entry);
    await load();
    observe('retention', { action: 'deliver', at: entry.at, event, answer: reply });
  }

  async function purge(days = state.windowDays) {
    setWindow(days);
    const count = await db.scheme.purge(days * DAY_MS);
    state.log.unshift({ kind: 'purge', at: state.now, count, days });
    await load();
    observe('retention', { action: 'purge', at: state.now, count, days });
  }

  async function nextEvent() {
    state.next += 1;
    state.receivedAt = await receivedAt();
    render();
  }

  function setWindow(days) {
    state.windowDays = days;
    nodes.window.value = String(days);
  }

  /** When the current event's inbox row was received (null: none), as the database says. */
  const receivedAt = () => db.scheme.receivedAt(SOURCE, currentEvent().event_id);

  function show(view) {
    state.tables = view.tables;
    state.now = view.now;
    state.receivedAt = view.receivedAt;
    render();
  }

  function render() {
    nodes.clock.textContent = t('se.rt.clock', { day: day(state.now) });
    for (const option of nodes.window.options) {
      option.textContent = daysText(Number(option.value));
    }
    nodes.window.value = String(state.windowDays);
    const event = currentEvent();
    nodes.event.textContent = t('se.rt.event', event);
    if (state.tables !== null) {
      const kept = state.receivedAt !== null;
      nodes.row.textContent = kept ? t('se.rt.row.kept_since', { ...event, day: day(state.receivedAt) }) : t('se.rt.row.none', event);
      nodes.row.dataset.kept = String(kept);
      showBalance(nodes.balance, state.tables);
    }
    nodes.log.replaceChildren(...state.log.map(logItem));
  }

  for (const days of WINDOWS_DAYS) {
    nodes.window.append(el('option', { attrs: { value: days }, text: daysText(days) }));
  }
  nodes.window.addEventListener('change', () => {
    state.windowDays = Number(nodes.window.value);
  });
  const button = (key, id, action, className = 'secondary') => {
    const node = tx('button', key, { className, attrs: { type: 'button', id } });
    node.addEventListener('click', () => act(nodes.note, action));
    return node;
  };
  const node = el(
    'section',
    { className: 'se-case', attrs: { id: 'se-retention', 'aria-labelledby': 'se-retention-title' } },
    ...caseHeader('se-retention-title', 'se.rt.title', 'se.rt.problem', 'se.rt.try'),
    el(
      'div',
      { className: 'se-controls' },
      el(
        'div',
        { className: 'se-clock-box' },
        nodes.clock,
        el(
          'div',
          { className: 'actions' },
          button('se.rt.plus_day', 'se-plus-day', () => advance(1)),
          button('se.rt.plus_week', 'se-plus-week', () => advance(7)),
        ),
      ),
      el(
        'div',
        {},
        nodes.event,
        el(
          'div',
          { className: 'actions' },
          button('se.rt.deliver', 'se-ret-deliver', deliver, ''),
          button('se.rt.next', 'se-ret-next', nextEvent),
        ),
        nodes.row,
        nodes.balance,
      ),
      el(
        'div',
        {},
        el('div', { className: 'field' }, tx('label', 'se.rt.window', { attrs: { for: 'se-window' } }), nodes.window),
        el('div', { className: 'actions' }, button('se.rt.purge', 'se-purge', () => purge(), 'danger')),
        tx('p', 'se.rt.scope', { className: 'note' }),
      ),
    ),
    nodes.note,
    nodes.log,
    fixBox('se.rt.rule', tx('p', 'se.rt.interrupt')),
  );
  return {
    node,
    show,
    render,
    receivedAt,
    resume: (next) => {
      state.next = next;
    },
  };
}

function daysText(days) {
  // 1 день, 3 дня, 7 дней: the language's own plural forms (one, few, many, other).
  return t(`se.rt.days_${new Intl.PluralRules(currentLanguage()).select(days)}`, { days });
}

function day(ms) {
  return (ms / DAY_MS).toLocaleString(currentLanguage(), { maximumFractionDigits: 2 });
}

function logItem(entry) {
  if (entry.kind === 'purge') {
    return el('li', {
      data: { kind: 'purge' },
      text: t('se.rt.log.purge', { day: day(entry.at), count: entry.count, window: daysText(entry.days) }),
    });
  }
  const { reply } = entry;
  if (isError(reply)) {
    return el('li', {
      className: 'se-bad',
      data: { kind: 'deliver', outcome: reply.kind },
      text: t('se.rt.log.error', {
        day: day(entry.at),
        event_id: entry.event_id,
        outcome: reply.kind,
        status: reply.http_status,
        message: errorMessage(reply),
      }),
    });
  }
  // Rust counted the applications of this event: more than one is the hazard.
  const again = reply.outcome === 'applied' && reply.applied_times > 1;
  return el('li', {
    className: again ? 'se-hazard' : '',
    data: { kind: 'deliver', outcome: again ? 'applied_again' : reply.outcome },
    text: t(again ? 'se.rt.log.again' : 'se.rt.log.deliver', {
      day: day(entry.at),
      event_id: entry.event_id,
      outcome: reply.outcome,
      status: reply.http_status,
      times: reply.applied_times,
      balance: formatNumber(reply.receipt.balance_after),
    }),
  });
}
