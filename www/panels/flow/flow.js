// A picture of the flow: sender → handler → inbox and accounts, with the
// transaction's boundary drawn around the two tables, lit up step by step
// for the last delivery.
//
// Nothing here is narrated: the picture shows the `steps` Rust returned with
// the delivery (src/core/trace.rs, `[{op, statements, rows, effect}]`), in
// the order they ran, one every STEP_MS — or as they come in step mode, where
// each press returns one more. A step lights the part it touched, in the
// timeline's colours and words (lib/timeline.js `stateOf`):
//
//   begin                      the transaction's boundary opens
//   insert…, check, read_stored  the inbox table
//   credit                     the accounts table
//   store_receipt              the inbox row (the receipt is stored there)
//   commit / rollback          the boundary: kept, or rolled back
//   crash, kill                the handler died there
//
// Drawn with DOM APIs (createElementNS), never from markup strings.

import { el } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { opLabel, stateOf } from '../../lib/timeline.js';

register({
  en: {
    'flow.title': 'The last delivery, step by step',
    'flow.sender': 'sender',
    'flow.handler': 'handler',
    'flow.transaction': 'one transaction',
    'flow.none': 'Nothing delivered yet: deliver an event and watch its steps light up here.',
    'flow.step': 'Step {n} of {count}: {op} — {state}',
    'flow.no_steps': 'No SQL ran: the input was refused first.',
    'flow.idle': 'not touched',
  },
  ru: {
    'flow.title': 'Последняя доставка по шагам',
    'flow.sender': 'отправитель',
    'flow.handler': 'обработчик',
    'flow.transaction': 'одна транзакция',
    'flow.none': 'Пока ничего не доставлено: доставьте событие, и здесь по шагам загорится, что оно сделало.',
    'flow.step': 'Шаг {n} из {count}: {op} — {state}',
    'flow.no_steps': 'SQL не выполнялся: вход отклонён раньше.',
    'flow.idle': 'не затронут',
  },
});

const SVG = 'http://www.w3.org/2000/svg';
const STEP_MS = 300;

/** Which part of the picture each step touches. */
const PART_OF = {
  begin: 'transaction',
  insert: 'inbox',
  insert_or_ignore: 'inbox',
  insert_or_replace: 'inbox',
  check: 'inbox',
  read_stored: 'inbox',
  store_receipt: 'inbox',
  credit: 'accounts',
  commit: 'transaction',
  rollback: 'transaction',
  crash: 'handler',
  kill: 'handler',
};

// The picture's parts (mount) and what is on it now.
let figure = null;
let parts = {};
let caption = null;
let steps = null; // the steps being shown (null: nothing delivered yet)
let lit = 0; // how many of them are lit
let timer = 0;

/** `root`: the figure #flow. Returns `show(steps)`, which step mode lights the picture with. */
export function mount(root, { timeline }) {
  figure = root;
  caption = el('figcaption', { className: 'flow-caption', attrs: { id: 'flow-caption' } });
  figure.append(el('h3', { i18n: 'flow.title' }), picture(), caption);
  timeline.subscribe(() => {
    const last = timeline.entries().at(-1);
    if (last === undefined) {
      show(null);
    } else if (Array.isArray(last.steps)) {
      show(last.steps);
    }
  });
  onLanguageChange(() => {
    for (const [name, part] of Object.entries(parts)) {
      part.label.textContent = labelOf(name);
    }
    paint();
  });
  paint();
  return { show };
}

/**
 * Shows `steps` (a delivery's, as Rust returned them; null: none yet). Steps
 * already lit stay lit, so step mode — each press returns the list so far,
 * one longer — lights only the new one.
 */
function show(next) {
  const continues =
    steps !== null && next !== null && next.length >= lit && steps.slice(0, lit).every((step, i) => step.op === next[i].op);
  steps = next;
  if (!continues) {
    lit = 0;
  }
  clearTimeout(timer);
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

/** Every part in the state of the last lit step that touched it. */
function paint() {
  const states = {};
  for (const step of (steps ?? []).slice(0, lit)) {
    const part = PART_OF[step.op];
    if (part) {
      states[part] = step.state ?? stateOf(step);
    }
  }
  if (steps !== null && steps.length > 0) {
    states.sender = 'ok';
    states.handler ??= 'ok';
  }
  for (const [name, part] of Object.entries(parts)) {
    const state = states[name] ?? 'idle';
    part.group.dataset.state = state;
    part.title.textContent = `${labelOf(name)}: ${state === 'idle' ? t('flow.idle') : t(`timeline.state.${state}`)}`;
  }
  figure.dataset.lit = String(lit);
  figure.dataset.steps = String(steps?.length ?? 0);
  if (steps === null) {
    caption.textContent = t('flow.none');
  } else if (steps.length === 0) {
    caption.textContent = t('flow.no_steps');
  } else {
    const step = steps[lit - 1];
    const state = step.state ?? stateOf(step);
    caption.textContent = t('flow.step', {
      n: lit,
      count: steps.length,
      op: opLabel(step.op),
      state: t(`timeline.state.${state}`),
    });
  }
}

function labelOf(name) {
  return name === 'inbox' || name === 'accounts' ? name : t(`flow.${name}`);
}

// ---- The picture --------------------------------------------------------------

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}

/** A box with its label; `parts[name]` keeps what paint() changes. */
function box(name, x, y, width, height) {
  const title = svg('title');
  const label = svg('text', { x: x + width / 2, y: y + height / 2 + 5, 'text-anchor': 'middle' });
  label.textContent = labelOf(name);
  const group = svg('g', { class: `flow-part flow-${name}`, 'data-part': name }, title, svg('rect', { x, y, width, height, rx: 6 }), label);
  parts[name] = { group, label, title };
  return group;
}

function arrow(x1, y1, x2, y2) {
  return svg('line', { x1, y1, x2, y2, class: 'flow-arrow', 'marker-end': 'url(#flow-head)' });
}

function picture() {
  parts = {};
  const head = svg(
    'marker',
    { id: 'flow-head', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' },
    svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'flow-arrowhead' }),
  );
  // The boundary first, so the tables are drawn on top of it.
  const transaction = svg(
    'g',
    { class: 'flow-part flow-transaction', 'data-part': 'transaction' },
    svg('title'),
    svg('rect', { x: 222, y: 6, width: 216, height: 118, rx: 10 }),
    svg('text', { x: 330, y: 118, 'text-anchor': 'middle', class: 'flow-boundary-label' }),
  );
  const [title, , label] = transaction.children;
  parts.transaction = { group: transaction, label, title };
  label.textContent = labelOf('transaction');
  return svg(
    'svg',
    { viewBox: '0 0 444 130', role: 'img', 'aria-labelledby': 'flow-caption', class: 'flow-svg', focusable: 'false' },
    svg('defs', {}, head),
    transaction,
    box('sender', 4, 42, 86, 40),
    box('handler', 118, 42, 86, 40),
    box('inbox', 238, 18, 184, 36),
    box('accounts', 238, 66, 184, 36),
    arrow(90, 62, 116, 62),
    arrow(204, 58, 236, 38),
    arrow(204, 66, 236, 84),
  );
}
