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
// against one database — which is what the inbox is for. client.js does the
// routing; this module only knows the lock and the channel.
//
// ## Channel protocol (BroadcastChannel "inbox-lab"; every tab sees every
// message and ignores what is not for it; `from` is the sender's tab id)
//
//   {type: "hello", from}                  a new tab; the owner answers with "status"
//   {type: "status", from, status}         the owner's database status: on every change,
//                                          and after a "hello". A status from a tab
//                                          other than the known owner means the owner
//                                          changed (the old one is gone: the lock moved).
//   {type: "request", from, id, op, args}  a follower's request (ops as in worker.js,
//                                          plus "killWorker"); `id` is the follower's
//   {type: "ack", from, to, id}            the owner has the request and will answer it
//   {type: "reply", from, to, id, ok, result | error}
//                                          exactly one per request the owner acked
//   {type: "changed", from}                writes finished: the tables may have changed
//
// What can go wrong, and what the follower does (client.js):
// * No "ack" within ACK_TIMEOUT_MS: no tab is serving requests (or the
//   owner is frozen). Rejected as `busy` (retryable), never as success.
// * "ack" but no "reply" within REPLY_TIMEOUT_MS: rejected as `busy`
//   (retryable). It may yet commit; it was never reported as done.
// * The owner changed before answering: a request it never acked is sent
//   to the new owner (the old one never had it); one it acked is sent again
//   only if it merely reads, and otherwise rejected as a retryable `storage`
//   error — it may or may not have committed, and only the sender may decide
//   to deliver again (which the inbox makes safe: applied once, or a
//   duplicate with the stored receipt).
// * The owner sees the same (from, id) twice (a follower re-sent it just as
//   the owner took over): it acks again, or repeats its reply; it never runs
//   a request twice.

/** The lock that makes a tab the owner. */
export const LOCK_NAME = 'inbox-lab-owner';

/** The channel every tab of this page listens on. */
export const CHANNEL_NAME = 'inbox-lab';

/** A follower's wait for "the owner has your request". */
export const ACK_TIMEOUT_MS = 10_000;

/** A follower's wait for the answer once the owner has the request. */
export const REPLY_TIMEOUT_MS = 60_000;

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
 * Asks to become the owner. `onOwner()` runs once this tab holds the lock —
 * at once if no other tab does, or when the owners before it are gone, or
 * never. The lock is held until the page goes away.
 */
export function claimOwnership(onOwner) {
  navigator.locks
    .request(LOCK_NAME, { mode: 'exclusive' }, () => {
      onOwner();
      return new Promise(() => {}); // hold it for the life of the page
    })
    .catch((error) => {
      // Only if the request itself is refused (e.g. the document is being
      // unloaded); this tab then stays a follower.
      console.warn('inbox-lab: cannot ask for the owner lock', error);
    });
}

/**
 * Opens the channel. `listener(message)` gets every message of the other
 * tabs. Returns `{send(message)}`, which adds this tab's id as `from` and
 * throws (DataCloneError) for values that cannot be copied to another tab.
 */
export function openChannel(listener) {
  const channel = new BroadcastChannel(CHANNEL_NAME);
  channel.addEventListener('message', ({ data }) => listener(data));
  return {
    send(message) {
      channel.postMessage({ ...message, from: TAB_ID });
    },
  };
}
