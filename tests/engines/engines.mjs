// The three browser engines the page is tested in, each driven through its
// own WebDriver server by one client (selenium-webdriver):
//
// | engine   | driver                              | browser                                 |
// |----------|-------------------------------------|-----------------------------------------|
// | chromium | chromedriver (Debian)               | /usr/bin/chromium, headless             |
// | firefox  | geckodriver (`cargo install`)       | /usr/bin/firefox-esr, headless          |
// | webkit   | WebKitWebDriver under `xvfb-run -a` | WebKitGTK's MiniBrowser (`--automation`) |
//
// This module starts the driver itself on a free port and connects to it
// with `Builder().usingServer(...)`: selenium-webdriver then talks to that
// server only, and never runs its Selenium Manager (which would try to
// download drivers and browsers). If a driver or its browser cannot start,
// `openSession` throws with the driver's own output: the tests of that
// engine fail, they are never skipped.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

import { Builder } from 'selenium-webdriver';

/**
 * MiniBrowser, which Debian's libwebkit2gtk-4.1-0 (a dependency of
 * webkit2gtk-driver) puts under its architecture's library folder, e.g.
 * /usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser. $MINIBROWSER wins.
 */
function miniBrowser() {
  if (process.env.MINIBROWSER) {
    return process.env.MINIBROWSER;
  }
  const found = readdirSync('/usr/lib')
    .map((arch) => `/usr/lib/${arch}/webkit2gtk-4.1/MiniBrowser`)
    .find((path) => existsSync(path));
  // Not found: the session fails with WebKitWebDriver's own "cannot start" message naming this path.
  return found ?? '/usr/lib/<arch>/webkit2gtk-4.1/MiniBrowser (not installed: apt-get install webkit2gtk-driver)';
}

/**
 * Each engine: the command that starts its driver on `port`, and the
 * capabilities of a new session.
 */
export const ENGINES = {
  chromium: {
    name: 'Chromium',
    driver: (port) => [program('CHROMEDRIVER', 'chromedriver'), [`--port=${port}`]],
    capabilities: () => ({
      browserName: 'chrome',
      'goog:chromeOptions': {
        binary: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--window-size=1280,800'],
      },
    }),
    opfs: true,
  },
  firefox: {
    name: 'Firefox ESR',
    driver: (port) => [program('GECKODRIVER', 'geckodriver'), ['--port', String(port)]],
    capabilities: () => ({
      browserName: 'firefox',
      'moz:firefoxOptions': {
        binary: process.env.FIREFOX || '/usr/bin/firefox-esr',
        args: ['-headless', '-width=1280', '-height=800'],
      },
    }),
    opfs: true,
  },
  webkit: {
    name: 'WebKitGTK MiniBrowser',
    // MiniBrowser needs a display: xvfb-run gives it a virtual one (-a: a free display number).
    driver: (port) => [program('XVFB_RUN', 'xvfb-run'), ['-a', program('WEBKIT_WEBDRIVER', 'WebKitWebDriver'), `--port=${port}`]],
    capabilities: () => ({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': {
        binary: miniBrowser(),
        args: ['--automation'],
      },
    }),
    // MiniBrowser here has no navigator.storage.getDirectory: the page runs on its memory fallback.
    opfs: false,
  },
};

/** The engine of this run: INBOX_LAB_ENGINE, one of ENGINES' keys. */
export function engineOfRun() {
  const key = process.env.INBOX_LAB_ENGINE;
  if (!Object.hasOwn(ENGINES, key ?? '')) {
    throw new Error(
      `INBOX_LAB_ENGINE=${JSON.stringify(key)}: set it to one of ${Object.keys(ENGINES).join(', ')}, e.g.\n` +
        '  INBOX_LAB_URL=http://127.0.0.1:8080/ INBOX_LAB_ENGINE=firefox node --test tests/engines/\n' +
        'or let `cargo xtask test --only engines` run all three.',
    );
  }
  return { key, ...ENGINES[key] };
}

/** `$ENV` if set, else `name` found on PATH (an absolute path), else `name` (spawn will say it is missing). */
function program(env, name) {
  if (process.env[env]) {
    return process.env[env];
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) {
      return join(dir, name);
    }
  }
  return name;
}

/** A TCP port nobody listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `engine`'s driver and opens a session in it. Returns
 * `{driver, close}`; `close` ends the session and stops the driver (and,
 * for WebKit, Xvfb). Throws, with what the driver printed, when either
 * does not start within a minute.
 */
export async function openSession(engine) {
  const port = await freePort();
  const [command, args] = engine.driver(port);
  // Its own process group, so that stopping it also stops what it started (xvfb-run's Xvfb).
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // Why the driver is gone (it could not be run, or it exited), or null while it runs.
  let gone = null;
  child.once('error', (error) => (gone ??= `\`${command}\` could not be run: ${error.message}`));
  child.once('exit', (code, signal) => (gone ??= `the driver exited (${signal ?? code})`));
  const stop = () => {
    if (gone === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };

  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForDriver(url, () => gone);
    const driver = await new Builder().usingServer(url).withCapabilities(engine.capabilities()).build();
    await driver.manage().setTimeouts({ script: 60_000, pageLoad: 60_000 });
    return {
      driver,
      async close() {
        await driver.quit().catch(() => {});
        stop();
      },
    };
  } catch (error) {
    stop();
    throw new Error(`${engine.name} did not start: ${error.message}\n--- driver output ---\n${output}`);
  }
}

/** Polls the driver's /status until it is ready; fails if it is gone or a minute passes. */
async function waitForDriver(url, gone) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone() !== null) {
      throw new Error(gone());
    }
    try {
      const response = await fetch(`${url}/status`);
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`the driver did not answer ${url}/status within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
