// Which table rows changed, and the order they are shown in
// (www/panels/tables/changes.js), in node: a new inbox row lands on top, highlighted,
// wherever its key sorts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChangeTracker, accountKey, inboxKey } from '../../www/panels/tables/changes.js';

const row = (source, event_id, seq) => ({ source, event_id, account_id: 1, amount: 5, receipt: seq === null ? null : { seq, balance_after: seq * 5 } });

describe('changes', () => {
  test('changed: new rows and rows whose values differ; the accounts keep their order', () => {
    const tracker = new ChangeTracker(accountKey, { recentFirst: false });
    tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 0 }]);
    const after = [{ id: 1, balance: 500 }, { id: 2, balance: 0 }, { id: 3, balance: 0 }];
    const { rows, changed } = tracker.update(after);
    assert.deepEqual([...changed], ['1', '3']);
    assert.equal(rows, after);
  });

  test('the first snapshot marks nothing changed and shows the newest receipt first', () => {
    const tracker = new ChangeTracker(inboxKey, { recentFirst: true });
    const { rows, changed } = tracker.update([row('a', 'e1', 1), row('b', 'e1', 3), row('m', 'x', null), row('z', 'e1', 2)]);
    assert.equal(changed.size, 0);
    assert.deepEqual(rows.map((r) => r.source), ['b', 'z', 'a', 'm'], 'receipts 3, 2, 1, then the one without');
  });

  test('a new row goes on top, even if its key sorts first or last', () => {
    const tracker = new ChangeTracker(inboxKey, { recentFirst: true });
    tracker.update([row('b', 'e1', 1), row('c', 'e1', 2)]);
    let shown = tracker.update([row('a', 'e9', 3), row('b', 'e1', 1), row('c', 'e1', 2)]);
    assert.deepEqual(shown.rows.map((r) => r.source), ['a', 'c', 'b']);
    assert.deepEqual([...shown.changed], [inboxKey(row('a', 'e9', 3))]);

    // Next refresh, another new row: it is on top, the previous one second.
    shown = tracker.update([row('a', 'e9', 3), row('b', 'e1', 1), row('c', 'e1', 2), row('z', 'e0', 4)]);
    assert.deepEqual(shown.rows.map((r) => r.source), ['z', 'a', 'c', 'b']);
  });

  test('a row without a receipt (a mistaken handler wrote it) still goes on top when it changes', () => {
    const tracker = new ChangeTracker(inboxKey, { recentFirst: true });
    tracker.update([row('a', 'e1', 1)]);
    const { rows } = tracker.update([row('a', 'e1', 1), row('m', 'x', null)]);
    assert.deepEqual(rows.map((r) => r.source), ['m', 'a']);
  });

  test('accounts keep their order; only the changed one is marked', () => {
    const tracker = new ChangeTracker(accountKey, { recentFirst: false });
    tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 0 }]);
    const { rows, changed } = tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 7 }]);
    assert.deepEqual(rows.map((a) => a.id), [1, 2]);
    assert.deepEqual([...changed], ['2']);
  });

  test('a refresh that finds nothing new keeps the latest change highlighted', () => {
    const tracker = new ChangeTracker(accountKey, { recentFirst: false });
    tracker.update([{ id: 1, balance: 0 }]);
    tracker.update([{ id: 1, balance: 500 }]);
    assert.deepEqual([...tracker.update([{ id: 1, balance: 500 }]).changed], ['1']);
    assert.deepEqual([...tracker.update([]).changed], [], 'unless the row is gone');
  });

  test('rows that disappear (reset, import) are forgotten', () => {
    const tracker = new ChangeTracker(inboxKey, { recentFirst: true });
    tracker.update([]);
    tracker.update([row('a', 'e1', 1)]);
    tracker.update([]);
    const { rows, changed } = tracker.update([row('b', 'e1', 1), row('a', 'e1', 2)]);
    assert.deepEqual(rows.map((r) => r.source), ['a', 'b'], 'both new again: newest receipt first');
    assert.equal(changed.size, 2);
  });
});
