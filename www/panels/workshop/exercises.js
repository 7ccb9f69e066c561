// The article's three exercises as checks over what really happened: the
// tables now, and the reader's own deliveries since the exercise was opened
// (`ownDeliveries`). Pure; `workshop.js` shows them and
// tests/e2e/unit-exercises.test.mjs checks them in node.
//
// Each check returns `{passed, result, params}`: `result` names the message
// (the workshop translates it), `params` fills it in. A check never delivers
// anything itself — the reader does the exercise; the check only looks.

import { outcomeOf } from '../../lib/timeline.js';

/**
 * What an exercise judges: the timeline entries (lib/timeline.js) of the
 * reader's own deliveries — the sender's form and step mode — numbered after
 * `since`, the last entry's number when the exercise was opened. A webhook,
 * a burst, or anything delivered before is not the exercise's.
 */
export function ownDeliveries(entries, since) {
  return entries.filter((entry) => entry.seq > since && (entry.via === 'sender' || entry.via === 'step'));
}

/**
 * Exercise 1: send evt-1 from provider-b. Passes when the inbox holds one
 * event_id from two sources, each applied by one of `entries` with its own
 * receipt: two events, two credits — the source is part of the key.
 */
export function checkSourceIsPartOfKey({ inbox }, entries) {
  const applied = new Set(
    entries.filter((entry) => outcomeOf(entry.answer) === 'applied').map(({ event }) => `${event.source}\n${event.event_id}`),
  );
  const byEventId = new Map();
  for (const row of inbox) {
    if (row.receipt === null || !applied.has(`${row.source}\n${row.event_id}`)) {
      continue; // not applied in this exercise, or by a mistaken handler: no proof it was credited once
    }
    const rows = byEventId.get(row.event_id) ?? [];
    rows.push(row);
    byEventId.set(row.event_id, rows);
  }
  for (const [eventId, rows] of byEventId) {
    if (new Set(rows.map((row) => row.source)).size >= 2) {
      const [first, second] = [...rows].sort((a, b) => a.receipt.seq - b.receipt.seq);
      return {
        passed: true,
        result: 'ex1.passed',
        params: {
          event_id: eventId,
          first: first.source,
          second: second.source,
          first_receipt: first.receipt.seq,
          second_receipt: second.receipt.seq,
          first_balance: first.receipt.balance_after,
          second_balance: second.receipt.balance_after,
        },
      };
    }
  }
  return { passed: false, result: 'ex1.not_yet', params: {} };
}

/**
 * Exercise 2: credit a missing account. Looks at the latest delivery to an
 * account that does not exist now. Passes when it was answered 422
 * unknown_account and the inbox has no row for it.
 */
export function checkMissingAccount({ accounts, inbox }, entries) {
  const existing = new Set(accounts.map((account) => account.id));
  const attempt = [...entries]
    .reverse()
    .find((entry) => entry.event && entry.answer && !existing.has(entry.event.account_id));
  if (attempt === undefined) {
    return { passed: false, result: 'ex2.not_yet', params: {} };
  }
  const { source, event_id, account_id } = attempt.event;
  const params = {
    account_id,
    source,
    event_id,
    outcome: outcomeOf(attempt.answer),
    status: attempt.answer.http_status,
  };
  const row = inbox.some((r) => r.source === source && r.event_id === event_id);
  if (row) {
    return { passed: false, result: 'ex2.row_kept', params };
  }
  if (params.outcome !== 'unknown_account' || params.status !== 422) {
    return { passed: false, result: 'ex2.wrong_answer', params };
  }
  return { passed: true, result: 'ex2.passed', params };
}

/**
 * Exercise 3: a replay returns the first receipt. Looks at the latest
 * duplicate answer. Passes when its receipt is the one stored with the
 * inbox row — the receipt of the first application.
 */
export function checkReplayReturnsFirstReceipt({ inbox }, entries) {
  const replay = [...entries].reverse().find((entry) => outcomeOf(entry.answer) === 'duplicate');
  if (replay === undefined) {
    return { passed: false, result: 'ex3.not_yet', params: {} };
  }
  const { source, event_id } = replay.event;
  const row = inbox.find((r) => r.source === source && r.event_id === event_id);
  const got = replay.answer.receipt;
  const params = { source, event_id, seq: got?.seq ?? '—', balance_after: got?.balance_after ?? '—' };
  if (row === undefined || row.receipt === null || got === null || got === undefined) {
    // A mistaken handler answered "duplicate" with nothing stored to return.
    return { passed: false, result: 'ex3.no_receipt', params };
  }
  if (row.receipt.seq !== got.seq || row.receipt.balance_after !== got.balance_after) {
    return { passed: false, result: 'ex3.different', params: { ...params, stored: row.receipt.seq } };
  }
  return { passed: true, result: 'ex3.passed', params };
}
