// The hostile-input catalogue, through every door of the page: the console
// API (`inboxLab.deliver`, which takes any JavaScript value, with any
// handler: the mistaken ones validate first too), the delivery
// form (text fields), and the "paste JSON" box (`inboxLab.deliverJson`).
//
// For every refused case: an invalid_input error naming the field at fault
// with a specific code; its English text (www/lib/errors.js) is Rust's message
// word for word, and it has a Russian text with every placeholder filled;
// the form shows it next to the control at fault; the tables do not change.
// For every unusual but valid case (emoji, right-to-left text, markup, SQL,
// exactly 255 bytes, significant spaces, unnormalised Unicode): stored and
// shown byte for byte, and markup stays text — no script runs, no element
// is created, no CSP violation fires. No case traps the wasm (the worker is
// never restarted), and the page still works after all of them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { DB_WORKER_SCRIPT, idle, openPage, reloadPage, reveal, shownTables, usePage, watchViolations } from './browser.mjs';

const BASE = { source: 'hostile', event_id: 'evt-base', account_id: 1, amount: 5 };
const MAX_SAFE = 9007199254740991;

describe('hostile input', { timeout: 300_000 }, () => {
  let page;
  // Every page load starts one database worker; a trap would start another.
  const counts = { loads: 0, workers: 0 };
  usePage(
    {
      prepare: async (opened) => {
        opened.on('load', () => {
          counts.loads += 1;
        });
        // (The console's, the import's and the judge's own workers are not
        // database workers: they are started when first needed.)
        opened.on('worker', (worker) => {
          counts.workers += DB_WORKER_SCRIPT.test(worker.url()) ? 1 : 0;
        });
        // Before any script of the page: note CSP violations and prove that no
        // payload ever runs (each would set window.__pwned).
        await watchViolations(opened);
      },
      open: async (opened) => {
        await openPage(opened);
        await opened.evaluate(() => window.inboxLab.reset());
        await opened.evaluate((event) => window.inboxLab.deliver(event), BASE);
        await reloadPage(opened);
      },
    },
    (opened) => (page = opened),
  );

  test('console API: every refusal names its field and code, reads in English and Russian, and changes nothing', async () => {
    const { results, before: tablesBefore, after: tablesAfter } = await page.evaluate(consoleCatalogue, BASE);
    assert.ok(results.length >= 40, `${results.length} cases`);
    for (const result of results) {
      checkRefusal(result);
    }
    assert.deepEqual(tablesAfter, tablesBefore, 'no refused call changed the tables');
  });

  test('console API: unusual but valid keys are stored exactly, and markup stays inert text', async () => {
    const keys = validKeys();
    const answers = await page.evaluate(async (events) => {
      const out = [];
      for (const event of events) {
        out.push(await window.inboxLab.deliver(event).then((a) => a.outcome, (e) => e));
      }
      return out;
    }, keys.map(([source, event_id], i) => ({ source, event_id, account_id: 1, amount: i + 1 })));
    assert.deepEqual(answers, keys.map(() => 'applied'));
    // The same bytes again are duplicates: nothing was normalised on the way.
    const repeat = await page.evaluate(
      (events) => Promise.all(events.map((e) => window.inboxLab.deliver(e).then((a) => a.outcome))),
      keys.map(([source, event_id], i) => ({ source, event_id, account_id: 1, amount: i + 1 })),
    );
    assert.deepEqual(repeat, keys.map(() => 'duplicate'));

    const { inbox } = await page.evaluate(() => window.inboxLab.tables());
    for (const [source, eventId] of keys) {
      assert.equal(inbox.filter((row) => row.source === source && row.event_id === eventId).length, 1, `${source} / ${eventId}`);
    }
    // Shown exactly (textContent), after a reload draws them from the database.
    await reloadPage(page);
    const shown = (await shownTables(page)).inbox.map((cells) => `${cells[0]}\u0000${cells[1]}`);
    for (const [source, eventId] of keys) {
      assert.ok(shown.includes(`${source}\u0000${eventId}`), `shown exactly: ${source} / ${eventId}`);
    }
    await assertInert(page);
  });

  test('the paste-JSON box: each malformed text is refused next to the box, with the field inside the JSON named', async () => {
    await reveal(page, '#paste summary');
    await page.click('#paste summary');
    const before = await page.evaluate(() => window.inboxLab.tables());
    for (const [name, text, field, code] of pasteCases()) {
      const error = await paste(page, text);
      assert.equal(error.shownCode, code, `${name}: code`);
      assert.equal(error.shownField, field, `${name}: field`);
      assert.equal(error.text, error.apiMessage, `${name}: the English text is Rust's message`);
      assert.equal(error.invalid, 'true', `${name}: the box is marked invalid`);
      assert.equal(error.focused, 'paste-json', `${name}: the focus is on the box`);
    }
    // A raw lone surrogate in the box (not a JSON escape): the text itself is refused.
    const lone = await paste(page, null);
    assert.deepEqual([lone.shownField, lone.shownCode], ['event', 'lone_surrogate']);
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), before, 'nothing was written');

    // And a valid paste is delivered, with markup as plain text.
    const ok = await paste(page, JSON.stringify({ source: '<b>paste</b>', event_id: 'json-1', account_id: 1, amount: 7 }));
    assert.equal(ok.answer, 'applied (200): receipt #' + ok.seq + ', balance after ' + ok.balance);
    assert.equal(await page.isHidden('#paste-json-error'), true);
    await assertInert(page);
  });

  test('the delivery form: each refusal is shown next to its field, which gets the focus; nothing changes', async () => {
    const before = await page.evaluate(() => window.inboxLab.tables());
    for (const [field, value, code] of formCases()) {
      const label = `${field} = ${JSON.stringify(value)}`;
      const expected = await page.evaluate(
        ({ field, value }) => {
          const canonical = /^-?(0|[1-9][0-9]*)$/;
          const asTyped = (text) => (canonical.test(text) ? Number(text) : text);
          const form = document.querySelector('#deliver-form').elements;
          const event = {
            source: form.source.value,
            event_id: form.event_id.value,
            account_id: asTyped(form.account_id.value),
            amount: asTyped(form.amount.value),
          };
          event[field] = field === 'account_id' || field === 'amount' ? asTyped(value) : value;
          return window.inboxLab.deliver(event).catch((e) => e);
        },
        { field, value },
      );
      assert.deepEqual([expected.field, expected.code], [field, code], label);
      await submitForm(page, { [field]: value });
      const note = await page.textContent(`#${field}-error`);
      assert.equal(note, expected.message, `${label}: the specific message, next to the field`);
      assert.equal(await page.getAttribute(`#${field}`, 'aria-invalid'), 'true', label);
      assert.equal(await page.evaluate(() => document.activeElement.id), field, label);
      await reveal(page, '#deliver-form button[type="reset"]');
      await page.click('#deliver-form button[type="reset"]');
    }
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), before, 'no refused form changed anything');

    // Valid but unusual keys through the form: stored and shown exactly.
    for (const [source, eventId] of [
      ['форма 🦀', 'שלום-עולם'],
      ['<img src=x onerror="window.__pwned=\'form\'">', "'); DROP TABLE inbox; --"],
    ]) {
      await submitForm(page, { source, event_id: eventId });
      const { inbox } = await page.evaluate(() => window.inboxLab.tables());
      assert.ok(inbox.some((row) => row.source === source && row.event_id === eventId), `${source} stored`);
      const shown = (await shownTables(page)).inbox;
      assert.ok(shown.some((cells) => cells[0] === source && cells[1] === eventId), `${source} shown`);
      await reveal(page, '#deliver-form button[type="reset"]');
      await page.click('#deliver-form button[type="reset"]');
    }
    await assertInert(page);
  });

  test('the balance limit: a credit past 2^53-1 is refused and changes nothing; up to it is fine', async () => {
    await page.evaluate(() => window.inboxLab.reset());
    await importWithBalance(page, MAX_SAFE - 1000);
    const before = await page.evaluate(() => window.inboxLab.tables());
    assert.deepEqual(before.accounts, [{ id: 1, balance: MAX_SAFE - 1000 }]);

    const over = await page.evaluate(async () => {
      const error = await window.inboxLab
        .deliver({ source: 'limit', event_id: 'over', account_id: 1, amount: 1001 })
        .catch((e) => e);
      return { error, ...(await bothLanguages(error)) };

      async function bothLanguages(e) {
        const { errorMessage } = window.inboxLab.texts;
        const i18n = window.inboxLab; // setLanguage
        const en = errorMessage(e);
        i18n.setLanguage('ru');
        const ru = errorMessage(e);
        i18n.setLanguage('en');
        return { en, ru };
      }
    });
    assert.deepEqual(
      [over.error.kind, over.error.code, over.error.http_status, over.error.retryable],
      ['balance_limit', 'over_limit', 422, false],
    );
    assert.equal(
      over.en,
      'crediting 1001 to account 1 (balance 9007199254739991) would pass the balance limit 9007199254740991',
    );
    assert.equal(over.en, over.error.message);
    assert.equal(
      over.ru,
      'зачисление 1001 на счёт 1 (баланс 9007199254739991) превысило бы предел баланса 9007199254740991',
    );
    assert.deepEqual(await page.evaluate(() => window.inboxLab.tables()), before);

    const exact = await page.evaluate(() =>
      window.inboxLab.deliver({ source: 'limit', event_id: 'exact', account_id: 1, amount: 1000 }),
    );
    assert.deepEqual([exact.outcome, exact.receipt.balance_after], ['applied', MAX_SAFE]);
    // Through the form: the answer says why.
    await submitForm(page, { source: 'limit', event_id: 'one-more', account_id: '1', amount: '1' });
    assert.match(await page.textContent('#answer'), /would pass the balance limit 9007199254740991/);
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).accounts, [{ id: 1, balance: MAX_SAFE }]);
  });

  test('after all of it: no wasm trap, no restart, no script ran, no CSP violation, and the page still works', async () => {
    assert.equal(counts.workers, counts.loads, 'one database worker per page load: none was restarted after a trap');
    assert.equal(page.workers().filter((worker) => DB_WORKER_SCRIPT.test(worker.url())).length, 1);
    await page.waitForSelector('#status[data-phase="ready"]');
    await page.evaluate(() => window.inboxLab.reset());
    await submitForm(page, { source: 'provider-a', event_id: 'evt-after', account_id: '1', amount: '500' });
    assert.deepEqual((await page.evaluate(() => window.inboxLab.tables())).accounts, [{ id: 1, balance: 500 }]);
    await assertInert(page);
  });
});

// ---- The catalogue -------------------------------------------------------------

/** Runs in the page: every refused console call, with its text in both languages. */
async function consoleCatalogue(base) {
  const lone = String.fromCharCode(0xd800);
  const loneLow = String.fromCharCode(0xdc00);
  const cases = [
    // [name, event, expected field, expected code, options]
    ['empty source', { ...base, source: '' }, 'source', 'empty'],
    ['empty event_id', { ...base, event_id: '' }, 'event_id', 'empty'],
    ['spaces only', { ...base, event_id: '   ' }, 'event_id', 'whitespace_only'],
    ['tabs and newlines only', { ...base, source: ' \t\n ' }, 'source', 'whitespace_only'],
    ['ideographic space only', { ...base, event_id: '\u3000' }, 'event_id', 'whitespace_only'],
    ['256 ASCII bytes', { ...base, source: 's'.repeat(256) }, 'source', 'too_long'],
    ['86 euro signs (258 bytes)', { ...base, event_id: '€'.repeat(86) }, 'event_id', 'too_long'],
    ['64 emoji (256 bytes)', { ...base, event_id: '🦀'.repeat(64) }, 'event_id', 'too_long'],
    ['10 KB', { ...base, source: 'x'.repeat(10_000) }, 'source', 'too_long'],
    ['NUL', { ...base, event_id: 'a\u0000b' }, 'event_id', 'control_char'],
    ['newline inside', { ...base, event_id: 'evt\n1' }, 'event_id', 'control_char'],
    ['escape char', { ...base, source: '\u001b[31mred' }, 'source', 'control_char'],
    ['DEL', { ...base, source: 'a\u007f' }, 'source', 'control_char'],
    ['C1 control', { ...base, source: 'a\u0085' }, 'source', 'control_char'],
    ['right-to-left override', { ...base, source: '\u202eevil' }, 'source', 'control_char'],
    ['first strong isolate', { ...base, event_id: 'a\u2068b' }, 'event_id', 'control_char'],
    ['zero width joiner', { ...base, event_id: 'a\u200db' }, 'event_id', 'invisible_char'],
    ['right-to-left mark', { ...base, source: '\u200fevil' }, 'source', 'invisible_char'],
    ['hangul filler', { ...base, event_id: 'evt\u3164' }, 'event_id', 'invisible_char'],
    ['tag character', { ...base, source: 'a\u{e0041}' }, 'source', 'invisible_char'],
    ['lone high surrogate', { ...base, source: `a${lone}` }, 'source', 'lone_surrogate'],
    ['lone low surrogate', { ...base, event_id: `${loneLow}b` }, 'event_id', 'lone_surrogate'],
    ['source a number', { ...base, source: 5 }, 'source', 'wrong_type'],
    ['event_id null', { ...base, event_id: null }, 'event_id', 'wrong_type'],
    ['event_id an array', { ...base, event_id: ['e'] }, 'event_id', 'wrong_type'],
    ['amount 0', { ...base, amount: 0 }, 'amount', 'out_of_range'],
    ['amount -1', { ...base, amount: -1 }, 'amount', 'out_of_range'],
    ['amount 10^9+1', { ...base, amount: 1_000_000_001 }, 'amount', 'out_of_range'],
    ['amount 1e21', { ...base, amount: 1e21 }, 'amount', 'out_of_range'],
    ['amount 2^53', { ...base, amount: 2 ** 53 }, 'amount', 'out_of_range'],
    ['amount 1.5', { ...base, amount: 1.5 }, 'amount', 'not_whole_number'],
    ['amount 0.1+0.2', { ...base, amount: 0.1 + 0.2 }, 'amount', 'not_whole_number'],
    ['amount NaN', { ...base, amount: NaN }, 'amount', 'not_whole_number'],
    ['amount Infinity', { ...base, amount: Infinity }, 'amount', 'not_whole_number'],
    ['amount -Infinity', { ...base, amount: -Infinity }, 'amount', 'not_whole_number'],
    ['amount "500"', { ...base, amount: '500' }, 'amount', 'string_for_number'],
    ['amount ""', { ...base, amount: '' }, 'amount', 'string_for_number'],
    ['amount BigInt', { ...base, amount: 500n }, 'amount', 'wrong_type'],
    ['amount null', { ...base, amount: null }, 'amount', 'wrong_type'],
    ['amount true', { ...base, amount: true }, 'amount', 'wrong_type'],
    ['amount an object', { ...base, amount: { value: 5 } }, 'amount', 'wrong_type'],
    ['amount missing', { source: base.source, event_id: base.event_id, account_id: 1 }, 'amount', 'missing_field'],
    ['amount undefined', { ...base, amount: undefined }, 'amount', 'missing_field'],
    ['account 0', { ...base, account_id: 0 }, 'account_id', 'out_of_range'],
    ['account -1', { ...base, account_id: -1 }, 'account_id', 'out_of_range'],
    ['account 2^53', { ...base, account_id: 2 ** 53 }, 'account_id', 'out_of_range'],
    ['account "1"', { ...base, account_id: '1' }, 'account_id', 'string_for_number'],
    ['account BigInt', { ...base, account_id: 1n }, 'account_id', 'wrong_type'],
    ['an extra field', { ...base, note: 'hi' }, 'event', 'unexpected_field'],
    ['__proto__ smuggling', JSON.parse('{"source":"a","event_id":"e","account_id":1,"amount":5,"__proto__":{"x":1}}'), 'event', 'unexpected_field'],
    ['event null', null, 'event', 'not_object'],
    ['event a string', '{"source":"a"}', 'event', 'not_object'],
    ['event an array', [base], 'event', 'not_object'],
    ['event undefined', undefined, 'event', 'not_object'],
    ['unknown fault', base, 'fault', 'unknown_value', { fault: 'boom' }],
    ['fault a number', base, 'fault', 'wrong_type', { fault: 5 }],
    ['options not an object', base, 'fault', 'bad_options', 5],
    ['a function inside (cannot be copied)', { ...base, amount: () => 5 }, undefined, 'not_cloneable'],
    ['a symbol inside (cannot be copied)', { ...base, source: Symbol('s') }, undefined, 'not_cloneable'],
  ];
  // Validation runs before every handler: the mistaken ones refuse the same
  // input (they are wrong about deduplication, not about what is valid).
  for (const handler of ['no_dedup', 'check_then_act', 'two_transactions', 'insert_or_ignore', 'insert_or_replace']) {
    cases.push(
      [`${handler}: 300-byte event_id`, { ...base, event_id: 'k'.repeat(300) }, 'event_id', 'too_long', { handler }],
      [`${handler}: amount -500`, { ...base, amount: -500 }, 'amount', 'out_of_range', { handler }],
      [`${handler}: amount 0`, { ...base, event_id: 'evt-zero', amount: 0 }, 'amount', 'out_of_range', { handler }],
      [`${handler}: blank source`, { ...base, source: '   ' }, 'source', 'whitespace_only', { handler }],
    );
  }
  const { errorMessage } = window.inboxLab.texts;
  const i18n = window.inboxLab; // setLanguage
  const before = await window.inboxLab.tables();
  const results = [];
  for (const [name, event, field, code, options] of cases) {
    const outcome = await window.inboxLab.deliver(event, options).then(
      (answer) => ({ answer }),
      (error) => ({ error }),
    );
    const error = outcome.error ?? null;
    i18n.setLanguage('ru');
    const ru = error ? errorMessage(error) : null;
    i18n.setLanguage('en');
    const en = error ? errorMessage(error) : null;
    results.push({ name, expected: { field, code }, answer: outcome.answer ?? null, error, en, ru });
  }
  // Unknown accounts are not invalid input, but must not change anything either.
  const unknown = await window.inboxLab.deliver({ ...base, event_id: 'evt-unknown', account_id: 42 }).catch((e) => e);
  i18n.setLanguage('ru');
  const unknownRu = errorMessage(unknown);
  i18n.setLanguage('en');
  results.push({
    name: 'an account that does not exist',
    expected: { field: undefined, code: 'no_such_account', kind: 'unknown_account' },
    answer: null,
    error: unknown,
    en: errorMessage(unknown),
    ru: unknownRu,
  });
  return { results, before, after: await window.inboxLab.tables() };
}

function checkRefusal({ name, expected, answer, error, en, ru }) {
  assert.equal(answer, null, `${name}: must be refused, got ${JSON.stringify(answer)}`);
  assert.equal(error.kind, expected.kind ?? 'invalid_input', `${name}: kind`);
  assert.deepEqual({ field: error.field, code: error.code }, { field: expected.field, code: expected.code }, name);
  assert.equal(error.retryable, false, name);
  assert.ok(error.http_status === 400 || error.http_status === 422, name);
  assert.equal(typeof error.params, 'object', `${name}: params`);
  assert.equal(en, error.message, `${name}: the English text is Rust's message`);
  assert.ok(ru && ru !== en && /[а-яё]/i.test(ru), `${name}: a Russian text (${ru})`);
  assert.doesNotMatch(ru, /\{\w+\}/, `${name}: every placeholder filled (${ru})`);
}

/** [source, event_id] pairs that are valid however they look. */
function validKeys() {
  return [
    ['🦀 провайдер', '👍🏽 thumbs'], // emoji with a skin tone (a joiner is invisible: refused)
    ['שלום', 'مرحبا-1'], // right-to-left
    ['<img src=x onerror="window.__pwned=1">', '<script>window.__pwned=2</script>'],
    ['"><svg onload=window.__pwned=3>', '{{constructor.constructor("window.__pwned=4")()}}'],
    ["'; DROP TABLE inbox; --", "Robert'); DROP TABLE accounts;--"],
    ['1 OR 1=1', '%s%n%x ${x} \\x00'],
    ['s'.repeat(255), '€'.repeat(85)], // exactly 255 bytes each
    [' spaced ', 'evt-1 '], // spaces are part of the key
    ['caf\u00e9', 'caf\u0065\u0301'], // é precomposed vs e + combining accent: two keys
  ];
}

function pasteCases() {
  const ok = { source: 'json', event_id: 'e', account_id: 1, amount: 5 };
  const with_ = (change) => JSON.stringify({ ...ok, ...change });
  return [
    // [name, text, field, code]
    ['empty text', '', 'event', 'not_json'],
    ['not JSON', 'credit account 1 with 5', 'event', 'not_json'],
    ['NaN literal', '{"source":"a","event_id":"e","account_id":1,"amount":NaN}', 'event', 'not_json'],
    ['trailing comma', '{"source":"a","event_id":"e","account_id":1,"amount":5,}', 'event', 'not_json'],
    ['escaped lone surrogate', '{"source":"\\ud800","event_id":"e","account_id":1,"amount":5}', 'event', 'not_json'],
    ['an array', `[${with_({})}]`, 'event', 'not_object'],
    ['a string', '"hello"', 'event', 'not_object'],
    ['null', 'null', 'event', 'not_object'],
    ['missing source', JSON.stringify({ event_id: 'e', account_id: 1, amount: 5 }), 'source', 'missing_field'],
    ['missing amount', JSON.stringify({ source: 'a', event_id: 'e', account_id: 1 }), 'amount', 'missing_field'],
    ['an extra field', with_({ currency: 'EUR' }), 'event', 'unexpected_field'],
    ['a repeated field', '{"source":"a","event_id":"e","account_id":1,"amount":1,"amount":1000000}', 'event', 'duplicate_field'],
    ['amount "500"', with_({ amount: '500' }), 'amount', 'wrong_type'],
    ['amount null', with_({ amount: null }), 'amount', 'wrong_type'],
    ['amount true', with_({ amount: true }), 'amount', 'wrong_type'],
    ['amount 500.0', '{"source":"a","event_id":"e","account_id":1,"amount":500.0}', 'amount', 'decimal_or_exponent'],
    ['amount 5e2', '{"source":"a","event_id":"e","account_id":1,"amount":5e2}', 'amount', 'decimal_or_exponent'],
    ['amount 1.5', with_({ amount: 1.5 }), 'amount', 'decimal_or_exponent'],
    ['amount 1e21', '{"source":"a","event_id":"e","account_id":1,"amount":1e21}', 'amount', 'out_of_range'],
    ['amount 0', with_({ amount: 0 }), 'amount', 'out_of_range'],
    ['amount -1', with_({ amount: -1 }), 'amount', 'out_of_range'],
    ['amount 10^9+1', with_({ amount: 1_000_000_001 }), 'amount', 'out_of_range'],
    ['amount 2^64', '{"source":"a","event_id":"e","account_id":1,"amount":18446744073709551616}', 'amount', 'out_of_range'],
    ['account 0', with_({ account_id: 0 }), 'account_id', 'out_of_range'],
    ['account 2^53', '{"source":"a","event_id":"e","account_id":9007199254740992,"amount":5}', 'account_id', 'out_of_range'],
    ['source a number', with_({ source: 7 }), 'source', 'wrong_type'],
    ['source empty', with_({ source: '' }), 'source', 'empty'],
    ['event_id blank', with_({ event_id: '  ' }), 'event_id', 'whitespace_only'],
    ['event_id with NUL', '{"source":"a","event_id":"x\\u0000y","account_id":1,"amount":5}', 'event_id', 'control_char'],
    ['source 256 bytes', with_({ source: 'a'.repeat(256) }), 'source', 'too_long'],
  ];
}

/** Text-field cases: [field, value as typed, code]. Numbers are passed as numbers only when typed canonically. */
function formCases() {
  return [
    ['source', '', 'empty'],
    ['source', '    ', 'whitespace_only'],
    ['source', 'a'.repeat(256), 'too_long'],
    ['source', 'tab\there', 'control_char'],
    ['event_id', 'nul\u0000here', 'control_char'],
    ['event_id', '\u3000\u3000', 'whitespace_only'],
    ['event_id', 'ж'.repeat(128), 'too_long'],
    ['amount', '0', 'out_of_range'],
    ['amount', '-1', 'out_of_range'],
    ['amount', '1000000001', 'out_of_range'],
    ['amount', '1.5', 'string_for_number'],
    ['amount', '1e21', 'string_for_number'],
    ['amount', 'NaN', 'string_for_number'],
    ['amount', 'Infinity', 'string_for_number'],
    ['amount', '500n', 'string_for_number'],
    ['amount', '', 'string_for_number'],
    ['amount', '05', 'string_for_number'],
    ['account_id', '0', 'out_of_range'],
    ['account_id', '-1', 'out_of_range'],
    ['account_id', '9007199254740992', 'out_of_range'],
    ['account_id', '99999999999999999999', 'out_of_range'],
    ['account_id', 'null', 'string_for_number'],
  ];
}

// ---- Helpers --------------------------------------------------------------------

/** Fills the delivery form (other fields keep their example values), submits it, waits for the page. */
async function submitForm(page, values) {
  await reveal(page, '#deliver-form button[type="reset"]');
  await page.click('#deliver-form button[type="reset"]');
  for (const [field, value] of Object.entries(values)) {
    // Set the value directly: typing cannot enter NUL or a tab.
    await page.evaluate(({ field, value }) => {
      const control = document.querySelector(`#deliver-form [name="${field}"]`);
      control.value = value;
    }, { field, value });
  }
  await reveal(page, '#deliver-form button[type="submit"]');
  await page.click('#deliver-form button[type="submit"]');
  await idle(page);
}

/**
 * Delivers `text` through the paste box (`null`: a text with a raw lone
 * surrogate, built in the page) and returns what the page shows, plus the
 * message the API gives for the same text.
 */
async function paste(page, text) {
  return page.evaluate(async (given) => {
    const value =
      given ?? `{"source":"a${String.fromCharCode(0xd800)}","event_id":"e","account_id":1,"amount":5}`;
    const box = document.querySelector('#paste-json');
    const form = document.querySelector('#paste-form');
    box.value = value;
    const done = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (form.getAttribute('aria-busy') === 'false') {
          observer.disconnect();
          resolve();
        }
      });
      observer.observe(form, { attributes: true, attributeFilter: ['aria-busy'] });
    });
    form.querySelector('button[type="submit"]').click();
    await done;
    const note = document.querySelector('#paste-json-error');
    const api = await window.inboxLab.deliverJson(value).then(
      (answer) => answer,
      (error) => error,
    );
    return {
      text: note.hidden ? null : note.textContent,
      shownField: note.hidden ? null : note.dataset.field,
      shownCode: note.hidden ? null : note.dataset.code,
      invalid: box.getAttribute('aria-invalid'),
      focused: document.activeElement?.id,
      apiMessage: api.message,
      answer: document.querySelector('#paste-answer').textContent,
      seq: api.receipt?.seq,
      balance: api.receipt?.balance_after,
    };
  }, text);
}

/** No payload ran, no element came from user data, no CSP violation. */
async function assertInert(page) {
  const state = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    violations: window.__violations,
    injected: document.querySelectorAll('#inbox img, #inbox svg, #inbox script, #inbox b, #paste-answer *, .field-error *').length,
  }));
  assert.deepEqual(state, { pwned: null, violations: [], injected: 0 });
}

/**
 * Sets account 1's balance by editing an exported copy of the database with
 * Python's sqlite3 (already a test dependency: the oracle script needs it),
 * then importing it through the console API — the page itself has no way to
 * write a balance, which is the point.
 */
async function importWithBalance(page, balance) {
  const bytes = await page.evaluate(async () => Array.from(await window.inboxLab.exportDatabase()));
  const dir = await mkdtemp(join(tmpdir(), 'inbox-lab-limit-'));
  try {
    const file = join(dir, 'db.sqlite3');
    await writeFile(file, Buffer.from(bytes));
    execFileSync('python3', [
      '-c',
      'import sqlite3, sys\n' +
        'c = sqlite3.connect(sys.argv[1])\n' +
        'c.execute("UPDATE accounts SET balance = ? WHERE id = 1", (int(sys.argv[2]),))\n' +
        'c.commit()\n' +
        'c.execute("PRAGMA journal_mode = DELETE")\n' +
        'c.close()\n',
      file,
      String(balance),
    ]);
    const edited = Array.from(await readFile(file));
    await page.evaluate((data) => window.inboxLab.importDatabase(new Uint8Array(data)), edited);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
