// The built site (dist/, `cargo xtask dist`) works offline and updates itself;
// this module is the page's side of that.
//
// * It registers the service worker that dist/index.html names in
//   `<meta name="inbox-lab-service-worker">` (www/sw.js documents what it
//   caches and when). The source tree's index.html names none, so served from
//   the source the page registers nothing.
// * It tells the reader when this page is another build than the one this
//   browser showed last time (`<meta name="inbox-lab-version">`, remembered
//   in localStorage): "inbox-lab was updated since your last visit", and that
//   the database is untouched — it lives in OPFS, which no update touches.
//
// The note goes under the title, next to the tab note, in both languages.

import { inboxLab } from '../../db/client.js';
import { el } from '../../lib/dom.js';
import { register } from '../../lib/i18n.js';

register({
  'update.note': { en: 'inbox-lab was updated since your last visit: this is the new version. Your database in this browser is untouched.',
    ru: 'С вашего прошлого визита inbox-lab обновился: перед вами новая версия. База данных в этом браузере не тронута.' },
});

/** Where the last seen build's version is kept. */
const SEEN_KEY = 'inbox-lab-version';

export function mount() {
  const version = metaContent('inbox-lab-version');
  const worker = metaContent('inbox-lab-service-worker');
  if (worker !== null && 'serviceWorker' in navigator) {
    // Once the database is open (or failed to): on a first visit the service
    // worker fetches the whole build, which must not compete with the page's
    // own start. Relative to the page: the site may live under any sub-path.
    // A refusal (a private window, an insecure origin) only means no offline copy.
    const registerWorker = () =>
      navigator.serviceWorker.register(new URL(worker, document.baseURI), { scope: './' }).catch(() => {});
    inboxLab.ready.then(registerWorker, registerWorker);
  }
  if (version === null) {
    return;
  }
  let seen = null;
  try {
    seen = localStorage.getItem(SEEN_KEY);
    localStorage.setItem(SEEN_KEY, version);
  } catch {
    return; // storage refused: nothing to compare with
  }
  if (seen === null || seen === version) {
    return;
  }
  const note = el('p', { className: 'tab-note', i18n: 'update.note', data: { from: seen, to: version }, attrs: { id: 'update-note', role: 'status' } });
  document.querySelector('#tab-note')?.after(note);
}

function metaContent(name) {
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? null;
}
