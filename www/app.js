// The page's one entry module and composition root: it mounts every panel,
// in `PANELS` order, and adds the console API. It holds no rules of its own:
// everything the page shows comes from the database worker through `inboxLab`
// (db/client.js), the same API the browser console gets.
//
// The tree, in reading order:
//   lib/          what every panel uses: dom.js (DOM helpers), i18n.js (EN/RU),
//                 problem.js and errors.js (error objects and their texts), rpc.js
//                 (the one request/answer shape between the page and its workers),
//                 verdict.js (Rust's verdict on a delivery, in words and colour),
//                 strip.js (the answer next to the action), focus.js (the keyboard's
//                 place survives a button that disables itself), observed.js (what
//                 the worker answered, as one stream the levels judge)
//   db/           the database: client.js (the page's side, tabs.js for several
//                 tabs) and worker.js (the worker that owns the connection)
//   panels/<p>/   one folder per panel: its JS, its strings (registered inline,
//                 next to the code that shows them), its CSS (style.css imports it)
//
// The panels, in page order:
//   header/       the status line and the language switch
//   nav/          one screen per section, chosen by the URL's hash (#/deliver);
//                 the skip link
//   start/        the start screen: the article's ideas, where to try them, their code
//   levels/       a path through the lab: each level a goal judged from what the
//                 worker answered (lib/observed.js), a hint and "show me" (levels.js);
//                 the screen, the progress in localStorage (levelscreen.js)
//   notices/      the storage banner, the tab note (banner.js), the notice for a
//                 database that cannot be used (recovery.js), and the built site's
//                 service worker and "updated since your last visit" (update.js)
//   sender/       the form and what it heard (send with retries: lib/send.js, lib/retry.js), paste JSON (paste.js)
//   timeline/     every delivery and the steps Rust says it ran (lib/timeline.js),
//                 with a legend of its boxes
//   flow/         the picture sender → handler → each transaction the last delivery ran
//                 (and what ran outside any), lit by its steps
//   tables/       accounts and the newest inbox rows, changed ones marked (changes.js)
//   data/         export, import, reset (on the tools screen)
//   burst/        many deliveries at once, with a progress bar
//   stepper/      one delivery statement by statement; kill the worker
//   console/      the read-only SQL console
//   workshop/     the article's scenario and exercises (exercises.js)
//   scheme-ends/  where the scheme ends: side effects, business keys, retention
//   hooks/        signed webhooks from real HTTP senders: secrets, the relay from
//                 `cargo xtask serve` (relay.js), the dedup-poisoning level
//   bench/        a short benchmark in this browser (its own worker, benchworker.js)
//   race-lab/     deliveries interleaved statement by statement on real connections
//   handler-lab/  write your own handler; the judge's verdict, its first failure replayed, a share link
//   share/        "Share" next to the timeline, the race lab, step mode and a won level
//                 (sharing.js; a won level's is levelscreen.js's, through
//                 lib/share-control.js); a page opened by a share link replays it on a scratch
//                 database (replay.js; the format is lib/share.js)
//   crash-lab/    a worker killed at every storage operation of a commit
//                 (crashdriver.js starts and kills crashworker.js)
//
// A panel exports `mount(root, services)`: it builds its DOM in `root` (its
// mount point in index.html), wires it, and returns its actions, the only way
// another panel drives it (`services.panels.<name>`); no panel imports
// another. Strings register when a module loads, so one `translatePage()`
// after mounting translates all the static text.
//
// Everything a user typed or the database returned is rendered with
// textContent, never parsed as HTML (lib/dom.js).

import { calling, inboxLab, onStatus, onTablesChanged, starting } from './db/client.js';
import { whileBusy } from './lib/dom.js';
import { errorMessage } from './lib/errors.js';
import * as focus from './lib/focus.js';
import { LANGUAGES, has, keys, setLanguage, t, translatePage } from './lib/i18n.js';
import { Timeline } from './lib/timeline.js';
import * as bench from './panels/bench/bench.js';
import * as burst from './panels/burst/burst.js';
import * as sqlconsole from './panels/console/sqlconsole.js';
import * as crashLab from './panels/crash-lab/crashlab.js';
import * as data from './panels/data/data.js';
import * as flow from './panels/flow/flow.js';
import * as header from './panels/header/header.js';
import * as handlerLab from './panels/handler-lab/handlerlab.js';
import * as hooks from './panels/hooks/hooks.js';
import * as levels from './panels/levels/levelscreen.js';
import * as nav from './panels/nav/nav.js';
import * as banner from './panels/notices/banner.js';
import * as recovery from './panels/notices/recovery.js';
import * as update from './panels/notices/update.js';
import * as raceLab from './panels/race-lab/racelab.js';
import * as schemeEnds from './panels/scheme-ends/schemeends.js';
import * as replay from './panels/share/replay.js';
import * as sharing from './panels/share/sharing.js';
import * as paste from './panels/sender/paste.js';
import * as sender from './panels/sender/sender.js';
import * as start from './panels/start/start.js';
import * as stepper from './panels/stepper/stepper.js';
import * as tables from './panels/tables/tables.js';
import * as timeline from './panels/timeline/timeline.js';
import * as workshop from './panels/workshop/workshop.js';

// ---- The panels, in mounting order (what another panel drives comes first) ------------------------------------------------

// What every panel gets: the database client, the table refresher, the
// timeline, the texts, and `panels`, every mounted panel's actions by name —
// the only way one panel drives another (levels, share links, step mode).
// `refreshTables()` redraws the tables panel and resolves to what it drew:
// every account and the newest inbox rows. `readTables()` redraws it too and
// resolves to both tables whole (null: unreadable, the panel says why), for
// a verdict about any row. `beginChange()` tells the tables panel a send
// begins: what it changes is highlighted, and nothing if it changes nothing.
const services = {
  db: inboxLab,
  onTablesChanged,
  refreshTables: () => services.panels.tables.refresh(),
  beginChange: () => services.panels.tables.beginChange(),
  readTables: async () => (await Promise.all([inboxLab.tables().catch(() => null), services.refreshTables()]))[0],
  timeline: new Timeline(),
  t,
  panels: {},
};

// [name in `services.panels`, module, id of its mount point (null: none)].
const PANELS = [
  ['header', header, null],
  ['nav', nav, null],
  ['start', start, 'start'],
  ['banner', banner, null],
  ['recovery', recovery, 'db-problem'],
  ['update', update, null],
  ['sender', sender, 'sender'],
  ['paste', paste, 'paste'],
  ['timeline', timeline, 'heard'],
  ['flow', flow, 'flow'],
  ['tables', tables, 'database'],
  ['data', data, 'data'],
  ['burst', burst, 'burst'],
  ['stepper', stepper, 'stepper'],
  ['console', sqlconsole, 'console'],
  ['workshop', workshop, 'workshop'],
  ['schemeEnds', schemeEnds, 'scheme-ends'],
  ['hooks', hooks, 'hooks'],
  ['bench', bench, 'bench'],
  ['raceLab', raceLab, 'race-lab'],
  ['handlerLab', handlerLab, 'handler-lab'],
  ['crashLab', crashLab, 'crash-lab'],
  ['levels', levels, 'levels'], // after the panels its levels unlock
  ['share', sharing, null], // after the panels it puts its buttons next to
  ['replay', replay, null], // last: a share link is replayed through every panel, once all are mounted
];

// ---- Console API ------------------------------------------------------------

// `window.inboxLab` (db/client.js) talks to the database. The page adds what
// its buttons do (send with retries, bursts, the sender's settings, the
// timeline, the relay's requests, the language, the texts), so everything on
// screen can also be done, and scripted, from the browser console. Every call
// is described once, in README.md ("The console API").
//
// The built site (dist/) bundles the page's modules into one file (lazy chunks aside), so these are
// also how a test reaches the page's own instances of them.
// client.js's object is frozen; this one is a frozen superset of it. Like
// client.js's calls, these answer every mistake with a rejected promise:
// options are read inside `calling`, which turns a getter that throws into
// a rejection.
const senderPanel = () => services.panels.sender;
// inboxLab.burst and .burstDistinct: `n` deliveries through the burst panel's `kind`.
const burstCall = (kind) => (event, n, options = {}) =>
  calling(() => {
    const { handler = 'atomic' } = options;
    return whileBusy(() => services.panels.burst[kind](event, n, handler));
  });
window.inboxLab = Object.freeze({
  ...inboxLab,
  send: (event, options = {}) =>
    calling(() => {
      const { handler = 'atomic', fault = null, loseResponse = false, attempts, firstDelayMs } = options;
      return whileBusy(() =>
        senderPanel().send(event, { handler, fault, loseResponse, policy: senderPanel().policyOf({ attempts, firstDelayMs }) }),
      );
    }),
  burst: burstCall('burstSame'),
  burstDistinct: burstCall('burstDistinct'),
  setFault: (fault) => senderPanel().setFault(fault),
  setHandler: (handler) => senderPanel().setHandler(handler),
  setLoseResponse: (on) => senderPanel().setLoseResponse(on),
  timeline: () => services.timeline.entries(),
  hooks: Object.freeze({ ...inboxLab.hooks, requests: () => services.panels.hooks.requests() }),
  onStatus,
  onTablesChanged,
  texts: Object.freeze({ languages: LANGUAGES, keys, has, t, errorMessage }),
  setLanguage: (lang) => {
    if (!LANGUAGES.includes(lang)) {
      throw new RangeError(`language must be one of ${LANGUAGES.join(', ')}`);
    }
    setLanguage(lang);
  },
});

// ---- Mount --------------------------------------------------------------------

// db/client.js starts the database worker once this tab holds the tabs' lock;
// the panels are built once its script runs (`starting`), while it loads its
// wasm and opens the database. `window.inboxLab` is set above, before this
// wait: a script that awaits `inboxLab.ready` finds it.
await starting;
for (const [name, panel, id] of PANELS) {
  services.panels[name] = panel.mount(id && document.getElementById(id), services) ?? {};
}
services.panels.nav.start();
focus.mount();
translatePage();
// The panels are built and translated: a step of the start path the benchmark
// reports (db/client.js, markStart).
performance.mark?.('inbox-lab:panels');

// ---- Start ------------------------------------------------------------------

// The tables as the database holds them: once it is open, and again after a
// new worker replaced a crashed or killed one (whatever was open was rolled
// back).
let phase = null;
onStatus((next) => {
  if (next.phase === 'ready' && phase === 'restarting') {
    whileBusy(services.refreshTables);
  }
  phase = next.phase;
});
whileBusy(() =>
  inboxLab.ready.then(services.refreshTables, () => {
    // Already on the status line (panels/header).
  }),
);
