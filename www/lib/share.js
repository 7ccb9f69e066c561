// A share link: the state of an experiment carried in the URL fragment, so
// it never reaches a server. One format for every experiment of the page.
//
// Format (version 1):  #s=<base64url(UTF-8 JSON)>   the JSON is {"v":1, ...fields}
//
// The fragment starts with "s=", never with "/": the page's screen routes are
// "#/<screen>" (www/panels/nav/nav.js), so a route and a share link cannot be
// mistaken for each other; a page that sees "#s=" opens the screen the state
// names (shareRoute below) on a scratch database (www/db/client.js, SCRATCH).
//
// The states, by their "kind" (none: a handler, the first kind there was):
//
//   {handler: text, race?: "2:ABAB"}       a handler text and its first failing race
//                                          schedule (www/panels/handler-lab/)
//   {kind: "timeline", sends: [send, …]}   the sender's deliveries as sent, oldest first
//   {kind: "race", handler, deliveries: 2 | 3, order: "ABBA…"}
//                                          the race lab: which delivery each press advanced
//   {kind: "step", send, next: n, end: "throw" | "commit"}
//                                          step mode: the sender's event and options, n
//                                          presses of "Next statement", then how it ended
//   {kind: "level", level: id, actions: [action, …]}
//                                          a level (www/panels/levels/) and the actions
//                                          that won it, each a control the page presses:
//     {do: "send", ...send}  {do: "burst", event, handler, count}
//     {do: "race", handler, deliveries, order}
//     {do: "effects", control: "deliver" | "dispatch" | "dispatch_crash" | "dedup",
//      strategy, crash: null | a Deliver crash point, dedup: boolean}
//                                          "where the scheme ends"' side effects (level 9)
//     {do: "retention", control: "deliver", next: boolean}
//     {do: "retention", control: "advance" | "purge", days}
//                                          its retention (level 10): Deliver (after "Next
//                                          event" if `next`: another event than the last
//                                          one delivered), "+1 day"/"+7 days" (days 1 | 7),
//                                          the purge with its window (1 | 3 | 7 | 30)
//     {do: "crash", run: "sweep" | "kills", mode: "delete" | "wal", events?: 1 | 3,
//      control?: boolean, trials?: 1…LIMITS.kills}
//                                          the crash lab (level 7): a sweep, or random kills
//
//   send = {event: {source, event_id, account_id, amount}, handler, fault: null |
//           "after_insert" | "after_update", lose: boolean, attempts: 1…10, delay: ms}
//
// Decoding is a boundary: the fragment is whatever someone pasted. Each
// decoder returns {state} or {error: code, params?} and never throws; the
// codes (share.too_long, share.not_base64, share.not_json, share.not_object,
// share.version, share.field, share.kind, share.shape, share.handler,
// share.fault, share.too_many, share.name) are keys of the page's dictionaries (the first
// six in www/panels/handler-lab/handlerlab.js, which had the first links, the
// others in www/panels/share/sharing.js). Sizes and counts are bounded
// (LIMITS); handlers and faults must be known names; the events themselves
// are checked by Rust before anything runs (www/panels/share/replay.js,
// worker op "checkDelivery"), by the same rules as Deliver, and a level's id
// against the levels there. Values come back as data, never as HTML.

/** The prefix of a share fragment. */
export const SHARE_PREFIX = '#s=';

/** The version this page writes and reads. */
export const SHARE_VERSION = 1;

/** The longest fragment accepted or written (characters after "#s="). */
export const MAX_SHARE_CHARS = 24_000;

/**
 * Encodes `state` (plain JSON data: one of the states above) as a fragment
 * "#s=…". Returns {fragment} or {error: "share.too_long"}.
 */
export function encodeShare(state) {
  const json = JSON.stringify({ ...state, v: SHARE_VERSION });
  const body = toBase64Url(new TextEncoder().encode(json));
  if (body.length > MAX_SHARE_CHARS) {
    return { error: 'share.too_long' };
  }
  return { fragment: SHARE_PREFIX + body };
}

/**
 * Whether `hash` (location.hash) is a share fragment at all (else it is a
 * route or nothing, and not this module's business).
 */
export function isShare(hash) {
  return typeof hash === 'string' && hash.startsWith(SHARE_PREFIX);
}

/**
 * Decodes a fragment "#s=…" whose state must hold the string fields
 * `fields` and may hold the string fields `optional` (others are dropped).
 * Returns {state} or {error}.
 */
export function decodeShare(hash, fields, optional = []) {
  const read = parse(hash);
  if (read.error) {
    return read;
  }
  const parsed = read.parsed;
  const state = {};
  for (const name of [...fields, ...optional]) {
    const value = Object.hasOwn(parsed, name) ? parsed[name] : undefined;
    if (value === undefined && !fields.includes(name)) {
      continue; // an optional field left out
    }
    if (typeof value !== 'string') {
      return { error: 'share.field', field: name };
    }
    state[name] = value;
  }
  return { state };
}

/** The fragment's JSON object: {parsed} or {error}. */
function parse(hash) {
  if (!isShare(hash)) {
    return { error: 'share.not_base64' };
  }
  const body = hash.slice(SHARE_PREFIX.length);
  if (body.length > MAX_SHARE_CHARS) {
    return { error: 'share.too_long' };
  }
  const bytes = fromBase64Url(body);
  if (bytes === null) {
    return { error: 'share.not_base64' };
  }
  let parsed;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { error: 'share.not_json' };
  }
  if (!isObject(parsed)) {
    return { error: 'share.not_object' };
  }
  if (parsed.v !== SHARE_VERSION) {
    return { error: 'share.version' };
  }
  return { parsed };
}

// ---- Experiments --------------------------------------------------------------

/** The built-in handlers, in the page's order: the ones a link may name (the workshop's exists only in some builds: not shared). */
export const HANDLERS = Object.freeze(['atomic', 'no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace']);

/** The crash points of the sender's first attempt. */
export const FAULTS = Object.freeze(['after_insert', 'after_update']);

/**
 * What a link may ask the page to run: at most `sends` sends in a timeline
 * (each at most `attempts` attempts), `actions` actions in a level, `steps`
 * presses in a race, `next` presses in step mode, `burst` deliveries in a
 * burst, and a first wait of at most `delayMs` (the sender's clock is
 * simulated: no real wait).
 */
export const LIMITS = Object.freeze({ sends: 50, actions: 50, steps: 200, next: 20, burst: 100, attempts: 10, delayMs: 60_000, kills: 100 });

/**
 * The names the other controls of a level's link may use, each list the
 * panel's own: "where the scheme ends" (www/panels/scheme-ends/effects.js and
 * retention.js: its strategies, Deliver's crash points, its buttons, its clock steps and
 * purge windows) and the crash lab (www/panels/crash-lab/crashlab.js).
 */
export const NAMES = Object.freeze({
  strategy: Object.freeze(['send_before_commit', 'send_after_commit', 'outbox']),
  crash: Object.freeze(['after_send_before_commit', 'after_commit_before_send']),
  effects: Object.freeze(['deliver', 'dispatch', 'dispatch_crash', 'dedup']),
  retention: Object.freeze(['deliver', 'advance', 'purge']),
  advanceDays: Object.freeze([1, 7]),
  windowDays: Object.freeze([1, 3, 7, 30]),
  run: Object.freeze(['sweep', 'kills']),
  mode: Object.freeze(['delete', 'wal']),
  events: Object.freeze([1, 3]),
});

/** The race lab's deliveries, by letter: "A" is delivery 0. */
export const LETTERS = Object.freeze(['A', 'B', 'C']);

/**
 * Where a share link leads: {screen, rest} — the screen its state is replayed
 * on ("3" for "#s=" of level 3, else null). A handler's link, and a link too
 * damaged to name anything, open the handler screen (which reads its own).
 */
export function shareRoute(hash) {
  const read = parse(hash);
  const kind = read.parsed?.kind;
  if (kind === 'timeline' || kind === 'step') {
    return { screen: 'deliver', rest: null };
  }
  if (kind === 'race') {
    return { screen: 'race', rest: null };
  }
  if (kind === 'level') {
    return { screen: 'levels', rest: Number.isInteger(read.parsed.level) ? String(read.parsed.level) : null };
  }
  return { screen: 'handler', rest: null };
}

/**
 * Decodes an experiment's link (a kind above). Returns {state} — a fresh,
 * validated copy holding only the fields above — or {error, params}; a
 * handler's link is {state: {kind: "handler"}} (the handler screen reads it).
 */
export function decodeExperiment(hash) {
  const read = parse(hash);
  if (read.error) {
    return read;
  }
  const p = read.parsed;
  if (!Object.hasOwn(p, 'kind')) {
    return typeof p.handler === 'string' ? { state: { kind: 'handler' } } : { error: 'share.field', field: 'handler' };
  }
  try {
    return { state: experimentOf(p) };
  } catch (error) {
    if (error instanceof Refused) {
      return error.answer;
    }
    throw error;
  }
}

/** The JSON of a send as a link holds it. */
export function sendState({ event, handler, fault, loseResponse, attempts, firstDelayMs }) {
  return { event, handler, fault: fault ?? null, lose: Boolean(loseResponse), attempts, delay: firstDelayMs };
}

/** "ABBA" for the delivery indexes [0, 1, 1, 0]. */
export function orderText(order) {
  return order.map((i) => LETTERS[i]).join('');
}

/** The delivery indexes [0, 1, 1, 0] for "ABBA" (-1 for a letter that names none). */
export function orderOf(text) {
  return [...text].map((letter) => LETTERS.indexOf(letter));
}

// The readers below return what they read, a fresh copy, or throw a Refused
// holding the answer of the first check that fails; decodeExperiment turns it
// into its {error, params}, so nothing is thrown out of this module.
class Refused {
  constructor(answer) {
    this.answer = answer;
  }
}

function refuse(error, params) {
  throw new Refused({ error, params });
}

function shape(field) {
  return refuse('share.shape', { field });
}

function tooMany(count, max) {
  return refuse('share.too_many', { count, max });
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function flag(value, field) {
  return typeof value === 'boolean' ? value : shape(field);
}

function integer(value, field, min, max) {
  return Number.isInteger(value) && value >= min && value <= max ? value : shape(field);
}

/** An array of at most `max` items, each read by `read(item, field)`. */
function list(value, field, max, read) {
  if (!Array.isArray(value) || value.length === 0) {
    shape(field);
  }
  if (value.length > max) {
    tooMany(value.length, max);
  }
  return value.map((item, i) => read(item, `${field}[${i}]`));
}

function experimentOf(p) {
  switch (p.kind) {
    case 'timeline':
      return { kind: 'timeline', sends: list(p.sends, 'sends', LIMITS.sends, sendOf) };
    case 'race':
      return { kind: 'race', ...raceOf(p) };
    case 'step': {
      const send = sendOf(p.send, 'send');
      const next = integer(p.next, 'next', 0, LIMITS.next);
      if (p.end !== 'throw' && p.end !== 'commit') {
        shape('end');
      }
      return { kind: 'step', send, next, end: p.end };
    }
    case 'level':
      if (!Number.isInteger(p.level)) {
        shape('level');
      }
      return { kind: 'level', level: p.level, actions: list(p.actions, 'actions', LIMITS.actions, actionOf) };
    default:
      return refuse('share.kind', { kind: String(p.kind).slice(0, 40) });
  }
}

function handlerOf(value) {
  return HANDLERS.includes(value) ? value : refuse('share.handler', { name: String(value).slice(0, 40) });
}

// The event is passed on as it is, for Rust to check (checkDelivery): here
// only that it is an object of at most its four fields, each a string or a
// number, so what reaches the worker is small and plain.
function eventOf(value, field) {
  const keys = isObject(value) ? Object.keys(value) : [];
  if (!isObject(value) || keys.length > 4 || keys.some((k) => typeof value[k] !== 'string' && typeof value[k] !== 'number')) {
    shape(`${field}.event`);
  }
  return { ...value };
}

/** The event and the handler every delivering action names. */
function eventAndHandler(value, field) {
  const event = eventOf(value.event, field);
  return { event, handler: handlerOf(value.handler) };
}

function sendOf(value, field) {
  if (!isObject(value)) {
    shape(field);
  }
  const { event, handler } = eventAndHandler(value, field);
  if (value.fault !== null && !FAULTS.includes(value.fault)) {
    refuse('share.fault', { name: String(value.fault).slice(0, 40) });
  }
  const lose = flag(value.lose, `${field}.lose`);
  const attempts = integer(value.attempts, `${field}.attempts`, 1, LIMITS.attempts);
  const delay = integer(value.delay, `${field}.delay`, 0, LIMITS.delayMs);
  return { event, handler, fault: value.fault, lose, attempts, delay };
}

function raceOf(value) {
  const handler = handlerOf(value.handler);
  if (value.deliveries !== 2 && value.deliveries !== 3) {
    shape('deliveries');
  }
  if (typeof value.order !== 'string') {
    shape('order');
  }
  if (value.order.length > LIMITS.steps) {
    tooMany(value.order.length, LIMITS.steps);
  }
  const order = orderOf(value.order);
  if (order.length === 0 || order.some((i) => i < 0 || i >= value.deliveries)) {
    shape('order');
  }
  return { handler, deliveries: value.deliveries, order };
}

function actionOf(value, field) {
  if (!isObject(value)) {
    shape(field);
  }
  switch (value.do) {
    case 'send':
      return { do: 'send', ...sendOf(value, field) };
    case 'burst': {
      const target = eventAndHandler(value, field);
      if (Number.isInteger(value.count) && value.count > LIMITS.burst) {
        tooMany(value.count, LIMITS.burst);
      }
      return { do: 'burst', ...target, count: integer(value.count, `${field}.count`, 1, LIMITS.burst) };
    }
    case 'race':
      return { do: 'race', ...raceOf(value) };
    case 'effects':
      return effectsOf(value, field);
    case 'retention':
      return retentionOf(value, field);
    case 'crash':
      return crashOf(value, field);
    default:
      return shape(`${field}.do`);
  }
}

/** `value` if it is one of `names`, else the error naming the field and (shortened) the value. */
function named(value, names, field) {
  return names.includes(value)
    ? value
    : refuse('share.name', { field, name: String(typeof value === 'object' ? JSON.stringify(value) : value).slice(0, 40) });
}

function effectsOf(value, field) {
  const control = named(value.control, NAMES.effects, `${field}.control`);
  const dedup = flag(value.dedup, `${field}.dedup`);
  const strategy = named(value.strategy, NAMES.strategy, `${field}.strategy`);
  if (value.crash !== null) {
    named(value.crash, NAMES.crash, `${field}.crash`);
  }
  return { do: 'effects', control, strategy, crash: value.crash, dedup };
}

function retentionOf(value, field) {
  const control = named(value.control, NAMES.retention, `${field}.control`);
  if (control === 'advance' || control === 'purge') {
    const days = named(value.days, control === 'advance' ? NAMES.advanceDays : NAMES.windowDays, `${field}.days`);
    return { do: 'retention', control, days };
  }
  return { do: 'retention', control: 'deliver', next: flag(value.next, `${field}.next`) };
}

function crashOf(value, field) {
  const run = named(value.run, NAMES.run, `${field}.run`);
  const mode = named(value.mode, NAMES.mode, `${field}.mode`);
  if (run === 'sweep') {
    const events = named(value.events, NAMES.events, `${field}.events`);
    return { do: 'crash', run: 'sweep', mode, events, control: flag(value.control, `${field}.control`) };
  }
  if (Number.isInteger(value.trials) && value.trials > LIMITS.kills) {
    tooMany(value.trials, LIMITS.kills);
  }
  return { do: 'crash', run: 'kills', mode, trials: integer(value.trials, `${field}.trials`, 1, LIMITS.kills) };
}

function toBase64Url(bytes) {
  let binary = '';
  for (const b of bytes) {
    binary += String.fromCharCode(b);
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes, or null for anything that is not unpadded base64url. */
function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) {
    return null;
  }
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  let binary;
  try {
    binary = atob(padded);
  } catch {
    return null;
  }
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/**
 * The actions that won a level, from what it saw (lib/observed.js), as a
 * level's link holds them: {actions} or {error}. Sends (not step mode's),
 * bursts of one event, races the reader stepped (not replayed ones), and
 * the controls pressed in "where the scheme ends" and in the crash lab —
 * each observation says which control it answered — can be replayed.
 */
export function levelActions(seen) {
  const actions = [];
  let delivered = null; // the event of retention's last Deliver
  for (const o of seen) {
    const action = observedAction(o, delivered);
    if (o.kind === 'retention' && o.action === 'deliver') {
      delivered = o.event;
    }
    if (action === null) {
      return { error: 'share.level_other' };
    }
    if (action.tooMany !== undefined) {
      return { error: 'share.too_many', params: { count: action.tooMany, max: LIMITS.kills } };
    }
    actions.push(action);
  }
  if (actions.length === 0) {
    return { error: 'share.nothing.level' };
  }
  if (actions.length > LIMITS.actions) {
    return { error: 'share.too_many', params: { count: actions.length, max: LIMITS.actions } };
  }
  return { actions };
}

/**
 * The link's action for one observation, or null if a link cannot replay it.
 * `delivered`: the event retention's previous Deliver delivered (the panel
 * only moves on to newer ones, with "Next event").
 */
function observedAction(o, delivered) {
  switch (o.kind) {
    case 'send':
      return o.stepped ? null : { do: 'send', ...sendState({ ...o, ...o.policy }) };
    case 'burst':
      return { do: 'burst', event: o.event, handler: o.handler, count: o.count };
    case 'race':
      return o.replayed ? null : { do: 'race', handler: o.handler, deliveries: o.deliveries, order: orderText(o.order) };
    case 'effects':
      return { do: 'effects', control: o.control, strategy: o.strategy, crash: o.crash, dedup: o.dedup };
    case 'retention':
      return o.action === 'deliver'
        ? { do: 'retention', control: 'deliver', next: delivered !== null && delivered.event_id !== o.event.event_id }
        : { do: 'retention', control: o.action, days: o.days };
    case 'crash':
      if (o.run === 'sweep') {
        return { do: 'crash', run: 'sweep', mode: o.mode, events: o.events, control: o.control };
      }
      return o.points > LIMITS.kills ? { tooMany: o.points } : { do: 'crash', run: 'kills', mode: o.mode, trials: o.points };
    default:
      return null;
  }
}
