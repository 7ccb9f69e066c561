// One screen per section, chosen by the URL's hash: the section list in the
// header (index.html, <nav class="sections">) is the list of routes, and each
// `.screen` in <main> is one of them.
//
//   #/deliver       the screen "deliver"
//   #/race-lab      the screen holding the panel #race-lab, scrolled to it
//   #/levels/3      the screen "levels", with "3" passed on to who listens (onRoute)
//   #s=…            a share link (www/lib/share.js): the screen its state is replayed on
//                   (shareRoute: deliver, race, levels/<id>, or the handler screen)
//   anything else   the start screen (an old or mistyped link still lands somewhere)
//
// Every screen stays mounted: a hidden screen's panels keep their workers,
// timers and state (the crash lab's sweep or a burst goes on while you read
// another screen); only what is shown changes. Back and forward work because
// each section is a hash the browser keeps in its history.
//
// The skip link moves the focus to the shown screen's heading, so a keyboard
// user starts there instead of in the header.

import { disclose } from '../../lib/dom.js';
import { register } from '../../lib/i18n.js';
import { isShare, shareRoute } from '../../lib/share.js';

register({
  'nav.label': { en: 'Sections', ru: 'Разделы' },
  'nav.skip': { en: 'Skip to the content', ru: 'Перейти к содержимому' },
  'nav.start': { en: 'Start here', ru: 'С чего начать' },
  'nav.levels': { en: 'Levels', ru: 'Уровни' },
  'nav.deliver': { en: 'Deliver', ru: 'Доставка' },
  'nav.race': { en: 'Race', ru: 'Гонки' },
  'nav.handler': { en: 'Your handler', ru: 'Свой обработчик' },
  'nav.crash': { en: 'Crash', ru: 'Сбои' },
  'nav.scheme_ends': { en: 'Where the scheme ends', ru: 'Где схема заканчивается' },
  'nav.webhooks': { en: 'Webhooks', ru: 'Вебхуки' },
  'nav.workshop': { en: 'Workshop', ru: 'Практикум' },
  'nav.tools': { en: 'Tools', ru: 'Инструменты' },
});

const START = 'start';

let links = [];
let screens = [];
const routeListeners = new Set();

/**
 * Calls `listener({screen, rest})` whenever a screen is shown: `screen` its
 * name, `rest` what the hash holds after it ("3" in "#/levels/3", else null).
 */
function onRoute(listener) {
  routeListeners.add(listener);
  return () => routeListeners.delete(listener);
}

/**
 * Wires the section list and the skip link. Returns the actions: `onRoute`,
 * `open`, `current`, `unfold(panelId)` (opens what a panel shows on demand),
 * and `start()`, which shows the screen the URL names —
 * app.js calls it once every panel is mounted, so each has its listener in.
 */
export function mount() {
  links = [...document.querySelectorAll('nav.sections a[data-route]')];
  screens = [...document.querySelectorAll('main .screen[data-screen]')];
  window.addEventListener('hashchange', () => {
    if (isShare(location.hash)) {
      // A share link pasted into this tab: it is replayed on a scratch
      // database, which is chosen when the page loads (db/client.js).
      location.reload();
      return;
    }
    show(location.hash);
  });
  document.querySelector('.skip-link').addEventListener('click', (event) => {
    event.preventDefault(); // "#content" is not a route: the hash stays as it is
    current().querySelector('.screen-title').focus();
  });
  return { onRoute, open, current, unfold, start: () => show(location.hash) };
}

/**
 * Where `hash` leads: `{screen, panel, rest}` (`panel` null for a whole
 * screen; `rest` the part after a screen's name, "#/levels/3" → "3", else
 * null). A section's name, a panel's id, or else the start screen.
 */
function resolve(hash) {
  const match = /^#\/([a-z0-9-]+)(?:\/([a-z0-9-]+))?$/.exec(hash);
  const shared = isShare(hash) ? shareRoute(hash) : null;
  const name = shared?.screen ?? match?.[1] ?? '';
  const rest = shared?.rest ?? match?.[2] ?? null;
  const screen = screens.find((candidate) => candidate.dataset.screen === name);
  if (screen) {
    return { screen, panel: null, rest };
  }
  const panel = name && rest === null ? document.getElementById(name) : null;
  const holder = panel?.closest('main .screen[data-screen]');
  if (holder && panel.parentElement === holder) {
    return { screen: holder, panel, rest: null };
  }
  return { screen: screens.find((candidate) => candidate.dataset.screen === START), panel: null, rest: null };
}

/**
 * Opens a section from code (a control that leads the reader elsewhere, e.g.
 * a workshop chip that fills the sender's form): the hash changes, so back
 * returns, and the screen is shown at once — before the caller moves focus.
 */
function open(route) {
  const hash = `#/${route}`;
  if (location.hash !== hash) {
    history.pushState(null, '', hash);
  }
  show(hash);
}

/** Opens the part a panel shows on demand (its `details.fold`), if it has one: a panel linked to is shown open. */
function unfold(id) {
  disclose(document.getElementById(id)?.querySelector(':scope > details.fold'));
}

/** The screen shown now. */
function current() {
  return screens.find((screen) => !screen.hidden);
}

function show(hash) {
  const { screen, panel, rest } = resolve(hash);
  const changed = screen.hidden;
  for (const candidate of screens) {
    candidate.hidden = candidate !== screen;
  }
  for (const link of links) {
    if (link.dataset.route === screen.dataset.screen) {
      link.setAttribute('aria-current', 'page');
      // On a phone the list scrolls sideways: keep the current section in it.
      const list = link.closest('ul');
      list.scrollLeft = link.offsetLeft - (list.clientWidth - link.offsetWidth) / 2;
    } else {
      link.removeAttribute('aria-current');
    }
  }
  if (panel) {
    unfold(panel.id);
    panel.scrollIntoView({ block: 'start' });
  } else if (changed) {
    window.scrollTo(0, 0);
  }
  for (const listener of routeListeners) {
    listener({ screen: screen.dataset.screen, rest });
  }
}
