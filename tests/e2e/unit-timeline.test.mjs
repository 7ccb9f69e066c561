// The timeline model (www/panels/timeline/timeline-model.js), in node: entries, the limit,
// and which statements each handler ran for each answer — the little
// diagram the page draws for every delivery.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Timeline, countOutcomes, outcomeOf, statementsOf } from '../../www/panels/timeline/timeline-model.js';

const APPLIED = { outcome: 'applied', http_status: 200, receipt: { seq: 1, balance_after: 500 } };
const DUPLICATE = { outcome: 'duplicate', http_status: 200, receipt: { seq: 1, balance_after: 500 } };
const error = (kind, http_status) => ({ kind, message: kind, http_status, retryable: http_status >= 500 });

/** Statements as "op:state" strings, easier to read in a failure. */
function ops(args) {
  return statementsOf(args)?.map(({ op, state }) => `${op}:${state}`) ?? null;
}

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

describe('statementsOf: the atomic handler (src/apply.rs)', () => {
  test('applied: all five steps, kept', () => {
    assert.deepEqual(ops({ answer: APPLIED }), [
      'begin:ok',
      'insert:ok',
      'credit:ok',
      'store_receipt:ok',
      'commit:ok',
    ]);
  });

  test('duplicate: the INSERT inserts nothing, the stored payload is read, commit', () => {
    assert.deepEqual(ops({ answer: DUPLICATE }), ['begin:ok', 'insert:no_row', 'read_stored:ok', 'commit:ok']);
  });

  test('errors roll back everything that ran', () => {
    assert.deepEqual(ops({ answer: error('payload_conflict', 422) }), [
      'begin:undone',
      'insert:no_row',
      'read_stored:failed',
      'rollback:rollback',
    ]);
    assert.deepEqual(ops({ answer: error('unknown_account', 422) }), ['begin:undone', 'insert:failed', 'rollback:rollback']);
    assert.deepEqual(ops({ answer: error('balance_limit', 422) }), [
      'begin:undone',
      'insert:undone',
      'credit:failed',
      'rollback:rollback',
    ]);
  });

  test('a fault crashes right after its statement; everything is undone', () => {
    const crash = error('simulated_crash', 500);
    assert.deepEqual(ops({ fault: 'after_insert', answer: crash }), [
      'begin:undone',
      'insert:undone',
      'crash:crash',
      'rollback:rollback',
    ]);
    assert.deepEqual(ops({ fault: 'after_update', answer: crash }), [
      'begin:undone',
      'insert:undone',
      'credit:undone',
      'store_receipt:undone',
      'crash:crash',
      'rollback:rollback',
    ]);
  });

  test('refused before SQL: nothing ran; a storage error: not known', () => {
    assert.deepEqual(ops({ answer: error('invalid_input', 400) }), []);
    assert.deepEqual(ops({ answer: error('busy', 503) }), []);
    assert.equal(ops({ answer: error('storage', 500) }), null);
  });
});

describe('statementsOf: the mistaken handlers (src/handlers.rs)', () => {
  test('no_dedup credits in autocommit: a crash after it keeps the credit', () => {
    assert.deepEqual(ops({ handler: 'no_dedup', answer: APPLIED }), ['credit:ok']);
    assert.deepEqual(ops({ handler: 'no_dedup', fault: 'after_update', answer: error('simulated_crash', 500) }), [
      'credit:ok',
      'crash:crash',
    ]);
  });

  test('check_then_act: SELECT, UPDATE, INSERT each on their own; a crash credits without recording', () => {
    assert.deepEqual(ops({ handler: 'check_then_act', answer: APPLIED }), ['check:ok', 'credit:ok', 'insert:ok']);
    assert.deepEqual(ops({ handler: 'check_then_act', answer: DUPLICATE }), ['check:ok']);
    assert.deepEqual(ops({ handler: 'check_then_act', fault: 'after_update', answer: error('simulated_crash', 500) }), [
      'check:ok',
      'credit:ok',
      'crash:crash',
    ]);
  });

  test('two_transactions: a crash between them keeps the registration, not the credit', () => {
    assert.deepEqual(ops({ handler: 'two_transactions', fault: 'after_insert', answer: error('simulated_crash', 500) }), [
      'begin:ok',
      'insert:ok',
      'commit:ok',
      'crash:crash',
    ]);
  });

  test('insert_or_ignore: a swallowed row looks exactly like a duplicate', () => {
    assert.deepEqual(ops({ handler: 'insert_or_ignore', answer: DUPLICATE }), [
      'begin:ok',
      'insert_or_ignore:no_row',
      'commit:ok',
    ]);
  });

  test('insert_or_replace: every delivery is applied', () => {
    assert.deepEqual(ops({ handler: 'insert_or_replace', answer: APPLIED }), [
      'begin:ok',
      'insert_or_replace:ok',
      'credit:ok',
      'commit:ok',
    ]);
  });

  test('a storage error inside a mistake is "not known", never a guess', () => {
    for (const handler of ['no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace']) {
      assert.equal(ops({ handler, answer: error('storage', 500) }), null, handler);
    }
  });
});
