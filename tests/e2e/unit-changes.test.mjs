// Which table rows changed between two refreshes (www/panels/tables/changes.js), in node.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChangeTracker, accountKey, inboxKey } from '../../www/panels/tables/changes.js';

const row = (source, event_id, seq) => ({ source, event_id, account_id: 1, amount: 5, receipt: seq === null ? null : { seq, balance_after: seq * 5 } });

describe('changes', () => {
  test('the first snapshot marks nothing changed', () => {
    const tracker = new ChangeTracker(inboxKey);
    assert.equal(tracker.update([row('a', 'e1', 1), row('b', 'e1', 3)]).size, 0);
  });

  test('changed: new rows and rows whose values differ, wherever their keys sort', () => {
    const tracker = new ChangeTracker(accountKey);
    tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 0 }]);
    assert.deepEqual([...tracker.update([{ id: 1, balance: 500 }, { id: 2, balance: 0 }, { id: 3, balance: 0 }])], ['1', '3']);
    const inbox = new ChangeTracker(inboxKey);
    inbox.update([row('b', 'e1', 1)]);
    // A row a mistaken handler wrote has no receipt: it is marked all the same.
    assert.deepEqual([...inbox.update([row('z', 'e9', null), row('a', 'e0', 2), row('b', 'e1', 1)])], [inboxKey(row('z', 'e9', null)), inboxKey(row('a', 'e0', 2))]);
  });

  test('a refresh that finds nothing new keeps the latest change highlighted', () => {
    const tracker = new ChangeTracker(accountKey);
    tracker.update([{ id: 1, balance: 0 }]);
    tracker.update([{ id: 1, balance: 500 }]);
    assert.deepEqual([...tracker.update([{ id: 1, balance: 500 }])], ['1']);
    assert.deepEqual([...tracker.update([])], [], 'unless the row is gone');
  });

  test('rows that disappear (reset, import) and come back are new again', () => {
    const tracker = new ChangeTracker(inboxKey);
    tracker.update([]);
    tracker.update([row('a', 'e1', 1)]);
    tracker.update([]);
    assert.equal(tracker.update([row('b', 'e1', 1), row('a', 'e1', 2)]).size, 2);
  });
});
