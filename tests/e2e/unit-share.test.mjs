// The share link's encoder and decoder (www/lib/share.js), in node: a round
// trip of any text, and every kind of hostile fragment refused with its code,
// never a throw.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { MAX_SHARE_CHARS, SHARE_PREFIX, decodeShare, encodeShare, isShare } from '../../www/lib/share.js';

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
