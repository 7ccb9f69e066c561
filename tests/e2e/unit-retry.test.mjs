// The sender's retry policy (www/lib/retry.js), in node: no browser, no real time.
// It teaches how a real sender reacts — retry on 5xx and lost responses, stop
// on 200 and 4xx, wait longer each time — on a simulated clock.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { MAX_DELAY_MS, RetryPolicy, SimulatedClock, decide, parsePolicy, sendWithRetries } from '../../www/lib/retry.js';

const policy = new RetryPolicy({ attempts: 5, firstDelayMs: 1000 });

/** A fake handler that answers from a script, one entry per attempt. */
function scripted(...answers) {
  const calls = [];
  return {
    calls,
    attempt: async (n) => {
      calls.push(n);
      return answers[n - 1];
    },
  };
}

describe('decide: what a sender does after one attempt', () => {
  test('200 stops: the handler took responsibility (applied or duplicate)', () => {
    assert.deepEqual(decide({ status: 200 }, 1, policy), { action: 'stop', reason: 'success' });
  });

  test('4xx stops at once: the same request would fail the same way', () => {
    for (const status of [400, 404, 409, 422]) {
      assert.deepEqual(decide({ status }, 1, policy), { action: 'stop', reason: 'client_error' }, String(status));
    }
  });

  test('5xx and a lost response retry, after the policy’s wait', () => {
    assert.deepEqual(decide({ status: 500 }, 1, policy), { action: 'retry', reason: 'server_error', delayMs: 1000 });
    assert.deepEqual(decide({ status: 503 }, 2, policy), { action: 'retry', reason: 'server_error', delayMs: 2000 });
    assert.deepEqual(decide({ lost: true }, 3, policy), { action: 'retry', reason: 'lost', delayMs: 4000 });
  });

  test('the last allowed attempt gives up instead of retrying', () => {
    assert.deepEqual(decide({ status: 500 }, 5, policy), { action: 'give_up', reason: 'server_error' });
    assert.deepEqual(decide({ lost: true }, 5, policy), { action: 'give_up', reason: 'lost' });
    // …but a success on the last attempt is still a success.
    assert.deepEqual(decide({ status: 200 }, 5, policy), { action: 'stop', reason: 'success' });
  });
});

describe('RetryPolicy', () => {
  test('the wait doubles after each failed attempt, capped', () => {
    const p = new RetryPolicy({ attempts: 10, firstDelayMs: 1000 });
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => p.delayAfter(n)), [1000, 2000, 4000, 8000, 16000]);
    assert.equal(p.delayAfter(10), MAX_DELAY_MS);
  });

  test('refuses attempts outside 1..10 and waits outside 0..60 s', () => {
    for (const bad of [0, 11, 1.5, NaN]) {
      assert.throws(() => new RetryPolicy({ attempts: bad, firstDelayMs: 0 }), RangeError, String(bad));
    }
    for (const bad of [-1, 60_001, Infinity]) {
      assert.throws(() => new RetryPolicy({ attempts: 1, firstDelayMs: bad }), RangeError, String(bad));
    }
  });

  test('parsePolicy reads the form’s text and names each field that is wrong', () => {
    assert.deepEqual(parsePolicy({ attempts: '3', firstDelay: '0.5' }).policy, new RetryPolicy({ attempts: 3, firstDelayMs: 500 }));
    assert.deepEqual(
      parsePolicy({ attempts: '0', firstDelay: 'soon' }).errors.map((e) => e.field),
      ['attempts', 'first_delay'],
    );
    for (const attempts of ['', '1.0', '1e1', '-2', '11']) {
      assert.equal(parsePolicy({ attempts, firstDelay: '1' }).errors?.[0].field, 'attempts', attempts);
    }
    for (const firstDelay of ['', '-1', '1e3', '61', '.5']) {
      assert.equal(parsePolicy({ attempts: '1', firstDelay }).errors?.[0].field, 'first_delay', firstDelay);
    }
  });
});

describe('sendWithRetries on a simulated clock', () => {
  test('the article’s story: applied but the response is lost, the retry hears duplicate, 200, stop', async () => {
    const clock = new SimulatedClock();
    const handler = scripted({ lost: true, answer: 'applied' }, { status: 200, answer: 'duplicate' });
    const seen = [];
    const records = await sendWithRetries({ attempt: handler.attempt, policy, clock, onAttempt: (r) => seen.push(r) });
    assert.deepEqual(handler.calls, [1, 2]);
    assert.deepEqual(
      records.map(({ attempt, at, heard, decision }) => [attempt, at, heard.answer, decision.action]),
      [
        [1, 0, 'applied', 'retry'],
        [2, 1000, 'duplicate', 'stop'],
      ],
    );
    assert.deepEqual(seen, records, 'onAttempt sees every record as it happens');
    assert.equal(clock.now, 1000, 'one wait of 1 s, simulated');
  });

  test('a crash (500) then success: two attempts', async () => {
    const clock = new SimulatedClock();
    const handler = scripted({ status: 500 }, { status: 200 });
    const records = await sendWithRetries({ attempt: handler.attempt, policy, clock });
    assert.deepEqual(records.map((r) => r.decision.action), ['retry', 'stop']);
  });

  test('a 422 is never retried', async () => {
    const handler = scripted({ status: 422 });
    const records = await sendWithRetries({ attempt: handler.attempt, policy, clock: new SimulatedClock() });
    assert.deepEqual(handler.calls, [1]);
    assert.equal(records[0].decision.reason, 'client_error');
  });

  test('always busy: gives up after the policy’s attempts, having waited 1+2+4+8 s', async () => {
    const clock = new SimulatedClock();
    const handler = scripted(...Array(5).fill({ status: 503 }));
    const records = await sendWithRetries({ attempt: handler.attempt, policy, clock });
    assert.deepEqual(handler.calls, [1, 2, 3, 4, 5]);
    assert.deepEqual(records.map((r) => r.at), [0, 1000, 3000, 7000, 15000]);
    assert.equal(records.at(-1).decision.action, 'give_up');
    assert.equal(clock.now, 15000);
  });

  test('the clock carries on across sends: time only moves while a sender waits', async () => {
    const clock = new SimulatedClock();
    await sendWithRetries({ attempt: scripted({ status: 500 }, { status: 200 }).attempt, policy, clock });
    const second = await sendWithRetries({ attempt: scripted({ status: 200 }).attempt, policy, clock });
    assert.equal(second[0].at, 1000);
  });
});
