// Truthful verdicts, table-driven: six handlers × six things a sender does.
// For each case the page is driven as a reader drives it (the sender form,
// "lose the first response", a crash point, "redeliver … with another
// amount"), and the verdict it SHOWS — in the answer box and on the
// timeline's newest entry — must be the one Rust reports when the same
// deliveries are made through `inboxLab.deliver`, and the one the table
// below expects (the same table as src/labs/verdicts/tests.rs, reasoned
// from each mistake).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { idle, usePage } from './browser.mjs';
import { fillSender, freshPlayground, press, pressDeliver } from './playground.mjs';

const CASES = ['plain', 'lost_response', 'crash_after_insert', 'crash_after_update', 'amount_zero', 'other_payload'];

const C = 'correct';
const EXPECTED = {
  atomic: [C, C, C, C, C, C],
  no_dedup: [C, 'credited_twice', C, 'credited_twice', C, 'credited_twice'],
  check_then_act: [C, C, C, 'credited_twice', C, C],
  two_transactions: [C, C, 'credit_lost', 'credit_lost', C, C],
  insert_or_ignore: [C, C, C, C, C, 'false_duplicate'],
  insert_or_replace: [C, 'credited_twice', C, C, C, 'history_rewritten'],
};

const WORDS = {
  correct: 'Correct',
  credited_twice: 'Credited twice',
  credit_lost: 'Credit lost',
  false_duplicate: 'False duplicate',
  history_rewritten: 'History rewritten',
};

/** Plays `kase` with `handler` on the page, as a reader would. */
async function playOnPage(page, handler, kase) {
  await fillSender(page, { handler });
  switch (kase) {
    case 'lost_response':
      await fillSender(page, { lose_response: true });
      break;
    case 'crash_after_insert':
      await fillSender(page, { fault: 'after_insert' });
      break;
    case 'crash_after_update':
      await fillSender(page, { fault: 'after_update' });
      break;
    case 'amount_zero':
      await fillSender(page, { amount: 0 });
      break;
    default:
  }
  await pressDeliver(page);
  if (kase === 'other_payload') {
    await press(page, '[data-redeliver="amount"]');
  }
}

/**
 * The same deliveries through the console API, as the sender makes them
 * (a crash or a lost response is followed by a retry); resolves to the
 * verdict Rust reported on the last one.
 */
function playInRust(page, handler, kase) {
  return page.evaluate(
    async ({ handler, kase }) => {
      const event = { source: 'provider-a', event_id: 'evt-1', account_id: 1, amount: 500 };
      const deliver = (e, fault) => window.inboxLab.deliver(e, { handler, fault }).catch((error) => error);
      const fault = { crash_after_insert: 'after_insert', crash_after_update: 'after_update' }[kase];
      let answer;
      if (kase === 'amount_zero') {
        answer = await deliver({ ...event, amount: 0 });
      } else {
        answer = await deliver(event, fault);
      }
      if (kase === 'lost_response' || (answer.kind !== undefined && answer.retryable)) {
        answer = await deliver(event);
      } else if (kase === 'other_payload') {
        answer = await deliver({ ...event, amount: 700 });
      }
      return answer.verdict;
    },
    { handler, kase },
  );
}

async function language(page, lang) {
  // The console API's setLanguage: the page's own i18n instance (in dist/, the bundle's).
  await page.evaluate((lang) => window.inboxLab.setLanguage(lang), lang);
  await idle(page);
}

function shownVerdicts(page) {
  return page.evaluate(() => ({
    answer: document.querySelector('#answer [data-verdict]')?.dataset.verdict,
    word: document.querySelector('#answer .verdict-badge')?.textContent,
    why: document.querySelector('#answer .verdict-why')?.textContent,
    meaning: document.querySelector('#answer .meaning')?.textContent ?? null,
    timeline: document.querySelector('#timeline > li.entry')?.dataset.verdict,
  }));
}

describe('verdicts: what the page shows is what Rust judged', { timeout: 600_000 }, () => {
  let page;
  usePage({ beforeEach: freshPlayground }, (opened) => (page = opened));

  for (const [handler, kinds] of Object.entries(EXPECTED)) {
    test(`${handler}: ${CASES.map((kase, i) => `${kase} → ${kinds[i]}`).join(', ')}`, async () => {
      const wrong = [];
      for (const [i, kase] of CASES.entries()) {
        await freshPlayground(page);
        await playOnPage(page, handler, kase);
        const shown = await shownVerdicts(page);
        await page.evaluate(() => window.inboxLab.reset()); // a fresh database; the page need not redraw
        const rust = await playInRust(page, handler, kase);
        const expected = kinds[i];
        const got = { answer: shown.answer, timeline: shown.timeline, word: shown.word, rust: rust?.kind };
        // A mistake right this time is not worded like atomic's correct by construction (a refusal by the input rules is).
        const lucky = expected === 'correct' && handler !== 'atomic' && kase !== 'amount_zero';
        const want = { answer: expected, timeline: expected, word: lucky ? 'Correct this time' : WORDS[expected], rust: expected };
        if (JSON.stringify(got) !== JSON.stringify(want)) {
          wrong.push(`${kase}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
        }
        // A mistake is never explained with the atomic handler's prose.
        if (handler !== 'atomic' && kase !== 'amount_zero' && shown.meaning !== null) {
          wrong.push(`${kase}: a mistake shown with the atomic handler's meaning: ${shown.meaning}`);
        }
      }
      assert.deepEqual(wrong, []);
    });
  }

  test('two_transactions: the retry after a crash says the credit is lost for good, in red, in English and Russian', async () => {
    await fillSender(page, { handler: 'two_transactions', fault: 'after_insert' });
    await pressDeliver(page);
    const shown = await shownVerdicts(page);
    assert.equal(shown.answer, 'credit_lost');
    assert.match(shown.why, /Lost for good/);
    assert.match(shown.why, /registered in one transaction and credited in another/);
    assert.doesNotMatch(await page.textContent('#answer'), /stored by the first application/);
    const colour = await page.$eval('#answer .verdict-badge', (b) => getComputedStyle(b).color);
    assert.equal(colour, 'rgb(179, 38, 30)', 'a wrong verdict is red as well as worded');
    await language(page, 'ru');
    try {
      assert.equal(await page.textContent('#answer .verdict-badge'), 'Зачисление потеряно');
      assert.match(await page.textContent('#answer .verdict-why'), /Потеряно навсегда/);
      assert.match(await page.textContent('#timeline > li.entry .verdict-badge'), /Зачисление потеряно/);
    } finally {
      await language(page, 'en');
    }
  });

  test('check_then_act crashed after its UPDATE: the crash is not called a rollback — the credit was kept', async () => {
    await fillSender(page, { handler: 'check_then_act', fault: 'after_update', attempts: 1 });
    await pressDeliver(page);
    const shown = await shownVerdicts(page);
    assert.equal(shown.answer, 'failed_after_commit');
    assert.match(shown.why, /the credit, without the inbox row was already committed/);
    assert.doesNotMatch(await page.textContent('#answer'), /rolled back/);
  });
});
