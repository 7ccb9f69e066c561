// Experiment 1, side effects: "notify the user" goes to another system, which
// no SQLite transaction can include (src/labs/scheme_ends/outbox.rs). Send
// before COMMIT, send after COMMIT, or the transactional outbox and its
// dispatcher; the receiver with or without its own dedup by message id.
// Rust's story (src/labs/scheme_ends/story.rs) judges every event this
// receiver heard of; this file draws its verdicts.

import { el, formatNumber, tableHead } from '../../lib/dom.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';
import { ACCOUNT, AMOUNT, SOURCE, act, answerOf, caseHeader, fixBox, isError, showBalance, tx } from './parts.js';

const STRATEGIES = ['send_before_commit', 'send_after_commit', 'outbox'];
const CRASHES = ['', 'after_send_before_commit', 'after_commit_before_send'];
const VERDICT_CLASS = { once: 'se-ok', phantom: 'se-bad', lost: 'se-bad', duplicate: 'se-bad' };

/** The side-effect experiment on `db` (the database client); `load` redraws the whole panel. */
export function effects(db, load) {
  const state = {
    strategy: 'send_before_commit',
    next: 1, // the number of the next pay-N event
    answer: null, // {label, reply}
    dispatchNote: null, // {key, params}
    receiver: null, // the name of the receiver the answers above are about (worker.js names them)
    view: null, // {tables, effects} as last loaded
  };
  const nodes = {
    crash: el('select', { attrs: { id: 'se-crash', name: 'crash' } }),
    event: el('p', { className: 'se-event', attrs: { id: 'se-event' } }),
    deliver: el('button', { attrs: { type: 'button', id: 'se-deliver' } }),
    answer: el('p', { className: 'se-answer', attrs: { id: 'se-answer', 'aria-live': 'polite' } }),
    dispatch: tx('button', 'se.fx.dispatch', { className: 'secondary', attrs: { type: 'button', id: 'se-dispatch' } }),
    dispatchCrash: tx('button', 'se.fx.dispatch_crash', {
      className: 'danger',
      attrs: { type: 'button', id: 'se-dispatch-crash' },
    }),
    dispatchNote: el('p', { className: 'note', attrs: { id: 'se-dispatch-note', 'aria-live': 'polite' } }),
    dispatcher: el('div', { className: 'se-dispatcher' }), // only the outbox has one
    dedup: el('input', { attrs: { type: 'checkbox', id: 'se-dedup', 'aria-describedby': 'se-dedup-note' } }),
    balance: el('p', { className: 'se-balance', attrs: { id: 'se-balance' } }),
    shown: el('ol', { className: 'se-shown', attrs: { id: 'se-shown', 'aria-labelledby': 'se-phone-title' } }),
    shownEmpty: tx('p', 'se.fx.nothing_shown', { className: 'muted' }),
    outbox: el('tbody'),
    // A list, not a table: each verdict is a sentence that must wrap on a phone.
    verdicts: el('ul', { className: 'se-verdicts', attrs: { id: 'se-verdicts', 'aria-labelledby': 'se-verdicts-title' } }),
    verdictsEmpty: tx('p', 'se.fx.no_verdicts', { className: 'muted' }),
    lesson: el('div', { className: 'se-lesson', attrs: { id: 'se-lesson', 'aria-live': 'polite' } }),
    error: el('p', { className: 'field-error', attrs: { role: 'status' } }),
  };
  const radios = new Map(
    STRATEGIES.map((strategy) => [
      strategy,
      el('input', { attrs: { type: 'radio', name: 'se-strategy', value: strategy, id: `se-strategy-${strategy}` } }),
    ]),
  );

  const currentEvent = () => ({ source: SOURCE, event_id: `pay-${state.next}`, account_id: ACCOUNT, amount: AMOUNT });

  function chooseStrategy(strategy) {
    state.strategy = strategy;
    radios.get(strategy).checked = true;
    // Another strategy is another experiment: it gets an event of its own,
    // so what an earlier one did to pay-1 (a notification sent before a
    // failed COMMIT) cannot hide this one's lesson.
    if (state.view?.effects.verdicts.some((v) => v.source === SOURCE && v.event_id === currentEvent().event_id)) {
      state.next += 1;
      state.answer = null;
    }
    nodes.dispatcher.hidden = strategy !== 'outbox';
    // The crash between COMMIT and the send exists only when sending comes after COMMIT.
    const option = nodes.crash.querySelector('option[value="after_commit_before_send"]');
    option.disabled = strategy !== 'send_after_commit';
    if (option.disabled && nodes.crash.value === 'after_commit_before_send') {
      nodes.crash.value = '';
    }
    render();
  }

  async function deliver() {
    await syncReceiver();
    const event = currentEvent();
    const crash = nodes.crash.value || null;
    const reply = await answerOf(db.scheme.deliver(event, { strategy: state.strategy, crash }));
    state.answer = { label: event.event_id, reply };
    // A real sender: a 200 means "done, next event"; anything else, "try this one again".
    if (!isError(reply)) {
      state.next += 1;
    }
    await load();
    observeEffects('deliver', null, crash);
  }

  async function dispatch(crash) {
    await syncReceiver();
    const reply = await db.scheme.dispatch({ crash });
    if (reply.outcome === 'crashed') {
      state.dispatchNote = { key: 'se.fx.dispatch_crashed', params: { id: reply.message_id } };
    } else {
      state.dispatchNote =
        reply.sent === 0 ? { key: 'se.fx.dispatch_idle' } : { key: 'se.fx.dispatched', params: { count: reply.sent } };
    }
    await load();
    // The event whose message went out before the dispatcher died.
    const crashed = state.view.effects.outbox.find((row) => row.message_id === reply.message_id)?.event_id ?? null;
    observeEffects(crash ? 'dispatch_crash' : 'dispatch', crashed);
  }

  async function setDedup(dedup) {
    const { receiver, dedup: on } = await db.scheme.resetReceiver({ dedup });
    nodes.dedup.checked = on;
    noteReceiver(receiver);
    await load();
    observeEffects('dedup', null);
  }

  /**
   * What the side-effect experiment shows now, for the levels and a level's
   * share link (lib/observed.js): after which control (`control`, with the
   * Deliver's crash point `crash`), and Rust's verdicts.
   */
  function observeEffects(control, crashed, crash = null) {
    if (state.view !== null) {
      const { dedup, verdicts } = state.view.effects;
      observe('effects', {
        control,
        strategy: state.strategy,
        crash,
        dedup,
        crashed,
        verdicts: verdicts.map((v) => ({ eventId: v.event_id, credited: v.credited, shown: v.shown, verdict: v.verdict })),
      });
    }
  }

  // The worker replaces its receiver, and Rust's story with it, when our
  // story is over: a fresh or imported database, or a new worker (another
  // panel, the console or a crash may do that behind this panel's back).
  // The answers this panel still shows are then about another story.
  async function syncReceiver() {
    noteReceiver((await db.scheme.shown()).receiver);
  }

  function noteReceiver(receiver) {
    if (state.receiver !== null && receiver !== state.receiver) {
      state.answer = null;
      state.dispatchNote = null;
    }
    state.receiver = receiver;
  }

  function show(view) {
    noteReceiver(view.effects.receiver);
    state.view = view;
    nodes.dedup.checked = view.effects.dedup;
    render();
  }

  function render() {
    nodes.event.textContent = t('se.fx.event', currentEvent());
    nodes.deliver.textContent = `${t('se.fx.deliver')} ${currentEvent().event_id}`;
    nodes.answer.textContent = state.answer === null ? '' : answerLine(state.answer.label, state.answer.reply);
    nodes.answer.className = `se-answer ${state.answer !== null && isError(state.answer.reply) ? 'se-bad' : ''}`;
    nodes.dispatchNote.textContent = state.dispatchNote === null ? '' : t(state.dispatchNote.key, state.dispatchNote.params);
    if (state.view === null) {
      return; // not loaded yet
    }
    const { shown, outbox, verdicts, resent } = state.view.effects;
    showBalance(nodes.balance, state.view.tables);
    nodes.shown.replaceChildren(...shown.map((n, i) => shownItem(n, shown.slice(0, i).some((m) => m.message_id === n.message_id))));
    nodes.shownEmpty.hidden = shown.length > 0;
    nodes.outbox.replaceChildren(
      ...(outbox.length === 0
        ? [el('tr', {}, el('td', { className: 'muted', text: t('se.empty'), attrs: { colspan: '4' } }))]
        : outbox.map(outboxRow)),
    );
    nodes.verdictsEmpty.hidden = verdicts.length > 0;
    nodes.verdicts.replaceChildren(...verdicts.map(verdictItem));
    // The at-least-once lesson, as soon as the dispatcher sent a message twice.
    nodes.lesson.replaceChildren(...resent.map(lessonItem));
  }

  for (const [strategy, input] of radios) {
    input.checked = strategy === state.strategy;
    input.addEventListener('change', () => chooseStrategy(strategy));
  }
  for (const crash of CRASHES) {
    nodes.crash.append(tx('option', `se.fx.crash.${crash || 'none'}`, { attrs: { value: crash } }));
  }
  chooseStrategy(state.strategy);
  nodes.deliver.addEventListener('click', () => act(nodes.error, deliver));
  nodes.dispatch.addEventListener('click', () => act(nodes.error, () => dispatch(false)));
  nodes.dispatchCrash.addEventListener('click', () => act(nodes.error, () => dispatch(true)));
  nodes.dedup.addEventListener('change', () => act(nodes.error, () => setDedup(nodes.dedup.checked)));

  return {
    node: build(nodes, radios),
    show,
    render,
    resume: (next) => {
      state.next = next;
    },
  };
}

/** "pay-3: applied · HTTP 200", or the error with its message. */
function answerLine(label, reply) {
  if (isError(reply)) {
    return t('se.answer_error', { event: label, outcome: outcomeWord(reply.kind), status: reply.http_status, message: errorMessage(reply) });
  }
  return t('se.answer', { event: label, outcome: outcomeWord(reply.outcome), status: reply.http_status });
}

function shownItem(n, again) {
  return el(
    'li',
    { className: again ? 'se-bad' : '' },
    el('span', { text: t('se.fx.notification', { amount: formatNumber(n.amount), account: n.account_id }) }),
    ' ',
    el('code', { text: n.message_id }),
    ...(again ? [' ', el('strong', { text: t('se.fx.again') })] : []),
  );
}

function outboxRow(row) {
  return el(
    'tr',
    { data: { sent: row.sent_at === null ? 'no' : 'yes' } },
    el('td', { className: 'number', text: row.message_id }),
    el('td', { text: row.event_id }),
    el('td', { className: 'number', text: formatNumber(row.amount) }),
    el('td', {
      className: row.sent_at === null ? 'se-pending' : '',
      text: row.sent_at === null ? t('se.fx.pending') : t('se.fx.sent'),
    }),
  );
}

function verdictItem(v) {
  return el(
    'li',
    { data: { verdict: v.verdict } },
    el('strong', { text: v.event_id, data: { field: 'event' } }),
    ' · ',
    el('span', { text: t('se.fx.credited', { answer: t(v.credited ? 'se.fx.yes' : 'se.fx.no') }), data: { field: 'credited' } }),
    ' · ',
    el('span', { text: t('se.fx.shown', { count: v.shown }), data: { field: 'shown' } }),
    el('br'),
    el('span', {
      className: VERDICT_CLASS[v.verdict] ?? '',
      text: t(`se.fx.v.${v.verdict}`, { count: v.shown }),
      data: { field: 'verdict' },
    }),
  );
}

function lessonItem({ message_id: id, sends, shown }) {
  return el(
    'p',
    { className: shown > 1 ? 'se-bad' : 'se-ok', data: { message: id } },
    el('span', { text: t('se.fx.at_least_once', { id, sends }) }),
    ' ',
    el('strong', { text: shown > 1 ? t('se.fx.at_least_once.plain', { shown }) : t('se.fx.at_least_once.dedup') }),
  );
}

function build(nodes, radios) {
  const outboxTable = el(
    'table',
    { attrs: { id: 'se-outbox' } },
    tx('caption', 'se.fx.outbox'),
    tableHead([{ text: 'message_id', className: 'number' }, { text: 'event_id' }, { text: 'amount', className: 'number' }, { text: 'sent_at' }]),
    nodes.outbox,
  );
  nodes.dispatcher.append(
    tx('h4', 'se.fx.dispatcher'),
    tx('p', 'se.fx.dispatcher_note', { className: 'note' }),
    el('div', { className: 'actions' }, nodes.dispatch, nodes.dispatchCrash),
    nodes.dispatchNote,
  );
  const strategies = [...radios].map(([strategy, input]) =>
    el('label', { className: 'check' }, input, tx('span', `se.fx.strategy.${strategy}`)),
  );
  return el(
    'section',
    { className: 'se-case', attrs: { id: 'se-effects', 'aria-labelledby': 'se-effects-title' } },
    ...caseHeader('se-effects-title', 'se.fx.title', 'se.fx.problem', 'se.fx.try'),
    el(
      'div',
      { className: 'se-controls' },
      el('fieldset', { className: 'se-strategy' }, tx('legend', 'se.fx.strategy'), ...strategies),
      el(
        'div',
        { className: 'se-deliver' },
        el('div', { className: 'field' }, tx('label', 'se.fx.crash', { attrs: { for: 'se-crash' } }), nodes.crash),
        nodes.event,
        tx('p', 'se.fx.event_note', { className: 'note' }),
        el('div', { className: 'actions' }, nodes.deliver),
        nodes.answer,
      ),
      nodes.dispatcher,
    ),
    el(
      'div',
      { className: 'se-results' },
      el(
        'div',
        { className: 'se-box' },
        tx('h4', 'se.fx.ours'),
        nodes.balance,
        el('div', { className: 'table-scroll', attrs: { tabindex: '0', role: 'region', 'aria-label': 'outbox' } }, outboxTable),
      ),
      el(
        'div',
        { className: 'se-box se-phone' },
        tx('h4', 'se.fx.phone', { attrs: { id: 'se-phone-title' } }),
        el('label', { className: 'check' }, nodes.dedup, tx('span', 'se.fx.dedup')),
        tx('p', 'se.fx.dedup_note', { className: 'note', attrs: { id: 'se-dedup-note' } }),
        nodes.shown,
        nodes.shownEmpty,
      ),
      el(
        'div',
        { className: 'se-box se-verdict-box' },
        tx('h4', 'se.fx.verdicts', { attrs: { id: 'se-verdicts-title' } }),
        nodes.verdicts,
        nodes.verdictsEmpty,
      ),
    ),
    nodes.error,
    nodes.lesson,
    fixBox('se.fx.fix'),
  );
}
