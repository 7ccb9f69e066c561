// The timeline's data: one entry per delivery, and the steps each one ran.
// Pure (no DOM, no worker), so tests/e2e/unit-timeline.test.mjs checks it in
// node; `timeline.js` draws it.
//
// An entry is a plain object:
//
//   {seq,              1, 2, 3, … in the order deliveries finished
//    at,               the sender's simulated clock when the attempt started (ms)
//    event,            {source, event_id, account_id, amount} as sent
//    attempt, of,      attempt number and the policy's maximum (1 and 1 for a burst)
//    handler,          "atomic" or one of the mistaken handlers
//    via,              "sender" | "step" | "burst" | "webhook"
//    answer,           what the handler answered: a reply {outcome, http_status, receipt}
//                      or an error {kind, message, http_status, retryable};
//                      null when there was no answer (the worker was killed)
//    lost,             true if the answer never reached the sender
//    tookMs,           real time from request to answer
//    steps,            what the handler ran, as Rust reported it (see below);
//                      null when nobody could report it (the worker was
//                      killed, or stopped before answering)
//    notReached}       what a crash left out, as Rust reported it
//                      ([{op, statements, tx}], src/core/trace.rs; absent
//                      or empty: nothing)
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

// ---- What a delivery ran ------------------------------------------------------
//
// Rust records every step a handler runs and answers it with the delivery, in
// the answer and in the error object alike (src/core/trace.rs): `steps` is
// `[{op, statements, rows, effect, tx}]`, `effect` one of "open", "kept",
// "rolled_back", "failed", "crashed"; `tx` the transaction it ran in (1, 2,
// …), null outside any. The diagram draws each as a box whose
// state says what became of it:
//
//   ok        ran and is kept (committed, or autocommitted on its own)
//   no_row    an INSERT that inserted nothing: the key was already there
//   undone    ran, but its transaction rolled back: nothing of it is kept
//   failed    went wrong here (an error, or the handler refused the result)
//   crash     the handler crashed at this point (a fault, "throw", or a kill)
//   rollback  the ROLLBACK that undid the transaction
//   open      ran inside a transaction that has not ended yet (step mode)

/** What each op is called in a diagram (the timeline's, the flow picture's): the statement's first words. */
const OP_LABELS = {
  begin: 'BEGIN',
  insert: 'INSERT',
  insert_or_ignore: 'INSERT OR IGNORE',
  insert_or_replace: 'INSERT OR REPLACE',
  check: 'SELECT',
  read_stored: 'SELECT',
  credit: 'UPDATE',
  store_receipt: 'RECEIPT',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
  crash: 'CRASH',
  kill: 'KILL',
};

/** The label of a step's op; an op this page does not know is shown as Rust named it. */
export function opLabel(op) {
  return OP_LABELS[op] ?? op;
}

/** The INSERTs of the handlers: 0 rows means the key was already there. */
const INSERTS = new Set(['insert', 'insert_or_ignore', 'insert_or_replace']);

/** The box state of one step Rust reported. */
export function stateOf({ op, rows, effect }) {
  switch (effect) {
    case 'failed':
      return 'failed';
    case 'crashed':
      return 'crash';
    case 'open':
      return 'open';
    default:
      if (op === 'rollback') {
        return 'rollback';
      }
      if (rows === 0 && INSERTS.has(op)) {
        return 'no_row'; // nothing was written, so there was nothing to keep or undo
      }
      return effect === 'rolled_back' ? 'undone' : 'ok';
  }
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
