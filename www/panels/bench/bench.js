// The Bench panel: how fast is the real apply path in this browser?
//
// "Run" starts a dedicated worker (`benchworker.js`) with its own OPFS pool,
// so the reader's database is never touched, and runs a short version of
// `cargo xtask bench`: for each durability setting, a fresh database, N
// distinct events each in its own transaction, then the same N again (the
// duplicate path). A progress bar follows the run; the results are drawn as
// a bar chart (SVG made with DOM calls) and a table.
//
// `window.inboxLabBench` exposes the same runs to the benchmark runner
// (bench/run.mjs) and the end-to-end test:
//   run({events, settings, coalesce, workerUrl, onProgress}) → [result per setting]
//     (coalesce: through the write-coalescing shim, as the page runs; workerUrl:
//     another worker speaking benchworker.js's protocol, e.g. the official
//     SQLite WASM build's in `cargo xtask bench`)
//   profile({setting, events}) → where each commit's time goes (the timing
//     VFS shim): {setting, events, total_ms, rows: [{file, op, calls, total_ms}]}
//   burst(n) → n concurrent deliveries of one new event through the page's
//     own worker (`window.inboxLab.deliver`): {events, applied, duplicates,
//     total_ms, events_per_s, p50_ms, p99_ms, max_ms}. It writes to the
//     reader's database, so the panel does not use it.

import { el, svg, tableHead } from '../../lib/dom.js';
import { currentLanguage, onLanguageChange, register, t } from '../../lib/i18n.js';
import { Caller } from '../../lib/rpc.js';
import { summary } from './timing.js';

/** The settings, in the order they are run and shown. */
export const SETTINGS = Object.freeze(['delete-full', 'wal-full', 'wal-normal']);

/** Events per setting in the panel's short run. */
export const SHORT_RUN_EVENTS = 200;


const WORKER_URL = new URL('./benchworker.js', import.meta.url);

register({
  'bench.title': { en: 'Bench', ru: 'Замер скорости' },
  'bench.intro': { en: 'A short benchmark of the real apply path in this browser: for each setting, {events} distinct events, each in its own transaction on OPFS, then the same events again (the duplicate path). It uses a database of its own; yours is not touched. The full comparison with native SQLite and the official SQLite WASM build comes from the command cargo xtask bench.',
    ru: 'Короткий замер настоящего пути применения события в этом браузере: для каждого режима {events} разных событий, каждое в своей транзакции в OPFS, а затем те же события ещё раз (путь повторов). Замер ведётся в отдельной базе, ваша остаётся нетронутой. Полное сравнение с нативным SQLite и официальной сборкой SQLite WASM запускается командой cargo xtask bench.' },
  'bench.run': { en: 'Run the short benchmark', ru: 'Запустить короткий замер' },
  'bench.running': { en: 'Running {setting}: {done} of {total} deliveries…', ru: 'Режим {setting}: {done} из {total} доставок…' },
  'bench.done': { en: 'Done: {events} events per setting, SQLite {version}.', ru: 'Готово: по {events} событий на режим, SQLite {version}.' },
  'bench.failed': { en: 'The benchmark failed: {message}', ru: 'Замер не удался: {message}' },
  'bench.idle': { en: 'Not run yet.', ru: 'Замер ещё не запускался.' },
  'bench.progress': { en: 'Benchmark progress', ru: 'Ход замера' },
  'bench.chart': { en: 'Deliveries per second, by setting (logarithmic scale)', ru: 'Доставок в секунду по режимам (логарифмическая шкала)' },
  'bench.applied': { en: 'new events', ru: 'новые события' },
  'bench.duplicates': { en: 'duplicates', ru: 'повторы' },
  'bench.col.setting': { en: 'setting', ru: 'режим' },
  'bench.col.applied': { en: 'new events/s', ru: 'новых событий/с' },
  'bench.col.p50': { en: 'p50, ms', ru: 'p50, мс' },
  'bench.col.p99': { en: 'p99, ms', ru: 'p99, мс' },
  'bench.col.duplicates': { en: 'duplicates/s', ru: 'повторов/с' },
  'bench.caption': { en: 'Results of the last run', ru: 'Результаты последнего замера' },
  'bench.timer': { en: 'Latencies are quantised to this browser timer’s step of {step} ms.',
    ru: 'Задержки округлены до шага таймера этого браузера: {step} мс.' },
  'bench.setting.delete-full': { en: 'DELETE journal, synchronous FULL', ru: 'журнал DELETE, synchronous FULL' },
  'bench.setting.wal-full': { en: 'WAL (exclusive), synchronous FULL', ru: 'WAL (монопольный), synchronous FULL' },
  'bench.setting.wal-normal': { en: 'WAL (exclusive), synchronous NORMAL', ru: 'WAL (монопольный), synchronous NORMAL' },
  'bench.perSecond': { en: '{value}/s', ru: '{value}/с' },
  'bench.thousands': { en: '{n}k', ru: '{n} тыс.' },
  'bench.millions': { en: '{n}M', ru: '{n} млн' },
});

/**
 * Runs every setting, each on a fresh database, in one worker speaking benchworker.js's protocol, and
 * resolves to one result per setting. `onProgress({setting, index, done, total})`.
 */
export async function run({
  events = SHORT_RUN_EVENTS,
  settings = SETTINGS,
  coalesce = false,
  workerUrl = WORKER_URL,
  onProgress = () => {},
} = {}) {
  const worker = startWorker(workerUrl);
  try {
    const results = [];
    for (const [index, setting] of settings.entries()) {
      results.push(
        await ask(worker, 'run', { setting, events, coalesce }, ({ done, total }) =>
          onProgress({ setting, index, done, total }),
        ),
      );
    }
    return results;
  } finally {
    worker.terminate();
  }
}

/** One profiled pass (see benchworker.js, op "profile"). */
export async function profile({ setting, events, asPage = false }) {
  const worker = startWorker(WORKER_URL);
  try {
    return await ask(worker, 'profile', { setting, events, asPage });
  } finally {
    worker.terminate();
  }
}

// A worker that fails to load or throws outside a request rejects the
// request in flight (rpc.js's Caller) instead of leaving it hanging.
function startWorker(url) {
  return new Caller(new Worker(url, { type: 'module' }), { name: 'the benchmark worker' });
}

// One request, one reply (rpc.js); progress messages along the way.
async function ask(worker, op, args, onProgress) {
  try {
    return await worker.call(op, args, { onProgress });
  } catch (error) {
    throw new BenchError(error);
  }
}

/** A failed run: `kind` and `message` as the worker reported them. */
export class BenchError extends Error {
  constructor({ kind, message }) {
    super(`${kind}: ${message}`);
    this.name = 'BenchError';
    this.kind = kind;
  }
}

/**
 * `n` concurrent deliveries of one new event through the page's own worker.
 * Exactly one must be applied and the rest answered as duplicates.
 */
export async function burst(n = 1000) {
  const event = { source: 'bench-burst', event_id: `burst-${Date.now()}`, account_id: 1, amount: 1 };
  await window.inboxLab.ready;
  const latencies = new Float64Array(n);
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      window.inboxLab.deliver(event).then((answer) => {
        latencies[i] = performance.now() - t0;
        return answer;
      }),
    ),
  );
  const totalMs = performance.now() - t0;
  const applied = answers.filter((a) => a.outcome === 'applied').length;
  const duplicates = answers.filter((a) => a.outcome === 'duplicate').length;
  const seqs = new Set(answers.map((a) => a.receipt.seq));
  if (applied !== 1 || duplicates !== n - 1 || seqs.size !== 1) {
    throw new Error(`burst of ${n}: ${applied} applied, ${duplicates} duplicates, ${seqs.size} receipts`);
  }
  const { events, ...timing } = summary(latencies, totalMs);
  return { events, applied, duplicates, ...timing };
}

window.inboxLabBench = Object.freeze({ run, profile, burst, SETTINGS, SHORT_RUN_EVENTS });

// ---- the panel ---------------------------------------------------------------------------------

/** Fills `root` (#bench) with the panel: the button, the progress, the chart and the table. */
export function mount(root) {
  const title = el('h2', { i18n: 'bench.title', attrs: { id: 'bench-title' } });
  const intro = el('p', { className: 'muted' });
  const button = el('button', { i18n: 'bench.run', attrs: { type: 'button', id: 'bench-run' } });
  const progress = el('progress', { attrs: { id: 'bench-progress', max: 1, value: 0, hidden: '' } });
  const status = el('p', { className: 'bench-status', attrs: { id: 'bench-status', role: 'status' } });
  const chart = el('div', { className: 'bench-chart', attrs: { id: 'bench-chart' } });
  const table = el('table', { attrs: { id: 'bench-results', hidden: '' } });
  const note = el('p', { className: 'muted bench-note' });
  const scroll = el('div', { className: 'table-scroll' }, table);
  root.replaceChildren(title, intro, el('div', { className: 'bench-controls' }, button, progress), status, chart, scroll, note);
  root.setAttribute('aria-labelledby', 'bench-title');

  // What is shown: 'idle', {running: {setting, done, total}}, {results}, {error}.
  let state = { idle: true };

  const render = () => {
    intro.textContent = t('bench.intro', { events: SHORT_RUN_EVENTS });
    progress.setAttribute('aria-label', t('bench.progress'));
    button.disabled = state.running !== undefined;
    progress.hidden = state.running === undefined;
    if (state.running !== undefined) {
      const { setting, index, done, total } = state.running;
      progress.value = (index + done / total) / SETTINGS.length;
      status.textContent = t('bench.running', { setting: t(`bench.setting.${setting}`), done, total });
    } else if (state.error !== undefined) {
      status.textContent = t('bench.failed', { message: state.error });
    } else if (state.results !== undefined) {
      status.textContent = t('bench.done', {
        events: SHORT_RUN_EVENTS,
        version: state.results[0]?.settings.sqlite_version ?? '?',
      });
    } else {
      status.textContent = t('bench.idle');
    }
    const results = state.results ?? [];
    chart.replaceChildren(...(results.length > 0 ? [drawChart(results)] : []));
    table.hidden = results.length === 0;
    table.replaceChildren(...(results.length > 0 ? drawTable(results) : []));
    const step = results[0]?.timer_resolution_ms;
    note.textContent = Number.isFinite(step) ? t('bench.timer', { step: formatMs(step) }) : '';
  };

  button.addEventListener('click', async () => {
    state = { running: { setting: SETTINGS[0], index: 0, done: 0, total: 1 } };
    render();
    try {
      const results = await run({
        onProgress: (p) => {
          state = { running: p };
          render();
        },
      });
      state = { results };
    } catch (error) {
      state = { error: String(error?.message ?? error) };
    }
    render();
  });
  onLanguageChange(render);
  render();
}

function drawTable(results) {
  const head = ['bench.col.setting', 'bench.col.applied', 'bench.col.p50', 'bench.col.p99', 'bench.col.duplicates', 'bench.col.p50', 'bench.col.p99'];
  const td = (text) => el('td', { className: 'number', text });
  const rows = results.map((r) =>
    el(
      'tr',
      {},
      el('th', { text: t(`bench.setting.${r.setting}`), attrs: { scope: 'row' } }),
      ...[r.apply, r.duplicate].flatMap((pass) => [td(formatRate(pass.events_per_s)), td(formatMs(pass.p50_ms)), td(formatMs(pass.p99_ms))]),
    ),
  );
  return [el('caption', { text: t('bench.caption') }), tableHead(head.map((key, i) => ({ className: i > 0 ? 'number' : '', text: t(key) }))), el('tbody', {}, ...rows)];
}

// Horizontal bars, two per setting (new events, duplicates), each setting's
// name above its pair, on a log scale from 10/s to 1,000,000/s so a 500/s and
// a 50,000/s bar both stay readable.
function drawChart(results) {
  const WIDTH = 720;
  const LEFT = 4;
  const RIGHT = 24;
  const BAR = 16;
  const NAME = 18;
  const GROUP = NAME + BAR * 2 + 14;
  const TOP = 24;
  const [MIN_EXP, MAX_EXP] = [1, 6];
  const tick = (e) =>
    e < 3 ? String(10 ** e) : e < 6 ? t('bench.thousands', { n: 10 ** (e - 3) }) : t('bench.millions', { n: 10 ** (e - 6) });
  const height = TOP + results.length * GROUP;
  const x = (rate) => {
    const e = Math.log10(Math.max(rate, 10 ** MIN_EXP));
    return LEFT + ((Math.min(e, MAX_EXP) - MIN_EXP) / (MAX_EXP - MIN_EXP)) * (WIDTH - LEFT - RIGHT);
  };
  const picture = svg('svg', { viewBox: `0 0 ${WIDTH} ${height}`, role: 'img', class: 'bench-svg' });
  picture.append(svg('title', {}, t('bench.chart')));
  for (let e = MIN_EXP; e <= MAX_EXP; e += 1) {
    const at = x(10 ** e);
    picture.append(svg('line', { x1: at, x2: at, y1: TOP - 6, y2: height - 6, class: 'bench-grid' }));
    const edge = e === MIN_EXP ? ' bench-tick-first' : e === MAX_EXP ? ' bench-tick-last' : '';
    picture.append(svg('text', { x: at, y: TOP - 10, class: `bench-tick${edge}` }, tick(e)));
  }
  results.forEach((r, i) => {
    const y = TOP + i * GROUP;
    picture.append(svg('text', { x: LEFT, y: y + NAME - 5, class: 'bench-label' }, t(`bench.setting.${r.setting}`)));
    [
      ['bench.applied', r.apply.events_per_s, 'bench-bar-applied'],
      ['bench.duplicates', r.duplicate.events_per_s, 'bench-bar-duplicate'],
    ].forEach(([key, rate, cls], j) => {
      const top = y + NAME + j * BAR;
      const end = x(rate);
      const bar = svg('rect', { x: LEFT, y: top, width: Math.max(1, end - LEFT), height: BAR - 3, class: cls });
      bar.append(svg('title', {}, `${t(key)}: ${t('bench.perSecond', { value: formatRate(rate) })}`));
      picture.append(bar);
      // Near the right edge the label goes inside the bar's end instead.
      const inside = end > WIDTH - 200;
      picture.append(
        svg(
          'text',
          { x: inside ? end - 4 : end + 4, y: top + BAR - 5, class: inside ? 'bench-value-inside' : 'bench-value' },
          `${formatRate(rate)} · ${t(key)}`,
        ),
      );
    });
  });
  return picture;
}

function formatRate(rate) {
  return Math.round(rate).toLocaleString(locale());
}

function formatMs(ms) {
  const digits = ms >= 10 ? 1 : 2;
  return ms.toLocaleString(locale(), { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function locale() {
  return currentLanguage() === 'ru' ? 'ru-RU' : 'en-US';
}
