// The crash lab's sweep on real OPFS, driven through the page's "Crash lab"
// panel in headless Chromium — what `cargo xtask crash-lab` runs, once per
// journal mode. Not a test file: it prints.
//
//   INBOX_LAB_URL=http://127.0.0.1:8080/ node tests/e2e/crashlab-sweep.mjs \
//       --mode delete|wal [--events 1|3] [--control]
//
// stdout: one JSON line, the same summary `inbox-lab crash-lab` prints natively:
//   {"mode":"delete","crash_points":11,"atomic":11,"partial":0,"lost_acknowledged":0}
// stderr: the table (k, file, operation, offset, length, result).
// Exit 0 once the sweep finished, whatever it found (the caller judges);
// exit 1 if it could not run.

import { parseArgs } from 'node:util';

import { launch, openPage } from './browser.mjs';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'delete' },
    events: { type: 'string', default: '1' },
    control: { type: 'boolean', default: false },
  },
});
if (!['delete', 'wal'].includes(values.mode) || !['1', '3'].includes(values.events)) {
  console.error('usage: crashlab-sweep.mjs --mode delete|wal [--events 1|3] [--control]');
  process.exit(2);
}

const browser = await launch();
try {
  const { page, problems } = browser;
  page.setDefaultTimeout(120_000); // a loaded machine (several browsers at once) is slow
  // The first load from a freshly started server sometimes never finishes (a
  // request or two stay pending); loading again gets the page.
  page.setDefaultNavigationTimeout(30_000);
  for (let attempt = 1; ; attempt += 1) {
    try {
      await openPage(page, '#/crash-lab'); // its section, as a link to it opens it
      break;
    } catch (error) {
      if (attempt === 3 || error.name !== 'TimeoutError') {
        throw error;
      }
      console.error(`crashlab-sweep: the page did not finish loading (${error.message.split('\n')[0]}); loading it again`);
    }
  }
  await page.check(`#crash-mode-${values.mode}`);
  await page.check(`#crash-events-${values.events}`);
  await page.setChecked('#crash-control', values.control);
  await page.click('#crash-run');
  // Done, or stopped with an error: whichever comes first.
  await page.waitForSelector('#crash-summary[data-state="done"], #crash-error:not([hidden])', {
    state: 'attached',
    timeout: 30 * 60_000,
  });
  const error = await page.$eval('#crash-error', (p) => (p.hidden ? null : p.textContent));
  if (error !== null) {
    throw new Error(error);
  }
  const rows = await page.$$eval('#crash-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  console.error(`${'k'.padStart(4)}  ${'file'.padEnd(8)} ${'op'.padEnd(9)} ${'offset'.padStart(8)} ${'len'.padStart(6)}  result`);
  for (const [k, file, op, offset, len, , , result] of rows) {
    console.error(`${k.padStart(4)}  ${file.padEnd(8)} ${op.padEnd(9)} ${offset.padStart(8)} ${len.padStart(6)}  ${result}`);
  }
  if (problems.length > 0) {
    throw new Error(`the page reported errors:\n${problems.join('\n')}`);
  }
  console.log(await page.textContent('#crash-summary'));
} catch (error) {
  console.error(`crashlab-sweep: ${error.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
