// Page hardening: the Content-Security-Policy allows only what the page
// needs, and nothing the page serves or does needs more.
//
// * Every response carries the policy; scripts only from this origin plus
//   'wasm-unsafe-eval' (compiling the WebAssembly module), styles only from
//   files, no plugins, no <base>, no form posts, no framing.
// * The served HTML has no inline <script>, no <style>, no style="" and no
//   on*="" handlers, no javascript: URLs — checked with the browser's own
//   HTML parser, not a regex.
// * Using the page (every <details> opened, both languages, deliveries,
//   errors, the paste box, a reset) fires no `securitypolicyviolation`.
// * No module under www/ (in any folder) writes HTML from strings (innerHTML and friends,
//   eval, new Function): user data goes through textContent.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';

import { BASE_URL, assertNoProblems, idle, openPage, reveal, usePage, watchViolations } from './browser.mjs';

const WWW = new URL('../../www/', import.meta.url);

describe('page hardening', { timeout: 180_000 }, () => {
  let browser;
  let page;
  // No check after each test: the one that provokes a violation clears what
  // Chromium logs for it, then checks.
  usePage({ prepare: watchViolations, open: null, checkEach: false }, (opened, launched) => {
    page = opened;
    browser = launched;
  });

  test('every response carries a strict policy that allows only what the page needs', async () => {
    // The built site's files: the page, its service worker, and every asset
    // the page names (the entry bundle, the stylesheet, the preloaded wasm).
    const html = await (await fetch(BASE_URL)).text();
    const assets = [...html.matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1]);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.wasm')), assets.join(', '));
    for (const path of ['', 'index.html', 'sw.js', ...assets, 'nope']) {
      const response = await fetch(new URL(path, BASE_URL));
      const policy = parsePolicy(response.headers.get('content-security-policy'));
      assert.deepEqual(
        policy,
        {
          'default-src': ["'self'"],
          'script-src': ["'self'", "'wasm-unsafe-eval'"],
          'worker-src': ["'self'"],
          'style-src': ["'self'"],
          'img-src': ["'self'", 'data:', 'blob:'],
          'connect-src': ["'self'"],
          'object-src': ["'none'"],
          'base-uri': ["'none'"],
          'form-action': ["'none'"],
          'frame-ancestors': ["'none'"],
        },
        `/${path}`,
      );
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', `/${path}`);
      await response.arrayBuffer();
    }
  });

  test('the page carries the same policy in its <meta> tag, for static hosts that send no header', async () => {
    const html = await (await fetch(BASE_URL)).text();
    const header = parsePolicy((await fetch(BASE_URL)).headers.get('content-security-policy'));
    const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
    assert.ok(meta, 'a <meta http-equiv="Content-Security-Policy"> in the page');
    // frame-ancestors cannot be said in a <meta> policy (browsers ignore it there).
    const { 'frame-ancestors': _, ...rest } = header;
    assert.deepEqual(parsePolicy(meta[1]), rest);
  });

  test('the served HTML has no inline script, style or event handler (parsed by the browser)', async () => {
    await openPage(page, '?storage=memory');
    const html = await (await fetch(BASE_URL)).text();
    const found = await page.evaluate((source) => {
      const doc = new DOMParser().parseFromString(source, 'text/html');
      const problems = [];
      for (const el of doc.querySelectorAll('*')) {
        for (const { name, value } of el.attributes) {
          if (/^on/i.test(name)) {
            problems.push(`<${el.localName} ${name}>`);
          }
          if (name === 'style') {
            problems.push(`<${el.localName} style>`);
          }
          if (/^\s*javascript:/i.test(value)) {
            problems.push(`<${el.localName} ${name}="javascript:...">`);
          }
        }
      }
      for (const script of doc.querySelectorAll('script')) {
        if (!script.hasAttribute('src') || script.textContent.trim() !== '') {
          problems.push('an inline <script>');
        }
        if (script.type !== 'module') {
          problems.push(`a classic <script src="${script.getAttribute('src')}">`);
        }
      }
      if (doc.querySelector('style')) {
        problems.push('a <style> element');
      }
      return { problems, scripts: doc.querySelectorAll('script').length };
    }, html);
    assert.deepEqual(found.problems, []);
    assert.ok(found.scripts >= 1);
  });

  test('using the page fires no CSP violation and leaves no handler attribute in the DOM', async () => {
    await openPage(page, '?storage=memory');
    await page.evaluate(() => {
      for (const details of document.querySelectorAll('details')) {
        details.open = true;
      }
    });
    for (const lang of ['ru', 'en']) {
      const button = page.locator(`button[data-lang="${lang}"]`);
      if ((await button.count()) > 0) {
        await button.click();
      }
    }
    await reveal(page, '#deliver-form button[type="submit"]');
    await page.click('#deliver-form button[type="submit"]');
    await idle(page);
    await reveal(page, '#source');
    await page.fill('#source', '<img src=x onerror="window.__pwned=1">');
    await reveal(page, '#deliver-form button[type="submit"]');
    await page.click('#deliver-form button[type="submit"]');
    await idle(page);
    await reveal(page, '#amount');
    await page.fill('#amount', '1.5');
    await reveal(page, '#deliver-form button[type="submit"]');
    await page.click('#deliver-form button[type="submit"]');
    await idle(page);
    await reveal(page, '#paste-json');
    await page.fill('#paste-json', '{"source":"<svg onload=window.__pwned=2>","event_id":"x","account_id":1,"amount":5}');
    await reveal(page, '#paste-form button[type="submit"]');
    await page.click('#paste-form button[type="submit"]');
    await page.waitForSelector('#paste-form[aria-busy="false"]');
    await reveal(page, '#paste-json');
    await page.fill('#paste-json', '{"source":"a"');
    await reveal(page, '#paste-form button[type="submit"]');
    await page.click('#paste-form button[type="submit"]');
    await page.waitForSelector('#paste-json-error:not([hidden])');
    await page.evaluate(() => window.inboxLab.reset());
    await page.reload();
    await idle(page);

    const state = await page.evaluate(() => ({
      violations: window.__violations,
      pwned: window.__pwned ?? null,
      handlers: [...document.querySelectorAll('*')].flatMap((el) =>
        [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `<${el.localName} ${a.name}>`),
      ),
    }));
    assert.deepEqual(state, { violations: [], pwned: null, handlers: [] });

    // The control: had markup from a payload reached the DOM, the policy
    // would still have stopped its handler, and this listener would have
    // seen it.
    const control = await page.evaluate(async () => {
      const holder = document.createElement('div');
      holder.innerHTML = '<img src="data:," onerror="window.__pwned=1" onload="window.__pwned=1">';
      document.body.append(holder);
      await new Promise((resolve) => setTimeout(resolve, 500));
      holder.remove();
      return { violations: window.__violations.length, pwned: window.__pwned ?? null };
    });
    assert.ok(control.violations > 0, 'a blocked inline handler is reported');
    assert.equal(control.pwned, null, 'and did not run');
    browser.problems.splice(0); // Chromium logs the blocked handler as a console error
    assertNoProblems(browser.problems);
  });

  test('no module writes HTML from strings or evaluates code', async () => {
    const offenders = [];
    // Every module of ours, in every folder; not the generated wasm-bindgen glue.
    const names = (await readdir(WWW, { recursive: true }))
      .map((name) => name.split('\\').join('/'))
      .filter((name) => name.endsWith('.js') && !/^pkg(-[\w-]+)?\//.test(name));
    assert.ok(names.includes('app.js') && names.includes('db/worker.js'), `modules found: ${names.join(', ')}`);
    for (const name of names) {
      const source = await readFile(new URL(name, WWW), 'utf8');
      // Comments may name what is not done ("never innerHTML").
      const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1');
      for (const pattern of [
        /\.innerHTML\b/,
        /\.outerHTML\b/,
        /\binsertAdjacentHTML\b/,
        /\bdocument\.write/,
        /\beval\s*\(/,
        /\bnew\s+Function\b/,
        /\bsetAttribute\(\s*['"]on/,
        /\bcreateContextualFragment\b/,
        /\bsetHTMLUnsafe\b/,
      ]) {
        if (pattern.test(code)) {
          offenders.push(`www/${name}: ${pattern}`);
        }
      }
    }
    assert.deepEqual(offenders, []);
  });
});

function parsePolicy(header) {
  assert.ok(header, 'a Content-Security-Policy header');
  return Object.fromEntries(
    header
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name, values]),
  );
}
