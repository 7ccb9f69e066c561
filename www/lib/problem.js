// The shape of every error the page sees, for the few made in JavaScript.
//
// Rust makes almost every error (src/core/error.rs):
//
//   {kind, code, message, http_status, retryable, params, field?}
//
// `kind` says what to do (fix the input, retry later), `code` says why,
// `params` holds the values the English `message` mentions, as strings. The
// worker and the client make a few errors of their own — a worker that
// crashed, a request no tab answered — and give them the same shape, so the
// page and the console treat every error alike and the page can say each one
// in English or Russian by its key `error.<kind>.<code>` (www/lib/errors.js).
//
// This module has no DOM and no dictionaries: every worker imports it too,
// and makes its errors with `problem` (or `invalid`, `asErrorObject`).

// What each kind means for a sender: the HTTP status a webhook handler would
// answer with, and whether delivering the same request again later is right.
const STATUS = {
  invalid_input: [400, false],
  busy: [503, true],
  storage: [500, true],
};
// Storage codes that no retry on this page, in this browser, can change.
const FINAL = new Set(['insecure_context', 'no_opfs']);

/**
 * Every `[kind, code]` made in JavaScript. Rust's own list comes from
 * `errorCodes()` in the wasm module; tests/e2e/unit-i18n.test.mjs checks that
 * both lists have an English and a Russian text.
 */
export const LOCAL_CODES = Object.freeze([
  ['invalid_input', 'unknown_op'],
  ['invalid_input', 'bad_options'],
  ['invalid_input', 'not_cloneable'],
  ['invalid_input', 'unknown_delivery'],
  ['invalid_input', 'not_bytes'],
  ['invalid_input', 'query_cancelled'],
  ['invalid_input', 'options_unreadable'],
  ['busy', 'no_owner'],
  ['busy', 'owner_timeout'],
  ['storage', 'insecure_context'],
  ['storage', 'no_opfs'],
  ['storage', 'in_use'],
  ['storage', 'open_failed'],
  ['storage', 'crashed'],
  ['storage', 'killed'],
  ['storage', 'unconfirmed'],
  ['storage', 'worker_stopped'],
  ['storage', 'owner_closed'],
  ['storage', 'crash_worker_failed'],
  ['storage', 'bench_failed'],
]);

/**
 * An error object shaped like Rust's. `params` values are shown to readers,
 * so they are strings; `field` names the input at fault (invalid_input).
 */
export function problem(kind, code, message, params = {}, field = undefined) {
  const [http_status, retryable] = STATUS[kind];
  const error = { kind, code, message, http_status, retryable: retryable && !FINAL.has(code), params };
  if (field !== undefined) {
    error.field = field;
  }
  return error;
}

/** invalid_input / other: `invalid <field>: <text>`, for a worker's own checks of its arguments. */
export function invalid(field, text) {
  return problem('invalid_input', 'other', `invalid ${field}: ${text}`, { text }, field);
}

/** A request that cannot be copied to `where` (a function, a symbol, a DOM object: DataCloneError). */
export function notCloneable(where, thrown) {
  const detail = describe(thrown);
  return problem('invalid_input', 'not_cloneable', `cannot send this request to ${where}: ${detail}`, { detail });
}

/**
 * What was thrown, as text; even `String(thrown)` may throw (a Symbol, a
 * hostile toString).
 */
export function describe(thrown) {
  try {
    return thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return 'something that cannot be shown as text was thrown';
  }
}

/** Whether `value` is one of these error objects (Rust's or ours). */
export function isErrorObject(value) {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    typeof value.kind === 'string' &&
    typeof value.message === 'string'
  );
}

/** Whether opening OPFS failed because another worker still holds its access handles (they are exclusive). */
export function heldByAnotherWorker(thrown) {
  return isErrorObject(thrown) && thrown.message.includes('NoModificationAllowedError');
}

/** A console query cancelled by the reader (inboxLab.cancel()). */
export function queryCancelled() {
  return problem(
    'invalid_input',
    'query_cancelled',
    'You cancelled the query before it finished; nothing was changed.',
    {},
    'sql',
  );
}

/** `thrown` as an error object: itself if it is one, else a storage error `code` saying `context`. */
export function asErrorObject(thrown, code, context) {
  if (isErrorObject(thrown)) {
    return thrown;
  }
  const detail = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  return problem('storage', code, `${context}: ${detail}`, { detail });
}

/**
 * What `scope` (a window or a worker's global) lacks for OPFS storage, as an
 * error object (code insecure_context or no_opfs), or null. A worker also
 * needs synchronous access handles, which only dedicated workers have.
 * Rust's pool install checks the same again, and reports a browser that
 * refuses (a private window) as `opfs_unavailable`.
 */
export function opfsMissing(scope) {
  if (!scope.isSecureContext) {
    return problem(
      'storage',
      'insecure_context',
      'OPFS storage is unavailable: this page is not served from a secure origin (https or localhost)',
    );
  }
  const inWorker = typeof scope.document === 'undefined';
  if (
    typeof scope.navigator.storage?.getDirectory !== 'function' ||
    (inWorker && typeof scope.FileSystemSyncAccessHandle !== 'function')
  ) {
    return problem('storage', 'no_opfs', 'OPFS storage is unavailable: this browser has no origin private file system');
  }
  return null;
}
