// The one request/answer shape between the page and its workers.
//
// Every worker speaks this shape: the database worker (www/db/worker.js), the
// guest lanes it hands foreign work to (www/db/foreign.js, www/db/guest.js), the
// crash lab's (www/panels/crash-lab/crashworker.js) and the bench's
// (www/panels/bench/benchworker.js). Each documents its own
// ops at its top; what a message looks like is said here, once. (The tab
// that holds the database answers the other tabs' requests in this shape
// too: www/db/tabs.js.)
//
// ## The shape
//
// Page → worker, a request:
//
//   {id, op, args}            `id` is chosen by the page (the Caller below numbers them
//                             1, 2, 3, … per worker); the worker only echoes it.
//                             `args` is copied as it is (structured clone): the worker
//                             converts and validates nothing on the page's behalf.
//
// Worker → page:
//
//   {id, ok: true,  result}   the reply. Exactly one per request, errors included —
//   {id, ok: false, error}    an unknown op, a refused or failed one — so no caller ever
//                             waits forever. `error` is an error object
//                             {kind, message, …} (www/lib/problem.js).
//   {id, type: "progress", …} optional, any number before the reply: how far a long
//                             request has got (the bench's runs).
//   {type, …}                 an announcement: no `id`, about the worker rather than one
//                             request ("ready", "busy", "crashed", the crash lab's "ack", …).
//
// A worker handles its requests one at a time, in arrival order — except the
// ops it names `background` (below), whose replies may come after later ones'.
//
// What "exactly one reply" cannot promise: a worker that is gone — terminated,
// its script failed to load, it threw outside a request — answers nothing
// more. The page side covers that: `Caller.fail` rejects every request still
// in flight, and every later one, so no promise hangs. (A crash worker stopped
// at a crash point never answers the request it was running, on purpose: the
// page terminates it.)
//
// ## The page side: `new Caller(worker, options)`
//
//   const db = new Caller(new Worker(url, {type: 'module'}), {name: 'the database worker'});
//   const tables = await db.call('tables');
//
// ## The worker side: `serve(ops, options)`
//
//   serve(new Map([['tables', () => lab.tables()]]));

import { problem } from './problem.js';

/**
 * The page's side of one worker: numbers the requests, settles each with its
 * reply, hands announcements to `onAnnouncement`, and rejects what is in
 * flight when the worker is gone.
 */
export class Caller {
  /** Requests waiting for their reply, by id: {settle, onProgress}. */
  #inFlight = new Map();
  #nextId = 1;

  /**
   * `options.name` names the worker in errors ("the crash worker");
   * `options.onAnnouncement(message)` gets every message without an id (it
   * may be replaced later: `caller.onAnnouncement = …`); `options.onError(error)`
   * is called when the worker stops on its own — its script failed to load,
   * or it threw outside a request — with a storage error (code
   * worker_stopped); by default that error fails every request (`fail`).
   */
  constructor(worker, { name = 'the worker', onAnnouncement = () => {}, onError } = {}) {
    this.worker = worker;
    this.name = name;
    this.onAnnouncement = onAnnouncement;
    /** Null while the worker may answer; then the error every request is rejected with. */
    this.stopped = null;
    worker.addEventListener('message', ({ data }) => this.#receive(data));
    worker.addEventListener('error', (event) => {
      event.preventDefault(); // handled here, not an uncaught error on the page
      if (this.stopped !== null) {
        return;
      }
      const detail = event.message || 'it could not be started';
      const error = problem('storage', 'worker_stopped', `${name} stopped: ${detail}`, { detail });
      if (onError === undefined) {
        this.fail(error);
      } else {
        onError(error);
      }
    });
  }

  /**
   * Sends one request. `settle(ok, value)` is called exactly once, with the
   * reply (`value` its result or error) or, if the worker is gone first, with
   * `(false, error)`. `options.onProgress(message)` gets the request's
   * progress messages. Throws, sending nothing, if `args` cannot be copied to
   * a worker (a function, a symbol, a DOM object: DataCloneError).
   */
  send(op, args, settle, { onProgress } = {}) {
    if (this.stopped !== null) {
      settle(false, this.stopped);
      return;
    }
    const id = this.#nextId;
    this.#nextId += 1;
    this.worker.postMessage({ id, op, args });
    this.#inFlight.set(id, { settle, onProgress });
  }

  /** `send` as a promise: resolves to the result, rejects with the error (or what postMessage threw). */
  call(op, args, options) {
    return new Promise((resolve, reject) =>
      this.send(op, args, (ok, value) => (ok ? resolve(value) : reject(value)), options),
    );
  }

  /**
   * The worker is gone, or must not be trusted: every request in flight and
   * every later one is settled with `error`, in the order they were sent, and
   * whatever the worker still sends is ignored.
   */
  fail(error) {
    if (this.stopped !== null) {
      return;
    }
    this.stopped = error;
    const waiting = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const { settle } of waiting) {
      settle(false, error);
    }
  }

  /**
   * Kills the worker on the spot (`Worker.terminate()`: no cleanup) and fails
   * with `error` (by default a storage error, code killed).
   */
  terminate(error = problem('storage', 'killed', `${this.name} was terminated`)) {
    this.worker.terminate();
    this.fail(error);
  }

  #receive(data) {
    if (this.stopped !== null || data === null || typeof data !== 'object') {
      return; // a late message from a worker given up on, or not one of ours
    }
    if (!('id' in data)) {
      this.onAnnouncement(data);
      return;
    }
    const waiting = this.#inFlight.get(data.id);
    if (waiting === undefined) {
      return;
    }
    if (data.type === 'progress') {
      waiting.onProgress?.(data);
      return;
    }
    this.#inFlight.delete(data.id);
    waiting.settle(Boolean(data.ok), data.ok ? data.result : data.error);
  }
}

/**
 * The worker's side: answers every request that reaches this worker, one at
 * a time, in arrival order. `ops` maps an op's name to `run(args, context)`,
 * which returns the result (or a promise of it) or throws an error object;
 * `context.progress(fields)` posts `{id, type: "progress", ...fields}`.
 *
 * Options:
 * * `ready`, a promise: requests wait until it settles (a database opening).
 * * `refuse(request)`: an error object to answer with instead of running a
 *   known op (a worker that failed, a database with a problem), or null.
 * * `asError(thrown, request)`: the reply's error for what an op threw; by
 *   default, what was thrown.
 * * `onBusy(busy)`: called with true before a run of requests and false once
 *   none wait, so the worker can say so.
 * * `background(op)`: whether a request with this op runs in the background:
 *   it starts in arrival order like any other, but the requests after it do
 *   not wait for its promise; its reply is posted when it settles (the
 *   database worker's foreign work, www/db/foreign.js). It does not count as
 *   busy while it waits.
 * * `port`: where requests come from and replies go, `self` (the worker's
 *   global) by default; the tab that holds the database serves the other
 *   tabs' requests through a BroadcastChannel this way (www/db/tabs.js).
 *
 * An unknown op is answered with invalid_input / unknown_op (through
 * `asError`). A request whose op never settles is never answered, and
 * nothing after it is: the crash lab's workers stop that way.
 */
export function serve(
  ops,
  {
    ready = Promise.resolve(),
    refuse = () => null,
    asError = (thrown) => thrown,
    onBusy = () => {},
    background = () => false,
    port = self,
  } = {},
) {
  const queue = [];
  let open = false;
  let draining = false;

  const drain = async () => {
    if (!open || draining || queue.length === 0) {
      return;
    }
    draining = true;
    onBusy(true);
    while (queue.length > 0) {
      const request = queue.shift();
      if (background(request?.op)) {
        answer(request).then((reply) => port.postMessage(reply));
      } else {
        port.postMessage(await answer(request));
      }
    }
    onBusy(false);
    draining = false;
  };

  const answer = async (request) => {
    const id = request?.id;
    try {
      const run = ops.get(request?.op);
      if (run === undefined) {
        throw unknownOp(request?.op, ops);
      }
      const refusal = refuse(request);
      if (refusal !== null) {
        throw refusal;
      }
      const progress = (fields) => port.postMessage({ ...fields, id, type: 'progress' });
      return { id, ok: true, result: await run(request.args, { id, progress }) };
    } catch (thrown) {
      return { id, ok: false, error: asError(thrown, request) };
    }
  };

  port.addEventListener('message', ({ data }) => {
    queue.push(data);
    drain();
  });
  const start = () => {
    open = true;
    drain();
  };
  ready.then(start, start);
}

function unknownOp(op, ops) {
  const name = JSON.stringify(op) ?? 'undefined';
  const expected = [...ops.keys()].join(', ');
  return problem('invalid_input', 'unknown_op', `unknown op ${name}: expected one of ${expected}`, {
    op: name,
    expected,
  });
}
