// A picture of the flow: sender → handler → each transaction the last
// delivery ran, a box around the tables it touched, and what it ran outside
// any transaction unframed — lit up step by step.
//
// Nothing here is narrated: the picture shows the `steps` Rust returned with
// the delivery (src/core/trace.rs, `[{op, statements, rows, effect, tx}]`),
// grouped by `tx`, the transaction Rust says each step ran in (null: outside
// any), and lit in the order they ran, one every STEP_MS — or as they come in
// step mode, where each press returns one more. After a crash, a
// transaction the handler never began — Rust's `not_reached` list, the
// statements it would have run next, each with its `tx` — is drawn greyed,
// "not reached" (two_transactions' second one). A step lights the part it
// touched, in the timeline's colours and words (lib/timeline.js `stateOf`):
//
//   begin, commit, rollback    its transaction's box: open, kept, rolled back
//   insert…, check, read_stored, store_receipt   the inbox table of its group
//   credit                     the accounts table of its group
//   crash, kill                the handler died there
//
// Drawn with DOM APIs (createElementNS), never from markup strings.

import { el, svg } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { opLabel, stateOf } from '../../lib/timeline.js';

register({
  'flow.title': { en: 'The last delivery, step by step', ru: 'Последняя доставка по шагам' },
  'flow.sender': { en: 'sender', ru: 'отправитель' },
  'flow.handler': { en: 'handler', ru: 'обработчик' },
  'flow.transaction': { en: 'transaction {tx}', ru: 'транзакция {tx}' },
  'flow.outside': { en: 'outside any transaction', ru: 'вне транзакции' },
  'flow.none': { en: 'Deliver an event and watch its steps light up here.', ru: 'Доставьте событие, и здесь по шагам загорится, что оно сделало.' },
  'flow.step': { en: 'Step {n} of {count}: {op} — {state}, {where}.', ru: 'Шаг {n} из {count}: {op} — {state}, {where}.' },
  'flow.in': { en: 'in transaction {tx}', ru: 'в транзакции {tx}' },
  'flow.no_steps': { en: 'No SQL ran: the input was refused first.', ru: 'SQL не выполнялся: вход отклонён раньше.' },
  'flow.idle': { en: 'not touched', ru: 'не затронут' },
  'flow.not_reached': { en: 'transaction {tx}: not reached', ru: 'транзакция {tx}: не достигнута' },
  'flow.unreached': { en: 'not reached: the handler crashed before it', ru: 'не достигнута: обработчик упал раньше' },
  'flow.left_out': { en: 'Not reached: transaction {tx} ({ops}) — the handler crashed before it.',
    ru: 'Не достигнута: транзакция {tx} ({ops}) — обработчик упал раньше.' },
});

const STEP_MS = 300;
const ROW = 62; // the height of one group of the picture

/** The table each step touches; begin, commit and rollback touch their transaction's box. */
const TABLE_OF = {
  insert: 'inbox',
  insert_or_ignore: 'inbox',
  insert_or_replace: 'inbox',
  check: 'inbox',
  read_stored: 'inbox',
  store_receipt: 'inbox',
  credit: 'accounts',
};
const BOUNDARY = new Set(['begin', 'commit', 'rollback']);

// The picture's parts (draw) and what is on it now.
let figure = null;
let parts = {};
let caption = null;
let steps = null; // the steps being shown (null: nothing delivered yet)
let notReached = []; // what the crash left out, as Rust reported it
let lit = 0; // how many of them are lit
let timer = 0;

/** `root`: the figure #flow. Returns `show(steps, notReached)`, which step mode lights the picture with. */
export function mount(root, { timeline }) {
  figure = root;
  caption = el('figcaption', { className: 'flow-caption', attrs: { id: 'flow-caption' } });
  figure.append(el('h3', { i18n: 'flow.title' }), el('div'), caption);
  timeline.subscribe(() => {
    const last = timeline.entries().at(-1);
    if (last === undefined) {
      show(null);
    } else if (Array.isArray(last.steps)) {
      show(last.steps, last.notReached);
    }
  });
  onLanguageChange(() => {
    draw();
    paint();
  });
  draw();
  paint();
  return { show };
}

/**
 * Shows `steps` (a delivery's, as Rust returned them; null: none yet) and
 * what its crash left out. Steps already lit stay lit, so step mode — each
 * press returns the list so far, one longer — lights only the new one.
 */
function show(next, left = []) {
  const continues =
    steps !== null && next !== null && next.length >= lit && steps.slice(0, lit).every((step, i) => step.op === next[i].op);
  steps = next;
  notReached = left ?? [];
  if (!continues) {
    lit = 0;
  }
  clearTimeout(timer);
  draw();
  advance();
}

function advance() {
  if (steps !== null && lit < steps.length) {
    lit += 1;
    timer = setTimeout(advance, reducedMotion() ? 0 : STEP_MS);
  }
  paint();
}

function reducedMotion() {
  return window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
}

/** The group each step is drawn in (-1: the handler only), and the groups in the order they began. */
function grouped(list) {
  const found = [];
  const at = list.map((step) => {
    const tx = step.tx ?? null;
    const table = TABLE_OF[step.op];
    if (tx === null && table === undefined) {
      return -1; // a crash or a kill after a transaction ended
    }
    if (found.at(-1)?.tx !== tx) {
      found.push({ tx, tables: [] });
    }
    const group = found.at(-1);
    if (table !== undefined && !group.tables.includes(table)) {
      group.tables.push(table);
    }
    return found.length - 1;
  });
  return { found, at };
}

/** The transactions the crash left out that never began: `[{tx, tables, unreached: true}]`. */
function leftOut(found) {
  const groups = [];
  for (const { op, tx } of notReached) {
    if (tx === null || tx === undefined || found.some((g) => g.tx === tx)) {
      continue; // only a transaction that never began gets a box of its own
    }
    if (groups.at(-1)?.tx !== tx) {
      groups.push({ tx, tables: [], unreached: true });
    }
    const table = TABLE_OF[op];
    if (table !== undefined && !groups.at(-1).tables.includes(table)) {
      groups.at(-1).tables.push(table);
    }
  }
  return groups;
}

/** Every part in the state of the last lit step that touched it. */
function paint() {
  const states = {};
  const { at } = grouped(steps ?? []);
  (steps ?? []).slice(0, lit).forEach((step, i) => {
    const state = step.state ?? stateOf(step);
    const table = TABLE_OF[step.op];
    if (step.op === 'crash' || step.op === 'kill') {
      states.handler = state;
    } else if (table !== undefined) {
      states[`${table}${at[i]}`] = state;
    } else if (BOUNDARY.has(step.op) && at[i] >= 0) {
      states[`group${at[i]}`] = state;
    }
  });
  if (steps !== null && steps.length > 0) {
    states.sender = 'ok';
    states.handler ??= 'ok';
  }
  for (const [name, part] of Object.entries(parts)) {
    const state = part.unreached ? 'not_reached' : (states[name] ?? 'idle');
    part.group.dataset.state = state;
    const words = { idle: 'flow.idle', not_reached: 'flow.unreached' }[state] ?? `timeline.state.${state}`;
    part.title.textContent = `${part.label}: ${t(words)}`;
  }
  figure.dataset.lit = String(lit);
  figure.dataset.steps = String(steps?.length ?? 0);
  if (steps === null) {
    caption.textContent = t('flow.none');
  } else if (steps.length === 0) {
    caption.textContent = t('flow.no_steps');
  } else {
    const step = steps[lit - 1];
    const tx = step.tx ?? null;
    caption.textContent = t('flow.step', {
      n: lit,
      count: steps.length,
      op: opLabel(step.op),
      state: t(`timeline.state.${step.state ?? stateOf(step)}`),
      where: tx === null ? t('flow.outside') : t('flow.in', { tx }),
    });
    if (lit === steps.length) {
      for (const group of leftOut(grouped(steps).found)) {
        const ops = notReached.filter((u) => u.tx === group.tx).map((u) => opLabel(u.op));
        caption.textContent += ` ${t('flow.left_out', { tx: group.tx, ops: ops.join(', ') })}`;
      }
    }
  }
}

// ---- The picture --------------------------------------------------------------

/** A box with its label under `name` in `parts`; the label at the bottom when `low`, else in the middle. */
function box(name, attrs, label, { x, y, width, height }, low = false, unreached = false, ...inside) {
  const title = svg('title');
  const text = svg('text', { x: x + width / 2, y: low ? y + height - 6 : y + height / 2 + 5, 'text-anchor': 'middle' }, label);
  const group = svg('g', attrs, title, svg('rect', { x, y, width, height, rx: low ? 10 : 6 }), text, ...inside);
  parts[name] = { group, label, title, unreached };
  return group;
}

function arrow(x1, y1, x2, y2) {
  return svg('line', { x1, y1, x2, y2, class: 'flow-arrow', 'marker-end': 'url(#flow-head)' });
}

/**
 * Draws the sender, the handler and one row per group: a transaction's
 * dashed box, or what ran outside any transaction, unframed; in each, the
 * tables its steps touched. Nothing delivered yet: both tables, unframed.
 */
function draw() {
  parts = {};
  // Each group: a transaction (tx 1, 2, …), what ran outside any (tx null), or nothing yet.
  const found = steps === null ? [{ tx: undefined, tables: ['inbox', 'accounts'] }] : grouped(steps).found;
  const groups = [...found, ...(steps === null ? [] : leftOut(found))];
  const height = Math.max(130, 12 + groups.length * ROW);
  const middle = height / 2;
  const head = svg(
    'marker',
    { id: 'flow-head', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' },
    svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'flow-arrowhead' }),
  );
  const rows = groups.map(({ tx, tables, unreached = false }, i) => {
    const y = 6 + i * ROW;
    const kind = tx === undefined ? 'idle' : tx === null ? 'outside' : 'transaction';
    const label = unreached
      ? t('flow.not_reached', { tx })
      : kind === 'transaction'
        ? t('flow.transaction', { tx })
        : kind === 'outside'
          ? t('flow.outside')
          : '';
    const inside = ['inbox', 'accounts']
      .filter((table) => tables.includes(table))
      .map((table, j) => box(`${table}${i}`, { class: 'flow-part', 'data-part': table }, table, { x: 230 + j * 104, y: y + 6, width: 96, height: 30 }, false, unreached));
    return [
      box(`group${i}`, { class: `flow-part flow-group flow-${kind}`, 'data-part': kind, 'data-tx': tx ?? '' }, label, { x: 222, y, width: 216, height: ROW - 6 }, true, unreached, ...inside),
      arrow(204, middle, 220, y + (ROW - 6) / 2),
    ];
  });
  figure.children[1].replaceChildren(
    svg(
      'svg',
      { viewBox: `0 0 444 ${height}`, role: 'img', 'aria-labelledby': 'flow-caption', class: 'flow-svg', focusable: 'false' },
      svg('defs', {}, head),
      box('sender', { class: 'flow-part', 'data-part': 'sender' }, t('flow.sender'), { x: 2, y: middle - 20, width: 96, height: 40 }),
      box('handler', { class: 'flow-part', 'data-part': 'handler' }, t('flow.handler'), { x: 108, y: middle - 20, width: 96, height: 40 }),
      arrow(98, middle, 106, middle),
      ...rows.flat(),
    ),
  );
}
