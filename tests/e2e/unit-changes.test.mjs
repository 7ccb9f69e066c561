// Which table rows changed between two refreshes (www/panels/tables/changes.js), in node.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChangeTracker, accountKey, inboxKey } from '../../www/panels/tables/changes.js';

const row = (source, event_id, seq) => ({ source, event_id, account_id: 1, amount: 5, receipt: seq === null ? null : { seq, balance_after: seq * 5 } });
const keys = ({ fresh, changed }) => ({ fresh: [...fresh], changed: [...changed] });

describe('changes', () => {
  test('the first snapshot: every row fresh (none drawn yet), none highlighted', () => {
    const tracker = new ChangeTracker(inboxKey);
    assert.deepEqual(keys(tracker.update([row('a', 'e1', 1), row('b', 'e1', 3)])), { fresh: [inboxKey(row('a', 'e1', 1)), inboxKey(row('b', 'e1', 3))], changed: [] });
  });

  test('fresh and highlighted: new rows and rows whose values differ, wherever their keys sort', () => {
    const tracker = new ChangeTracker(accountKey);
    tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 0 }]);
    assert.deepEqual(keys(tracker.update([{ id: 1, balance: 500 }, { id: 2, balance: 0 }, { id: 3, balance: 0 }])), { fresh: ['1', '3'], changed: ['1', '3'] });
    const inbox = new ChangeTracker(inboxKey);
    inbox.update([row('b', 'e1', 1)]);
    // A row a mistaken handler wrote has no receipt: it is marked all the same.
    const marked = [inboxKey(row('z', 'e9', null)), inboxKey(row('a', 'e0', 2))];
    assert.deepEqual(keys(inbox.update([row('z', 'e9', null), row('a', 'e0', 2), row('b', 'e1', 1)])), { fresh: marked, changed: marked });
  });

  test('a refresh that finds nothing new keeps the latest change highlighted, with nothing fresh', () => {
    const tracker = new ChangeTracker(accountKey);
    tracker.update([{ id: 1, balance: 0 }]);
    tracker.update([{ id: 1, balance: 500 }]);
    assert.deepEqual(keys(tracker.update([{ id: 1, balance: 500 }])), { fresh: [], changed: ['1'] });
    assert.deepEqual(keys(tracker.update([])), { fresh: [], changed: [] }, 'unless the row is gone');
  });

  test('after forget() (a send begins), a refresh that finds nothing new highlights nothing; the next change is highlighted', () => {
    const tracker = new ChangeTracker(accountKey);
    tracker.update([{ id: 1, balance: 0 }, { id: 2, balance: 0 }]);
    tracker.update([{ id: 1, balance: 500 }, { id: 2, balance: 0 }]);
    tracker.forget();
    assert.deepEqual(keys(tracker.update([{ id: 1, balance: 500 }, { id: 2, balance: 0 }])), { fresh: [], changed: [] });
    tracker.forget();
    assert.deepEqual(keys(tracker.update([{ id: 1, balance: 500 }, { id: 2, balance: 7 }])), { fresh: ['2'], changed: ['2'] });
  });

  test('rows that disappear (reset, import) and come back are fresh again', () => {
    const tracker = new ChangeTracker(inboxKey);
    tracker.update([]);
    tracker.update([row('a', 'e1', 1)]);
    tracker.update([]);
    const { fresh, changed } = tracker.update([row('b', 'e1', 1), row('a', 'e1', 2)]);
    assert.deepEqual([fresh.size, changed.size], [2, 2]);
  });
});
