// A share link: a small state object (a handler's text, …) carried in the
// URL fragment, so it never reaches a server.
//
// Format (version 1):  #s=<base64url(UTF-8 JSON)>   the JSON is {"v":1, ...fields}
//
// The fragment starts with "s=", never with "/": the page's screen routes are
// "#/<screen>" (www/app.js), so a route and a share link cannot be mistaken
// for each other; a page that sees "#s=" opens the screen the state names.
//
// decodeShare() is a boundary: the fragment is whatever someone pasted. It
// returns {state} or {error: code} and never throws; the codes
// (share.too_long, share.not_base64, share.not_json, share.not_object,
// share.version, share.field) are keys of the page's dictionaries. Values
// come back as data (strings, numbers), never as HTML.

/** The prefix of a share fragment. */
export const SHARE_PREFIX = '#s=';

/** The version this page writes and reads. */
export const SHARE_VERSION = 1;

/** The longest fragment accepted or written (characters after "#s="). */
export const MAX_SHARE_CHARS = 24_000;

/**
 * Encodes `state` (a plain object of strings and numbers) as a fragment
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
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { error: 'share.not_object' };
  }
  if (parsed.v !== SHARE_VERSION) {
    return { error: 'share.version' };
  }
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
