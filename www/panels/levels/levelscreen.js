// The levels screen (#/levels, #/levels/<id>) and the line that follows the
// reader to the screen where a level is played.
//
// Opening a level makes it the one being played: from then on every
// observation (lib/observed.js) is added to what it has seen, and its
// `won(seen)` (levels.js) is asked again. The levels are judged only from
// what the worker answered; a click proves nothing.
//
// A won level offers "Share this win": a link holding the actions that won
// it (share/sharing.js), which replays them in a fresh profile, where this
// same `won(seen)` judges the replay.
//
// Progress lives in localStorage under a versioned key: {won: [ids], playing:
// id | null}. A value that is not exactly that shape (another version, a
// hand edit, a hostile page) is dropped and the path starts afresh; storage
// that cannot be read or written (private mode, a full quota) leaves the
// progress in memory for this visit. Nothing here throws on what it reads.
// A page opened by a share link (a scratch database, db/client.js) neither
// reads nor writes it: what such a page shows won, its replay won.

import { SCRATCH } from '../../db/client.js';
import { el, whileBusy } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { onObserved } from '../../lib/observed.js';
import { levelActions } from '../../lib/share.js';
import { shareControl } from '../../lib/share-control.js';
import { LEVELS } from './levels.js';

register({
  en: {
    'levels.title': 'Levels',
    'levels.intro':
      'A path through the lab, one goal at a time. Each level is judged from what really ran — the answers, the verdicts and the balances the database returned — never from what you clicked. The free lab stays open: every section in the list above.',
    'levels.list': 'All levels',
    'levels.level': 'Level {n}: {title}',
    'levels.won': 'won',
    'levels.not_won': 'not won yet',
    'levels.goal': 'Goal:',
    'levels.where': 'Play it on: {section}',
    'levels.hint': 'Hint',
    'levels.show_me': 'Show me',
    'levels.showing': 'Showing…',
    'levels.show_failed': 'Show me stopped: {message}',
    'levels.status.won': 'Won: the database’s answers meet the goal.',
    'levels.status.playing': 'Not won yet: what you do on “{section}” is checked as it happens.',
    'levels.next': 'Next level',
    'levels.all_won': 'Every level is won.',
    'levels.reset': 'Forget my progress',
    'levels.bar': 'Level {n}: {goal}',
    'levels.bar.won': 'Won!',
    'levels.bar.open': 'Back to the level',
  },
  ru: {
    'levels.title': 'Уровни',
    'levels.intro':
      'Путь через лабораторию, по одной цели за раз. Каждый уровень засчитывается по тому, что действительно выполнилось — по ответам, вердиктам и балансам, которые вернула база, — а не по тому, что вы нажали. Свободная лаборатория всегда рядом: любой раздел в списке выше.',
    'levels.list': 'Все уровни',
    'levels.level': 'Уровень {n}: {title}',
    'levels.won': 'пройден',
    'levels.not_won': 'ещё не пройден',
    'levels.goal': 'Цель:',
    'levels.where': 'Где играть: {section}',
    'levels.hint': 'Подсказка',
    'levels.show_me': 'Покажите',
    'levels.showing': 'Показываю…',
    'levels.show_failed': 'Показ прервался: {message}',
    'levels.status.won': 'Пройден: ответы базы соответствуют цели.',
    'levels.status.playing': 'Ещё не пройден: то, что вы делаете в разделе «{section}», проверяется по ходу дела.',
    'levels.next': 'Следующий уровень',
    'levels.all_won': 'Все уровни пройдены.',
    'levels.reset': 'Забыть мой прогресс',
    'levels.bar': 'Уровень {n}: {goal}',
    'levels.bar.won': 'Пройден!',
    'levels.bar.open': 'Вернуться к уровню',
  },
});

/** The localStorage key; a new shape of the value gets a new version. */
export const STORAGE_KEY = 'inbox-lab.levels.v1';

const SECTION_TEXT = { deliver: 'nav.deliver', race: 'nav.race', crash: 'nav.crash', workshop: 'nav.workshop', 'scheme-ends': 'nav.scheme_ends' };

/** Reads the progress; anything but a well-formed value is a fresh start. */
export function readProgress(storage) {
  const fresh = { won: [], playing: null };
  let text = null;
  try {
    text = storage?.getItem(STORAGE_KEY) ?? null;
  } catch {
    return fresh;
  }
  if (typeof text !== 'string') {
    return fresh;
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return fresh;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Array.isArray(value.won)) {
    return fresh;
  }
  const known = (id) => LEVELS.some((level) => level.id === id);
  return {
    won: LEVELS.map((level) => level.id).filter((id) => value.won.includes(id)),
    playing: known(value.playing) ? value.playing : null,
  };
}

function writeProgress(storage, progress) {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(progress));
  } catch {
    // Not kept beyond this visit; the page goes on.
  }
}

function storage() {
  if (SCRATCH) {
    return null;
  }
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

let progress = { won: [], playing: null };
/** What the level being played has seen since it was opened (this visit). */
let seen = [];
/** The level shown on the screen (#/levels/<id>), or null for the list alone. */
let shownId = null;
let onScreen = false;
let showing = false;
let showError = null;
const ui = {};
// Every panel's actions (app.js): the levels' "show me" drives them.
let panels = null;

/** Whether level `id` is won. */
export function isWon(id) {
  return progress.won.includes(id);
}

/** What the won levels open (the race lab's explorer after level 5). */
function unlock() {
  for (const level of LEVELS) {
    level.unlock?.(isWon(level.id), panels);
  }
}

function changed() {
  writeProgress(storage(), progress);
  unlock();
  draw();
}

/** Returns `has(id)`: whether level `id` exists (a share link names one). */
export function mount(root, services) {
  panels = services.panels;
  progress = readProgress(storage());
  ui.screen = document.querySelector('#screen-levels');
  ui.list = document.querySelector('#levels-list');
  ui.detail = document.querySelector('#level-detail');
  ui.bar = document.querySelector('#level-bar');
  ui.reset = document.querySelector('#levels-reset');
  ui.share = shareControl('share-level', 'share.button.level', () => {
    const level = LEVELS.find((candidate) => candidate.id === shownId);
    const made = levelActions(level !== undefined && progress.playing === level.id ? seen : []);
    return made.error ? made : { kind: 'level', level: level.id, actions: made.actions };
  });
  ui.reset.addEventListener('click', () => {
    progress = { won: [], playing: shownId };
    seen = [];
    changed();
  });

  onObserved((observation) => {
    const level = LEVELS.find((candidate) => candidate.id === progress.playing);
    if (level === undefined || isWon(level.id)) {
      return;
    }
    seen.push(observation);
    if (level.won(seen)) {
      progress = { ...progress, won: LEVELS.map((l) => l.id).filter((id) => id === level.id || progress.won.includes(id)) };
      changed();
    }
  });

  panels.nav.onRoute(({ screen, rest }) => {
    onScreen = screen === 'levels';
    if (onScreen) {
      const level = LEVELS.find((candidate) => String(candidate.id) === rest) ?? null;
      shownId = level?.id ?? null;
      if (level !== null && progress.playing !== level.id) {
        progress = { ...progress, playing: level.id };
        seen = [];
        showError = null;
        writeProgress(storage(), progress);
      }
    }
    draw();
  });
  onLanguageChange(draw);
  unlock();
  draw();
  return { has: (id) => LEVELS.some((level) => level.id === id) };
}

function levelTitle(level) {
  return t('levels.level', { n: level.id, title: t(`level.${level.id}.title`) });
}

function draw() {
  if (!ui.list) {
    return;
  }
  ui.list.replaceChildren(
    ...LEVELS.map((level) =>
      el(
        'li',
        { data: { level: level.id, won: String(isWon(level.id)) } },
        el('a', {
          text: levelTitle(level),
          attrs: { href: `#/levels/${level.id}`, ...(level.id === shownId ? { 'aria-current': 'true' } : {}) },
        }),
        ' ',
        el('span', { className: `level-state ${isWon(level.id) ? 'level-won' : ''}`, text: `(${t(isWon(level.id) ? 'levels.won' : 'levels.not_won')})` }),
      ),
    ),
  );
  drawDetail();
  drawBar();
}

function drawDetail() {
  const level = LEVELS.find((candidate) => candidate.id === shownId);
  ui.detail.hidden = level === undefined;
  if (level === undefined) {
    ui.detail.replaceChildren();
    return;
  }
  const section = t(SECTION_TEXT[level.section]);
  const won = isWon(level.id);
  const showMe = el('button', { className: 'secondary', text: t(showing ? 'levels.showing' : 'levels.show_me'), attrs: { type: 'button', id: 'level-show-me' } });
  showMe.disabled = showing;
  showMe.addEventListener('click', () => runShowMe(level));
  const nextLevel = LEVELS.find((candidate) => candidate.id > level.id);
  const children = [
    el('h3', { text: levelTitle(level), attrs: { id: 'level-title', tabindex: '-1' } }),
    el('p', { className: 'level-goal' }, el('strong', { text: `${t('levels.goal')} ` }), t(`level.${level.id}.goal`)),
    el(
      'p',
      { className: 'level-status', attrs: { id: 'level-status', role: 'status' }, data: { won: String(won) } },
      t(won ? 'levels.status.won' : 'levels.status.playing', { section }),
    ),
    el(
      'div',
      { className: 'actions' },
      el('a', { className: 'button', text: t('levels.where', { section }), attrs: { href: `#/${level.section}`, id: 'level-go' } }),
      showMe,
    ),
    el('details', { className: 'level-hint' }, el('summary', { text: t('levels.hint') }), el('p', { text: t(`level.${level.id}.hint`) })),
  ];
  if (showError !== null) {
    children.push(el('p', { className: 'field-error', attrs: { role: 'alert' }, text: t('levels.show_failed', { message: showError }) }));
  }
  if (won) {
    children.push(ui.share);
    children.push(
      nextLevel
        ? el('p', {}, el('a', { text: `${t('levels.next')}: ${levelTitle(nextLevel)}`, attrs: { href: `#/levels/${nextLevel.id}`, id: 'level-next' } }))
        : el('p', { text: t('levels.all_won') }),
    );
  }
  const focused = ui.detail.contains(document.activeElement) ? document.activeElement.id : '';
  ui.detail.replaceChildren(...children);
  if (focused) {
    document.getElementById(focused)?.focus();
  }
}

// While a level is being played, a line under the section list says which
// and whether it is won, on every screen but the levels' own.
function drawBar() {
  const level = LEVELS.find((candidate) => candidate.id === progress.playing);
  ui.bar.hidden = level === undefined || onScreen;
  if (level === undefined) {
    ui.bar.replaceChildren();
    return;
  }
  const won = isWon(level.id);
  ui.bar.dataset.won = String(won);
  ui.bar.replaceChildren(
    el('span', { text: t('levels.bar', { n: level.id, goal: t(`level.${level.id}.goal`) }) }),
    ' ',
    ...(won ? [el('strong', { className: 'level-won', text: t('levels.bar.won') }), ' '] : []),
    el('a', { text: t('levels.bar.open'), attrs: { href: `#/levels/${level.id}` } }),
  );
}

function runShowMe(level) {
  if (showing) {
    return;
  }
  showing = true;
  showError = null;
  draw();
  whileBusy(async () => {
    try {
      await level.showMe(panels);
    } catch (error) {
      showError = error?.message ?? String(error);
    } finally {
      showing = false;
      draw();
    }
  });
}
