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
  for (const name of fields) {
    const value = Object.hasOwn(parsed, name) ? parsed[name] : undefined;
    if (typeof value !== 'string') {
      return { error: 'share.field', field: name };
    }
    state[name] = value;
  }
  for (const name of optional) {
    if (Object.hasOwn(parsed, name)) {
      if (typeof parsed[name] !== 'string') {
        return { error: 'share.field', field: name };
      }
      state[name] = parsed[name];
    }
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

/** The handlers a link may name (the workshop's exists only in some builds: not shared). */
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
 * panel's own: "where the scheme ends" (www/panels/scheme-ends/schemeends.js:
 * its strategies, Deliver's crash points, its buttons, its clock steps and
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
const LETTERS = 'ABC';

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
  switch (p.kind) {
    case 'timeline': {
      const sends = list(p.sends, 'sends', LIMITS.sends, sendOf);
      return sends.error ? sends : { state: { kind: 'timeline', sends: sends.value } };
    }
    case 'race': {
      const race = raceOf(p);
      return race.error ? race : { state: { kind: 'race', ...race.value } };
    }
    case 'step': {
      const send = sendOf(p.send, 'send');
      if (send.error) {
        return send;
      }
      const next = integer(p.next, 'next', 0, LIMITS.next);
      if (next.error) {
        return next;
      }
      if (p.end !== 'throw' && p.end !== 'commit') {
        return shape('end');
      }
      return { state: { kind: 'step', send: send.value, next: next.value, end: p.end } };
    }
    case 'level': {
      if (!Number.isInteger(p.level)) {
        return shape('level');
      }
      const actions = list(p.actions, 'actions', LIMITS.actions, actionOf);
      return actions.error ? actions : { state: { kind: 'level', level: p.level, actions: actions.value } };
    }
    default:
      return { error: 'share.kind', params: { kind: String(p.kind).slice(0, 40) } };
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

function shape(field) {
  return { error: 'share.shape', params: { field } };
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function integer(value, field, min, max) {
  return Number.isInteger(value) && value >= min && value <= max ? { value } : shape(field);
}

/** An array of at most `max` items, each read by `read(item, field)`. */
function list(value, field, max, read) {
  if (!Array.isArray(value) || value.length === 0) {
    return shape(field);
  }
  if (value.length > max) {
    return { error: 'share.too_many', params: { count: value.length, max } };
  }
  const out = [];
  for (const [i, item] of value.entries()) {
    const one = read(item, `${field}[${i}]`);
    if (one.error) {
      return one;
    }
    out.push(one.value);
  }
  return { value: out };
}

function handlerOf(value) {
  return HANDLERS.includes(value) ? { value } : { error: 'share.handler', params: { name: String(value).slice(0, 40) } };
}

// The event is passed on as it is, for Rust to check (checkDelivery): here
// only that it is an object of at most its four fields, each a string or a
// number, so what reaches the worker is small and plain.
function eventOf(value, field) {
  if (!isObject(value)) {
    return shape(`${field}.event`);
  }
  const keys = Object.keys(value);
  if (keys.length > 4 || keys.some((k) => typeof value[k] !== 'string' && typeof value[k] !== 'number')) {
    return shape(`${field}.event`);
  }
  return { value: { ...value } };
}

/** The event and the handler every delivering action names: {value: {event, handler}} or {error}. */
function eventAndHandler(value, field) {
  const event = eventOf(value.event, field);
  if (event.error) {
    return event;
  }
  const handler = handlerOf(value.handler);
  if (handler.error) {
    return handler;
  }
  return { value: { event: event.value, handler: handler.value } };
}

function sendOf(value, field) {
  if (!isObject(value)) {
    return shape(field);
  }
  const target = eventAndHandler(value, field);
  if (target.error) {
    return target;
  }
  const { event, handler } = target.value;
  if (value.fault !== null && !FAULTS.includes(value.fault)) {
    return { error: 'share.fault', params: { name: String(value.fault).slice(0, 40) } };
  }
  if (typeof value.lose !== 'boolean') {
    return shape(`${field}.lose`);
  }
  const attempts = integer(value.attempts, `${field}.attempts`, 1, LIMITS.attempts);
  if (attempts.error) {
    return attempts;
  }
  const delay = integer(value.delay, `${field}.delay`, 0, LIMITS.delayMs);
  if (delay.error) {
    return delay;
  }
  return {
    value: { event, handler, fault: value.fault, lose: value.lose, attempts: attempts.value, delay: delay.value },
  };
}

function raceOf(value) {
  const handler = handlerOf(value.handler);
  if (handler.error) {
    return handler;
  }
  if (value.deliveries !== 2 && value.deliveries !== 3) {
    return shape('deliveries');
  }
  if (typeof value.order !== 'string') {
    return shape('order');
  }
  if (value.order.length > LIMITS.steps) {
    return { error: 'share.too_many', params: { count: value.order.length, max: LIMITS.steps } };
  }
  const order = [...value.order].map((letter) => LETTERS.indexOf(letter));
  if (order.length === 0 || order.some((i) => i < 0 || i >= value.deliveries)) {
    return shape('order');
  }
  return { value: { handler: handler.value, deliveries: value.deliveries, order } };
}

function actionOf(value, field) {
  if (!isObject(value)) {
    return shape(field);
  }
  if (value.do === 'send') {
    const send = sendOf(value, field);
    return send.error ? send : { value: { do: 'send', ...send.value } };
  }
  if (value.do === 'burst') {
    const target = eventAndHandler(value, field);
    if (target.error) {
      return target;
    }
    if (Number.isInteger(value.count) && value.count > LIMITS.burst) {
      return { error: 'share.too_many', params: { count: value.count, max: LIMITS.burst } };
    }
    const count = integer(value.count, `${field}.count`, 1, LIMITS.burst);
    return count.error ? count : { value: { do: 'burst', ...target.value, count: count.value } };
  }
  if (value.do === 'race') {
    const race = raceOf(value);
    return race.error ? race : { value: { do: 'race', ...race.value } };
  }
  if (value.do === 'effects') {
    return effectsOf(value, field);
  }
  if (value.do === 'retention') {
    return retentionOf(value, field);
  }
  if (value.do === 'crash') {
    return crashOf(value, field);
  }
  return shape(`${field}.do`);
}

/** `value` if it is one of `names`, else the error naming the field and (shortened) the value. */
function named(value, names, field) {
  if (names.includes(value)) {
    return { value };
  }
  return { error: 'share.name', params: { field, name: String(typeof value === 'object' ? JSON.stringify(value) : value).slice(0, 40) } };
}

function effectsOf(value, field) {
  const control = named(value.control, NAMES.effects, `${field}.control`);
  if (control.error) {
    return control;
  }
  if (typeof value.dedup !== 'boolean') {
    return shape(`${field}.dedup`);
  }
  const strategy = named(value.strategy, NAMES.strategy, `${field}.strategy`);
  if (strategy.error) {
    return strategy;
  }
  if (value.crash !== null) {
    const crash = named(value.crash, NAMES.crash, `${field}.crash`);
    if (crash.error) {
      return crash;
    }
  }
  return { value: { do: 'effects', control: control.value, strategy: strategy.value, crash: value.crash, dedup: value.dedup } };
}

function retentionOf(value, field) {
  const control = named(value.control, NAMES.retention, `${field}.control`);
  if (control.error) {
    return control;
  }
  if (control.value === 'advance' || control.value === 'purge') {
    const days = named(value.days, control.value === 'advance' ? NAMES.advanceDays : NAMES.windowDays, `${field}.days`);
    return days.error ? days : { value: { do: 'retention', control: control.value, days: days.value } };
  }
  if (typeof value.next !== 'boolean') {
    return shape(`${field}.next`);
  }
  return { value: { do: 'retention', control: 'deliver', next: value.next } };
}

function crashOf(value, field) {
  const run = named(value.run, NAMES.run, `${field}.run`);
  if (run.error) {
    return run;
  }
  const mode = named(value.mode, NAMES.mode, `${field}.mode`);
  if (mode.error) {
    return mode;
  }
  if (run.value === 'sweep') {
    const events = named(value.events, NAMES.events, `${field}.events`);
    if (events.error) {
      return events;
    }
    if (typeof value.control !== 'boolean') {
      return shape(`${field}.control`);
    }
    return { value: { do: 'crash', run: 'sweep', mode: mode.value, events: events.value, control: value.control } };
  }
  if (Number.isInteger(value.trials) && value.trials > LIMITS.kills) {
    return { error: 'share.too_many', params: { count: value.trials, max: LIMITS.kills } };
  }
  const trials = integer(value.trials, `${field}.trials`, 1, LIMITS.kills);
  return trials.error ? trials : { value: { do: 'crash', run: 'kills', mode: mode.value, trials: trials.value } };
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
