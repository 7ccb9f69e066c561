// The crash lab panel: kill the handler at every storage operation of a
// commit, in this browser, on real OPFS — and see that the recovery always
// leaves each event entirely there or entirely absent.
//
// The work is done by crashdriver.js (workers started, stopped at an exact
// storage operation, terminated, replaced); this module draws it:
//
// * the workload's operations as a picture, one box per operation, each
//   coloured (and marked) by what a crash right after it left behind;
// * a table: k, file, operation, offset, length, result;
// * the summary line, the same as inbox-lab crash-lab prints natively;
// * random kills: a stream of deliveries killed at random moments.
//
// The console gets the same experiments: `inboxCrashLab.sweep({mode,
// events, control})` and `inboxCrashLab.randomKills({trials, mode, kill})`.
//
// Everything is rendered with textContent (dom.js).

import { randomKills, sweep } from './crashdriver.js';
import { clearErrors, el, exclusive, field, showFieldError, tableHead } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';

register({
  'crashlab.title': { en: 'Crash lab: kill the handler at every storage operation of a commit',
    ru: 'Лаборатория сбоев: убить обработчик на каждой операции с хранилищем во время коммита' },
  'crashlab.intro': { en: 'The article says that if the process dies before COMMIT, the database’s recovery takes care of the unfinished transaction. Here is the proof, on real OPFS in this browser. A worker applies the events through a storage layer that counts every operation (open, write, sync, truncate, delete). For each k it lets k operations through and stops dead at the next one; the page terminates the worker; a new worker reopens the database — that is SQLite’s recovery — and checks it: integrity ok, every event entirely there or entirely absent, nothing that was answered “200” lost.',
    ru: 'Статья утверждает: если процесс умер до COMMIT, незавершённую транзакцию приберёт восстановление базы. Вот доказательство — на настоящем OPFS в этом браузере. Воркер применяет события через слой хранения, который считает каждую операцию (open, write, sync, truncate, delete). Для каждого k он пропускает k операций и намертво останавливается на следующей; страница завершает воркер; новый воркер заново открывает базу — это и есть восстановление SQLite — и проверяет её: целостность в порядке, каждое событие либо есть целиком, либо нет совсем, ничего из того, на что ответили «200», не потеряно.' },
  'crashlab.mode': { en: 'Journal mode (synchronous=FULL)', ru: 'Режим журнала (synchronous=FULL)' },
  'crashlab.mode.delete': { en: 'DELETE — a rollback journal', ru: 'DELETE — журнал отката' },
  'crashlab.mode.wal': { en: 'WAL, with locking_mode=EXCLUSIVE', ru: 'WAL, с locking_mode=EXCLUSIVE' },
  'crashlab.events': { en: 'Workload', ru: 'Нагрузка' },
  'crashlab.events.1': { en: 'one event', ru: 'одно событие' },
  'crashlab.events.3': { en: 'a burst of 3 events', ru: 'пачка из 3 событий' },
  'crashlab.control': { en: 'Control: recover with a broken lock check', ru: 'Контроль: восстановление со сломанной проверкой блокировки' },
  'crashlab.control.note': { en: 'It answers “another connection holds the write lock” to every question — as the OPFS storage did before sqlite-wasm-vfs 0.3 — so SQLite leaves a hot journal alone instead of rolling it back. In DELETE mode the lab must catch this as partial commits; a lab that could not would prove nothing.',
    ru: 'Она на любой вопрос отвечает «блокировку записи держит другое соединение» — так вело себя хранилище OPFS до sqlite-wasm-vfs 0.3, — и SQLite не трогает «горячий» журнал вместо того, чтобы откатить его. В режиме DELETE лаборатория обязана поймать это как частичные коммиты; лаборатория, которая этого не видит, ничего не доказывает.' },
  'crashlab.run': { en: 'Run the sweep', ru: 'Запустить перебор' },
  'crashlab.running': { en: 'Crash point {k} of {total}…', ru: 'Точка сбоя {k} из {total}…' },
  'crashlab.preparing': { en: 'Counting the workload’s storage operations…', ru: 'Считаю операции с хранилищем в нагрузке…' },
  'crashlab.done': { en: 'Done. Crash points checked: {total}.', ru: 'Готово. Проверено точек сбоя: {total}.' },
  'crashlab.progress': { en: 'Progress of the sweep', ru: 'Ход перебора' },
  'crashlab.picture': { en: 'The workload’s storage operations', ru: 'Операции записи нагрузки' },
  'crashlab.picture.note': { en: 'One box per operation, in order. Its colour and mark say what a crash right after it left behind.',
    ru: 'По квадрату на операцию, по порядку. Цвет и значок показывают, что оставил сбой сразу после неё.' },
  'crashlab.box': { en: 'k={k}: {op} ({file}), offset {offset}, {len} bytes — {result}',
    ru: 'k={k}: {op} ({file}), смещение {offset}, байт: {len} — {result}' },
  'crashlab.legend.atomic': { en: 'atomic: exactly before or after', ru: 'атомарно: ровно «до» или «после»' },
  'crashlab.legend.partial': { en: 'partial: half-applied or damaged', ru: 'частично: применено наполовину или повреждено' },
  'crashlab.legend.lost_acknowledged': { en: 'lost: an answered event is gone', ru: 'потеряно: событие с ответом исчезло' },
  'crashlab.legend.pending': { en: 'not run yet', ru: 'ещё не проверено' },
  'crashlab.legend.files': { en: 'Top edge, the file:', ru: 'Верхний край — файл:' },
  'crashlab.file.db': { en: 'database', ru: 'база' },
  'crashlab.file.journal': { en: 'journal', ru: 'журнал' },
  'crashlab.file.wal': { en: 'WAL', ru: 'WAL' },
  'crashlab.legend.ops': { en: 'Letters: O open, W write, S sync, T truncate, D delete.',
    ru: 'Буквы: O — открытие (open), W — запись (write), S — сброс на диск (sync), T — усечение (truncate), D — удаление (delete).' },
  'crashlab.op.open': { en: 'open', ru: 'открытие' },
  'crashlab.op.write': { en: 'write', ru: 'запись' },
  'crashlab.op.sync': { en: 'sync', ru: 'сброс на диск' },
  'crashlab.op.truncate': { en: 'truncate', ru: 'усечение' },
  'crashlab.op.delete': { en: 'delete', ru: 'удаление' },
  'crashlab.file.other': { en: 'other file', ru: 'другой файл' },
  'crashlab.counted': { en: 'Journal mode {mode}. Crash points: {total}; recovered atomically: {atomic}; left half a commit: {partial}; lost an answered event: {lost}.',
    ru: 'Режим журнала {mode}. Точек сбоя: {total}; восстановлено атомарно: {atomic}; осталось полкоммита: {partial}; потеряно событие с ответом: {lost}.' },
  'crashlab.line': { en: 'The same line as inbox-lab crash-lab prints', ru: 'Та же строка, что печатает inbox-lab crash-lab' },
  'crashlab.stack': { en: 'The counts depend on the storage stack: these workers write as the playground does, through its write coalescing over OPFS, while the native inbox-lab crash-lab writes to a plain file. In DELETE mode both count the same crash points; in WAL mode they differ. docs/crash.md lists both counts.',
    ru: 'Счёт зависит от слоя хранения: эти воркеры пишут так же, как площадка, — через её объединение записей поверх OPFS, а консольная inbox-lab crash-lab пишет в обычный файл. В режиме DELETE точек сбоя у обоих поровну, в режиме WAL — по-разному. В docs/crash.md приведены оба счёта.' },
  'crashlab.summary': { en: 'Summary', ru: 'Итог' },
  'crashlab.verdict.ok': { en: 'Every crash point recovered atomically; no answered event was lost.',
    ru: 'Каждая точка сбоя восстановилась атомарно; ни одно событие с ответом не потеряно.' },
  'crashlab.verdict.bad': { en: 'The recovery is not atomic here. Crash points that left half a commit: {partial}; that lost an answered event: {lost}.',
    ru: 'Здесь восстановление не атомарно. Точек сбоя, после которых осталось полкоммита: {partial}; потеряно событие с ответом: {lost}.' },
  'crashlab.verdict.control_caught': { en: 'The control is caught: the hot journal was not rolled back, and half a commit was left. Crash points where that happened: {partial}.',
    ru: 'Контроль пойман: «горячий» журнал не откатили, и осталось полкоммита. Точек сбоя, где так вышло: {partial}.' },
  'crashlab.verdict.control_missed': { en: 'The control was not caught: the lab saw no partial commit.',
    ru: 'Контроль не пойман: лаборатория не увидела ни одного частичного коммита.' },
  'crashlab.table': { en: 'Every crash point', ru: 'Все точки сбоя' },
  'crashlab.col.k': { en: 'k', ru: 'k' },
  'crashlab.col.file': { en: 'file', ru: 'файл' },
  'crashlab.col.op': { en: 'operation', ru: 'операция' },
  'crashlab.col.offset': { en: 'offset', ru: 'смещение' },
  'crashlab.col.len': { en: 'length', ru: 'длина' },
  'crashlab.col.committed': { en: 'events committed', ru: 'событий зафиксировано' },
  'crashlab.col.acks': { en: 'answered 200', ru: 'ответов 200' },
  'crashlab.col.result': { en: 'result', ru: 'результат' },
  'crashlab.result.atomic': { en: 'atomic', ru: 'атомарно' },
  'crashlab.result.partial': { en: 'partial', ru: 'частично' },
  'crashlab.result.lost_acknowledged': { en: 'lost acknowledged', ru: 'потеряно подтверждённое' },
  'crashlab.result.pending': { en: 'not yet', ru: 'ещё нет' },
  'crashlab.kills.title': { en: 'Random kills', ru: 'Убить воркер в случайный момент' },
  'crashlab.kills.note': { en: 'A sender streams deliveries; the worker is killed at a random storage operation, a new one reopens the database, and the sender resumes, retrying every event it has no answer for (some answers are lost on purpose). After every kill: integrity ok, no half-applied event, nothing answered lost, and the balance equals the sum of the distinct events applied.',
    ru: 'Отправитель шлёт поток доставок; воркер убивают на случайной операции с хранилищем, новый воркер заново открывает базу, и отправитель продолжает, повторяя каждое событие, на которое не получил ответа (часть ответов теряется нарочно). После каждой такой остановки: целостность в порядке, ни одного наполовину применённого события, ничего из подтверждённого не потеряно, а баланс равен сумме применённых различных событий.' },
  'crashlab.kills.trials': { en: 'Kills', ru: 'Сколько раз убить' },
  'crashlab.kills.run': { en: 'Run random kills', ru: 'Убивать в случайный момент' },
  'crashlab.kills.running': { en: 'Kill {n} of {total}…', ru: 'Остановка {n} из {total}…' },
  'crashlab.kills.result': { en: 'Kills: {trials}, in the middle of the stream: {mid}; journal mode {mode}. Half-applied events: {partial}; answered events lost: {lost}. Balance {balance} = the sum of the distinct events applied ({applied}); retries that came back “duplicate”: {retried}.',
    ru: 'Остановок: {trials}, из них посреди потока: {mid}; режим журнала {mode}. Наполовину применённых событий: {partial}; потеряно событий с ответом: {lost}. Баланс {balance} = сумма различных применённых событий ({applied}); повторов, вернувшихся как «дубликат»: {retried}.' },
  'crashlab.kills.bad_trials': { en: 'Kills must be a whole number from 1 to 1000.', ru: 'Сколько раз убить — целое число от 1 до 1000.' },
  'crashlab.limits': { en: 'What this shows and what it cannot: a killed tab or a crashed worker never leaves a half-applied event, and never loses one it answered. The writes of a killed worker have already reached the operating system, which keeps them. A power cut is another matter: only what reached the disk survives, and whether an OPFS flush forces the data onto the disk is up to the browser and the operating system — no web page can test it.',
    ru: 'Что это показывает и чего не может показать: убитая вкладка или упавший воркер никогда не оставляют наполовину применённого события и не теряют того, на что уже ответили. Записи убитого воркера уже дошли до операционной системы, и она их сохранит. Отключение питания — другое дело: переживёт только то, что дошло до диска, а доводит ли flush файла OPFS данные до диска, решают браузер и операционная система — веб-страница проверить это не может.' },
  'crashlab.error': { en: 'The crash lab stopped: {message}', ru: 'Лаборатория сбоев остановилась: {message}' },
});

const OUTCOMES = ['atomic', 'partial', 'lost_acknowledged', 'pending'];
const MARKS = { atomic: '✓', partial: '✗', lost_acknowledged: '!', pending: '·' };
const OP_LETTERS = { open: 'O', write: 'W', sync: 'S', truncate: 'T', delete: 'D' };

window.inboxCrashLab = Object.freeze({ sweep, randomKills });

const state = {
  busy: false,
  error: null,
  sweep: null, // {mode, events, control, log, rows, summary}
  kills: null, // {total, done, summary}
};

/** Fills `root` (#crash-lab) with the lab's controls and results. */
export function mount(root) {
  const ui = {};
  const text = (tag, key, options = {}) => el(tag, { ...options, i18n: key });
  // A fieldset of radio buttons `#crash-<name>-<value>`, the first checked.
  const choice = (name, values) =>
    el('fieldset', {}, text('legend', `crashlab.${name}`), ...values.map((value, i) => {
      const input = el('input', { attrs: { type: 'radio', name, value, id: `crash-${name}-${value}` } });
      input.checked = i === 0;
      return el('label', { attrs: { for: input.id } }, input, ' ', text('span', `crashlab.${name}.${value}`));
    }));

  ui.form = el(
    'form',
    { className: 'crash-form', attrs: { id: 'crash-form', novalidate: '' } },
    choice('mode', ['delete', 'wal']),
    choice('events', ['1', '3']),
    el(
      'div',
      { className: 'crash-control' },
      el(
        'label',
        { attrs: { for: 'crash-control' } },
        el('input', { attrs: { type: 'checkbox', name: 'control', id: 'crash-control', 'aria-describedby': 'crash-control-note' } }),
        ' ',
        text('span', 'crashlab.control'),
      ),
      text('p', 'crashlab.control.note', { className: 'note', attrs: { id: 'crash-control-note' } }),
    ),
    el('div', { className: 'actions' }, text('button', 'crashlab.run', { attrs: { type: 'submit', id: 'crash-run' } })),
  );
  ui.run = ui.form.querySelector('#crash-run');

  ui.progress = el('progress', { attrs: { id: 'crash-progress', max: '1', value: '0' } });
  ui.status = el('p', { className: 'crash-status', attrs: { id: 'crash-status', role: 'status' } });
  ui.error = el('p', { className: 'field-error', attrs: { id: 'crash-error', role: 'alert' } });
  ui.picture = el('ol', { className: 'crash-picture', attrs: { id: 'crash-picture', 'aria-labelledby': 'crash-picture-title' } });
  ui.legend = el(
    'ul',
    { className: 'crash-legend' },
    ...OUTCOMES.map((outcome) =>
      el(
        'li',
        { data: { outcome } },
        el('span', { className: 'crash-swatch', text: MARKS[outcome], attrs: { 'aria-hidden': 'true' } }),
        ' ',
        text('span', `crashlab.legend.${outcome}`),
      ),
    ),
  );
  ui.files = el(
    'ul',
    { className: 'crash-legend crash-files' },
    text('li', 'crashlab.legend.files'),
    ...['db', 'journal', 'wal'].map((file) =>
      el('li', { data: { file } }, el('span', { className: 'crash-edge', attrs: { 'aria-hidden': 'true' } }), ' ', text('span', `crashlab.file.${file}`)),
    ),
    text('li', 'crashlab.legend.ops'),
  );
  ui.counted = el('p', { attrs: { id: 'crash-counted' } });
  ui.summary = el('code', { attrs: { id: 'crash-summary' } });
  ui.verdict = el('p', { className: 'crash-verdict', attrs: { id: 'crash-verdict' } });
  ui.tbody = el('tbody', {});
  const columns = ['k', 'file', 'op', 'offset', 'len', 'committed', 'acks', 'result'];
  ui.table = el(
    'table',
    { attrs: { id: 'crash-table' } },
    text('caption', 'crashlab.table', { attrs: { id: 'crash-table-caption' } }),
    tableHead(columns.map((c) => ({ i18n: `crashlab.col.${c}`, className: ['k', 'offset', 'len', 'committed', 'acks'].includes(c) ? 'number' : '' }))),
    ui.tbody,
  );
  ui.results = el(
    'div',
    { className: 'crash-results', attrs: { id: 'crash-results' } },
    text('h3', 'crashlab.picture', { attrs: { id: 'crash-picture-title' } }),
    text('p', 'crashlab.picture.note', { className: 'note' }),
    ui.picture,
    ui.legend,
    ui.files,
    text('h3', 'crashlab.summary'),
    ui.verdict,
    ui.counted,
    el('details', {}, text('summary', 'crashlab.line'), ui.summary),
    text('p', 'crashlab.stack', { className: 'note' }),
    el('div', { className: 'table-scroll crash-table-scroll', attrs: { tabindex: '0', role: 'region', 'aria-labelledby': 'crash-table-caption' } }, ui.table),
  );

  const trialsField = field('crash-kills-trials', 'crashlab.kills.trials', { name: 'trials', inputmode: 'numeric', value: '50', autocomplete: 'off' });
  ui.killsTrials = trialsField.querySelector('input');
  ui.killsRun = text('button', 'crashlab.kills.run', { attrs: { type: 'submit', id: 'crash-kills-run' } });
  ui.killsStatus = el('p', { attrs: { id: 'crash-kills-status', role: 'status' } });
  ui.killsForm = el(
    'form',
    { className: 'crash-kills', attrs: { id: 'crash-kills-form', novalidate: '' } },
    text('h3', 'crashlab.kills.title'),
    text('p', 'crashlab.kills.note', { className: 'note' }),
    el('div', { className: 'inline-form' }, trialsField, ui.killsRun),
    ui.killsStatus,
  );

  root.append(
    text('p', 'crashlab.intro', { className: 'note' }),
    ui.form,
    el('div', { className: 'crash-progress' }, text('label', 'crashlab.progress', { attrs: { for: 'crash-progress' } }), ui.progress, ui.status),
    ui.error,
    ui.results,
    ui.killsForm,
    text('p', 'crashlab.limits', { className: 'note crash-limits' }),
  );

  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    const fields = ui.form.elements;
    const options = { mode: fields.mode.value, events: Number(fields.events.value), control: fields.control.checked };
    runSweep(ui, options);
  });
  ui.killsForm.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors(ui.killsForm);
    const trials = ui.killsTrials.value.trim();
    if (!/^[1-9][0-9]{0,3}$/.test(trials) || Number(trials) > 1000) {
      showFieldError(ui.killsForm, 'trials', () => t('crashlab.kills.bad_trials'));
      return;
    }
    runKills(ui, Number(trials), ui.form.elements.mode.value);
  });

  onLanguageChange(() => render(ui));
  render(ui);
}

function runSweep(ui, options) {
  return exclusive(state, () => render(ui), async () => {
    state.sweep = { ...options, log: null, rows: [], summary: null };
    render(ui);
    const result = await sweep({
      ...options,
      onPlan: (log) => {
        state.sweep.log = log;
        render(ui);
      },
      onRow: (row) => {
        state.sweep.rows.push(row);
        render(ui, row);
      },
    });
    state.sweep.summary = result.summary;
    observe('crash', { run: 'sweep', mode: options.mode, events: options.events, control: options.control, points: result.rows.length, summary: result.summary });
  });
}

function runKills(ui, trials, mode) {
  return exclusive(state, () => render(ui), async () => {
    state.kills = { total: trials, done: 0, mode, summary: null };
    render(ui);
    state.kills.summary = await randomKills({
      trials,
      mode,
      onTrial: ({ trial }) => {
        state.kills.done = trial;
        render(ui);
      },
    });
    observe('crash', { run: 'kills', mode, control: false, points: trials, summary: state.kills.summary });
  });
}

// ---- drawing ------------------------------------------------------------------------------

/** Draws everything; with `row`, only what that crash point changed (the sweep is long). */
function render(ui, row = null) {
  const section = ui.form.closest('section');
  section.setAttribute('aria-busy', String(state.busy));
  for (const control of [...ui.form.elements, ui.killsTrials, ui.killsRun]) {
    control.disabled = state.busy;
  }
  ui.error.hidden = state.error === null;
  ui.error.textContent = state.error === null ? '' : t('crashlab.error', { message: state.error.message ?? String(state.error) });

  const sweepState = state.sweep;
  const log = sweepState?.log ?? null;
  const rows = sweepState?.rows ?? [];
  ui.progress.max = log === null ? 1 : log.length;
  ui.progress.value = rows.length;
  ui.status.textContent =
    sweepState === null
      ? ''
      : log === null
        ? t('crashlab.preparing')
        : sweepState.summary !== null || !state.busy
          ? t('crashlab.done', { total: log.length })
          : t('crashlab.running', { k: Math.min(rows.length + 1, log.length), total: log.length });
  ui.results.hidden = log === null;

  if (row !== null) {
    drawBox(ui.picture.children[row.k - 1], row.last, row);
    ui.tbody.append(tableRow(row));
  } else {
    ui.picture.replaceChildren(...(log ?? []).map((op) => drawBox(el('li', {}), op, rows[op.k - 1] ?? null)));
    ui.tbody.replaceChildren(...rows.map(tableRow));
  }

  const summary = sweepState?.summary ?? null;
  ui.summary.textContent = summary === null ? '' : JSON.stringify(summary);
  ui.counted.textContent =
    summary === null
      ? ''
      : t('crashlab.counted', {
          mode: summary.mode.toUpperCase(),
          total: summary.crash_points,
          atomic: summary.atomic,
          partial: summary.partial,
          lost: summary.lost_acknowledged,
        });
  ui.summary.dataset.state = summary === null ? (state.busy ? 'running' : 'none') : 'done';
  ui.verdict.textContent = summary === null ? '' : verdictText(summary, sweepState.control);
  ui.verdict.dataset.good = summary === null ? '' : String(verdictGood(summary, sweepState.control));

  const kills = state.kills;
  if (kills === null) {
    ui.killsStatus.textContent = '';
  } else if (kills.summary === null) {
    ui.killsStatus.textContent = state.busy ? t('crashlab.kills.running', { n: kills.done + 1, total: kills.total }) : '';
  } else {
    const s = kills.summary;
    ui.killsStatus.textContent = t('crashlab.kills.result', {
      trials: s.trials,
      mid: s.killed_mid_stream,
      mode: s.mode.toUpperCase(),
      partial: s.partial,
      lost: s.lost_acknowledged,
      balance: s.balance,
      applied: s.applied,
      retried: s.retried_after_lost_answer,
    });
  }
  ui.killsStatus.dataset.state = kills?.summary ? 'done' : state.busy && kills ? 'running' : 'none';
}

function drawBox(box, op, row) {
  const outcome = row?.outcome ?? 'pending';
  box.dataset.outcome = outcome;
  box.dataset.file = op.file;
  const label = t('crashlab.box', { k: op.k, file: t(`crashlab.file.${op.file}`), op: t(`crashlab.op.${op.op}`), offset: op.offset, len: op.len, result: t(`crashlab.result.${outcome}`) });
  box.title = label;
  box.replaceChildren(
    el('span', { className: 'crash-op', text: OP_LETTERS[op.op] ?? '?', attrs: { 'aria-hidden': 'true' } }),
    el('span', { className: 'crash-mark', text: MARKS[outcome], attrs: { 'aria-hidden': 'true' } }),
    el('span', { className: 'sr-only', text: label }),
  );
  return box;
}

function tableRow(row) {
  const op = row.last;
  const cells = [
    [row.k, 'number'],
    [t(`crashlab.file.${op.file}`), ''],
    [t(`crashlab.op.${op.op}`), ''],
    [op.offset, 'number'],
    [op.len, 'number'],
    [row.recovered.registered.length, 'number'],
    [row.acks, 'number'],
    [t(`crashlab.result.${row.outcome}`), 'crash-result'],
  ];
  return el('tr', { data: { outcome: row.outcome } }, ...cells.map(([value, className]) => el('td', { className, text: value })));
}

function verdictGood(summary, control) {
  return control ? summary.partial > 0 : summary.partial === 0 && summary.lost_acknowledged === 0;
}

function verdictText(summary, control) {
  if (control) {
    return summary.partial > 0
      ? t('crashlab.verdict.control_caught', { partial: summary.partial })
      : t('crashlab.verdict.control_missed');
  }
  return verdictGood(summary, false)
    ? t('crashlab.verdict.ok')
    : t('crashlab.verdict.bad', { partial: summary.partial, lost: summary.lost_acknowledged });
}
