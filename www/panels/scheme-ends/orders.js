// Experiment 2, business keys: two different events about one order both
// pass event dedup; a unique business key written in the same transaction
// makes the second a business answer (src/labs/scheme_ends/business.rs).
// Rust answers `activated`, `already_active` or `duplicate`; this file lists
// the answers, newest first.

import { el } from '../../lib/dom.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { t } from '../../lib/i18n.js';
import { SOURCE, act, answerOf, caseHeader, fixBox, isError, tx } from './parts.js';

/** The business-key experiment on `db` (the database client). */
export function orders(db) {
  const state = {
    round: 1, // order A-<round>; its events evt-<2·round+5> and evt-<2·round+6>: A-1 ← evt-7, evt-8
    log: [], // {event_id, order_id, reply}, newest first
  };
  const nodes = {
    form: el('form', { className: 'se-order-form', attrs: { id: 'se-order-form', novalidate: '' } }),
    eventId: el('input', { attrs: { id: 'se-order-event', name: 'event_id', autocomplete: 'off', spellcheck: 'false' } }),
    orderId: el('input', { attrs: { id: 'se-order-id', name: 'order_id', autocomplete: 'off', spellcheck: 'false' } }),
    log: el('ol', { className: 'se-log', attrs: { id: 'se-order-log', 'aria-live': 'polite' } }),
    error: el('p', { className: 'field-error', attrs: { role: 'status' } }),
  };

  function fill(which) {
    nodes.eventId.value = `evt-${2 * state.round + (which === 'second' ? 6 : 5)}`;
    nodes.orderId.value = `A-${state.round}`;
  }

  function nextOrder() {
    state.round += 1;
    fill('first');
  }

  async function activate() {
    // Passed as typed: Rust decides what a valid key is.
    const eventId = nodes.eventId.value;
    const orderId = nodes.orderId.value;
    const reply = await answerOf(db.scheme.activate(SOURCE, eventId, orderId));
    state.log.unshift({ event_id: eventId, order_id: orderId, reply });
    render();
  }

  function render() {
    nodes.log.replaceChildren(...state.log.map(logItem));
  }

  fill('first');
  nodes.form.append(
    el(
      'div',
      { className: 'field' },
      tx('label', 'se.bk.source', { attrs: { for: 'se-order-source' } }),
      el('input', { attrs: { id: 'se-order-source', value: SOURCE, readonly: '' } }),
    ),
    el('div', { className: 'field' }, tx('label', 'se.bk.event_id', { attrs: { for: 'se-order-event' } }), nodes.eventId),
    el('div', { className: 'field' }, tx('label', 'se.bk.order_id', { attrs: { for: 'se-order-id' } }), nodes.orderId),
    el('div', { className: 'actions' }, tx('button', 'se.bk.activate', { attrs: { type: 'submit' } })),
  );
  nodes.form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(nodes.error, activate);
  });
  // Like every preset of the page, a chip only fills the form (base.css: .chip); Activate is the reader's.
  const chip = (key, action) => {
    const button = tx('button', key, { className: 'chip', attrs: { type: 'button', 'data-order': key.split('.').pop() } });
    button.addEventListener('click', () => {
      action();
      nodes.form.querySelector('button[type=submit]').focus();
    });
    return button;
  };
  const node = el(
    'section',
    { className: 'se-case', attrs: { id: 'se-keys', 'aria-labelledby': 'se-keys-title' } },
    ...caseHeader('se-keys-title', 'se.bk.title', 'se.bk.problem', 'se.bk.try'),
    el(
      'div',
      { className: 'chips', attrs: { role: 'group', 'aria-labelledby': 'se-bk-fills' } },
      tx('span', 'se.bk.fills', { className: 'group-label', attrs: { id: 'se-bk-fills' } }),
      chip('se.bk.first', () => fill('first')),
      chip('se.bk.second', () => fill('second')),
      chip('se.bk.next', nextOrder),
    ),
    nodes.form,
    nodes.error,
    nodes.log,
    fixBox('se.bk.fix'),
  );
  return { node, render };
}

function logItem({ event_id, order_id, reply }) {
  const failed = isError(reply);
  const outcome = failed ? reply.kind : reply.outcome;
  const said = reply.first === undefined ? reply : { ...reply, first: outcomeWord(reply.first) };
  const meaning = failed ? `${errorMessage(reply)} ${t('se.bk.m.error')}` : t(`se.bk.m.${reply.outcome}`, said);
  return el(
    'li',
    { className: failed ? 'se-bad' : `se-outcome-${outcome}`, data: { outcome } },
    el('p', { className: 'se-log-head', text: t('se.bk.answer', { event_id, order_id, outcome: outcomeWord(outcome), status: reply.http_status }) }),
    el('p', { className: 'note', text: meaning }),
  );
}
