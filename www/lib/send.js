// Send with retries: one event delivered the way a real webhook sender does,
// until the sender is satisfied — the model behind the sender panel, no DOM.
//
//   attempt 1 ──► handler ──► answer ──► (lost on purpose?) ──► decide (retry.js)
//        ▲                                                          │
//        └──────────── wait on the simulated clock ◄── retry ───────┘
//
// Every attempt becomes a timeline entry (timeline.js). After an attempt the
// sender could not trust — no answer, or a 5xx — it also looks into the
// database, to show what really happened: after a lost response the credit
// IS there; after a crash it is NOT.

import { formatNumber } from './dom.js';
import { register, t } from './i18n.js';
import { observe } from './observed.js';
import { SimulatedClock, sendWithRetries } from './retry.js';

register({
  'summary.once': { en: 'Balance of account {account}: {before} → {after} (+{amount}): credited once.',
    ru: 'Баланс счёта {account}: {before} → {after} (+{amount}): зачислено один раз.' },
  'summary.times': { en: 'Balance of account {account}: {before} → {after}: credited {times} times!',
    ru: 'Баланс счёта {account}: {before} → {after}: зачислений вместо одного — {times}!' },
  'summary.none': { en: 'Balance of account {account}: {before} → {after}: not credited.',
    ru: 'Баланс счёта {account}: {before} → {after}: не зачислено.' },
  'summary.other': { en: 'Balance of account {account}: {before} → {after}.', ru: 'Баланс счёта {account}: {before} → {after}.' },
  'summary.no_account': { en: 'Account {account} does not exist: there was nothing to credit.', ru: 'Счёта {account} нет: зачислять было некуда.' },
  'summary.event.once': { en: '{event}: credited once. Balance of account {account}: {before} → {after}.',
    ru: '{event}: зачислено один раз. Баланс счёта {account}: {before} → {after}.' },
  'summary.event.times': { en: '{event}: credited {times} times! Balance of account {account}: {before} → {after}.',
    ru: '{event}: зачислений вместо одного — {times}! Баланс счёта {account}: {before} → {after}.' },
  'summary.event.none': { en: '{event}: not credited. Balance of account {account}: {before} → {after}.',
    ru: '{event}: не зачислено. Баланс счёта {account}: {before} → {after}.' },
});

export const EXAMPLE = Object.freeze({ source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 });

/**
 * One send: `event` delivered with `handler` until the policy says stop.
 * `fault` applies to the first attempt only (a crash, then a clean retry);
 * `loseResponse` throws the first answer away. `firstAttempt`, if given,
 * performs attempt 1 instead of delivering (step mode does) and resolves to
 * `{answer, steps}` (`answer` null: no answer at all; `steps` what ran, as
 * in the timeline).
 *
 * `services`: `db` (the database client), `timeline`, `readTables`,
 * `beginChange` (app.js);
 * `clock`: the page's sender clock. `onChange(record, heard)` is called as
 * the send's record `{event, attempts, summary}` grows, last with what the
 * sender finally heard (`summary`: `{event, before, after, verdict}`, the
 * balances around the send and the last attempt's verdict).
 *
 * Resolves to `{attempts: [{attempt, at, answer, lost, decision}], balance:
 * {account, before, after}}`.
 */
export async function sendEvent(
  { db, timeline, readTables, beginChange },
  clock,
  event,
  { handler = 'atomic', fault = null, loseResponse = false, policy, firstAttempt },
  onChange,
) {
  beginChange(); // the tables then highlight what this send changes, if anything
  const record = { event, attempts: [], summary: null };
  onChange(record);
  const before = await balanceOf(db, event.account_id);

  // This send's own clock, from the page's now: two sends at once (a
  // Deliver while step mode holds the lock) each wait their own waits, and
  // the page's clock shows the later of them.
  const own = new SimulatedClock(clock.now);
  const attempts = await sendWithRetries({
    policy,
    clock: own,
    attempt: async (n) => {
      clock.catchUp(own.now);
      const at = own.now;
      const started = performance.now();
      const result =
        n === 1 && firstAttempt
          ? await firstAttempt()
          : await db
              .deliver(event, { handler, fault: (n === 1 ? fault : null) ?? undefined })
              .catch((error) => error) // error objects are answers too
              .then((answer) => ({ answer, steps: answer?.steps ?? null, notReached: answer?.not_reached ?? [] })); // what Rust says the handler ran, and what a crash left out
      const lost = result.answer === null || (loseResponse && n === 1);
      timeline.add({
        at,
        event,
        attempt: n,
        of: policy.attempts,
        handler,
        via: n === 1 && firstAttempt ? 'step' : 'sender',
        answer: result.answer,
        lost,
        tookMs: performance.now() - started,
        steps: result.steps,
        notReached: result.notReached ?? [],
      });
      // An answer the sender cannot trust: look at what really happened.
      const doubtful = lost || result.answer.http_status >= 500;
      const seen = doubtful ? await look(readTables, event) : null;
      return lost
        ? { lost: true, answer: result.answer, seen }
        : { status: result.answer.http_status, answer: result.answer, seen };
    },
    onAttempt: ({ attempt, at, heard, decision }) => {
      record.attempts.push({ attempt, at, answer: heard.answer, lost: Boolean(heard.lost), seen: heard.seen, decision });
      onChange(record);
    },
  });

  const tablesAfter = await readTables();
  const after = balanceIn(tablesAfter, event.account_id);
  // The event's credits are the last verdict's: Rust counts every delivery of it.
  record.summary = { event, before, after, verdict: attempts.at(-1).heard.answer?.verdict };
  onChange(record, attempts.at(-1).heard);
  observe('send', {
    event,
    handler,
    fault,
    loseResponse,
    policy: { attempts: policy.attempts, firstDelayMs: policy.firstDelayMs },
    stepped: Boolean(firstAttempt), // attempt 1 was step mode's

    attempts: record.attempts.map(({ attempt, answer, lost, seen }) => ({ attempt, answer, lost, seen: seen ?? null })),
    balance: { account: event.account_id, before, after },
    // The receipt the inbox holds for this key now, as queried (null: no row, or no receipt).
    stored: tablesAfter?.inbox.find((r) => r.source === event.source && r.event_id === event.event_id)?.receipt ?? null,
  });
  return {
    attempts: record.attempts.map(({ attempt, at, answer, lost, decision }) => ({ attempt, at, answer, lost, decision })),
    balance: { account: event.account_id, before, after },
  };
}

async function look(readTables, event) {
  const tables = await readTables();
  if (tables === null) {
    return null;
  }
  return {
    row: tables.inbox.some((r) => r.source === event.source && r.event_id === event.event_id),
    balance: balanceIn(tables, event.account_id),
  };
}

async function balanceOf(db, accountId) {
  try {
    return balanceIn(await db.tables({ newest: 0 }), accountId);
  } catch {
    return null; // not readable right now: the summary then says nothing about it
  }
}

/** The balance of `accountId` in a tables snapshot, or null (no snapshot, no such account). */
export function balanceIn(tables, accountId) {
  return tables?.accounts.find((account) => account.id === accountId)?.balance ?? null;
}

/** An event's name on the page: "provider-a / evt-1". */
export function eventName({ source, event_id: eventId }) {
  return `${source} / ${eventId}`;
}

/**
 * A send's last line: how often the event has been credited, as its last
 * verdict counts it, and the balance before → after the send (the balance
 * only without a verdict to count from: refused first, or not judged).
 */
export function eventSummary({ event, before, after, verdict }) {
  const account = event.account_id;
  if (typeof account !== 'number') {
    return null;
  }
  if (before === null || after === null) {
    return t('summary.no_account', { account });
  }
  const params = { event: eventName(event), account, before: formatNumber(before), after: formatNumber(after), times: verdict?.credits };
  if (!verdict || verdict.heard === 'refused' || verdict.kind === 'unknown') {
    return t('summary.other', params);
  }
  return t(['summary.event.none', 'summary.event.once'][verdict.credits] ?? 'summary.event.times', params);
}

/**
 * How often `amount` reached `account` between two balances, in words:
 * "credited once", "credited 2 times!", "not credited"; null if the account
 * is not a number (the event was invalid).
 */
export function creditVerdict({ account, amount, before, after }) {
  if (typeof account !== 'number') {
    return null;
  }
  if (before === null || after === null) {
    return t('summary.no_account', { account });
  }
  const params = { account, amount: formatNumber(amount), before: formatNumber(before), after: formatNumber(after) };
  const times = typeof amount === 'number' ? (after - before) / amount : NaN;
  if (times === 1) {
    return t('summary.once', params);
  }
  if (times === 0) {
    return t('summary.none', params);
  }
  if (Number.isInteger(times) && times > 1) {
    return t('summary.times', { ...params, times });
  }
  return t('summary.other', params);
}
