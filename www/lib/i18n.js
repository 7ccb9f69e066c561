// English and Russian: every label, message and explanation on the page.
//
// Each page module keeps its own strings next to its code and registers them,
// a key's English and Russian side by side (a long pair on two lines):
//
//   import { register, t } from '../../lib/i18n.js';
//   register({
//     'sender.title': { en: 'Sender', ru: 'Отправитель' },
//     'sender.sent': { en: 'Sent {count} events',
//       ru: 'Отправлено событий: {count}' },
//   });
//   el.textContent = t('sender.sent', { count: 3 });
//
// Static text in index.html carries `data-i18n="key"` (its textContent) or
// `data-i18n-attr="attr:key,attr:key"` (attributes such as aria-label,
// placeholder, title) and is translated by `translatePage()`.
//
// Rules:
// * Every key exists in both languages: `register` refuses a dictionary that
//   misses one, and tests/e2e/unit-i18n.test.mjs checks the page's modules.
// * Values are plain text. They go through textContent, never innerHTML;
//   `{name}` placeholders are replaced with String(value), nothing else.
// * The language defaults to the browser's (`navigator.languages`), can be
//   switched (`setLanguage`), and the choice is remembered in localStorage.

export const LANGUAGES = Object.freeze(['en', 'ru']);
const STORAGE_KEY = 'inbox-lab.language';

const dictionaries = { en: new Map(), ru: new Map() };
const listeners = new Set();
let language = initialLanguage();

/** Adds a module's strings, `{key: {en, ru}}`. Throws, adding none, if a key misses a language. */
export function register(strings) {
  for (const [key, texts] of Object.entries(strings)) {
    const missing = LANGUAGES.find((lang) => typeof texts[lang] !== 'string');
    if (missing) {
      throw new Error(`i18n: "${key}" has no ${missing} text`);
    }
  }
  for (const [key, texts] of Object.entries(strings)) {
    LANGUAGES.forEach((lang) => dictionaries[lang].set(key, texts[lang]));
  }
}

/** The text of `key` in the current language, with `{name}` placeholders filled. */
export function t(key, params = {}) {
  const template = dictionaries[language].get(key) ?? dictionaries.en.get(key);
  if (template === undefined) {
    return key; // visible, so a missing key is noticed, never a crash
  }
  return template.replace(/\{(\w+)\}/g, (whole, name) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

/** Whether `key` is registered (in both languages, by construction). */
export function has(key) {
  return dictionaries.en.has(key);
}

export function currentLanguage() {
  return language;
}

/** Switches the language, re-translates the page and tells every listener. */
export function setLanguage(lang) {
  if (!LANGUAGES.includes(lang) || lang === language) {
    return;
  }
  language = lang;
  try {
    localStorage.setItem(STORAGE_KEY, lang);
  } catch {
    // Storage refused (private window): the choice lasts for this page only.
  }
  translatePage();
  for (const listener of listeners) {
    listener(language);
  }
}

/** Calls `listener(lang)` after every language switch; returns an unsubscribe function. */
export function onLanguageChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Translates every `data-i18n` / `data-i18n-attr` element under `root`. */
export function translatePage(root = document) {
  document.documentElement.lang = language;
  for (const el of root.querySelectorAll('[data-i18n]')) {
    el.textContent = t(el.dataset.i18n);
  }
  for (const el of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of el.dataset.i18nAttr.split(',')) {
      const [attr, key] = pair.split(':').map((part) => part.trim());
      if (attr && key) {
        el.setAttribute(attr, t(key));
      }
    }
  }
}

/** Every registered key, per language (for the completeness test). */
export function keys() {
  return Object.fromEntries(LANGUAGES.map((lang) => [lang, [...dictionaries[lang].keys()].sort()]));
}

function initialLanguage() {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (LANGUAGES.includes(saved)) {
      return saved;
    }
  } catch {
    // No storage: fall through to the browser's language.
  }
  const preferred = navigator.languages ?? [navigator.language ?? 'en'];
  for (const tag of preferred) {
    const lang = String(tag).slice(0, 2).toLowerCase();
    if (LANGUAGES.includes(lang)) {
      return lang;
    }
  }
  return 'en';
}
