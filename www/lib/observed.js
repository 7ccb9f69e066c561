// What really happened, as the page heard it: one stream of observations the
// panels publish when an answer arrives — a send finished (every attempt's
// answer with Rust's verdict and steps, what the sender's look at the tables
// found after a doubtful answer, the balance before and after, as queried),
// a burst finished, a stepped race reached Rust's verdict. Nothing here is a
// click: a panel publishes only what the database worker answered.
//
//   {kind: "send",  event, handler, fault, loseResponse, policy: {attempts, firstDelayMs},
//                   stepped (attempt 1 was step mode's),
//                   attempts: [{attempt, answer, lost, seen: {row, balance} | null}],
//                   balance: {account, before, after},
//                   stored: the inbox row's receipt after the send, as queried} lib/send.js
//   {kind: "burst", event, handler, count, counts, balance: {before, after}}
//                                                               panels/burst/burst.js
//   {kind: "race",  handler, deliveries, order: [delivery index of each step],
//                   verdict, replayed}                          panels/race-lab/racelab.js
//   {kind: "crash", run: "sweep" | "kills", mode, control, points, summary}
//                                                               panels/crash-lab/crashlab.js
//   {kind: "effects", control: "deliver" | "dispatch" | "dispatch_crash" | "dedup",
//                     strategy, crash (Deliver's crash point, or null), dedup,
//                     crashed: event_id | null, verdicts: [{eventId, credited, shown, verdict}]}
//                     after each action of "where the scheme ends"' side effects:
//                     the inbox as queried, what the receiver showed, the outbox
//                                                               panels/scheme-ends/effects.js
//   {kind: "retention", action: "deliver", at, event, answer}
//   {kind: "retention", action: "purge", at, count, days}
//   {kind: "retention", action: "advance", at, days}            the same panel, retention
//                                                               (the clock as the worker answered)
//
// The levels (panels/levels/) judge their win conditions over this stream.

const listeners = new Set();

/** Publishes one observation; a listener that throws does not stop the others. */
export function observe(kind, detail) {
  const observation = Object.freeze({ ...detail, kind });
  for (const listener of listeners) {
    try {
      listener(observation);
    } catch (error) {
      console.error(error);
    }
  }
}

/** Calls `listener(observation)` for every observation; returns an unsubscribe function. */
export function onObserved(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Resolves with the next observation of `kind`; rejects if none comes within `ms`. */
export function nextObserved(kind, ms = 60_000) {
  return new Promise((resolve, reject) => {
    const stop = onObserved((observation) => {
      if (observation.kind === kind) {
        stop();
        clearTimeout(timer);
        resolve(observation);
      }
    });
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no ${kind} was observed in ${ms} ms`));
    }, ms);
  });
}
