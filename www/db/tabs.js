// Several tabs, one database.
//
// OPFS access handles are exclusive: one worker at a time can hold the
// database file, and a second tab that tried would fail with
// NoModificationAllowedError. So the tabs of this
// page elect one owner with the Web Locks API. Every tab asks for the lock
// "inbox-lab-owner"; the browser grants it to one tab at a time, in the
// order they asked, and takes it back when that tab goes away — closed,
// reloaded, navigated elsewhere or crashed. No heartbeat, no timeout
// guessing: the browser knows when a tab is gone.
//
// The owner runs the database worker. Every other tab is a follower: it
// sends each request to the owner over a BroadcastChannel and gets the
// answer back the same way, so two tabs are simply two concurrent senders
// against one database — which is what the inbox is for. This module holds
// the election and the forwarding, both sides of it; client.js decides only
// whether a call goes to its own worker or to `Tabs.forward`.
//
// ## Channel protocol (BroadcastChannel "inbox-lab"; every tab sees every
// message and ignores what is not for it; `from` is the sender's tab id)
//
//   {type: "hello", from}                  a new tab; the owner answers with "status"
//   {type: "status", from, status}         the owner's database status: on every change,
//                                          and after a "hello". A status from a tab
//                                          other than the known owner means the owner
//                                          changed (the old one is gone: the lock moved).
//   {type: "request", from, id, op, args}  a follower's request (ops.js); `id` is the
//                                          follower's
//   {type: "ack", from, to, id}            the owner has the request and will answer it
//   {type: "reply", from, to, id, ok, result | error}
//                                          exactly one per request the owner acked
//   {type: "changed", from}                writes finished: the tables may have changed
//
// What can go wrong, and what the follower does:
// * No "ack" within ACK_TIMEOUT_MS: no tab is serving requests (or the
//   owner is frozen). Rejected as `busy` (retryable), never as success.
// * "ack" but no "reply" within REPLY_TIMEOUT_MS: rejected as `busy`
//   (retryable). It may yet commit; it was never reported as done.
// * The owner changed before answering: a request it never acked is sent
//   to the new owner (the old one never had it); one it acked is sent again
//   only if it is `repeatable` (www/db/ops.js), and otherwise rejected as a retryable `storage`
//   error — it may or may not have committed, and only the sender may decide
//   to deliver again (which the inbox makes safe: applied once, or a
//   duplicate with the stored receipt).
// * The owner sees the same (from, id) twice (a follower re-sent it just as
//   the owner took over): it acks again while the request runs, and otherwise
//   ignores it; it never runs a request twice.

import { notCloneable, problem } from '../lib/problem.js';
import { serve } from '../lib/rpc.js';
import { OPS } from './ops.js';

const LOCK_NAME = 'inbox-lab-owner';
const CHANNEL_NAME = 'inbox-lab';
// A follower's wait for "the owner has your request", then for its answer.
const ACK_TIMEOUT_MS = 10_000;
const REPLY_TIMEOUT_MS = 60_000;
// How many requests of other tabs the owner remembers, to run none twice.
const SERVED_MEMORY = 1000;

// Once the lock query saw the lock free, the longest the page waits for this
// tab's request to be granted (Tabs.decided) before it builds its panels anyway.
const DECIDE_MS = 100;

/** This tab's id: unique enough for the tabs of one browser profile. */
export const TAB_ID =
  typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

/**
 * Whether tabs can share one database: Web Locks and BroadcastChannel exist
 * (Web Locks only in secure contexts — where OPFS is, too).
 */
export function canShare() {
  return typeof navigator.locks?.request === 'function' && typeof BroadcastChannel === 'function';
}

/**
 * This tab among the others: a follower until it holds the lock, then the
 * owner for the life of the page. `tab` is client.js's side:
 *
 * * `pending`: this tab's calls waiting for an answer, by id — entries
 *   `{id, op, args}`, to which this class adds its routing fields;
 * * `finish(entry, ok, value)` settles one (once; later answers are ignored);
 * * `dispatch(entry)` sends one where it is answered now;
 * * `run(op, args, settle)` answers one request, as the owner;
 * * `becomeOwner()`: the lock is ours, start the worker;
 * * `follow(status)`: the owner's status; `changed()`: its tables may have
 *   changed; `status()`: what the owner tells the other tabs of its status.
 */
export class Tabs {
  role = 'follower';
  /**
   * Settles once this tab knows whether it starts the worker now: the lock
   * is ours (the worker started), or another tab holds it.
   */
  decided;
  #decide;
  #tab;
  #channel = new BroadcastChannel(CHANNEL_NAME);
  // The owner tab's id as far as this tab knows.
  #ownerId = null;
  // Requests other tabs sent to this owner, by "tab:id": false while
  // running, true once answered.
  #served = new Map();
  // rpc.js's `serve` listening on the channel, once this tab is the owner.
  #serving = null;

  constructor(tab) {
    this.#tab = tab;
    this.#channel.addEventListener('message', ({ data }) => this.#receive(data));
    this.#send({ type: 'hello' });
    this.decided = new Promise((resolve) => {
      this.#decide = resolve;
    });
    navigator.locks
      .request(LOCK_NAME, { mode: 'exclusive' }, () => {
        this.#becomeOwner();
        this.#decide();
        return new Promise(() => {}); // hold it for the life of the page
      })
      .catch((error) => {
        // Only if the request itself is refused (e.g. the document is being
        // unloaded); this tab then stays a follower.
        console.warn('inbox-lab: cannot ask for the owner lock', error);
        this.#decide();
      });
    // Held by another tab: this one follows, and need not wait for the lock;
    // nor longer than DECIDE_MS after the query saw the lock free, when
    // another tab's request was granted before this one's. Counted from the
    // query's answer, not from here: on a slow CPU the page's code runs on
    // for longer than that, and a timer started here would fire before the
    // grant could arrive (the panels built first, the worker started after
    // them).
    navigator.locks.query().then(
      ({ held = [] }) => {
        if (held.some((lock) => lock.name === LOCK_NAME)) {
          this.#decide();
        } else {
          setTimeout(() => this.#decide(), DECIDE_MS);
        }
      },
      () => this.#decide(),
    );
  }

  /** A follower's call, sent to the owner tab. */
  forward(entry) {
    entry.route = 'channel';
    entry.acked = false;
    entry.owner = null;
    try {
      this.#send({ type: 'request', id: entry.id, op: entry.op, args: entry.args });
    } catch (thrown) {
      this.#tab.finish(entry, false, notCloneable('the tab that holds the database', thrown));
      return;
    }
    this.#arm(entry, ACK_TIMEOUT_MS, () =>
      problem(
        'busy',
        'no_owner',
        `no tab acknowledged this request within ${ACK_TIMEOUT_MS / 1000} s (the tab that holds the database may be ` +
          'closing or frozen); it was not confirmed, retry later (retrying is safe)',
        { seconds: String(ACK_TIMEOUT_MS / 1000) },
      ),
    );
  }

  /** The owner's status changed: every follower hears it. */
  announce(status) {
    if (this.role === 'owner') {
      this.#send({ type: 'status', status });
    }
  }

  /** The owner's writes may have changed the tables: every follower hears it. */
  changed() {
    if (this.role === 'owner') {
      this.#send({ type: 'changed' });
    }
  }

  // Adds this tab's id as `from`; throws (DataCloneError) for values that
  // cannot be copied to another tab.
  #send(message) {
    this.#channel.postMessage({ ...message, from: TAB_ID });
  }

  #arm(entry, ms, error) {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.#tab.finish(entry, false, error()), ms);
  }

  // The lock is ours: the tab before us is gone (or there was none). Start
  // the worker, serve the other tabs, and take over this tab's own calls
  // that were waiting for the old owner.
  #becomeOwner() {
    this.role = 'owner';
    this.#ownerId = TAB_ID;
    this.#tab.becomeOwner();
    const answer = (op) => (args) =>
      new Promise((resolve, reject) => this.#tab.run(op, args, (ok, value) => (ok ? resolve(value) : reject(value))));
    // Every request runs "in the background": the worker keeps their order,
    // and one tab's slow query holds no other tab's delivery.
    serve(new Map(Object.keys(OPS).map((op) => [op, answer(op)])), {
      background: () => true,
      port: {
        addEventListener: (_type, listener) => {
          this.#serving = listener;
        },
        postMessage: ({ id, ok, result, error }) => {
          const key = `${id.from}:${id.id}`;
          if (this.#served.has(key)) {
            this.#served.set(key, true);
          }
          this.#send(ok ? { type: 'reply', to: id.from, id: id.id, ok, result } : { type: 'reply', to: id.from, id: id.id, ok, error });
        },
      },
    });
    this.#retry((entry) => entry.route === 'channel', (entry) => this.#tab.dispatch(entry));
  }

  // The calls of this tab that `waiting` selects, after the owner changed:
  // one the old owner never acked, or that is `repeatable`, is sent again by
  // `resend`; any other is rejected as unconfirmed.
  #retry(waiting, resend) {
    for (const entry of [...this.#tab.pending.values()]) {
      if (entry.route !== 'channel') {
        continue;
      }
      if (!entry.acked || OPS[entry.op]?.repeatable) {
        resend(entry);
      } else if (waiting(entry)) {
        this.#tab.finish(entry, false, ownerClosed());
      }
    }
  }

  // A request from another tab. Acknowledge it at once, run it once, answer it.
  #serve({ from, id, op, args }) {
    const key = `${from}:${id}`;
    if (this.#served.has(key)) {
      if (this.#served.get(key) === false) {
        this.#send({ type: 'ack', to: from, id });
      }
      return;
    }
    this.#served.set(key, false);
    if (this.#served.size > SERVED_MEMORY) {
      this.#served.delete(this.#served.keys().next().value);
    }
    this.#send({ type: 'ack', to: from, id });
    this.#serving?.({ data: { id: { from, id }, op, args } });
  }

  #receive(message) {
    if (message === null || typeof message !== 'object') {
      return;
    }
    const owner = this.role === 'owner';
    const entry = message.to === TAB_ID ? this.#tab.pending.get(message.id) : undefined;
    if (message.type === 'hello' && owner) {
      this.#send({ type: 'status', status: this.#tab.status() });
    } else if (message.type === 'request' && owner) {
      this.#serve(message);
    } else if (message.type === 'status' && !owner) {
      this.#follow(message.from, message.status);
    } else if (message.type === 'ack' && entry?.route === 'channel' && !entry.acked) {
      entry.acked = true;
      entry.owner = message.from;
      this.#arm(entry, REPLY_TIMEOUT_MS, () =>
        problem(
          'busy',
          'owner_timeout',
          `the tab that holds the database took this request but did not answer within ${REPLY_TIMEOUT_MS / 1000} s; ` +
            'it was not confirmed, retry later (retrying is safe)',
          { seconds: String(REPLY_TIMEOUT_MS / 1000) },
        ),
      );
    } else if (message.type === 'reply' && entry?.route === 'channel') {
      this.#tab.finish(entry, message.ok, message.ok ? message.result : message.error);
    } else if (message.type === 'changed' && !owner) {
      this.#tab.changed();
    }
  }

  #follow(from, status) {
    if (from !== this.#ownerId) {
      // A new owner (the lock moved: the old one is gone), or the first one
      // this tab hears of. Requests it never acked go to it now; the old
      // owner's unanswered ones are repeated or reported unconfirmed.
      this.#ownerId = from;
      this.#retry((entry) => entry.owner !== from, (entry) => this.forward(entry));
    }
    this.#tab.follow(status);
  }
}

function ownerClosed() {
  return problem(
    'storage',
    'owner_closed',
    'the tab that held the database went away before answering. This request was not confirmed; ' +
      'retrying it is safe (an event is applied at most once).',
  );
}
