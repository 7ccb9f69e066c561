// Opening a share link ("#s=…", www/lib/share.js): the experiment it holds
// is replayed on a scratch database, through the page's own code, so what is
// drawn — the timeline, the tables, the verdicts, the level's "won" — is
// what the database answered to the replay, never what the link says.
//
// The scratch database: a page opened by a share link keeps its database in
// memory (db/client.js, SCRATCH), takes no part in the tabs' coordination and
// never opens the reader's stored database. A note at the top says so, with
// a link back to the reader's own lab (the same URL without the fragment:
// a new page load, on the stored database).
//
// The order of things, and why:
//   1. decode (share.js): size, shape, counts, handler and fault names — any
//      fault is answered with its error next to the note;
//   2. every delivery the link holds is checked by Rust ("checkDelivery",
//      the rules Deliver applies first), ALL before any runs: a link whose
//      third delivery is invalid writes nothing at all;
//   3. the actions, one after another, each as its control does it:
//      sender.replaySend (Deliver), the burst's button, the race lab's
//      presses (racelab.replayRace), step mode's buttons (stepper.replayStep),
//      the buttons of "where the scheme ends" (side effects, retention) and
//      the crash lab's forms — each waits for the panel's observation.
// A level's link is replayed on its level's screen (nav.js routes it there),
// so the level watches the replay and judges it by its own `won(seen)`.
//
// The crash lab (level 7) is the one thing a replay writes to the browser's
// storage: it never uses the page's database but runs its own worker on its
// own OPFS pool (the directory `.inbox-lab-crash`, crashworker.js), which
// every crash-lab run clears and refills with scratch copies. A link with a
// crash-lab action says so in its note; the reader's inbox database is
// still neither opened nor written.

import { SCRATCH, inboxLab } from '../../db/client.js';
import { el, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { nextObserved } from '../../lib/observed.js';
import { decodeExperiment } from '../../lib/share.js';

register({
  'share.scratch': { en: 'Replayed on a scratch database — your data is untouched.', ru: 'Повторено на черновой базе — ваши данные не тронуты.' },
  'share.back': { en: 'Back to your own lab', ru: 'Вернуться в свою лабораторию' },
  'share.replaying': { en: 'Replaying the link: action {done} of {total}…', ru: 'Повторяем ссылку: действие {done} из {total}…' },
  'share.replayed': { en: 'Replayed {total} action(s) from the link: everything below is what the database answered.',
    ru: 'Повторено действий из ссылки: {total}. Всё, что ниже, — ответы базы.' },
  'share.handler_opened': { en: 'A shared handler: it is judged on the judge’s own database.',
    ru: 'Присланный обработчик: его проверяют на собственной базе судьи.' },
  'share.refused': { en: 'Nothing was replayed and nothing was written: {reason}', ru: 'Ничего не повторено и ничего не записано: {reason}' },
  'share.stopped': { en: 'The replay stopped at action {n}: {message}', ru: 'Повтор остановился на действии {n}: {message}' },
  'share.crash_pool': { en: 'This link runs the crash lab: its own worker writes only the crash lab’s scratch files in this browser’s storage (cleared at every crash-lab run); your inbox database is not opened.',
    ru: 'Эта ссылка запускает лабораторию сбоев: её собственный воркер пишет только черновые файлы лаборатории в хранилище этого браузера (они очищаются при каждом её запуске); вашу базу inbox он не открывает.' },
});

const ui = {};
// What the status line says ({key, params} or null) and the error, if any
// ({key, params, cause} — `cause` an error object rendered in the reader's
// language), kept to redraw them when the language changes.
let said = null;
let failure = null;

// Every panel's actions (app.js): the replay drives them.
let panels = null;

/**
 * Returns `perform(action)`: plays one action of a level's link (lib/share.js)
 * through the lab's own controls — a level's "show me" plays its steps so.
 */
export function mount(root, services) {
  panels = services.panels;
  if (!SCRATCH) {
    return { perform };
  }
  ui.status = el('p', { className: 'share-status', attrs: { id: 'share-status', role: 'status' } });
  ui.error = el('p', { className: 'field-error share-error', attrs: { id: 'share-error', role: 'alert', hidden: '' } });
  const back = el('a', { i18n: 'share.back', attrs: { id: 'share-back', href: `${location.pathname}${location.search}` } });
  ui.crashPool = el('p', { className: 'note', i18n: 'share.crash_pool', attrs: { id: 'share-crash-pool', hidden: '' } });
  const scratch = el('p', {}, el('strong', { i18n: 'share.scratch' }), ' ', back);
  ui.note = el('div', { className: 'share-note', attrs: { id: 'share-note' } }, scratch, ui.crashPool, ui.status, ui.error);
  document.querySelector('#storage-banner').after(ui.note);
  onLanguageChange(draw);
  // Busy from now until the replay is over (lib/dom.js): whoever waits for
  // the page to settle waits for the whole replay.
  whileBusy(replay);
  return { perform };
}

function draw() {
  ui.status.textContent = said === null ? '' : t(said.key, said.params);
  ui.error.hidden = failure === null;
  if (failure !== null) {
    const params = { ...failure.params };
    if (failure.cause !== undefined) {
      params.message = errorMessage(failure.cause);
    }
    const reason = t(failure.key, params);
    ui.error.textContent = failure.refused ? t('share.refused', { reason }) : reason;
  }
}

function say(key, params = {}) {
  said = { key, params };
  draw();
}

function fail(failed) {
  failure = failed;
  ui.note.dataset.state = failed.refused ? 'refused' : 'stopped';
  draw();
}

async function replay() {
  const opened = decodeExperiment(location.hash);
  if (opened.error) {
    fail({ refused: true, key: opened.error, params: opened.params ?? {} });
    return;
  }
  const state = opened.state;
  if (state.kind === 'handler') {
    say('share.handler_opened');
    return;
  }
  if (state.kind === 'level' && !panels.levels.has(state.level)) {
    fail({ refused: true, key: 'share.level', params: { level: state.level } });
    return;
  }
  const actions = actionsOf(state);
  ui.crashPool.hidden = !actions.some((a) => a.do === 'crash');
  try {
    await inboxLab.ready;
  } catch (error) {
    fail({ refused: true, key: 'share.stopped', params: { n: 1 }, cause: error });
    return;
  }
  // Every delivery checked by Rust before the first one runs.
  const deliveries = actions.filter((a) => a.do === 'send' || a.do === 'burst').concat(actions.filter((a) => a.do === 'step').map((a) => a.send));
  for (const [i, d] of deliveries.entries()) {
    try {
      await inboxLab.checkDelivery(d.event, { handler: d.handler, fault: d.fault ?? null });
    } catch (error) {
      fail({ refused: true, key: 'share.event', params: { n: i + 1 }, cause: error });
      return;
    }
  }
  ui.note.dataset.state = 'replaying';
  for (const [i, action] of actions.entries()) {
    say('share.replaying', { done: i + 1, total: actions.length });
    try {
      await perform(action);
    } catch (error) {
      fail({ refused: false, key: 'share.stopped', params: { n: i + 1 }, cause: error });
      return;
    }
  }
  ui.note.dataset.state = 'replayed';
  say('share.replayed', { total: actions.length });
}

/** The link's actions, one list: sends, bursts, races, a stepped delivery. */
function actionsOf(state) {
  switch (state.kind) {
    case 'timeline':
      return state.sends.map((send) => ({ do: 'send', ...send }));
    case 'race':
      return [{ do: 'race', handler: state.handler, deliveries: state.deliveries, order: state.order }];
    case 'step':
      return [{ do: 'step', send: state.send, next: state.next, end: state.end }];
    default:
      return state.actions;
  }
}

async function perform(action) {
  if (action.do === 'send') {
    await panels.sender.replaySend(action);
  } else if (action.do === 'burst') {
    // The burst's own button, with the sender's event and handler, as a reader presses it.
    panels.sender.setForm({ event: action.event, handler: action.handler, fault: null, lose: false, attempts: 5, delay: 1000 });
    panels.nav.unfold('burst');
    document.querySelector('#burst-count').value = String(action.count);
    await pressFor('burst', '#burst-same', 120_000);
  } else if (action.do === 'race') {
    const error = await panels.raceLab.replayRace(action.handler, action.deliveries, action.order);
    if (error !== null) {
      throw error;
    }
  } else if (action.do === 'effects') {
    await pressEffects(action);
  } else if (action.do === 'retention') {
    await pressRetention(action);
  } else if (action.do === 'crash') {
    await pressCrash(action);
  } else {
    await panels.stepper.replayStep(action);
  }
}

/** Clicks `selector` and waits for the observation of `kind` it leads to. */
async function pressFor(kind, selector, ms) {
  const done = nextObserved(kind, ms);
  document.querySelector(selector).click();
  await done;
}

/** "Where the scheme ends", side effects: the strategy and crash point chosen, then the control pressed. */
async function pressEffects(action) {
  if (action.control === 'dedup') {
    const done = nextObserved('effects');
    const box = document.querySelector('#se-dedup');
    box.checked = action.dedup;
    box.dispatchEvent(new Event('change'));
    await done;
    return;
  }
  const radio = document.querySelector(`#se-strategy-${action.strategy}`);
  if (!radio.checked) {
    radio.click();
  }
  if (action.control === 'deliver') {
    const crash = document.querySelector('#se-crash');
    crash.value = action.crash ?? '';
    if (crash.value !== (action.crash ?? '')) {
      throw new Error(`the crash point ${action.crash} cannot be chosen with ${action.strategy}`);
    }
  }
  const button = { deliver: '#se-deliver', dispatch: '#se-dispatch', dispatch_crash: '#se-dispatch-crash' }[action.control];
  await pressFor('effects', button);
}

/** "Where the scheme ends", retention: the clock, Deliver (of the next event if so), the purge with its window. */
async function pressRetention(action) {
  if (action.control === 'deliver' && action.next) {
    // "Next event" answers with the panel's event line, at once: nothing to wait for.
    document.querySelector('#se-ret-next').click();
  }
  if (action.control === 'purge') {
    const window = document.querySelector('#se-window');
    window.value = String(action.days);
    window.dispatchEvent(new Event('change'));
  }
  const button = {
    deliver: '#se-ret-deliver',
    advance: action.days === 7 ? '#se-plus-week' : '#se-plus-day',
    purge: '#se-purge',
  }[action.control];
  await pressFor('retention', button);
}

/**
 * The crash lab: its form set as the link says, then its own Run button.
 * A run that fails (its pool held by another tab's crash lab, say) publishes
 * no observation but shows its error under the form: that stops the replay.
 */
async function pressCrash(action) {
  document.querySelector(`#crash-mode-${action.mode}`).checked = true;
  if (action.run === 'sweep') {
    document.querySelector(`#crash-events-${action.events}`).checked = true;
    document.querySelector('#crash-control').checked = action.control;
  } else {
    document.querySelector('#crash-kills-trials').value = String(action.trials);
  }
  const error = document.querySelector('#crash-error');
  let watch;
  const failed = new Promise((resolve, reject) => {
    watch = new MutationObserver(() => {
      if (!error.hidden && error.textContent !== '') {
        reject(new Error(error.textContent));
      }
    });
    watch.observe(error, { childList: true, characterData: true, subtree: true, attributes: true });
  });
  try {
    await Promise.race([pressFor('crash', action.run === 'sweep' ? '#crash-run' : '#crash-kills-run', 600_000), failed]);
  } finally {
    watch.disconnect();
  }
}

