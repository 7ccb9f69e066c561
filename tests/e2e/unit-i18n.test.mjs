// English and Russian: every text the page can show exists in both.
//
// The page registers each module's dictionary as it loads (www/lib/i18n.js), so
// the test loads the page and reads `keys()`. Then:
// * both languages have exactly the same keys;
// * every error Rust can report (`errorCodes()` from the full wasm module, i.e.
//   src/core/error.rs `codes()`) and every error made in JavaScript
//   (`LOCAL_CODES`, www/lib/problem.js) has a text `error.<kind>.<code>`, and
//   every value type a wrong_type error can name has `error.type.<type>`;
// * every `data-i18n` / `data-i18n-attr` key in the served HTML is
//   registered;
// * the two texts of a key use the same {placeholders} (an error text may
//   use fewer, or the JSON position `line`/`column` only in Russian).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { BASE_URL, launch, openPage } from './browser.mjs';

describe('every message exists in English and Russian', { timeout: 120_000 }, () => {
  let browser;
  let found;

  before(async () => {
    browser = await launch();
    await openPage(browser.page, '?storage=memory');
    found = await browser.page.evaluate(async () => {
      // The page's own texts (the built page bundles its modules: a module
      // imported here would be another instance, holding none of them).
      const at = (path) => new URL(path, window.location.href).href;
      const i18n = window.inboxLab.texts;
      const { LOCAL_CODES } = await import(at('www/lib/problem.js'));
      const wasm = await import(at('www/pkg-full/inbox_lab.js'));
      await wasm.default();
      const rust = wasm.errorCodes();
      const dictionaries = {};
      for (const lang of i18n.languages) {
        dictionaries[lang] = {};
      }
      const keys = i18n.keys();
      const current = document.documentElement.lang;
      for (const lang of i18n.languages) {
        window.inboxLab.setLanguage(lang);
        for (const key of keys[lang]) {
          dictionaries[lang][key] = i18n.t(key);
        }
      }
      window.inboxLab.setLanguage(current);
      return { languages: [...i18n.languages], keys, dictionaries, rust, local: LOCAL_CODES };
    });
  });
  after(() => browser.close());

  test('English and Russian have the same keys', () => {
    assert.deepEqual(found.languages, ['en', 'ru']);
    assert.ok(found.keys.en.length > 50, `${found.keys.en.length} keys`);
    assert.deepEqual(found.keys.ru, found.keys.en);
  });

  test('every error code Rust can report has both texts', () => {
    assert.ok(found.rust.codes.length >= 20, `${found.rust.codes.length} Rust codes`);
    const missing = found.rust.codes.map(([kind, code]) => `error.${kind}.${code}`).filter((key) => !found.keys.en.includes(key));
    assert.deepEqual(missing, []);
    const types = found.rust.types.map((type) => `error.type.${type}`).filter((key) => !found.keys.en.includes(key));
    assert.deepEqual(types, []);
  });

  test('every error code made in JavaScript has both texts', () => {
    const missing = found.local.map(([kind, code]) => `error.${kind}.${code}`).filter((key) => !found.keys.en.includes(key));
    assert.deepEqual(missing, []);
  });

  test('every data-i18n key of the served page is registered', async () => {
    const html = await (await fetch(BASE_URL)).text();
    const used = new Set();
    for (const [, key] of html.matchAll(/data-i18n="([^"]+)"/g)) {
      used.add(key);
    }
    for (const [, pairs] of html.matchAll(/data-i18n-attr="([^"]+)"/g)) {
      for (const pair of pairs.split(',')) {
        used.add(pair.split(':')[1].trim());
      }
    }
    assert.ok(used.size > 0);
    assert.deepEqual([...used].filter((key) => !found.keys.en.includes(key)), []);
  });

  test('both texts of a key use the same placeholders, and none is empty', () => {
    const placeholders = (text) => new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
    const mismatched = [];
    for (const key of found.keys.en) {
      const en = found.dictionaries.en[key];
      const ru = found.dictionaries.ru[key];
      if (en.trim() === '' || ru.trim() === '') {
        mismatched.push(`${key}: empty`);
        continue;
      }
      const inEn = placeholders(en);
      const inRu = placeholders(ru);
      if (key.startsWith('error.')) {
        const extra = [...inRu].filter((name) => !inEn.has(name) && !['line', 'column'].includes(name));
        if (extra.length > 0) {
          mismatched.push(`${key}: Russian uses ${extra}`);
        }
      } else if ([...inEn].sort().join() !== [...inRu].sort().join()) {
        mismatched.push(`${key}: en {${[...inEn]}} ru {${[...inRu]}}`);
      }
    }
    assert.deepEqual(mismatched, []);
  });
});
