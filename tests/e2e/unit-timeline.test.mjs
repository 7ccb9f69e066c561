// The timeline model (www/lib/timeline.js), in node: entries, the limit,
// and the box drawn for each step Rust reported. Which steps each handler
// runs is Rust's to say, and tested there (tests/race.rs,
// every_handler_reports_the_steps_it_ran); the page only draws them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Timeline, countOutcomes, outcomeOf, stateOf } from '../../www/lib/timeline.js';

const APPLIED = { outcome: 'applied', http_status: 200, receipt: { seq: 1, balance_after: 500 } };
const DUPLICATE = { outcome: 'duplicate', http_status: 200, receipt: { seq: 1, balance_after: 500 } };
const error = (kind, http_status) => ({ kind, message: kind, http_status, retryable: http_status >= 500 });

describe('Timeline', () => {
  test('numbers entries in order, notifies, and keeps them frozen', () => {
    const timeline = new Timeline();
    let changes = 0;
    timeline.subscribe(() => (changes += 1));
    const first = timeline.add({ answer: APPLIED });
    const second = timeline.add({ answer: DUPLICATE });
    assert.deepEqual([first.seq, second.seq], [1, 2]);
    assert.deepEqual(timeline.entries().map((e) => e.seq), [1, 2]);
    assert.equal(changes, 2);
    assert.ok(Object.isFrozen(first));
  });

  test('keeps the newest `limit` entries and counts the dropped ones', () => {
    const timeline = new Timeline(3);
    for (let i = 0; i < 5; i += 1) {
      timeline.add({ answer: APPLIED });
    }
    assert.deepEqual(timeline.entries().map((e) => e.seq), [3, 4, 5]);
    assert.equal(timeline.dropped, 2);
    timeline.clear();
    assert.deepEqual([timeline.entries().length, timeline.dropped], [0, 0]);
    assert.equal(timeline.add({}).seq, 6, 'numbers are never reused');
  });

  test('outcomeOf and countOutcomes read replies, errors and missing answers alike', () => {
    assert.equal(outcomeOf(APPLIED), 'applied');
    assert.equal(outcomeOf(error('busy', 503)), 'busy');
    assert.equal(outcomeOf(null), 'no_answer');
    assert.deepEqual(countOutcomes([APPLIED, DUPLICATE, DUPLICATE, null]), { applied: 1, duplicate: 2, no_answer: 1 });
  });
});

describe('stateOf: the box drawn for each step Rust reported (src/core/trace.rs)', () => {
  const step = (op, rows, effect) => stateOf({ op, statements: [], rows, effect });

  test('what became of it decides: kept, undone, failed, crashed, still open', () => {
    assert.equal(step('credit', 1, 'kept'), 'ok');
    assert.equal(step('credit', 1, 'rolled_back'), 'undone');
    assert.equal(step('credit', 0, 'failed'), 'failed');
    assert.equal(step('crash', 0, 'crashed'), 'crash');
    assert.equal(step('insert', 1, 'open'), 'open');
    assert.equal(step('rollback', 0, 'kept'), 'rollback');
  });

  test('an INSERT that changed no row found the key: nothing to keep or to undo', () => {
    for (const op of ['insert', 'insert_or_ignore', 'insert_or_replace']) {
      assert.equal(step(op, 0, 'kept'), 'no_row', op);
      assert.equal(step(op, 0, 'rolled_back'), 'no_row', op);
      assert.equal(step(op, 1, 'kept'), 'ok', op);
    }
    // Other statements change no row by design (a SELECT, BEGIN, COMMIT).
    assert.equal(step('read_stored', 0, 'kept'), 'ok');
    assert.equal(step('begin', 0, 'rolled_back'), 'undone');
  });
});
