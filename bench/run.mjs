// The browser half of `cargo xtask bench`: drives the system Chromium with
// playwright-core against the page served by the xtask server and prints one
// JSON document on stdout. Progress goes to stderr.
//
//   node bench/run.mjs --url http://127.0.0.1:PORT/ --site DIR --profile DIR
//                      --native-bin PATH --native-dir DIR --python-dir DIR
//                      [--events 2000] [--rounds 3] [--loads 7] [--burst 1000]
//                      [--profile-events 500] [--page-events 10000] [--chromium /usr/bin/chromium]
//
// Run it from the repository root (it runs bench/python_bench.py). --native-bin
// is the built bench/benches/native.rs; it and the Python runner write their
// databases under --native-dir and --python-dir.
//
// --site is the directory the server serves (the page plus the official
// build under www/official/), used to count the bytes each side ships.
// --profile is a persistent profile directory on disk: incognito OPFS lives
// in memory and would flatter every figure.
//
// What it measures, in one browser and one run:
// * cold start: navigation → `inboxLab.ready` resolved (wasm fetched and
//   compiled, OPFS pool installed, schema checked) on the built site
//   (--cold-url, dist/), with the CPU at full speed and throttled 4×
//   (Emulation.setCPUThrottlingRate: Chromium throttles the page's thread
//   only, not its workers): --loads first visits with the site forgotten,
//   then --loads cached loads, each with the start path's steps;
// * apply and duplicate throughput of our build (www/panels/bench/benchworker.js) as the
//   page opened its database before write coalescing, of the same through the
//   write-coalescing shim, of the official SQLite WASM build
//   (bench/official-worker.mjs, served as www/official/worker.mjs), of native
//   rusqlite and of the article's Python, per setting, interleaved, --rounds
//   times;
// * a burst of --burst concurrent deliveries of one event through the page's
//   own worker (`window.inboxLab.deliver`);
// * --page-events (10,000) different events through the page as a reader
//   sends them (the Burst panel's "N different events", on OPFS): the time
//   from the press to the result, and the longest gap between two frames;
// * bytes shipped, raw and gzip;
// * a profiled pass per setting through the timing VFS shim
//   (bench/src/timing.rs), in the browser and natively: where a commit's
//   time goes.

import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { chromium } from 'playwright-core';

const args = parseArgs(process.argv.slice(2), {
  url: null,
  // The built site (dist/) whose cold start is measured; the rest runs at --url.
  'cold-url': null,
  site: null,
  profile: null,
  events: '2000',
  rounds: '3',
  loads: '5',
  burst: '1000',
  'profile-events': '500',
  'page-events': '10000',
  'native-bin': null,
  'native-dir': null,
  'python-dir': null,
  chromium: process.env.CHROMIUM || '/usr/bin/chromium',
});
for (const required of ['url', 'cold-url', 'site', 'profile', 'native-bin', 'native-dir', 'python-dir']) {
  if (!args[required]) {
    throw new Error(`--${required} is required`);
  }
}
const EVENTS = positive('events');
const ROUNDS = positive('rounds');
const LOADS = positive('loads');
const BURST = positive('burst');
const PROFILE_EVENTS = positive('profile-events');
const PAGE_EVENTS = positive('page-events');
const SETTINGS = ['delete-full', 'wal-full', 'wal-normal'];
const ENGINES = ['ours', 'coalesce', 'official', 'native', 'python-kept', 'python-as-written'];

// As tests/e2e/browser.mjs: no background traffic on this machine's closed network.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Resolves `window.__benchReady` with the time (ms since navigation start)
// at which `inboxLab.ready` settled: client.js assigns `window.inboxLab`
// while the page loads, and this setter hooks its `ready` at that moment.
const READY_HOOK = () => {
  let settle;
  window.__benchReady = new Promise((resolve) => {
    settle = resolve;
  });
  Object.defineProperty(window, 'inboxLab', {
    configurable: true,
    enumerable: true,
    set(lab) {
      Object.defineProperty(window, 'inboxLab', { value: lab, writable: true, configurable: true, enumerable: true });
      lab.ready.then(
        () => {
          // The start path's steps, from the marks the page and its database
          // worker leave (www/db/client.js, markStart), in ms since navigation.
          const ready_ms = performance.now();
          const mark = (name) => performance.getEntriesByName(`inbox-lab:${name}`, 'mark').at(-1);
          const opened = mark('opened');
          // A fixed loop timed in the page: shows the CPU throttling was in effect.
          const t = performance.now();
          let x = 0;
          for (let i = 0; i < 5e6; i += 1) {
            x += i % 7;
          }
          settle({
            ready_ms,
            html_ms: performance.getEntriesByType('navigation')[0]?.responseEnd ?? null,
            page_ms: mark('page')?.startTime ?? null,
            panels_ms: mark('panels')?.startTime ?? null,
            worker_ms: mark('worker')?.startTime ?? null,
            wasm_ms: mark('wasm')?.startTime ?? null,
            opened_ms: opened?.startTime ?? null,
            opfs_ms: opened?.detail?.opfs_ms ?? null,
            check_ms: opened?.detail?.check_ms ?? null,
            calibration_ms: performance.now() - t + (x < 0 ? 1 : 0),
          });
        },
        (error) => settle({ error: String(error?.message ?? error) }),
      );
    },
  });
};

// In the page: a fresh database, then the Burst panel's "N different events"
// pressed for `n` events with the sender's example event, as a reader does,
// while every animation frame is watched. Resolves to {events, ms (press →
// result drawn), burst_ms (the burst's own figure), longest_frame_gap_ms,
// frame_gaps_over_100ms, frames, table_redraws (times the accounts table
// changed during the burst), summary, balance_line}, or {error}.
async function throughThePage(n) {
  try {
    await window.inboxLab.ready;
    // The status line as the page opened (journal mode, durability, coalescing).
    const stack = document.querySelector('#status').textContent;
    await window.inboxLab.reset();
    document.querySelector('#deliver-form button[type=reset]').click();
    document.querySelector('#burst-count').value = String(n);
    const result = document.querySelector('#burst-result');
    result.replaceChildren();
    // Let the reset's table redraw settle before measuring.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const balanceCell = () => document.querySelector('#accounts tbody tr td:nth-child(2)')?.textContent;
    const watch = { longest: 0, over100: 0, frames: 0, redraws: 0, balance: balanceCell(), running: true };
    let last = performance.now();
    const frame = (now) => {
      const gap = now - last;
      last = now;
      watch.longest = Math.max(watch.longest, gap);
      watch.over100 += gap > 100 ? 1 : 0;
      watch.frames += 1;
      const shown = balanceCell();
      if (shown !== watch.balance) {
        watch.redraws += 1;
        watch.balance = shown;
      }
      if (watch.running) {
        requestAnimationFrame(frame);
      }
    };
    requestAnimationFrame(frame);
    const started = performance.now();
    const done = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (result.querySelector('p.summary') !== null) {
          observer.disconnect();
          resolve();
        }
      });
      observer.observe(result, { childList: true });
    });
    document.querySelector('#burst-distinct').click();
    await done;
    const ms = performance.now() - started;
    watch.running = false;
    const [summary, balanceLine] = [...result.querySelectorAll('p')].map((p) => p.textContent);
    const entry = window.inboxLab.timeline().at(-1);
    return {
      events: n,
      stack,
      ms,
      burst_ms: entry?.tookMs ?? null,
      counts: entry?.counts ?? null,
      longest_frame_gap_ms: watch.longest,
      frame_gaps_over_100ms: watch.over100,
      frames: watch.frames,
      table_redraws: watch.redraws,
      summary,
      balance_line: balanceLine ?? null,
    };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
}

function log(message) {
  process.stderr.write(`bench: ${message}\n`);
}

async function main() {
  const context = await chromium.launchPersistentContext(args.profile, {
    executablePath: args.chromium,
    args: CHROMIUM_ARGS,
    headless: true,
  });
  const problems = [];
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(600_000);
    page.on('pageerror', (error) => problems.push(`page error: ${error.stack ?? error}`));
    page.on('console', (message) => {
      if (message.type() === 'error') {
        problems.push(`console error: ${message.text()}`);
      }
    });
    await page.addInitScript(READY_HOOK);

    // The built site as a static host serves it (hashed assets cached for a
    // year, index.html revalidated), at full speed and with Chromium's CPU
    // throttled 4× (a mid-range phone): LOADS first visits, each with the
    // site forgotten (HTTP cache, service worker, storage), then LOADS loads
    // as a returning reader gets them (HTTP cache, the service worker).
    const cdp = await context.newCDPSession(page);
    const coldStart = [];
    for (const rate of [1, 4]) {
      log(`cold start, CPU ${rate}×: ${LOADS} first visits, ${LOADS} cached loads of ${args['cold-url']}`);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate });
      const first = [];
      for (let i = 0; i < LOADS; i += 1) {
        await forgetTheSite(page, cdp, args['cold-url']);
        first.push(await load(page, args['cold-url']));
      }
      const cached = [];
      for (let i = 0; i < LOADS; i += 1) {
        cached.push(await load(page, args['cold-url']));
      }
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
      coldStart.push({
        rate,
        first,
        cached,
        first_median_ms: median(first.map((l) => l.ready_ms)),
        cached_median_ms: median(cached.map((l) => l.ready_ms)),
      });
    }
    // The engines run on the staged page (--url): it serves the official
    // build's worker under www/official/, which dist/ does not have.
    await page.goto('about:blank');
    await page.waitForTimeout(300);
    await page.goto(args.url);
    await page.evaluate(() => window.__benchReady);
    const environment = await page.evaluate(() => ({
      user_agent: navigator.userAgent,
      hardware_concurrency: navigator.hardwareConcurrency,
      cross_origin_isolated: self.crossOriginIsolated,
    }));

    // Every engine, interleaved: per round and setting, our build as the
    // page runs it, the same with write coalescing, the official build, then
    // native rusqlite and the article's Python, so that all of them meet the
    // same moments of the machine (disk sync latency drifts with other work).
    const rounds = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const row = Object.fromEntries(ENGINES.map((engine) => [engine, []]));
      for (const setting of SETTINGS) {
        for (const engine of ['ours', 'coalesce', 'official']) {
          log(`round ${round}/${ROUNDS}: ${engine} ${setting}, ${EVENTS} events`);
          const [result] = await page.evaluate(
            ({ setting, events, engine }) =>
              window.inboxLabBench.run({
                settings: [setting],
                events,
                coalesce: engine === 'coalesce',
                workerUrl: engine === 'official' ? new URL('/www/official/worker.mjs', location.href) : undefined,
              }),
            { setting, events: EVENTS, engine },
          );
          row[engine].push(result);
        }
        log(`round ${round}/${ROUNDS}: native ${setting}, ${EVENTS} events`);
        row.native.push(...native(['--events', EVENTS, '--rounds', 1, '--setting', setting]).results);
        log(`round ${round}/${ROUNDS}: python ${setting}, ${EVENTS} events`);
        for (const result of python(['--events', EVENTS, '--rounds', 1, '--setting', setting]).results) {
          row[result.engine].push(result);
        }
      }
      rounds.push(row);
    }

    log(`burst: ${BURST} concurrent deliveries of one event through the page's worker, 3 times`);
    const bursts = [];
    for (let i = 0; i < 3; i += 1) {
      bursts.push(await page.evaluate((n) => window.inboxLabBench.burst(n), BURST));
    }

    // The page as it opens by default (WAL, exclusive, synchronous=FULL:
    // every commit flushed), then with `?journal=delete` (a rollback
    // journal), then back to the default (which turns the file back to WAL).
    const throughPage = {};
    for (const [journal, query] of [['wal', ''], ['delete', '?journal=delete']]) {
      log(`through the page: ${PAGE_EVENTS} different events by the Burst panel's "N different events", OPFS, journal ${journal}`);
      await page.goto('about:blank');
      await page.waitForTimeout(300);
      await page.goto(`${args['cold-url']}${query}`);
      await page.evaluate(() => window.__benchReady);
      const result = await page.evaluate(throughThePage, PAGE_EVENTS);
      if (result.error !== undefined) {
        throw new Error(`"N different events" through the page (journal ${journal}): ${result.error}`);
      }
      throughPage[journal] = { ...result, query };
    }
    await page.goto('about:blank');
    await page.waitForTimeout(300);
    await page.goto(args.url);
    await page.evaluate(() => window.__benchReady);

    const profiles = { browser: [], page: [], native: [] };
    for (const setting of SETTINGS) {
      log(`profile: ${setting}, ${PROFILE_EVENTS} events through the timing shim, browser (apply alone, and as the page delivers) and native`);
      profiles.browser.push(
        await page.evaluate((args) => window.inboxLabBench.profile(args), { setting, events: PROFILE_EVENTS }),
      );
      profiles.page.push(
        await page.evaluate((args) => window.inboxLabBench.profile(args), { setting, events: PROFILE_EVENTS, asPage: true }),
      );
      profiles.native.push(
        ...native(['--rounds', 0, '--profile-events', PROFILE_EVENTS, '--setting', setting]).profiles,
      );
    }

    if (problems.length > 0) {
      throw new Error(`the page reported errors:\n${problems.join('\n')}`);
    }
    return {
      environment: { ...environment, events: EVENTS, rounds: ROUNDS, loads: LOADS },
      cold_start: coldStart,
      engines: Object.fromEntries(ENGINES.map((engine) => [engine, pickMedianRounds(rounds, engine)])),
      rounds,
      profiles,
      burst: { ...bursts.toSorted((a, b) => a.events_per_s - b.events_per_s)[1], runs: bursts },
      through_page: throughPage,
      sizes: await sizes(args.site),
    };
  } finally {
    await context.close();
  }
}

// One load of `url` from a blank page (the previous page's worker gone, so
// the database opens without waiting for its access handles): the start
// path's steps (READY_HOOK).
async function load(page, url) {
  await page.goto('about:blank');
  await page.waitForTimeout(300);
  await page.goto(url);
  const ready = await page.evaluate(() => window.__benchReady);
  if (ready.error !== undefined) {
    throw new Error(`the page did not open its database: ${ready.error}`);
  }
  return ready;
}

// A first visit again: the browser's HTTP cache emptied, and the origin's
// service worker, caches and storage (OPFS included) cleared.
async function forgetTheSite(page, cdp, url) {
  await page.goto('about:blank');
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Storage.clearDataForOrigin', { origin: new URL(url).origin, storageTypes: 'all' });
}

// Per setting the engine ran, the round whose apply throughput is the
// median of all rounds.
function pickMedianRounds(rounds, engine) {
  return SETTINGS.flatMap((setting) => {
    const all = rounds
      .flatMap((r) => r[engine].filter((result) => result.setting === setting))
      .toSorted((a, b) => a.apply.events_per_s - b.apply.events_per_s);
    return all.length === 0 ? [] : [all[Math.floor((all.length - 1) / 2)]];
  });
}

// The native bench binary (bench/benches/native.rs) and the Python runner, each a
// child process that prints one JSON document.
function native(extra) {
  return runJson(args['native-bin'], ['--dir', args['native-dir'], ...extra.map(String)]);
}

function python(extra) {
  return runJson('python3', ['bench/python_bench.py', '--dir', args['python-dir'], ...extra.map(String)]);
}

function runJson(program, argv) {
  const out = execFileSync(program, argv, { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  return JSON.parse(out.toString('utf8'));
}

// What each side ships, raw and gzip -9.
// * engine: the database engine and its JavaScript binding — ours, the wasm
//   module and its wasm-bindgen glue; official, sqlite3.wasm and the ES module
//   that loads it and carries its JS API (index.mjs). This is what the target
//   compares: each is what any page using that build must fetch.
// * with our worker and client: plus www/db/worker.js, www/db/client.js and
//   the request/answer shape they share (www/lib/rpc.js), the code around our
//   engine (an app on the official build writes its own).
// * whole page: every file the page loads (HTML, CSS, all modules, wasm).
async function sizes(site) {
  const group = async (files) => {
    const rows = [];
    for (const file of files) {
      const bytes = await readFile(join(site, file));
      rows.push({ file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
    }
    const sum = (filter, key) => rows.filter(filter).reduce((n, r) => n + r[key], 0);
    const wasm = (r) => r.file.endsWith('.wasm');
    return {
      files: rows,
      raw: sum(() => true, 'raw'),
      gzip: sum(() => true, 'gzip'),
      wasm_raw: sum(wasm, 'raw'),
      wasm_gzip: sum(wasm, 'gzip'),
    };
  };
  const engine = ['www/pkg/inbox_lab_bg.wasm', 'www/pkg/inbox_lab.js'];
  // Every module and stylesheet of the page, in every folder; not the wasm
  // builds (counted as the engine) or the official build staged beside it.
  const www = (await readdir(join(site, 'www'), { recursive: true }))
    .map((f) => f.split('\\').join('/'))
    .filter((f) => /\.(js|css)$/.test(f) && !/^(pkg(-[\w-]+)?|official)\//.test(f))
    .map((f) => `www/${f}`);
  return {
    ours: await group(engine),
    // Loaded when work that runs in a worker of its own first starts (not on the start path).
    ours_full: await group(['www/pkg-full/inbox_lab_bg.wasm', 'www/pkg-full/inbox_lab.js']),
    ours_with_worker: await group([...engine, 'www/db/worker.js', 'www/db/client.js', 'www/lib/rpc.js']),
    ours_page: await group(['index.html', ...engine, ...www.toSorted()]),
    official: await group(['www/official/sqlite3.wasm', 'www/official/index.mjs']),
  };
}

function median(values) {
  if (values.length === 0) {
    return null;
  }
  const sorted = values.toSorted((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function positive(name) {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`--${name} must be a positive integer, got ${args[name]}`);
  }
  return n;
}

function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i += 1) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (m === null || !(m[1] in defaults)) {
      throw new Error(`unknown argument ${argv[i]}`);
    }
    out[m[1]] = m[2] ?? argv[(i += 1)];
  }
  return out;
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error) => {
    process.stderr.write(`bench: ${error.stack ?? error}\n`);
    process.exitCode = 1;
  },
);
