// The share link's encoder and decoder (www/lib/share.js), in node: a round
// trip of any text and of every experiment's state, every kind of hostile
// fragment refused with its code, never a throw, and the screen each link
// opens.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  LIMITS,
  MAX_SHARE_CHARS,
  SHARE_PREFIX,
  decodeExperiment,
  decodeShare,
  encodeShare,
  isShare,
  shareRoute,
} from '../../www/lib/share.js';

const b64url = (text) => Buffer.from(text, 'utf8').toString('base64url');

describe('share links', () => {
  test('a handler text round-trips, Unicode, quotes and markup included', () => {
    const text = 'BEGIN IMMEDIATE\n-- «кавычки» <b>not html</b> "q" \'s\' 🙂\nCOMMIT\nANSWER applied\n';
    const { fragment } = encodeShare({ handler: text });
    assert.ok(fragment.startsWith(SHARE_PREFIX));
    assert.match(fragment.slice(SHARE_PREFIX.length), /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeShare(fragment, ['handler']), { state: { handler: text } });
  });

  test('an optional field comes back when it is there and a string, and is refused otherwise', () => {
    const { fragment } = encodeShare({ handler: 'h', race: '2:ABBA' });
    assert.deepEqual(decodeShare(fragment, ['handler'], ['race']), { state: { handler: 'h', race: '2:ABBA' } });
    assert.deepEqual(decodeShare(encodeShare({ handler: 'h' }).fragment, ['handler'], ['race']), { state: { handler: 'h' } });
    assert.deepEqual(decodeShare(`#s=${b64url('{"v":1,"handler":"h","race":[0,1]}')}`, ['handler'], ['race']), {
      error: 'share.field',
      field: 'race',
    });
  });

  test('a route is not a share link, and the two never look alike', () => {
    assert.equal(isShare('#/race-lab'), false);
    assert.equal(isShare(''), false);
    assert.equal(isShare(encodeShare({ handler: 'x' }).fragment), true);
  });

  test('hostile fragments are refused with a code, never thrown', () => {
    const cases = [
      ['#/race-lab', 'share.not_base64'],
      ['#s=***', 'share.not_base64'],
      ['#s=a', 'share.not_base64'],
      [`#s=${b64url('not json')}`, 'share.not_json'],
      [`#s=${Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url')}`, 'share.not_json'],
      [`#s=${b64url('[1,2]')}`, 'share.not_object'],
      [`#s=${b64url('null')}`, 'share.not_object'],
      [`#s=${b64url('{"handler":"x"}')}`, 'share.version'],
      [`#s=${b64url('{"v":2,"handler":"x"}')}`, 'share.version'],
      [`#s=${b64url('{"v":1,"handler":42}')}`, 'share.field'],
      [`#s=${b64url('{"v":1}')}`, 'share.field'],
      [`#s=${b64url('{"v":1,"__proto__":{"handler":"x"}}')}`, 'share.field'],
      [`#s=${'A'.repeat(MAX_SHARE_CHARS + 4)}`, 'share.too_long'],
    ];
    for (const [hash, code] of cases) {
      const got = decodeShare(hash, ['handler']);
      assert.equal(got.error, code, `${hash.slice(0, 40)}: ${JSON.stringify(got)}`);
      assert.equal(got.state, undefined);
    }
  });

  test('a state too large to share is refused when encoding', () => {
    assert.deepEqual(encodeShare({ handler: 'x'.repeat(MAX_SHARE_CHARS) }), { error: 'share.too_long' });
  });

  test('fields not asked for are dropped', () => {
    const { fragment } = encodeShare({ handler: 'h', extra: '<script>' });
    assert.deepEqual(decodeShare(fragment, ['handler']), { state: { handler: 'h' } });
  });
});

describe('experiment links', () => {
  const event = { source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 };
  const send = { event, handler: 'atomic', fault: 'after_insert', lose: true, attempts: 5, delay: 1000 };
  const link = (state) => encodeShare(state).fragment;
  const raw = (value) => `#s=${b64url(JSON.stringify(value))}`;

  test('each kind round-trips to a validated copy, and opens its screen', () => {
    const timeline = link({ kind: 'timeline', sends: [send, { ...send, fault: null, lose: false }] });
    assert.deepEqual(decodeExperiment(timeline), { state: { kind: 'timeline', sends: [send, { ...send, fault: null, lose: false }] } });
    assert.deepEqual(shareRoute(timeline), { screen: 'deliver', rest: null });

    const race = link({ kind: 'race', handler: 'check_then_act', deliveries: 3, order: 'ABCA' });
    assert.deepEqual(decodeExperiment(race), { state: { kind: 'race', handler: 'check_then_act', deliveries: 3, order: [0, 1, 2, 0] } });
    assert.deepEqual(shareRoute(race), { screen: 'race', rest: null });

    const step = link({ kind: 'step', send, next: 2, end: 'throw' });
    assert.deepEqual(decodeExperiment(step), { state: { kind: 'step', send, next: 2, end: 'throw' } });
    assert.deepEqual(shareRoute(step), { screen: 'deliver', rest: null });

    const actions = [
      { do: 'send', ...send },
      { do: 'burst', event, handler: 'atomic', count: 20 },
      { do: 'race', handler: 'atomic', deliveries: 2, order: 'AB' },
    ];
    const level = link({ kind: 'level', level: 4, actions });
    assert.deepEqual(decodeExperiment(level), {
      state: { kind: 'level', level: 4, actions: [actions[0], actions[1], { do: 'race', handler: 'atomic', deliveries: 2, order: [0, 1] }] },
    });
    assert.deepEqual(shareRoute(level), { screen: 'levels', rest: '4' });

    const handler = link({ handler: 'BEGIN IMMEDIATE' });
    assert.deepEqual(decodeExperiment(handler), { state: { kind: 'handler' } });
    assert.deepEqual(shareRoute(handler), { screen: 'handler', rest: null });
    assert.deepEqual(shareRoute('#s=***'), { screen: 'handler', rest: null }, 'a damaged link: the handler screen, as before');
  });

  test('fields not in the format are dropped', () => {
    const got = decodeExperiment(raw({ v: 1, kind: 'step', send: { ...send, html: '<b>' }, next: 0, end: 'commit', extra: 1 }));
    assert.deepEqual(got, { state: { kind: 'step', send, next: 0, end: 'commit' } });
  });

  test('hostile states are refused with a code and its parameters, never thrown', () => {
    const cases = [
      [{ kind: 'nope' }, 'share.kind', { kind: 'nope' }],
      [{ kind: 'timeline' }, 'share.shape', { field: 'sends' }],
      [{ kind: 'timeline', sends: [] }, 'share.shape', { field: 'sends' }],
      [{ kind: 'timeline', sends: Array(LIMITS.sends + 1).fill(send) }, 'share.too_many', { count: LIMITS.sends + 1, max: LIMITS.sends }],
      [{ kind: 'timeline', sends: [{ ...send, handler: 'workshop' }] }, 'share.handler', { name: 'workshop' }],
      [{ kind: 'timeline', sends: [{ ...send, fault: 'after_commit' }] }, 'share.fault', { name: 'after_commit' }],
      [{ kind: 'timeline', sends: [{ ...send, attempts: 11 }] }, 'share.shape', { field: 'sends[0].attempts' }],
      [{ kind: 'timeline', sends: [{ ...send, delay: -1 }] }, 'share.shape', { field: 'sends[0].delay' }],
      [{ kind: 'timeline', sends: [{ ...send, lose: 'yes' }] }, 'share.shape', { field: 'sends[0].lose' }],
      [{ kind: 'timeline', sends: [{ ...send, event: [1, 2] }] }, 'share.shape', { field: 'sends[0].event' }],
      [{ kind: 'timeline', sends: [{ ...send, event: { ...event, amount: { n: 1 } } }] }, 'share.shape', { field: 'sends[0].event' }],
      [{ kind: 'race', handler: 'atomic', deliveries: 4, order: 'AB' }, 'share.shape', { field: 'deliveries' }],
      [{ kind: 'race', handler: 'atomic', deliveries: 2, order: 'ABC' }, 'share.shape', { field: 'order' }],
      [{ kind: 'race', handler: 'atomic', deliveries: 2, order: '' }, 'share.shape', { field: 'order' }],
      [{ kind: 'race', handler: 'atomic', deliveries: 2, order: 'A'.repeat(LIMITS.steps + 1) }, 'share.too_many', { count: LIMITS.steps + 1, max: LIMITS.steps }],
      [{ kind: 'step', send, next: LIMITS.next + 1, end: 'throw' }, 'share.shape', { field: 'next' }],
      [{ kind: 'step', send, next: 1, end: 'kill' }, 'share.shape', { field: 'end' }],
      [{ kind: 'level', level: '1', actions: [] }, 'share.shape', { field: 'level' }],
      [{ kind: 'level', level: 1, actions: [{ do: 'sql', sql: 'DROP TABLE inbox' }] }, 'share.shape', { field: 'actions[0].do' }],
      [{ kind: 'level', level: 4, actions: [{ do: 'burst', event, handler: 'atomic', count: 0 }] }, 'share.shape', { field: 'actions[0].count' }],
      [{ kind: 'level', level: 4, actions: [{ do: 'burst', event, handler: 'atomic', count: LIMITS.burst + 1 }] }, 'share.too_many', { count: LIMITS.burst + 1, max: LIMITS.burst }],
    ];
    for (const [state, error, params] of cases) {
      assert.deepEqual(decodeExperiment(raw({ v: 1, ...state })), { error, params }, JSON.stringify(state).slice(0, 80));
    }
    assert.deepEqual(decodeExperiment('#s=***'), { error: 'share.not_base64' });
    assert.deepEqual(decodeExperiment(raw({ v: 1, kind: 'timeline', __proto__: null })), { error: 'share.shape', params: { field: 'sends' } });
  });

  test('the other controls of a level — "where the scheme ends" and the crash lab — round-trip to validated copies', () => {
    const actions = [
      { do: 'effects', control: 'dedup', strategy: 'outbox', crash: null, dedup: true },
      { do: 'effects', control: 'deliver', strategy: 'send_after_commit', crash: 'after_commit_before_send', dedup: false },
      { do: 'effects', control: 'dispatch_crash', strategy: 'outbox', crash: null, dedup: true },
      { do: 'retention', control: 'deliver', next: false },
      { do: 'retention', control: 'deliver', next: true },
      { do: 'retention', control: 'advance', days: 7 },
      { do: 'retention', control: 'purge', days: 30 },
      { do: 'crash', run: 'sweep', mode: 'wal', events: 3, control: true },
      { do: 'crash', run: 'kills', mode: 'delete', trials: LIMITS.kills },
    ];
    assert.deepEqual(decodeExperiment(link({ kind: 'level', level: 9, actions })), { state: { kind: 'level', level: 9, actions } });
    // Fields another control does not use are dropped, not carried along.
    const extra = [
      { do: 'retention', control: 'deliver', next: false, days: 7, html: '<b>' },
      { do: 'crash', run: 'kills', mode: 'wal', trials: 2, events: 3, control: true },
    ];
    assert.deepEqual(decodeExperiment(link({ kind: 'level', level: 10, actions: extra })), {
      state: { kind: 'level', level: 10, actions: [{ do: 'retention', control: 'deliver', next: false }, { do: 'crash', run: 'kills', mode: 'wal', trials: 2 }] },
    });
  });

  test('hostile actions for the other controls are refused with a specific code, never thrown', () => {
    const level = (action) => ({ kind: 'level', level: 9, actions: [action] });
    const fx = { do: 'effects', control: 'deliver', strategy: 'outbox', crash: null, dedup: true };
    const sweep = { do: 'crash', run: 'sweep', mode: 'delete', events: 1, control: false };
    const cases = [
      [level({ ...fx, control: 'drop_outbox' }), 'share.name', { field: 'actions[0].control', name: 'drop_outbox' }],
      [level({ ...fx, strategy: 'send_twice' }), 'share.name', { field: 'actions[0].strategy', name: 'send_twice' }],
      [level({ ...fx, crash: 'after_everything' }), 'share.name', { field: 'actions[0].crash', name: 'after_everything' }],
      [level({ ...fx, crash: { toString: 1 } }), 'share.name', { field: 'actions[0].crash', name: '{"toString":1}' }],
      [level({ ...fx, dedup: 'yes' }), 'share.shape', { field: 'actions[0].dedup' }],
      [level({ do: 'retention', control: 'purge_everything' }), 'share.name', { field: 'actions[0].control', name: 'purge_everything' }],
      [level({ do: 'retention', control: 'next' }), 'share.name', { field: 'actions[0].control', name: 'next' }],
      [level({ do: 'retention', control: 'deliver', next: 1 }), 'share.shape', { field: 'actions[0].next' }],
      [level({ do: 'retention', control: 'advance', days: 1e9 }), 'share.name', { field: 'actions[0].days', name: '1000000000' }],
      [level({ do: 'retention', control: 'advance', days: 3 }), 'share.name', { field: 'actions[0].days', name: '3' }],
      [level({ do: 'retention', control: 'purge', days: -1 }), 'share.name', { field: 'actions[0].days', name: '-1' }],
      [level({ do: 'retention', control: 'purge' }), 'share.name', { field: 'actions[0].days', name: 'undefined' }],
      [level({ ...sweep, run: 'forever' }), 'share.name', { field: 'actions[0].run', name: 'forever' }],
      [level({ ...sweep, mode: 'memory' }), 'share.name', { field: 'actions[0].mode', name: 'memory' }],
      [level({ ...sweep, events: 1000 }), 'share.name', { field: 'actions[0].events', name: '1000' }],
      [level({ ...sweep, control: 'no' }), 'share.shape', { field: 'actions[0].control' }],
      [level({ do: 'crash', run: 'kills', mode: 'wal', trials: 0 }), 'share.shape', { field: 'actions[0].trials' }],
      [level({ do: 'crash', run: 'kills', mode: 'wal', trials: 2.5 }), 'share.shape', { field: 'actions[0].trials' }],
      [level({ do: 'crash', run: 'kills', mode: 'wal', trials: LIMITS.kills + 1 }), 'share.too_many', { count: LIMITS.kills + 1, max: LIMITS.kills }],
      [level({ do: 'crash', run: 'kills', mode: 'wal', trials: 1e6 }), 'share.too_many', { count: 1e6, max: LIMITS.kills }],
    ];
    for (const [state, error, params] of cases) {
      assert.deepEqual(decodeExperiment(raw({ v: 1, ...state })), { error, params }, JSON.stringify(state).slice(0, 80));
    }
  });
});
