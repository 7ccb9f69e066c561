// The browser half of `cargo xtask bench`: drives the system Chromium with
// playwright-core against the page served by the xtask server and prints one
// JSON document on stdout. Progress goes to stderr.
//
//   node bench/run.mjs --url http://127.0.0.1:PORT/ --site DIR --profile DIR
//                      [--events 2000] [--rounds 3] [--loads 7] [--burst 1000]
//                      [--profile-events 500] [--chromium /usr/bin/chromium]
//
// --site is the directory the server serves (the page plus the official
// build under www/official/), used to count the bytes each side ships.
// --profile is a persistent profile directory on disk: incognito OPFS lives
// in memory and would flatter every figure.
//
// What it measures, in one browser and one run:
// * cold start: navigation → `inboxLab.ready` resolved (wasm fetched and
//   compiled, OPFS pool installed, schema checked), over --loads loads;
// * apply and duplicate throughput of our build (www/benchworker.js) as the
//   page opens its database, of the same through the proposed
//   write-coalescing shim, and of the official SQLite WASM build
//   (bench/official-worker.mjs, served as www/official/worker.mjs), per
//   setting, interleaved, --rounds times;
// * a burst of --burst concurrent deliveries of one event through the page's
//   own worker (`window.inboxLab.deliver`);
// * bytes shipped, raw and gzip;
// * a profiled pass of our build per setting through the timing VFS shim
//   (src/bench/timing.rs): where a commit's time goes.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { chromium } from 'playwright-core';

const args = parseArgs(process.argv.slice(2), {
  url: null,
  site: null,
  profile: null,
  events: '2000',
  rounds: '3',
  loads: '7',
  burst: '1000',
  'profile-events': '500',
  chromium: process.env.CHROMIUM || '/usr/bin/chromium',
});
for (const required of ['url', 'site', 'profile']) {
  if (!args[required]) {
    throw new Error(`--${required} is required`);
  }
}
const EVENTS = positive('events');
const ROUNDS = positive('rounds');
const LOADS = positive('loads');
const BURST = positive('burst');
const PROFILE_EVENTS = positive('profile-events');
const SETTINGS = ['delete-full', 'wal-full', 'wal-normal'];

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
        () => settle({ ready_ms: performance.now() }),
        (error) => settle({ error: String(error?.message ?? error) }),
      );
    },
  });
};

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

    log(`cold start: ${LOADS} loads of ${args.url}`);
    const loads = [];
    for (let i = 0; i < LOADS; i += 1) {
      // Start from a blank page and let the previous page's worker go, so
      // each load opens the database without waiting for its access handles.
      await page.goto('about:blank');
      await page.waitForTimeout(300);
      await page.goto(args.url);
      const ready = await page.evaluate(() => window.__benchReady);
      if (ready.error !== undefined) {
        throw new Error(`the page did not open its database: ${ready.error}`);
      }
      loads.push(ready.ready_ms);
    }
    const environment = await page.evaluate(() => ({
      user_agent: navigator.userAgent,
      hardware_concurrency: navigator.hardwareConcurrency,
      cross_origin_isolated: self.crossOriginIsolated,
    }));

    const rounds = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const row = { ours: [], coalesce: [], official: [] };
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
      }
      rounds.push(row);
    }

    log(`burst: ${BURST} concurrent deliveries of one event through the page's worker, 3 times`);
    const bursts = [];
    for (let i = 0; i < 3; i += 1) {
      bursts.push(await page.evaluate((n) => window.inboxLabBench.burst(n), BURST));
    }

    const profiles = [];
    for (const setting of SETTINGS) {
      log(`profile: ${setting}, ${PROFILE_EVENTS} events through the timing shim`);
      profiles.push(
        await page.evaluate((args) => window.inboxLabBench.profile(args), { setting, events: PROFILE_EVENTS }),
      );
    }

    if (problems.length > 0) {
      throw new Error(`the page reported errors:\n${problems.join('\n')}`);
    }
    return {
      environment: { ...environment, events: EVENTS, rounds: ROUNDS, loads: LOADS },
      cold_start: {
        loads_ms: loads,
        first_ms: loads[0],
        median_ms: median(loads),
        median_after_first_ms: median(loads.slice(1)),
      },
      ours: pickMedianRounds(rounds, 'ours'),
      coalesce: pickMedianRounds(rounds, 'coalesce'),
      official: pickMedianRounds(rounds, 'official'),
      rounds,
      profiles,
      burst: { ...bursts.toSorted((a, b) => a.events_per_s - b.events_per_s)[1], runs: bursts },
      sizes: await sizes(args.site),
    };
  } finally {
    await context.close();
  }
}

// Per setting, the round whose apply throughput is the median of all rounds.
function pickMedianRounds(rounds, engine) {
  return SETTINGS.map((setting, i) => {
    const all = rounds.map((r) => r[engine][i]).toSorted((a, b) => a.apply.events_per_s - b.apply.events_per_s);
    return all[Math.floor((all.length - 1) / 2)];
  });
}

// What each side ships, raw and gzip -9.
// * engine: the database engine and its JavaScript binding — ours, the wasm
//   module and its wasm-bindgen glue; official, sqlite3.wasm and the ES module
//   that loads it and carries its JS API (index.mjs). This is what the target
//   compares: each is what any page using that build must fetch.
// * with our worker and client: plus www/worker.js and www/client.js, the
//   code around our engine (an app on the official build writes its own).
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
  const www = (await readdir(join(site, 'www'))).filter((f) => /\.(js|css)$/.test(f)).map((f) => `www/${f}`);
  return {
    ours: await group(engine),
    ours_with_worker: await group([...engine, 'www/worker.js', 'www/client.js']),
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
