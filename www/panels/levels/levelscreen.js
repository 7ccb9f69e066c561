// The levels screen (#/levels, #/levels/<id>) and the line that follows the
// reader to the screen where a level is played.
//
// Opening a level makes it the one being played: from then on every
// observation (lib/observed.js) is added to what it has seen, and its
// `won(seen)` (levels.js) is asked again. The levels are judged only from
// what the worker answered; a click proves nothing.
//
// A won level offers "Share this win": a link holding the actions that won
// it (lib/share.js `levelActions`, lib/share-control.js), which replays them in a fresh profile, where this
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
import { el, replaceKeepingFocus, whileBusy } from '../../lib/dom.js';
import { outcomeWord } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { onObserved } from '../../lib/observed.js';
import { levelActions } from '../../lib/share.js';
import { shareControl } from '../../lib/share-control.js';
import { LEVELS, freshEvent } from './levels.js';

register({
  'levels.title': { en: 'Levels', ru: 'Уровни' },
  'levels.intro': { en: 'A path through the lab, one goal at a time. Each level is judged from what really ran — the answers, the verdicts and the balances the database returned — never from what you clicked. The free lab stays open: every section in the list above.',
    ru: 'Путь через лабораторию, по одной цели за раз. Каждый уровень засчитывается по тому, что действительно выполнилось — по ответам, вердиктам и балансам, которые вернула база, — а не по тому, что вы нажали. Свободная лаборатория всегда рядом: любой раздел в списке выше.' },
  'levels.list': { en: 'All levels', ru: 'Все уровни' },
  'levels.level': { en: 'Level {n}: {title}', ru: 'Уровень {n}: {title}' },
  'levels.won': { en: 'won', ru: 'пройден' },
  'levels.not_won': { en: 'not won yet', ru: 'ещё не пройден' },
  'levels.goal': { en: 'Goal:', ru: 'Цель:' },
  'levels.where': { en: 'Play it on: {section}', ru: 'Где играть: {section}' },
  'levels.hint': { en: 'Hint', ru: 'Подсказка' },
  'levels.show_me': { en: 'Show me', ru: 'Покажите' },
  'levels.showing': { en: 'Showing…', ru: 'Показываю…' },
  'levels.show_failed': { en: 'Show me stopped: {message}', ru: 'Показ прервался: {message}' },
  'levels.status.won': { en: 'Won: the database’s answers meet the goal. {learned}', ru: 'Пройден: ответы базы соответствуют цели. {learned}' },
  'levels.status.playing': { en: 'Not won yet: what you do on “{section}” is checked as it happens.',
    ru: 'Ещё не пройден: то, что вы делаете в разделе «{section}», проверяется по ходу дела.' },
  'levels.status.why': { en: 'Not won yet: {why}', ru: 'Ещё не пройден: {why}' },
  'levels.show.step': { en: 'Show me: step {n} of {total}…', ru: 'Показ: шаг {n} из {total}…' },
  'levels.show.done': { en: 'Show me: step {n} of {total} done — look at what it answered.',
    ru: 'Показ: шаг {n} из {total} выполнен — посмотрите, что ответила база.' },
  'levels.show.next': { en: 'Next step', ru: 'Следующий шаг' },
  'levels.next': { en: 'Next level', ru: 'Следующий уровень' },
  'levels.reset': { en: 'Forget my progress', ru: 'Забыть мой прогресс' },
  'levels.bar': { en: 'Level {n}: {title}.', ru: 'Уровень {n}: {title}.' },
  'levels.bar.won': { en: 'Won! {learned}', ru: 'Пройден! {learned}' },
  'levels.bar.open': { en: 'Back to the level', ru: 'Вернуться к уровню' },
});

/** The localStorage key; a new shape of the value gets a new version. */
export const STORAGE_KEY = 'inbox-lab.levels.v1';

const SECTION_TEXT = { deliver: 'nav.deliver', race: 'nav.race', crash: 'nav.crash', workshop: 'nav.workshop', 'scheme-ends': 'nav.scheme_ends' };
/** Where a step of "show me" on each screen shows what it did: the panel (its mount point) scrolled to. */
const EVIDENCE = { deliver: 'heard', race: 'race-lab', crash: 'crash-lab', 'scheme-ends': 'scheme-ends' };

/** Reads the progress; anything but a well-formed value is a fresh start. */
function readProgress(storage) {
  const fresh = { won: [], playing: null };
  let value;
  try {
    value = JSON.parse(storage?.getItem(STORAGE_KEY) ?? 'null'); // storage refused, or not JSON: fresh
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
/** Why the last observation did not win the level being played: [key, params] or null. */
let why = null;
/** What won each level won in this visit, by id: its share link's actions come from it. */
const wins = new Map();
/** "Show me" while it plays: {level, n, total, waiting, next (resolves the wait), stopped}, or null. */
let show = null;
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
    const made = levelActions(wins.get(level?.id) ?? []);
    return made.error ? made : { kind: 'level', level: level.id, actions: made.actions };
  });
  ui.reset.addEventListener('click', () => {
    progress = { won: [], playing: shownId };
    seen = [];
    why = null;
    wins.clear();
    changed();
  });

  onObserved((observation) => {
    const level = LEVELS.find((candidate) => candidate.id === progress.playing);
    if (level === undefined || isWon(level.id)) {
      return;
    }
    seen.push(observation);
    if (level.won(seen)) {
      wins.set(level.id, [...seen]);
      why = null;
      progress = { ...progress, won: LEVELS.map((l) => l.id).filter((id) => id === level.id || progress.won.includes(id)) };
      changed();
    } else {
      why = level.why(seen);
      draw();
    }
  });

  panels.nav.onRoute(({ screen, rest }) => {
    onScreen = screen === 'levels';
    if (onScreen) {
      const level = LEVELS.find((candidate) => String(candidate.id) === rest) ?? null;
      shownId = level?.id ?? null;
      if (level !== null && progress.playing !== level.id) {
        begin(level);
      }
    }
    draw();
  });
  onLanguageChange(draw);
  unlock();
  draw();
  return { has: (id) => LEVELS.some((level) => level.id === id) };
}

/**
 * Makes `level` the one played, from its known state: nothing seen yet, and
 * the sender's form set to a fresh event, the level's handler, no crash
 * point, no lost response — nothing left over from the level before.
 */
function begin(level) {
  stopShow();
  progress = { ...progress, playing: level.id };
  seen = [];
  why = null;
  showError = null;
  writeProgress(storage(), progress);
  panels.sender.setForm({ event: freshEvent(level.id), handler: level.handler ?? 'atomic', fault: null, lose: false, attempts: 5, delay: 1000 });
  if (level.evidence !== undefined) {
    panels.nav.unfold(level.evidence); // the part the level is played on, open
  }
}

/** A level's why, `[key, params]`, in the language shown now: an answer in words, not as the code names it. */
function whyText([key, params = {}]) {
  return t(key, params.outcome === undefined ? params : { ...params, outcome: outcomeWord(params.outcome) });
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

/** What the level's state line says: won (and what it showed), why not, or that it is watched. */
function statusText(level) {
  if (isWon(level.id)) {
    return t('levels.status.won', { learned: t(`level.${level.id}.learned`) });
  }
  return level.id === progress.playing && why !== null
    ? t('levels.status.why', { why: whyText(why) })
    : t('levels.status.playing', { section: t(SECTION_TEXT[level.section]) });
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
  const showMe = el('button', { className: 'secondary', text: t(show ? 'levels.showing' : 'levels.show_me'), attrs: { type: 'button', id: 'level-show-me' } });
  showMe.disabled = show !== null;
  showMe.addEventListener('click', () => runShowMe(level));
  const nextLevel = LEVELS.find((candidate) => candidate.id > level.id);
  const children = [
    el('h3', { text: levelTitle(level), attrs: { id: 'level-title', tabindex: '-1' } }),
    el('p', { className: 'level-goal' }, el('strong', { text: `${t('levels.goal')} ` }), t(`level.${level.id}.goal`)),
    el('p', { className: 'level-status', attrs: { id: 'level-status', role: 'status' }, data: { won: String(won) } }, statusText(level)),
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
    if (nextLevel) {
      children.push(el('p', {}, el('a', { text: `${t('levels.next')}: ${levelTitle(nextLevel)}`, attrs: { href: `#/levels/${nextLevel.id}`, id: 'level-next' } })));
    }
  }
  // After the last level, once all are won: what the path showed, level by level.
  if (!nextLevel && LEVELS.every((l) => isWon(l.id))) {
    children.push(
      el(
        'section',
        { attrs: { id: 'levels-summary', 'aria-labelledby': 'levels-summary-title' } },
        el('h4', { text: t('levels.summary'), attrs: { id: 'levels-summary-title' } }),
        el('ol', {}, ...LEVELS.map((l) => el('li', {}, el('strong', { text: `${t(`level.${l.id}.title`)}: ` }), t(`level.${l.id}.learned`)))),
      ),
    );
  }
  replaceKeepingFocus(ui.detail, children);
}

// While a level is being played, a line under the section list, in view
// however far the screen scrolls, says which level, whether it is won (and
// what that showed) or why not yet, and where "show me" is — on every screen
// but the levels' own.
function drawBar() {
  const level = LEVELS.find((candidate) => candidate.id === progress.playing);
  ui.bar.hidden = level === undefined || onScreen;
  if (level === undefined) {
    ui.bar.replaceChildren();
    return;
  }
  const won = isWon(level.id);
  ui.bar.dataset.won = String(won);
  const parts = [el('strong', { text: t('levels.bar', { n: level.id, title: t(`level.${level.id}.title`) }) }), ' '];
  if (won) {
    parts.push(el('span', { className: 'level-won', attrs: { id: 'level-bar-state' }, text: t('levels.bar.won', { learned: t(`level.${level.id}.learned`) }) }), ' ');
  } else if (why !== null) {
    parts.push(el('span', { attrs: { id: 'level-bar-state' }, text: t('levels.status.why', { why: whyText(why) }) }), ' ');
  }
  if (show !== null) {
    parts.push(el('span', { attrs: { id: 'level-show-state' }, text: t(show.waiting ? 'levels.show.done' : 'levels.show.step', show) }), ' ');
    if (show.waiting) {
      const next = el('button', { className: 'small', text: t('levels.show.next'), attrs: { type: 'button', id: 'level-show-next' } });
      next.addEventListener('click', () => show?.next());
      parts.push(next, ' ');
    }
  }
  replaceKeepingFocus(ui.bar, [...parts, el('a', { text: t('levels.bar.open'), attrs: { href: `#/levels/${level.id}` } })], { preventScroll: true });
  // What the browser scrolls into view stops below the bar too (levels.css).
  document.documentElement.style.setProperty('--level-bar-height', `${ui.bar.offsetHeight}px`);
}

/** Ends "show me" where it is (another level was opened). */
function stopShow() {
  if (show !== null) {
    show.stopped = true;
    show.next?.();
  }
}

/**
 * "Show me" at a reader's pace, with an event of its own: one step at a
 * time — each step's evidence scrolled into view, then a pause until "Next
 * step" in the bar. What it wins is judged like anything the reader does.
 */
function runShowMe(level) {
  if (show !== null) {
    return;
  }
  const steps = level.showMe(freshEvent(level.id));
  const current = { n: 0, total: steps.length, waiting: false, stopped: false, next: null };
  show = current;
  showError = null;
  panels.nav.open(level.section);
  whileBusy(async () => {
    try {
      for (const [i, step] of steps.entries()) {
        Object.assign(current, { n: i + 1, waiting: false });
        draw();
        await step(panels);
        const last = current.stopped || i === steps.length - 1;
        current.waiting = !last;
        draw();
        panels.nav.open(level.evidence ?? EVIDENCE[level.section]);
        if (last) {
          break;
        }
        document.getElementById('level-show-next')?.focus({ preventScroll: true });
        await new Promise((resolve) => (current.next = resolve));
        if (current.stopped) {
          break;
        }
      }
    } catch (error) {
      showError = error?.message ?? String(error);
    } finally {
      if (show === current) {
        show = null;
      }
      draw();
    }
  });
}
