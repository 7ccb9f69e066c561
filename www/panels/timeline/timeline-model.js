// The timeline's data: one entry per delivery, and the statements each one
// ran. Pure (no DOM, no worker), so tests/e2e/unit-timeline.test.mjs checks it
// in node; `timeline.js` draws it.
//
// An entry is a plain object:
//
//   {seq,              1, 2, 3, … in the order deliveries finished
//    at,               the sender's simulated clock when the attempt started (ms)
//    event,            {source, event_id, account_id, amount} as sent
//    attempt, of,      attempt number and the policy's maximum (1 and 1 for a burst)
//    handler,          "atomic" or one of the mistaken handlers
//    via,              "sender" | "step" | "burst"
//    answer,           what the handler answered: a reply {outcome, http_status, receipt}
//                      or an error {kind, message, http_status, retryable};
//                      null when there was no answer (the worker was killed)
//    lost,             true if the answer never reached the sender
//    tookMs,           real time from request to answer
//    statements}       [{op, state}] or null when not known (see `statementsOf`)
//
// A burst of distinct events is ONE entry `{seq, via: "burst_distinct", count,
// counts: {applied, …}, tookMs}`: it is about throughput, and ten thousand
// rows would bury every other delivery.

/** Entries kept; older ones are dropped (and counted). */
const TIMELINE_LIMIT = 200;

export class Timeline {
  #entries = [];
  #listeners = new Set();
  #seq = 0;
  #dropped = 0;

  constructor(limit = TIMELINE_LIMIT) {
    this.limit = limit;
  }

  /** Adds an entry, numbering it; returns the stored entry. */
  add(entry) {
    this.#seq += 1;
    const stored = Object.freeze({ ...entry, seq: this.#seq });
    this.#entries.push(stored);
    if (this.#entries.length > this.limit) {
      this.#dropped += this.#entries.length - this.limit;
      this.#entries.splice(0, this.#entries.length - this.limit);
    }
    this.#notify();
    return stored;
  }

  /** Entries, oldest first. */
  entries() {
    return [...this.#entries];
  }

  /** How many old entries no longer fit. */
  get dropped() {
    return this.#dropped;
  }

  clear() {
    this.#entries = [];
    this.#dropped = 0;
    this.#notify();
  }

  /** Calls `listener()` after every change; returns an unsubscribe function. */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify() {
    for (const listener of this.#listeners) {
      listener();
    }
  }
}

/** The outcome or error kind of an answer, or "no_answer". */
export function outcomeOf(answer) {
  if (answer === null || answer === undefined) {
    return 'no_answer';
  }
  return answer.kind ?? answer.outcome;
}

// ---- Which statements a delivery ran ----------------------------------------
//
// A statement box has an `op` and a `state`:
//   ok        ran and is kept (committed, or autocommitted on its own)
//   no_row    an INSERT that inserted nothing: the key was already there
//   undone    ran, but its transaction rolled back: nothing of it is kept
//   failed    went wrong here (an error, or the handler refused the result)
//   crash     the handler crashed at this point (a fault, "throw", or a kill)
//   rollback  the ROLLBACK that undid the transaction
//
// `deliver` answers with the outcome only, so the statements are worked out
// from it here, following the code paths of src/apply.rs (atomic) and of the
// programs in src/handlers.rs (the mistakes). Step mode does not need this:
// it records what really ran, and tests/e2e/playground-step.test.mjs checks
// the two agree. Paths these functions cannot know (a storage error inside a
// mistaken handler) give null: "not known" is better than a wrong picture.

// An op is a name ("begin") or [name, state] for one whose state is fixed,
// such as an INSERT that found the key: ["insert", "no_row"].
const NO_ROW = 'no_row';

/** Ops that all ran and were kept. */
function kept(ops) {
  return ops.map((op) => (Array.isArray(op) ? box(...op) : box(op, 'ok')));
}

/** A transaction that rolled back: what ran is undone, then the failure, then ROLLBACK. */
function rolledBack(ran, last, lastState = 'failed') {
  return [
    ...ran.map((op) => (Array.isArray(op) ? box(...op) : box(op, 'undone'))),
    box(last, lastState),
    box('rollback', 'rollback'),
  ];
}

function box(op, state) {
  return { op, state };
}

const ATOMIC_APPLIED = ['begin', 'insert', 'credit', 'store_receipt', 'commit'];
const ATOMIC_DUPLICATE = ['begin', ['insert', NO_ROW], 'read_stored', 'commit'];

function atomic(outcome, fault) {
  switch (outcome) {
    case 'applied':
      return kept(ATOMIC_APPLIED);
    case 'duplicate':
      return kept(ATOMIC_DUPLICATE);
    case 'payload_conflict':
      return rolledBack(['begin', ['insert', NO_ROW]], 'read_stored');
    case 'unknown_account': // the foreign key refuses the INSERT
      return rolledBack(['begin'], 'insert');
    case 'balance_limit': // the guarded UPDATE matches no row
      return rolledBack(['begin', 'insert'], 'credit');
    case 'simulated_crash':
      return fault === 'after_insert'
        ? rolledBack(['begin', 'insert'], 'crash', 'crash')
        : rolledBack(['begin', 'insert', 'credit', 'store_receipt'], 'crash', 'crash');
    default:
      return null;
  }
}

// The mistakes, from their programs in src/handlers.rs. Autocommit
// statements are kept the moment they run — that is the lesson of most of them.
function mistake(handler, outcome, fault) {
  switch (`${handler}:${outcome}`) {
    case 'no_dedup:applied':
      return kept(['credit']);
    case 'no_dedup:unknown_account':
      return [box('credit', 'failed')];
    case 'no_dedup:simulated_crash': // the credit autocommitted before the crash
      return [...kept(['credit']), box('crash', 'crash')];

    case 'check_then_act:applied':
      return kept(['check', 'credit', 'insert']);
    case 'check_then_act:duplicate':
      return kept(['check']);
    case 'check_then_act:payload_conflict':
      return [box('check', 'failed')];
    case 'check_then_act:unknown_account':
      return [...kept(['check']), box('credit', 'failed')];
    case 'check_then_act:simulated_crash': // credited, never recorded
      return [...kept(['check', 'credit']), box('crash', 'crash')];

    case 'two_transactions:applied':
      return kept(['begin', 'insert', 'commit', 'begin', 'credit', 'commit']);
    case 'two_transactions:duplicate':
      return kept(['begin', ['insert', NO_ROW], 'read_stored', 'commit']);
    case 'two_transactions:payload_conflict':
      return rolledBack(['begin', ['insert', NO_ROW]], 'read_stored');
    case 'two_transactions:simulated_crash':
      return fault === 'after_insert' // recorded as processed, never credited
        ? [...kept(['begin', 'insert', 'commit']), box('crash', 'crash')]
        : [...kept(['begin', 'insert', 'commit']), ...rolledBack(['begin', 'credit'], 'crash', 'crash')];

    case 'insert_or_ignore:applied':
      return kept(['begin', 'insert_or_ignore', 'credit', 'commit']);
    case 'insert_or_ignore:duplicate': // also a repeat with another payload: never compared
      return kept(['begin', ['insert_or_ignore', NO_ROW], 'commit']);
    case 'insert_or_ignore:simulated_crash':
      return fault === 'after_insert'
        ? rolledBack(['begin', 'insert_or_ignore'], 'crash', 'crash')
        : rolledBack(['begin', 'insert_or_ignore', 'credit'], 'crash', 'crash');

    case 'insert_or_replace:applied':
      return kept(['begin', 'insert_or_replace', 'credit', 'commit']);
    case 'insert_or_replace:simulated_crash':
      return fault === 'after_insert'
        ? rolledBack(['begin', 'insert_or_replace'], 'crash', 'crash')
        : rolledBack(['begin', 'insert_or_replace', 'credit'], 'crash', 'crash');
    default:
      return null;
  }
}

/**
 * The statements one `deliver` ran, worked out from its answer: `[{op,
 * state}]`, `[]` if it was refused before any SQL (invalid input; busy, which
 * in this worker means a stepped delivery holds the write lock), or null when
 * the answer does not tell.
 *
 * A fault is only passed to the handler on the attempt it applies to.
 */
export function statementsOf({ handler = 'atomic', fault = null, answer }) {
  const outcome = outcomeOf(answer);
  if (outcome === 'invalid_input' || outcome === 'busy') {
    return [];
  }
  return handler === 'atomic' ? atomic(outcome, fault) : mistake(handler, outcome, fault);
}

/**
 * Counts outcomes: `{applied: 1, duplicate: 19}`. Keys in the order first
 * seen, so a summary reads in the order things happened.
 */
export function countOutcomes(answers) {
  const counts = {};
  for (const answer of answers) {
    const outcome = outcomeOf(answer);
    counts[outcome] = (counts[outcome] ?? 0) + 1;
  }
  return counts;
}
