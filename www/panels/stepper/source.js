// The Rust each step runs: src/core/apply.rs as it was built into the wasm
// (Rust's `applySource`, src/core/source.rs, which also says which lines are
// which step), shown under step mode's list with the lines of the step that
// runs now marked. The page cuts nothing out and computes no lines itself:
// Rust found them in the very text it embedded.
//
//   mount(after)      puts the (closed) box after `after`
//   mark(step)        marks the lines of `step` ("begin", "insert", …: the one
//                     "Next statement" runs), or none (null)
//
// The text is asked for the first time the box is opened.

import { inboxLab } from '../../db/client.js';
import { el, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'source.summary': { en: 'Read the Rust each step runs ({path})', ru: 'Прочитать код на Rust, который выполняет каждый шаг ({path})' },
  'source.region': { en: 'The source of {path}', ru: 'Исходный код {path}' },
  'source.where': { en: 'Lines {first}–{last}: “{step}”, the step that runs next (marked below).',
    ru: 'Строки {first}–{last}: «{step}» — шаг, который выполнится следующим (отмечен ниже).' },
  'source.none': { en: 'No delivery is being stepped: start step by step, and the lines of each step are marked before it runs.',
    ru: 'Сейчас ничего не выполняется по шагам: начните пошаговый режим, и строки каждого шага будут отмечаться перед его выполнением.' },
  'source.loading': { en: 'Loading the source…', ru: 'Загружаем исходный код…' },
});

const PATH = 'src/core/apply.rs';

let box = null;
let where = null;
let code = null;
let summary = null;
// `{path, text, steps: [{step, first, last}]}` once loaded.
let source = null;
let lines = [];
let marked = null;

export function mount(after) {
  summary = el('summary', {});
  where = el('p', { className: 'note source-where', attrs: { 'aria-live': 'polite' } });
  code = el('code', {});
  const scroll = el('pre', { className: 'rust-source', attrs: { tabindex: '0', role: 'region' } }, code);
  box = el('details', { className: 'source-box', attrs: { id: 'step-source' } }, summary, where, scroll);
  after.after(box);
  box.addEventListener('toggle', () => {
    if (box.open && source === null) {
      whileBusy(load);
    } else {
      reveal();
    }
  });
  const label = () => {
    summary.textContent = t('source.summary', { path: PATH });
    scroll.setAttribute('aria-label', t('source.region', { path: PATH }));
    drawWhere();
  };
  onLanguageChange(label);
  label();
}

async function load() {
  where.textContent = t('source.loading');
  try {
    source = await inboxLab.applySource();
  } catch (error) {
    where.textContent = errorMessage(error);
    return;
  }
  lines = source.text.split('\n').map((text, i) =>
    el('span', { className: 'source-line', data: { line: String(i + 1) } }, el('span', { className: 'source-number', text: String(i + 1), attrs: { 'aria-hidden': 'true' } }), text),
  );
  code.replaceChildren(...lines);
  mark(marked);
}

/** Marks the lines of `step` (a step name as Rust's steps carry it), or none. */
export function mark(step) {
  marked = step;
  if (source === null) {
    drawWhere();
    return;
  }
  const span = source.steps.find((candidate) => candidate.step === step) ?? null;
  lines.forEach((line, i) => {
    const inside = span !== null && i + 1 >= span.first && i + 1 <= span.last;
    line.classList.toggle('source-current', inside);
  });
  drawWhere();
  reveal();
}

function drawWhere() {
  if (where === null) {
    return;
  }
  const span = source?.steps.find((candidate) => candidate.step === marked) ?? null;
  if (source === null && box?.open) {
    return; // loading: its own text
  }
  where.textContent = span === null ? t('source.none') : t('source.where', { first: span.first, last: span.last, step: span.step });
}

// Scrolls the box (not the page) to the marked lines.
function reveal() {
  const first = code.querySelector('.source-current');
  if (!box.open || first === null) {
    return;
  }
  // The box is positioned (stepper.css), so a line's offsetTop is within it.
  const scroll = code.parentElement;
  scroll.scrollTop = first.offsetTop - scroll.clientHeight / 4;
}
