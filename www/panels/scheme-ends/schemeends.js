// "Where the scheme ends": the article's last part, runnable.
//
// A unique key plus one transaction make each event count once inside this
// database. Three things they do not give you, each an experiment with its
// explanation and its fix, each in its own file: side effects and the
// outbox (effects.js), business keys (orders.js), retention (retention.js).
// One experiment is shown at a time, chosen by a list of links like the
// section list's: #/scheme-ends/effects, …/keys, …/retention.
//
// The experiments run on the reader's database through `inboxLab.scheme`
// (db/client.js; worker.js documents the ops), so they share it with the
// other panels: credits go to account 1, the purge purges the whole inbox.
// The rules and the verdicts are Rust's (src/labs/scheme_ends/): the page
// only draws what the worker answered.
//
// Everything typed or returned is rendered with textContent (lib/dom.js).

import { el, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { effects } from './effects.js';
import { orders } from './orders.js';
import { SOURCE, isError, nextNumber, tx } from './parts.js';
import { retention } from './retention.js';
import { STRINGS } from './strings.js';

register(STRINGS);

// Writes from elsewhere — the other panels, the console, another tab — and a
// database reopened by a new worker change what this panel shows too (a new
// worker also has a new, empty receiver). Redraw once they settle, as
// tables.js does: a burst of writes is one redraw.
const SETTLE_MS = 300;

/** The experiments by route name (#/scheme-ends/<name>), in page order. */
const EXPERIMENTS = ['effects', 'keys', 'retention'];

/**
 * Builds the three experiments inside `root` (the section `#scheme-ends`)
 * and loads what they show. `services`: `db`, the database client
 * (db/client.js's `inboxLab`: `ready`, `tables()`, `scheme.*`);
 * `onTablesChanged(listener)`; `refreshTables()`, the tables panel's redraw;
 * `panels.nav`, whose routes choose the experiment shown.
 * Returns the actions that drive the experiments as their controls do.
 */
export function mount(root, { db, onTablesChanged, refreshTables, panels }) {
  // Where a failed load says why, under the three experiments.
  const loadNote = el('p', { className: 'field-error', attrs: { role: 'status' } });
  const showFailure = (error) => {
    loadNote.textContent = isError(error) ? errorMessage(error) : String(error);
  };

  /**
   * Reads everything the three experiments show — both tables, the side
   * effects with Rust's verdicts, the lab clock, the retained event's row —
   * in one go, so no part of the panel shows an older balance than another,
   * then redraws them and the tables panel.
   */
  async function load() {
    const [tables, shown, now, receivedAt] = await Promise.all([
      db.tables(),
      db.scheme.effects(),
      db.scheme.clock(),
      kept.receivedAt(),
    ]);
    loadNote.textContent = '';
    effect.show({ tables, effects: shown });
    kept.show({ tables, now, receivedAt });
    await refreshTables();
  }

  const effect = effects(db, load);
  const order = orders(db);
  const kept = retention(db, load);
  const nodes = [effect.node, order.node, kept.node];
  const links = EXPERIMENTS.map((name) => tx('a', `se.tab.${name}`, { attrs: { href: `#/scheme-ends/${name}` } }));
  const showExperiment = (name) => {
    EXPERIMENTS.forEach((other, i) => {
      nodes[i].hidden = other !== name;
      links[i].setAttribute('aria-current', String(other === name));
    });
  };
  nodes.forEach((node, i) => {
    node.dataset.subroute = `scheme-ends/${EXPERIMENTS[i]}`;
    // A level's "show me" or a share link's replay presses an experiment's
    // controls from code: the experiment it drives is shown, so it plays in sight.
    for (const type of ['click', 'change']) {
      node.addEventListener(type, () => node.hidden && showExperiment(EXPERIMENTS[i]), true);
    }
  });
  showExperiment(EXPERIMENTS[0]);
  // What the experiments show is read when their screen is first shown (an
  // action reloads it too: a level or a share replay may drive them unseen).
  // It comes from the page's full module (db/worker.js), which the page's
  // start does not load.
  let shown = false;
  panels.nav.onRoute(({ screen, rest }) => {
    if (screen !== 'scheme-ends') {
      return;
    }
    if (EXPERIMENTS.includes(rest)) {
      showExperiment(rest);
    }
    if (!shown) {
      shown = true;
      whileBusy(() => numbered.then((open) => open && load()).catch(showFailure));
    }
  });
  root.append(
    tx('h2', 'se.title', { attrs: { id: 'scheme-ends-title' } }),
    tx('p', 'se.intro', { className: 'se-intro' }),
    el(
      'nav',
      { className: 'se-tabs', attrs: { 'aria-label': t('se.tabs') }, data: { i18nAttr: 'aria-label:se.tabs' } },
      el('ul', {}, ...links.map((link) => el('li', {}, link))),
    ),
    ...nodes,
    loadNote,
  );
  kept.render();
  onLanguageChange(() => {
    effect.render();
    order.render();
    kept.render();
  });

  // Continue numbering after the events an earlier visit left in the database.
  const numbered = db.ready.then(
    async () => {
      const [tables, outbox] = await Promise.all([db.tables(), db.scheme.outbox()]);
      const ids = [...tables.inbox.filter((row) => row.source === SOURCE), ...outbox].map((row) => row.event_id);
      effect.resume(nextNumber(ids, 'pay'));
      kept.resume(nextNumber(ids, 'ret'));
      return true;
    },
    // The status line already says why the database cannot be used.
    () => false,
  );
  whileBusy(() => numbered.catch(showFailure));

  let settleTimer = 0;
  onTablesChanged(() => {
    clearTimeout(settleTimer);
    if (shown) {
      settleTimer = setTimeout(() => load().catch(showFailure), SETTLE_MS);
    }
  });
}
