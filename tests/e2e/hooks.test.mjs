// Signed webhooks end to end: real HTTP clients nobody here wrote — the
// official Standard Webhooks libraries from npm and from PyPI — sign and POST
// to the server's relay (`cargo xtask serve`, xtask/src/serve/relay.rs) while the
// page is open; the page's worker verifies and delivers (Rust:
// src/labs/webhooks/), and the sender gets the handler's own answer. Then the
// panel's curl + openssl example, rotation, the dedup-poisoning level, won
// and lost, in English and Russian, and the whole lab probed from outside
// with `inbox-lab probe`.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { afterEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Webhook } from 'standardwebhooks';

import { BASE_URL, RELAY_KEY, idle, reveal, usePage } from './browser.mjs';
import { freshPlayground } from './playground.mjs';

const SOURCE = 'provider-a';
const HOOK_URL = new URL(`/hooks/${SOURCE}`, BASE_URL).href;
const PYTHON_PATH = fileURLToPath(new URL('./.python', import.meta.url));
const PYTHON_SENDER = fileURLToPath(new URL('./send_webhook.py', import.meta.url));

const body = (amount, account = 1) => JSON.stringify({ account_id: account, amount });

/** Signs with the npm library and POSTs: `{status, retryAfter, body}`. */
async function sendNpm(secret, id, payload, { secondsAgo = 0, signedPayload = payload } = {}) {
  const when = new Date(Date.now() - secondsAgo * 1000);
  const signature = new Webhook(secret).sign(id, when, signedPayload);
  return post({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
    'webhook-signature': signature,
  }, payload);
}

async function post(headers, payload) {
  const response = await fetch(HOOK_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: kept as null
  }
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: json };
}

/** The native `inbox-lab`: the one `cargo xtask test` built (INBOX_LAB_BIN), else `cargo run`'s. */
const INBOX_LAB = process.env.INBOX_LAB_BIN ? [process.env.INBOX_LAB_BIN] : ['cargo', 'run', '--quiet', '--bin', 'inbox-lab', '--'];

/** Runs `inbox-lab probe … --json`: `{status, doc}`. */
function probe(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(INBOX_LAB[0], [...INBOX_LAB.slice(1), 'probe', ...args, '--json'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, doc: JSON.parse(out) }));
  });
}

/** Signs with the PyPI library (a Python process) and POSTs. */
function sendPython(secret, id, payload, secondsAgo = 0) {
  const run = spawnSync('python3', [PYTHON_SENDER, HOOK_URL, secret, id, payload, String(secondsAgo)], {
    env: { ...process.env, PYTHONPATH: PYTHON_PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 0, `python sender failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const APPLIED = JSON.stringify({ status: 200, body: { outcome: 'applied' } });

/**
 * What any program on this computer can do: a plain HTTP client subscribes to
 * the relay (without the key: it was never given the link) and answers every
 * webhook it is sent with `200 applied`, in the page's name.
 * `{status, body, stop()}`: its subscription's answer.
 */
async function hijack() {
  const controller = new AbortController();
  const response = await fetch(new URL('/hooks/subscribe', BASE_URL), { signal: controller.signal });
  if (!response.ok) {
    return { status: response.status, body: await response.json(), stop() {} };
  }
  const answerAll = async () => {
    let unfinished = '';
    for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
      const blocks = (unfinished + chunk).split('\n\n');
      unfinished = blocks.pop();
      for (const block of blocks) {
        const data = block.match(/^event: hook\ndata: (.*)$/)?.[1];
        if (data !== undefined) {
          await fetch(new URL(`/hooks/answer/${JSON.parse(data).id}`, BASE_URL), { method: 'POST', body: APPLIED });
        }
      }
    }
  };
  answerAll().catch(() => {}); // ends when stopped
  return { status: response.status, body: null, stop: () => controller.abort() };
}

async function secretOf(page, source = SOURCE) {
  return (await page.evaluate((s) => window.inboxLab.hooks.secret(s), source)).secret;
}

/** Waits until the page's relay is subscribed. */
async function relayOn(page) {
  await page.waitForSelector('#hooks-relay[data-state="connected"]', { state: 'attached' });
}

async function balance(page) {
  const { accounts } = await page.evaluate(() => window.inboxLab.tables());
  return accounts.find((a) => a.id === 1)?.balance;
}

describe('signed webhooks through the relay', { timeout: 300_000 }, () => {
  let page;
  let problems;
  usePage({ beforeEach: freshPlayground, checkEach: false }, (opened, browser) => {
    page = opened;
    problems = browser.problems;
  });
  // The level's refused requests (401, 422) are the lesson; the browser logs
  // every fetch answered 4xx as "Failed to load resource". Anything else the
  // page logs is a failure.
  afterEach(() => {
    const expected = /^console error: Failed to load resource: the server responded with a status of (401|422) /;
    assert.deepEqual(problems.splice(0).filter((p) => !expected.test(p)), [], 'the page reported errors');
  });

  test('the npm library: new → 200 applied, again → 200 duplicate with the first receipt, other payload → 422', async () => {
    await relayOn(page);
    const secret = await secretOf(page);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const id = `npm-${Date.now()}`;
    const first = await sendNpm(secret, id, body(500));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.outcome, 'applied');
    assert.equal(first.body.steps, undefined, 'the sender gets the answer, not the page’s view of the steps');
    const again = await sendNpm(secret, id, body(500));
    assert.deepEqual([again.status, again.body.outcome, again.body.receipt], [200, 'duplicate', first.body.receipt]);
    const other = await sendNpm(secret, id, body(700));
    assert.deepEqual([other.status, other.body.kind], [422, 'payload_conflict']);
    assert.equal(await balance(page), 500);

    // What the page shows: the log, and the timeline with the steps Rust ran.
    await idle(page);
    const log = await page.evaluate(() => window.inboxLab.hooks.requests());
    assert.deepEqual(log.map((r) => [r.webhook_id, r.status]), [[id, 200], [id, 200], [id, 422]]);
    const entries = await page.evaluate(() => window.inboxLab.timeline());
    const first3 = entries.filter((e) => e.via === 'webhook');
    assert.equal(first3.length, 3);
    assert.deepEqual(first3[0].event, { source: SOURCE, event_id: id, account_id: 1, amount: 500 });
    assert.deepEqual(first3[0].steps.map((s) => s.op), ['begin', 'insert', 'credit', 'store_receipt', 'commit']);
    assert.equal(await page.locator('#hooks-log tr').count(), 3);
  });

  test('refused before the inbox: tampered body, stale and future timestamps, no or wrong signature (401), oversized (413), bad JSON (400)', async () => {
    await relayOn(page);
    const secret = await secretOf(page);
    const id = `bad-${Date.now()}`;
    const cases = [
      ['tampered body', await sendNpm(secret, id, body(900), { signedPayload: body(5) }), 401, 'signature_mismatch'],
      ['stale timestamp', await sendNpm(secret, id, body(5), { secondsAgo: 6 * 60 }), 401, 'stale_timestamp'],
      ['future timestamp', await sendNpm(secret, id, body(5), { secondsAgo: -6 * 60 }), 401, 'future_timestamp'],
      ['another secret', await sendNpm(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, id, body(5)), 401, 'signature_mismatch'],
      [
        'no signature',
        await post({ 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }, body(5)),
        401,
        'missing_signature',
      ],
      ['a body naming its own source', await sendNpm(secret, id, JSON.stringify({ account_id: 1, amount: 5, source: 'x' })), 400, 'unexpected_field'],
    ];
    for (const [name, answer, status, code] of cases) {
      assert.deepEqual([answer.status, answer.body?.code], [status, code], `${name}: ${JSON.stringify(answer.body)}`);
    }
    const huge = await sendNpm(secret, id, JSON.stringify({ account_id: 1, amount: 5, pad: 'x'.repeat(70 * 1024) }));
    assert.equal(huge.status, 413);
    const unknown = await fetch(new URL('/hooks/nobody-has-a-secret', BASE_URL), {
      method: 'POST',
      headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
      body: body(5),
    });
    assert.equal(unknown.status, 401);
    assert.equal((await unknown.json()).code, 'unknown_source');
    assert.equal(await balance(page), 0, 'nothing reached the inbox');
    const inbox = (await page.evaluate(() => window.inboxLab.tables())).inbox;
    assert.deepEqual(inbox, []);
  });

  test('the PyPI library: new → applied, again → duplicate with the first receipt, stale → 401', async () => {
    await relayOn(page);
    const secret = await secretOf(page);
    const id = `py-${Date.now()}`;
    const first = sendPython(secret, id, body(250));
    assert.deepEqual([first.status, first.body.outcome], [200, 'applied'], JSON.stringify(first));
    const again = sendPython(secret, id, body(250));
    assert.deepEqual([again.status, again.body.outcome, again.body.receipt], [200, 'duplicate', first.body.receipt]);
    const stale = sendPython(secret, `${id}-late`, body(250), 10 * 60);
    assert.deepEqual([stale.status, stale.body.code], [401, 'stale_timestamp']);
    assert.equal(await balance(page), 250);
  });

  test('rotation: the previous secret verifies until the next rotation', async () => {
    await relayOn(page);
    const oldest = await secretOf(page);
    const rotated = (await page.evaluate((s) => window.inboxLab.hooks.rotate(s), SOURCE)).secret;
    assert.notEqual(rotated, oldest);
    assert.equal(await secretOf(page), rotated, 'the rotated secret is now the current one');
    const stamp = Date.now();
    assert.equal((await sendNpm(oldest, `rot-a-${stamp}`, body(1))).status, 200, 'the previous one still verifies');
    assert.equal((await sendNpm(rotated, `rot-b-${stamp}`, body(1))).status, 200);
    await page.evaluate((s) => window.inboxLab.hooks.rotate(s), SOURCE);
    const refused = await sendNpm(oldest, `rot-c-${stamp}`, body(1));
    assert.deepEqual([refused.status, refused.body.code], [401, 'signature_mismatch']);
    assert.equal((await sendNpm(rotated, `rot-d-${stamp}`, body(1))).status, 200);
  });

  test('forget all secrets: a sender still signing with one gets 401; the next secret is a new one', async () => {
    await relayOn(page);
    const old = await secretOf(page);
    await reveal(page, '#hooks-forget');
    await page.click('#hooks-forget');
    await idle(page);
    assert.match(await page.textContent('#hooks-note'), /^All secrets forgotten/);
    const refused = await sendNpm(old, `forgot-${Date.now()}`, body(5));
    assert.deepEqual([refused.status, refused.body.code], [401, 'unknown_source']);
    const fresh = await secretOf(page);
    assert.notEqual(fresh, old);
    assert.equal((await sendNpm(fresh, `fresh-${Date.now()}`, body(5))).status, 200);
  });

  test('the panel’s curl + openssl example sends a real signed webhook', async () => {
    await relayOn(page);
    await reveal(page, '#hooks-source');
    await page.fill('#hooks-source', SOURCE);
    await reveal(page, '#hooks-show');
    await page.click('#hooks-show');
    await idle(page);
    const script = await page.textContent('#hooks-curl');
    assert.match(script, /openssl dgst -sha256 -mac HMAC/);
    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^HTTP\/1\.1 200/m, run.stdout);
    assert.match(run.stdout, /"outcome":"applied"/);
    assert.equal(await balance(page), 500);
  });

  const LEVEL_TEXTS = {
    en: {
      won: /^Won: the forgery was refused \(401\) before the inbox, by the signature check \(no signature matches a secret of the source\)/,
      stale: /outside it, it is refused before the inbox by the timestamp check \(signed longer ago than the window allows\)/,
      lost: /^Lost: the forger’s event took the id/,
    },
    ru: {
      won: /^Победа: подделка отклонена \(401\) до входящих — её остановила проверка подписи \(ни одна подпись не совпала с секретом источника\)/,
      stale: /вне окна его до входящих отклоняет проверка метки времени \(подписано раньше, чем допускает окно\)/,
      lost: /^Поражение: событие злоумышленника заняло id/,
    },
  };

  /** The answers' outcomes in words (www/lib/errors.js `outcome.*`), never as the code names them. */
  const SAID = {
    en: { unauthorized: 'unauthorized', applied: 'applied', duplicate: 'duplicate', payload_conflict: 'payload conflict' },
    ru: { unauthorized: 'не подтверждено', applied: 'применено', duplicate: 'дубликат', payload_conflict: 'конфликт данных' },
  };

  for (const lang of ['en', 'ru']) {
    const said = SAID[lang];
    test(`the dedup-poisoning level (${lang}), on a profile with no secret yet: the forger meets the signature check; replays inside and outside the window, each refusal named by Rust’s check`, async () => {
      await relayOn(page);
      await page.evaluate(() => window.inboxLab.hooks.forget()); // as on a fresh profile: no secret for any source
      await page.evaluate((l) => window.inboxLab.setLanguage(l), lang);
      await reveal(page, '#hooks-new');
      await page.click('#hooks-new');
      await reveal(page, '#hooks-forge');
      await page.click('#hooks-forge');
      await idle(page);
      await reveal(page, '#hooks-genuine');
      await page.click('#hooks-genuine');
      await idle(page);
      assert.match(await page.textContent('#hooks-answer-forge'), new RegExp(`^401 · ${said.unauthorized}: `));
      assert.doesNotMatch(await page.textContent('#hooks-answer-forge'), new RegExp(`${said.unauthorized}: ${said.unauthorized}`), 'said once');
      assert.equal(await page.getAttribute('#hooks-answer-forge', 'data-code'), 'signature_mismatch', 'refused by the signature, not for want of a secret');
      assert.match(await page.textContent('#hooks-answer-genuine'), new RegExp(`^200 · ${said.applied} #1$`));
      assert.equal(await page.getAttribute('#hooks-verdict', 'data-verdict'), 'won');
      assert.match(await page.textContent('#hooks-verdict'), LEVEL_TEXTS[lang].won);
      await reveal(page, '#hooks-replay');
      await page.click('#hooks-replay');
      await idle(page);
      await reveal(page, '#hooks-stale');
      await page.click('#hooks-stale');
      await idle(page);
      assert.match(await page.textContent('#hooks-answer-replay'), new RegExp(`^200 · ${said.duplicate} #1$`));
      assert.match(await page.textContent('#hooks-answer-stale'), new RegExp(`^401 · ${said.unauthorized}: `));
      assert.match(await page.textContent('#hooks-answer-stale'), /1\d{9}.*300.*\(1\d{9}\)/, 'the timestamps and the window');
      assert.equal(await page.getAttribute('#hooks-answer-stale', 'data-code'), 'stale_timestamp');
      assert.match(await page.textContent('#hooks-replays'), LEVEL_TEXTS[lang].stale);
      assert.equal(await balance(page), 500, 'the genuine event, once');
      await page.evaluate(() => window.inboxLab.setLanguage('en'));
    });

    test(`…and lost without them (${lang})`, async () => {
      await relayOn(page);
      await page.evaluate((l) => window.inboxLab.setLanguage(l), lang);
      await reveal(page, '#hooks-verify');
      await page.uncheck('#hooks-verify');
      assert.equal(await page.isVisible('#hooks-verify-off'), true);
      await reveal(page, '#hooks-new');
      await page.click('#hooks-new');
      await reveal(page, '#hooks-forge');
      await page.click('#hooks-forge');
      await idle(page);
      await reveal(page, '#hooks-genuine');
      await page.click('#hooks-genuine');
      await idle(page);
      assert.match(await page.textContent('#hooks-answer-forge'), new RegExp(`^200 · ${said.applied} #1$`));
      assert.match(await page.textContent('#hooks-answer-genuine'), new RegExp(`^422 · ${said.payload_conflict}: `));
      assert.equal(await page.getAttribute('#hooks-verdict', 'data-verdict'), 'lost_conflict');
      assert.match(await page.textContent('#hooks-verdict'), LEVEL_TEXTS[lang].lost);
      assert.equal(await balance(page), 1, 'the forger’s amount, not the genuine 500');
      const log = await page.evaluate(() => window.inboxLab.hooks.requests());
      assert.deepEqual(log.slice(-2).map((r) => [r.verify, r.status]), [[false, 200], [false, 422]]);
      await reveal(page, '#hooks-verify');
      await page.check('#hooks-verify');
      await page.evaluate(() => window.inboxLab.setLanguage('en'));
    });
  }

  test('only the tab opened with the printed link answers: a hijacker is refused (403), a sender never hears 2xx from it, and the page still applies the next webhook', async () => {
    await relayOn(page);
    assert.ok(RELAY_KEY, 'INBOX_LAB_URL must be the link `cargo xtask serve` printed (…/?relay=<key>)');
    assert.equal(new URL(page.url()).searchParams.get('relay'), null, 'the key is taken off the address');
    const secret = await secretOf(page);
    const id = `hijack-${Date.now()}`;

    // The page subscribed, a hijacker subscribes after it: refused, and the page still gets the next webhook.
    const hijacker = await hijack();
    const first = await sendNpm(secret, id, body(300));
    hijacker.stop();
    assert.deepEqual([first.status, first.body.outcome], [200, 'applied'], JSON.stringify(first.body));
    assert.equal(await balance(page), 300, 'the 200 came from the page: the event is in its inbox');
    assert.deepEqual([hijacker.status, hijacker.body?.code], [403, 'not_the_page']);
    for (let n = 1; n <= 20; n += 1) {
      const forged = await fetch(new URL(`/hooks/answer/r${n}`, BASE_URL), { method: 'POST', body: APPLIED });
      assert.equal(forged.status, 403, `a forged answer for r${n}`);
    }

    // The page closed: the hijacker tries again, and a signed sender and its retry hear 503, never a 2xx.
    await page.goto('about:blank');
    const late = `${id}-late`;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const again = await hijack();
      const answer = await sendNpm(secret, late, body(40));
      again.stop();
      assert.equal(again.status, 403);
      assert.deepEqual([answer.status, answer.body?.kind], [503, 'unavailable'], JSON.stringify(answer.body));
      assert.match(answer.retryAfter ?? '', /^\d+$/);
    }

    // A new tab opened without the link: the panel says it needs it, in English and Russian.
    const other = await page.context().newPage();
    await other.goto(BASE_URL);
    await other.waitForSelector('#hooks-relay[data-state="locked"]', { state: 'attached' });
    assert.match(await other.textContent('#hooks-relay'), /^Relay: locked\. .*link “cargo xtask serve” printed \(it ends in \?relay=…\)/);
    await other.evaluate(() => window.inboxLab.setLanguage('ru'));
    assert.match(await other.textContent('#hooks-relay'), /^Ретранслятор заблокирован\. .*\?relay=…/);
    await other.evaluate(() => window.inboxLab.setLanguage('en'));
    assert.equal((await sendNpm(secret, late, body(40))).status, 503, 'a locked tab receives nothing');
    // A key from an earlier start of the server (a stale link) is refused too, and the panel says what to do.
    await other.goto(`${BASE_URL}?relay=0123456789abcdef0123456789abcdef`);
    await other.waitForSelector('#hooks-relay[data-state="unavailable"]', { state: 'attached' });
    assert.match(await other.textContent('#hooks-relay'), /after a restart, its new link/);
    assert.equal(new URL(other.url()).searchParams.get('relay'), null, 'the key is taken off the address');
    await other.close();

    // This tab again, without the link: it kept the key, so the sender's next retry is applied, once.
    await page.goto(BASE_URL);
    await page.evaluate(() => window.inboxLab.ready);
    await relayOn(page);
    const retry = await sendNpm(secret, late, body(40));
    assert.deepEqual([retry.status, retry.body.outcome], [200, 'applied'], JSON.stringify(retry.body));
    assert.equal(await balance(page), 340);
  });

  // The lab itself probed from outside (`inbox-lab probe`, src/cli/probe/):
  // the relay → the worker's verification → the atomic handler. The page's
  // database is in the browser, out of the probe's reach, so it judges the
  // answers and this test checks the balance: it moved by exactly what the
  // genuine events add up to.
  test('inbox-lab probe: the lab is idempotent, and its balance moved by the genuine events only', async () => {
    await relayOn(page);
    const before = await balance(page);
    const { status, doc } = await probe([HOOK_URL, '--secret', await secretOf(page)]);
    assert.equal(status, 0, `${doc.summary}\n${JSON.stringify(doc.scenarios.map((s) => [s.name, s.verdict, s.why]))}`);
    assert.ok(doc.scenarios.every((s) => s.verdict === 'answers_only'), 'judged by its answers');
    const expected = doc.scenarios.reduce((sum, s) => sum + s.expected_change, 0);
    await idle(page);
    assert.equal((await balance(page)) - before, expected);
  });

  test('inbox-lab probe: with “check signatures” off, the lab is broken by the forgery sent first', async () => {
    await relayOn(page);
    await reveal(page, '#hooks-verify');
    await page.uncheck('#hooks-verify');
    const { status, doc } = await probe([HOOK_URL, '--secret', await secretOf(page)]);
    assert.equal(status, 1, doc.summary);
    assert.equal(doc.first_failure, 'forged_first');
    assert.match(doc.summary, /forged, sent first was answered 200 .*must be refused was accepted/);
    await reveal(page, '#hooks-verify');
    await page.check('#hooks-verify');
  });

  test('no page subscribed: 503 with Retry-After, and the relay never says 200 on its own', async () => {
    await page.goto('about:blank');
    let answer = null;
    // The server notices the closed subscription at its next write.
    for (let i = 0; i < 3 && answer?.status !== 503; i += 1) {
      answer = await post({ 'webhook-id': 'x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,AAAA' }, body(1));
    }
    assert.equal(answer.status, 503);
    assert.match(answer.retryAfter ?? '', /^\d+$/);
    assert.equal(answer.body.kind, 'unavailable');
    assert.equal(answer.body.retryable, true);
  });
});
