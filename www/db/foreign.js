// Foreign work, away from the database: the database worker's lanes.
//
// The database worker (worker.js) answers deliveries, and nothing may make
// them wait: not a console query, not an imported file, not a judged
// handler. Their cost is decided by whoever wrote them, and SQLite's budget
// (src/labs/tools/budget.rs) counts virtual-machine steps, while one step —
// a LIKE or instr over a megabyte string — can take a minute. So each kind of
// foreign work has a lane: a worker of its own (guest.js), started by the
// database worker on first use, given one job at a time, and terminated —
// `Worker.terminate()`, which no SQLite call can delay — when a job runs
// past its deadline (Rust's `deadlineMs`: the budget and a short grace, so
// the budget's own answer comes first whenever it can) or is cancelled.
// The next job gets a new worker. A lane's jobs wait for each other; the
// database worker never waits for any of them.
//
// Invariant: a job settles exactly once, with its worker's answer, or at its
// deadline, or when cancelled; the deadline counts from when the lane's
// worker is ready to run it, so starting a worker is not charged to the job.

import { notCloneable, problem } from '../lib/problem.js';
import { Caller } from '../lib/rpc.js';

const GUEST_URL = new URL('./guest.js', import.meta.url);
// How long a new foreign-work worker may take to load its wasm before the
// job waiting for it is failed (a worker that never starts).
const START_MS = 30_000;

export class Lane {
  #name;
  #caller = null;
  #ready = false;
  #queue = [];
  #running = null;

  /** `name` names the lane's worker in errors ("the console worker"). */
  constructor(name) {
    this.#name = name;
  }

  /**
   * Runs `op` with `args` in this lane's worker once the lane's earlier jobs
   * are done; resolves to its result, rejects with its error. Options:
   * `deadlineMs`, from when the worker starts the job; `overDeadline(progress)`,
   * the error a job stopped at its deadline is rejected with (`progress` is its
   * last progress message, or null); `onProgress(message)`; `ticket`, a name
   * `cancel` can stop the job by.
   */
  run(op, args, { deadlineMs, overDeadline, onProgress, ticket }) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ op, args, deadlineMs, overDeadline, onProgress, ticket, resolve, reject, progress: null, timer: null });
      this.#next();
    });
  }

  /**
   * Stops the jobs whose ticket is one of `tickets`, waiting or running: each
   * is rejected with `error`. Returns how many were stopped.
   */
  cancel(tickets, error) {
    const named = (job) => job.ticket !== undefined && tickets.includes(job.ticket);
    const waiting = this.#queue.filter(named);
    this.#queue = this.#queue.filter((job) => !named(job));
    for (const job of waiting) {
      job.reject(error);
    }
    if (this.#running !== null && named(this.#running)) {
      this.#stop(error);
      return waiting.length + 1;
    }
    return waiting.length;
  }

  #next() {
    if (this.#running !== null || this.#queue.length === 0) {
      return;
    }
    const job = this.#queue.shift();
    this.#running = job;
    if (this.#caller === null) {
      this.#start();
    }
    this.#arm(job);
    try {
      this.#caller.send(job.op, job.args, (ok, value) => this.#settle(job, ok, value), {
        onProgress: (message) => {
          job.progress = message;
          job.onProgress?.(message);
        },
      });
    } catch (thrown) {
      this.#settle(job, false, notCloneable(this.#name, thrown));
    }
  }

  #start() {
    this.#ready = false;
    const caller = new Caller(new Worker(GUEST_URL, { type: 'module' }), { name: this.#name });
    caller.onAnnouncement = (message) => {
      if (message.type === 'ready' && caller === this.#caller) {
        this.#ready = true;
        if (this.#running !== null) {
          this.#arm(this.#running);
        }
      }
    };
    this.#caller = caller;
  }

  // The job's timer: its deadline once the worker is ready, else the time
  // the worker has to start.
  #arm(job) {
    clearTimeout(job.timer);
    job.timer = this.#ready
      ? setTimeout(() => this.#stop(job.overDeadline(job.progress)), job.deadlineMs)
      : setTimeout(() => this.#stop(this.#notStarted()), START_MS);
  }

  #settle(job, ok, value) {
    if (this.#running !== job) {
      return; // stopped already
    }
    clearTimeout(job.timer);
    this.#running = null;
    // A worker that trapped or stopped cannot be trusted with the next job.
    if (this.#caller !== null && (this.#caller.stopped !== null || (!ok && value?.code === 'crashed'))) {
      this.#drop(value);
    }
    if (ok) {
      job.resolve(value);
    } else {
      job.reject(value);
    }
    this.#next();
  }

  // Terminates the running job's worker: the job is rejected with `error`
  // (through the Caller), and the next job gets a new worker.
  #stop(error) {
    const job = this.#running;
    this.#drop(error);
    this.#settle(job, false, error); // unless the Caller just did
  }

  #drop(error) {
    const caller = this.#caller;
    this.#caller = null;
    this.#ready = false;
    caller?.terminate(error);
  }

  #notStarted() {
    const seconds = String(START_MS / 1000);
    return problem('storage', 'worker_stopped', `${this.#name} did not start within ${seconds} s`, { detail: `no answer in ${seconds} s` });
  }
}
