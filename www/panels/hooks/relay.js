// The page's end of the webhook relay in `cargo xtask serve`
// (docs/webhooks.md documents the protocol). The server holds no
// database: a real HTTP sender's `POST /hooks/{source}` is passed to this
// page as a server-sent event on `GET /hooks/subscribe`,
//
//   event: hook
//   data: {"id": "r42", "source": "provider-a",
//          "headers": {"webhook-id": …, "webhook-timestamp": …, "webhook-signature": …},
//          "body_base64": "…"}
//
// the database worker verifies and delivers it (`inboxLab.hooks.receive`,
// Rust: src/labs/webhooks/), and the page posts the handler's own answer
// back with `POST /hooks/answer/{id}` `{status, body}`; the server answers
// the sender with exactly that. Whatever goes wrong here, an answer is
// posted (an error object with its status), or none at all — then the
// server answers 503 after its deadline. The relay never says 200 on its own.
//
// Only this page may subscribe and answer, not any program that can reach
// the port: both carry the relay's key (`?key=`), which the server gives out
// in one place only, the link `cargo xtask serve` prints (`…/?relay=<key>`).
// The page takes the key off its address at once (so it is not bookmarked,
// shared or shown) and keeps it in sessionStorage: this tab keeps it across
// reloads; another tab needs the link. Without it the panel says so.
//
// A webhook that reached the handler also goes on the timeline (via
// "webhook"), with the steps Rust ran. The last LOG_LIMIT requests, with
// their verdicts, are kept for the panel and `inboxLab.hooks.requests()`.

import { inboxLab, onStatus } from '../../db/client.js';

/** Requests kept in the log. */
const LOG_LIMIT = 50;

/** The parameter of the printed link that holds the key, and where this tab keeps it. */
const LINK_PARAM = 'relay';
const KEY_STORE = 'inbox-lab.relay-key';

/** The relay's key, or null: taken as this module loads, before anything copies the address. */
const relayKey = takeKey();

function takeKey() {
  const url = new URL(window.location.href);
  const given = url.searchParams.get(LINK_PARAM);
  try {
    if (given === null) {
      return sessionStorage.getItem(KEY_STORE);
    }
    sessionStorage.setItem(KEY_STORE, given);
  } catch {
    // No sessionStorage (blocked): the key lasts as long as this load.
  }
  url.searchParams.delete(LINK_PARAM);
  history.replaceState(history.state, '', url.href);
  return given;
}

/** A relay path with the key. */
function keyed(path) {
  return `${path}?key=${encodeURIComponent(relayKey)}`;
}

/**
 * The receiver's one setting, the lesson's switch: verify signatures (the
 * way to do it) or not (the mistake, to see why).
 */
export const receiver = { verify: true };

/**
 * `connecting` | `connected` | `unavailable` (this browser has no
 * EventSource, or the relay went away or refused the key) | `locked` (there
 * is a relay, but this tab was not opened with its link) | `static` (the
 * page is served as static files, e.g. dist/ on any host: there is no relay
 * to subscribe to) |
 * `offline` (the browser is offline) | `follower` (another tab runs the
 * database and receives the webhooks).
 */
let status = 'connecting';
const log = [];
const listeners = new Set();
let seq = 0;
// The page's services (app.js): a relayed webhook is a timeline entry at the sender's time.
let services = null;

/**
 * Subscribes to the server's relay — from the tab that runs the database
 * worker only (role "owner" or "alone", db/client.js): the server hands
 * each webhook to one subscriber, and one per browser is enough. A
 * follower tab that becomes the owner subscribes then.
 */
export function start(pageServices) {
  services = pageServices;
  if (typeof EventSource === 'undefined') {
    setStatus('unavailable');
    return;
  }
  let subscribed = false;
  onStatus(({ role, phase }) => {
    if (subscribed) {
      return;
    }
    if (role === 'follower') {
      setStatus('follower');
    } else if (phase === 'ready') {
      subscribed = true;
      probe();
    }
  });
}

// Is there a relay? `relay.json` is a file of the built site saying
// `{"relay": false}`; `cargo xtask serve` answers that path itself with
// `{"relay": true}`. Asking for a file every host has means no failed request
// on a static host (an EventSource there would get 404), and the panel can
// say why real webhooks are not available here. URLs are relative to the
// page, which may live under any sub-path.
async function probe() {
  if (!navigator.onLine) {
    setStatus('offline');
    window.addEventListener('online', probe, { once: true });
    return;
  }
  let relay = false;
  try {
    const response = await fetch('relay.json', { cache: 'no-store' });
    relay = response.ok && (await response.json())?.relay === true;
  } catch {
    // Not served at all (the source tree's layout has no relay.json): no relay.
  }
  if (!relay) {
    setStatus('static');
  } else if (relayKey === null) {
    setStatus('locked');
  } else {
    open();
  }
}

function open() {
  const events = new EventSource(keyed('hooks/subscribe'));
  events.addEventListener('open', () => setStatus('connected'));
  // EventSource reconnects by itself after a network error; any answer but
  // 200 closes it for good: a key the server does not know (it was restarted
  // and printed a new link), or too many tabs subscribed.
  events.addEventListener('error', () => setStatus(events.readyState === EventSource.CLOSED ? 'unavailable' : 'connecting'));
  events.addEventListener('hook', (message) => {
    handle(message.data);
  });
}

export function relayStatus() {
  return status;
}

/** The last requests, oldest first: `{seq, at, source, webhook_id, verify, status, body, event}`. */
export function requests() {
  return log.map((entry) => structuredClone(entry));
}

/** Calls `listener()` after every change; returns an unsubscribe function. */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function handle(data) {
  let relayed;
  try {
    relayed = JSON.parse(data);
  } catch {
    return; // not the relay's shape: nothing to answer; the server times out with 503
  }
  if (typeof relayed?.id !== 'string') {
    return;
  }
  const started = performance.now();
  const verify = receiver.verify;
  let received;
  try {
    received = await inboxLab.hooks.receive(
      { source: relayed.source, headers: relayed.headers ?? {}, body_base64: relayed.body_base64 },
      { verify },
    );
  } catch (error) {
    // The database could not take it (busy, a problem, a stopped worker):
    // the sender hears that status and decides whether to retry.
    received = { status: error?.http_status ?? 503, body: error, event: null, steps: null };
  }
  await postAnswer(relayed.id, received);
  record(relayed, verify, received, performance.now() - started);
}

async function postAnswer(id, { status: code, body }) {
  try {
    await fetch(keyed(`hooks/answer/${encodeURIComponent(id)}`), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: code, body: body ?? null }),
    });
  } catch {
    // The server is gone: its sender's connection went with it.
  }
}

function record(relayed, verify, received, tookMs) {
  seq += 1;
  const entry = {
    seq,
    at: new Date().toISOString(),
    source: relayed.source,
    webhook_id: relayed.headers?.['webhook-id'] ?? null,
    verify,
    status: received.status,
    body: received.body,
    event: received.event,
  };
  log.push(entry);
  log.splice(0, Math.max(0, log.length - LOG_LIMIT));
  if (received.event) {
    services.timeline.add({
      at: services.panels.sender.now(),
      event: received.event,
      attempt: 1,
      of: 1,
      handler: 'atomic',
      via: 'webhook',
      answer: received.body,
      lost: false,
      tookMs,
      steps: received.steps,
    });
  }
  notify();
}

function setStatus(next) {
  if (next !== status) {
    status = next;
    notify();
  }
}

function notify() {
  for (const listener of listeners) {
    listener();
  }
}
