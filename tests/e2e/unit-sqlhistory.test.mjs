// The SQL console's history (www/panels/console/history.js) on its own: what
// a stored value may hold, what is dropped, the bound, and a storage that
// refuses.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { HISTORY_KEY, History, MAX_ENTRIES, MAX_QUERY_CHARS, parseHistory, withQuery } from '../../www/panels/console/history.js';

/** A localStorage stand-in: a Map, or one that throws on every call. */
function memory(initial = {}) {
  const map = new Map(Object.entries(initial));
  return { getItem: (key) => map.get(key) ?? null, setItem: (key, value) => map.set(key, String(value)), map };
}
const refusing = {
  getItem() {
    throw new Error('SecurityError');
  },
  setItem() {
    throw new Error('QuotaExceededError');
  },
};

describe('the SQL history', () => {
  test('a valid stored list is read back as it is', () => {
    assert.deepEqual(parseHistory('["SELECT 2", "SELECT 1"]'), ['SELECT 2', 'SELECT 1']);
    assert.deepEqual(parseHistory('[]'), []);
  });

  test('anything else is dropped whole, never thrown on', () => {
    for (const raw of [null, undefined, 42, '', '{', 'null', 'true', '"SELECT 1"', '{"0": "SELECT 1", "length": 1}',
      '[1]', '["SELECT 1", null]', '["SELECT 1", ["nested"]]', '[""]', '["   "]',
      JSON.stringify(['x'.repeat(MAX_QUERY_CHARS + 1)])]) {
      assert.deepEqual(parseHistory(raw), [], String(raw).slice(0, 40));
    }
    assert.deepEqual(parseHistory(JSON.stringify(['x'.repeat(MAX_QUERY_CHARS)])), ['x'.repeat(MAX_QUERY_CHARS)], 'the longest kept');
  });

  test('a stored list is cut to the bound and its repeats dropped', () => {
    const many = Array.from({ length: MAX_ENTRIES + 10 }, (_, i) => `SELECT ${i}`);
    assert.deepEqual(parseHistory(JSON.stringify(many)), many.slice(0, MAX_ENTRIES));
    assert.deepEqual(parseHistory('["SELECT 1", "SELECT 2", "SELECT 1"]'), ['SELECT 1', 'SELECT 2']);
  });

  test('a query goes on top, once; the list stays bounded; an empty or too long one is not kept', () => {
    assert.deepEqual(withQuery(['a', 'b', 'c'], 'b'), ['b', 'a', 'c']);
    assert.deepEqual(withQuery(['a'], ' '), ['a']);
    assert.deepEqual(withQuery(['a'], 'x'.repeat(MAX_QUERY_CHARS + 1)), ['a']);
    let entries = [];
    for (let i = 0; i < MAX_ENTRIES + 5; i += 1) {
      entries = withQuery(entries, `SELECT ${i}`);
    }
    assert.equal(entries.length, MAX_ENTRIES);
    assert.equal(entries[0], `SELECT ${MAX_ENTRIES + 4}`);
  });

  test('History stores under its versioned key, and reads a garbled value as empty', () => {
    const storage = memory({ [HISTORY_KEY]: '{garbled' });
    const history = new History(storage);
    assert.deepEqual(history.entries, []);
    history.add('SELECT 1');
    history.add('SELECT 2');
    assert.equal(storage.map.get(HISTORY_KEY), '["SELECT 2","SELECT 1"]');
    assert.deepEqual(new History(storage).entries, ['SELECT 2', 'SELECT 1']);
  });

  test('a storage that refuses leaves the history in memory', () => {
    const history = new History(refusing);
    assert.deepEqual(history.entries, []);
    assert.deepEqual(history.add('SELECT 1'), ['SELECT 1']);
    assert.deepEqual(new History(null).add('SELECT 1'), ['SELECT 1']);
  });
});
