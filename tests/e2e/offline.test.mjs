// The built site after its first visit (dist/, www/sw.js, www/panels/notices/update.js):
//
// * offline: load the page once, let the service worker cache the build, turn
//   the browser's network off (Playwright's `context.setOffline`, Chromium's
//   own offline mode), reload: the page, its workers and its wasm come from
//   the cache, the database from OPFS; a delivery goes through and the
//   tables show it, next to what was delivered before going offline; and a
//   console query, which loads the lazily loaded full module (www/pkg-full/,
//   never fetched by the page's start path) in a worker of its own, answers,
//   and so does the race lab, for which the database worker hands its
//   database over to that module;
// * a host of plain files (no webhook relay): the Signed webhooks panel says
//   why real webhooks are not available and hides what needs them;
// * a new deployment: the site is built again with other markup (so another
//   version, another sw.js) into another folder, which the server then serves
//   instead; the next load shows the new build, tells the reader so in their
//   language, and the database is untouched.
//
// The second test serves a copy of dist/ itself (node:http, plain files, the
// caching of a static host that sends none), because it must switch to another
// build under the page's feet: INBOX_LAB_DIST names the built dist/
// (`cargo xtask test` sets it).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { assertNoProblems, idle, launch, openPage, reloadPage, shownTables } from './browser.mjs';
import { fillSender, pressDeliver } from './playground.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Waits until a service worker controls the page's scope and has cached the build. */
async function offlineReady(page) {
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
}

async function deliver(page, eventId, amount) {
  await fillSender(page, { event_id: eventId, amount: String(amount) });
  await pressDeliver(page);
}

function inboxIds(tables) {
  return tables.inbox.map((row) => row[1]);
}

describe('the built site offline', { timeout: 180_000 }, () => {
  test('load once, go offline, reload: the page runs from the cache, delivers and shows the tables', async () => {
    const browser = await launch();
    const { page, problems } = browser;
    try {
      await openPage(page);
      await page.evaluate(() => window.inboxLab.reset());
      await reloadPage(page);
      await deliver(page, 'evt-online', 100);
      await offlineReady(page);

      await page.context().setOffline(true);
      assert.equal(await page.evaluate(() => navigator.onLine), false, 'the browser is offline');
      await page.reload();
      const ready = await page.evaluate(() => window.inboxLab.ready.catch((error) => ({ error })));
      assert.equal(ready.storage, 'opfs', `the database is still the one in OPFS: ${JSON.stringify(ready)}`);
      await idle(page);
      assert.ok(await page.evaluate(() => navigator.serviceWorker.controller !== null), 'the service worker served the page');
      await deliver(page, 'evt-offline', 200);

      const shown = await shownTables(page);
      assert.deepEqual(inboxIds(shown).sort(), ['evt-offline', 'evt-online']);
      assert.deepEqual(shown.accounts, [['1', '300']]);
      assert.match(await page.textContent('#answer'), /applied/);
      assert.match(await page.textContent('#hooks-relay'), /offline/i, 'the relay part says why it is off');
      const queried = await page.evaluate(() =>
        window.inboxLab.query('SELECT event_id FROM inbox ORDER BY event_id').catch((error) => ({ error })),
      );
      assert.deepEqual(queried.rows, [['evt-offline'], ['evt-online']], `the lazily loaded module answered offline: ${JSON.stringify(queried)}`);
      // The database worker hands its database to the full module (its glue a chunk of its own) offline too.
      const raced = await page.evaluate(() => window.inboxLab.race.explore('atomic').then((r) => r.double_credits, (error) => ({ error })));
      assert.equal(raced, 0, `the race lab ran in the full module offline: ${JSON.stringify(raced)}`);
      const held = await page.evaluate(() => window.inboxLab.tables());
      assert.deepEqual(held.inbox.map((row) => row.event_id).sort(), ['evt-offline', 'evt-online'], 'handed over with its rows');
      assertNoProblems(problems);
    } finally {
      await page.context().setOffline(false);
      await browser.close();
    }
  });
});

// ---- a new deployment -------------------------------------------------------------------------

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

/**
 * A plain static server of `dir` on a free port: files only, no caching headers.
 * `deploy(other)` serves another directory from the next request on, as a host
 * switches to a new deployment at once (no moment without files).
 */
async function serveDirectory(dir) {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    const file = normalize(join(dir, path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(dir + sep)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    deploy: (other) => {
      dir = other;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Builds the site again, into `out`, from the source with `index.html` changed by `edit`. */
async function rebuild(out, edit) {
  const source = await mkdtemp(join(tmpdir(), 'inbox-lab-redeploy-'));
  try {
    await symlink(join(ROOT, 'www'), join(source, 'www'));
    await writeFile(join(source, 'index.html'), edit(await readFile(join(ROOT, 'index.html'), 'utf8')));
    const built = await readFile(join(process.env.INBOX_LAB_DIST, '_headers'), 'utf8');
    const csp = built.match(/Content-Security-Policy: (.*)/)[1];
    await promisify(execFile)('node', ['dist.mjs', source, out], {
      cwd: join(ROOT, 'xtask/tools'),
      env: { ...process.env, INBOX_LAB_CSP: csp },
    });
  } finally {
    await rm(source, { recursive: true, force: true });
  }
}

describe('a new deployment', { timeout: 240_000 }, () => {
  test('is picked up on the next load, the reader is told (EN and RU), the database is untouched', async () => {
    assert.ok(process.env.INBOX_LAB_DIST, 'INBOX_LAB_DIST must name the built dist/ (cargo xtask test sets it)');
    const site = await mkdtemp(join(tmpdir(), 'inbox-lab-site-'));
    const next = await mkdtemp(join(tmpdir(), 'inbox-lab-site-next-'));
    await cp(process.env.INBOX_LAB_DIST, site, { recursive: true });
    const server = await serveDirectory(site);
    const browser = await launch();
    const { page, problems } = browser;
    const version = () => page.getAttribute('meta[name="inbox-lab-version"]', 'content');
    try {
      await openPage(page, server.url);
      await deliver(page, 'evt-before', 700);
      await offlineReady(page);
      const first = await version();
      // A host of plain files has no webhook relay: the panel says so and hides what needs it.
      assert.equal(await page.getAttribute('#hooks-relay', 'data-state'), 'static');
      assert.match(await page.textContent('#hooks-relay'), /not on this host/);
      assert.equal(await page.isVisible('#hooks-forge'), false, 'the level that sends real requests is hidden');
      assert.equal(await page.$('#update-note'), null, 'no note on a first visit');
      await reloadPage(page);
      assert.equal(await page.$('#update-note'), null, 'no note for the same build');

      // The new deployment: other markup, so another version and another sw.js, built beside
      // the old one and then served in its place (the browser may ask for sw.js at any time).
      await rebuild(next, (html) => html.replace('<h1>inbox-lab</h1>', '<h1>inbox-lab</h1><!-- redeployed -->'));
      server.deploy(next);

      await reloadPage(page);
      const second = await version();
      assert.notEqual(second, first, 'the next load shows the new build');
      assert.equal(await page.getAttribute('#update-note', 'data-from'), first);
      assert.equal(await page.getAttribute('#update-note', 'data-to'), second);
      assert.match(await page.textContent('#update-note'), /updated since your last visit.*untouched/);
      await page.evaluate(() => window.inboxLab.setLanguage('ru'));
      assert.match(await page.textContent('#update-note'), /обновился.*не тронута/);
      await page.evaluate(() => window.inboxLab.setLanguage('en'));
      assert.deepEqual(inboxIds(await shownTables(page)), ['evt-before'], 'the database is the one from before');

      await reloadPage(page);
      assert.equal(await page.$('#update-note'), null, 'told once');
      assertNoProblems(problems);
    } finally {
      await browser.close();
      await server.close();
      await rm(site, { recursive: true, force: true });
      await rm(next, { recursive: true, force: true });
    }
  });
});
