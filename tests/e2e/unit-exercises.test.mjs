// The workshop's checks (www/panels/workshop/exercises.js), in node: each says "done" only
// when the article's expected result is really in the tables and in the
// reader's own deliveries since the exercise was opened — and says what is
// missing otherwise.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { checkMissingAccount, checkReplayReturnsFirstReceipt, checkSourceIsPartOfKey, ownDeliveries } from '../../www/panels/workshop/exercises.js';

const receipt = (seq, balance_after) => ({ seq, balance_after });
const inboxRow = (source, event_id, r, account_id = 1, amount = 500) => ({ source, event_id, account_id, amount, receipt: r });
const ACCOUNTS = [{ id: 1, balance: 1000 }];
const entry = (event, answer) => ({ event: { account_id: 1, amount: 500, ...event }, answer });

describe('what an exercise judges: the reader’s own deliveries since it was opened', () => {
  test('only the sender’s and step mode’s entries after the exercise was opened', () => {
    const dup = { outcome: 'duplicate', http_status: 200, receipt: receipt(1, 500) };
    const entries = [
      { seq: 1, via: 'sender', ...entry({ source: 'a', event_id: 'before' }, dup) },
      { seq: 2, via: 'webhook', ...entry({ source: 'a', event_id: 'webhook' }, dup) },
      { seq: 3, via: 'burst', ...entry({ source: 'a', event_id: 'burst' }, dup) },
      { seq: 4, via: 'sender', ...entry({ source: 'a', event_id: 'sender' }, dup) },
      { seq: 5, via: 'step', ...entry({ source: 'a', event_id: 'step' }, dup) },
      { seq: 6, via: 'burst_distinct', count: 10, counts: {} },
    ];
    assert.deepEqual(
      ownDeliveries(entries, 1).map((e) => e.event.event_id),
      ['sender', 'step'],
    );
    // Exercise 3 on a webhook's duplicate alone: not yet (it would pass, were it the reader's).
    const inbox = [inboxRow('a', 'webhook', receipt(1, 500))];
    assert.equal(checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox }, [entries[1]]).passed, true);
    const result = checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox }, ownDeliveries([entries[1]], 0));
    assert.deepEqual([result.passed, result.result], [false, 'ex3.not_yet']);
  });
});

describe('exercise 1: the source is part of the key', () => {
  const applied = (source, seq, balance) => entry({ source, event_id: 'evt-1' }, { outcome: 'applied', http_status: 200, receipt: receipt(seq, balance) });

  test('passes with evt-1 applied from two sources, each with its own receipt', () => {
    const result = checkSourceIsPartOfKey(
      {
        accounts: ACCOUNTS,
        inbox: [inboxRow('provider-b', 'evt-1', receipt(2, 1000)), inboxRow('provider-a', 'evt-1', receipt(1, 500))],
      },
      [applied('provider-a', 1, 500), applied('provider-b', 2, 1000)],
    );
    assert.equal(result.passed, true);
    assert.deepEqual(
      [result.params.first, result.params.second, result.params.first_balance, result.params.second_balance],
      ['provider-a', 'provider-b', 500, 1000],
    );
  });

  test('not yet with one source only, when a row carries no receipt, or when a row was not applied in the exercise', () => {
    const both = [applied('provider-a', 1, 500), applied('provider-b', 2, 1000)];
    assert.equal(checkSourceIsPartOfKey({ accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-1', receipt(1, 500))] }, both).passed, false);
    const noReceipt = checkSourceIsPartOfKey(
      { accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-1', receipt(1, 500)), inboxRow('provider-b', 'evt-1', null)] },
      both,
    );
    assert.deepEqual([noReceipt.passed, noReceipt.result], [false, 'ex1.not_yet']);
    const before = checkSourceIsPartOfKey(
      { accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-1', receipt(1, 500)), inboxRow('provider-b', 'evt-1', receipt(2, 1000))] },
      both.slice(1),
    );
    assert.deepEqual([before.passed, before.result], [false, 'ex1.not_yet'], 'provider-a’s row was there before');
  });
});

describe('exercise 2: a missing account', () => {
  const to42 = { source: 'provider-a', event_id: 'evt-42', account_id: 42 };

  test('passes: the latest delivery to a missing account got 422 unknown_account and left no row', () => {
    const result = checkMissingAccount({ accounts: ACCOUNTS, inbox: [] }, [
      entry(to42, { kind: 'unknown_account', http_status: 422 }),
    ]);
    assert.deepEqual([result.passed, result.params.status, result.params.outcome], [true, 422, 'unknown_account']);
  });

  test('fails when another answer came back, or when a row was kept', () => {
    const storage = checkMissingAccount({ accounts: ACCOUNTS, inbox: [] }, [entry(to42, { kind: 'storage', http_status: 500 })]);
    assert.deepEqual([storage.passed, storage.result], [false, 'ex2.wrong_answer']);
    const kept = checkMissingAccount({ accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-42', null, 42)] }, [
      entry(to42, { outcome: 'applied', http_status: 200 }),
    ]);
    assert.deepEqual([kept.passed, kept.result], [false, 'ex2.row_kept']);
  });

  test('not yet when every delivery went to an existing account', () => {
    const result = checkMissingAccount({ accounts: ACCOUNTS, inbox: [] }, [entry({ source: 'a', event_id: 'e' }, { outcome: 'applied', http_status: 200 })]);
    assert.deepEqual([result.passed, result.result], [false, 'ex2.not_yet']);
  });
});

describe('exercise 3: a replay returns the first receipt', () => {
  const key = { source: 'provider-a', event_id: 'evt-1' };

  test('passes when the latest duplicate carries the receipt stored with the row', () => {
    const result = checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-1', receipt(1, 500))] }, [
      entry(key, { outcome: 'applied', http_status: 200, receipt: receipt(1, 500) }),
      entry(key, { outcome: 'duplicate', http_status: 200, receipt: receipt(1, 500) }),
    ]);
    assert.deepEqual([result.passed, result.params.seq], [true, 1]);
  });

  test('fails for a duplicate with another receipt, or with none (a mistaken handler)', () => {
    const inbox = [inboxRow('provider-a', 'evt-1', receipt(1, 500))];
    const other = checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox }, [
      entry(key, { outcome: 'duplicate', http_status: 200, receipt: receipt(7, 500) }),
    ]);
    assert.deepEqual([other.passed, other.result], [false, 'ex3.different']);
    const none = checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox: [inboxRow('provider-a', 'evt-1', null)] }, [
      entry(key, { outcome: 'duplicate', http_status: 200, receipt: null }),
    ]);
    assert.deepEqual([none.passed, none.result], [false, 'ex3.no_receipt']);
  });

  test('not yet without any duplicate answer', () => {
    const result = checkReplayReturnsFirstReceipt({ accounts: ACCOUNTS, inbox: [] }, [entry(key, { outcome: 'applied', http_status: 200 })]);
    assert.deepEqual([result.passed, result.result], [false, 'ex3.not_yet']);
  });
});
