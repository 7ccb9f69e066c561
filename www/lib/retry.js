// The sender's side of the story: when to deliver an event again, and how
// long to wait first.
//
// A sender that hears nothing back cannot tell whether its request died on
// the way in or the response died on the way back. The only safe move is to
// deliver again — which is exactly why the handler must be idempotent. A real
// sender reacts to the status like this:
//
//   200            stop: the handler took responsibility (applied or duplicate)
//   4xx            stop: the request itself is wrong; the same bytes fail again
//   5xx            retry later: the handler failed and kept nothing
//   no answer      retry later: it may or may not have been applied
//
// and waits longer before each retry (exponential backoff), up to a number
// of attempts. Real senders also add random jitter to the waits; it is left
// out here so a run can be read, and tested, exactly.
//
// Time is a `SimulatedClock`: waiting moves its hands instead of sleeping, so
// a reader sees "retry in 4 s" without waiting 4 s. This module is pure — no
// DOM, no worker, no real time — so the node unit tests
// (tests/e2e/unit-retry.test.mjs) drive it the way the page does.

/** Bounds of the policy a reader may choose in the page. */
export const LIMITS = Object.freeze({ attempts: { min: 1, max: 10 }, firstDelaySeconds: { min: 0, max: 60 } });

/** No wait grows past this, however many attempts (a real sender caps it too). */
export const MAX_DELAY_MS = 60_000;

/**
 * A validated policy: `attempts` in total (the first delivery included) and
 * the wait before the first retry, doubled before each later one.
 */
export class RetryPolicy {
  constructor({ attempts, firstDelayMs }) {
    if (!Number.isInteger(attempts) || attempts < LIMITS.attempts.min || attempts > LIMITS.attempts.max) {
      throw new RangeError(`attempts must be an integer from ${LIMITS.attempts.min} to ${LIMITS.attempts.max}`);
    }
    if (!Number.isFinite(firstDelayMs) || firstDelayMs < 0 || firstDelayMs > LIMITS.firstDelaySeconds.max * 1000) {
      throw new RangeError(`firstDelayMs must be from 0 to ${LIMITS.firstDelaySeconds.max * 1000}`);
    }
    this.attempts = attempts;
    this.firstDelayMs = firstDelayMs;
    Object.freeze(this);
  }

  /** The wait after attempt `n` failed, before attempt n + 1: first, 2×first, 4×first, … */
  delayAfter(n) {
    return Math.min(MAX_DELAY_MS, this.firstDelayMs * 2 ** (n - 1));
  }
}

/**
 * Reads a policy from the text of two form fields. Returns `{policy}` or
 * `{errors: [{field, limits}]}` naming each field that is out of range, so
 * the page can say so next to it.
 */
export function parsePolicy({ attempts, firstDelay }) {
  const errors = [];
  const n = /^\d+$/.test(attempts.trim()) ? Number(attempts) : NaN;
  if (!(n >= LIMITS.attempts.min && n <= LIMITS.attempts.max)) {
    errors.push({ field: 'attempts', limits: LIMITS.attempts });
  }
  // A decimal such as 0.5 is a fine wait; "", "1e3", "-1" and "abc" are not.
  const seconds = /^\d+(\.\d+)?$/.test(firstDelay.trim()) ? Number(firstDelay) : NaN;
  if (!(seconds >= LIMITS.firstDelaySeconds.min && seconds <= LIMITS.firstDelaySeconds.max)) {
    errors.push({ field: 'first_delay', limits: LIMITS.firstDelaySeconds });
  }
  if (errors.length > 0) {
    return { errors };
  }
  return { policy: new RetryPolicy({ attempts: n, firstDelayMs: Math.round(seconds * 1000) }) };
}

/**
 * What the sender does after one attempt. `heard` is what reached the
 * sender: `{lost: true}` (no answer at all) or `{status}` (an HTTP status).
 * Returns `{action: "stop" | "retry" | "give_up", reason, delayMs?}` where
 * `reason` is "success" (2xx), "client_error" (4xx), "server_error" (5xx) or
 * "lost".
 */
export function decide(heard, attempt, policy) {
  const reason = classify(heard);
  if (reason === 'success' || reason === 'client_error') {
    return { action: 'stop', reason };
  }
  if (attempt >= policy.attempts) {
    return { action: 'give_up', reason };
  }
  return { action: 'retry', reason, delayMs: policy.delayAfter(attempt) };
}

function classify(heard) {
  if (heard.lost) {
    return 'lost';
  }
  if (heard.status >= 200 && heard.status < 300) {
    return 'success';
  }
  if (heard.status >= 400 && heard.status < 500) {
    return 'client_error';
  }
  // 5xx, and anything a real network could produce that is not a clear
  // answer, counts as "try again later".
  return 'server_error';
}

/** Simulated time in milliseconds. Waiting moves the hands; nothing sleeps. */
export class SimulatedClock {
  #now = 0;

  constructor(start = 0) {
    this.#now = start;
  }

  get now() {
    return this.#now;
  }

  wait(ms) {
    this.#now += ms;
  }

  /** Moves the hands to `ms` if that is later (never back). */
  catchUp(ms) {
    this.#now = Math.max(this.#now, ms);
  }
}

/**
 * Delivers with retries. `attempt(n)` performs attempt n (1, 2, …) and
 * resolves to what the sender heard (see `decide`); the result may carry
 * more fields, which are kept in the record. After each attempt
 * `onAttempt({attempt, at, heard, decision})` is called (`at` = the clock when
 * it started), and a retry first waits on `clock`.
 *
 * Resolves to the list of those records, the last one holding the final
 * decision ("stop" or "give_up").
 */
export async function sendWithRetries({ attempt, policy, clock, onAttempt = () => {} }) {
  const records = [];
  for (let n = 1; ; n += 1) {
    const at = clock.now;
    const heard = await attempt(n);
    const decision = decide(heard, n, policy);
    const record = { attempt: n, at, heard, decision };
    records.push(record);
    onAttempt(record);
    if (decision.action !== 'retry') {
      return records;
    }
    clock.wait(decision.delayMs);
  }
}
