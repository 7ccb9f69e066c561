// "Paste an event as JSON": the event as a sender would POST it.
//
// The text goes to Rust untouched (`inboxLab.deliverJson`, then
// `Event::from_json`): the page does not parse, trim or fix it, so what Rust
// refuses — a missing or extra field, `"500"`, `5e2`, a lone surrogate, not
// JSON at all — is refused with a message that names the field at fault,
// shown next to the text box, and nothing is written.
//
// Everything shown goes in through textContent: a pasted `<img onerror>` is
// text, never markup.

import { el, field } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'paste.summary': { en: 'Paste an event as JSON', ru: 'Вставить событие как JSON' },
  'paste.label': { en: 'The event, as a sender would post it', ru: 'Событие — так, как его прислал бы отправитель' },
  'paste.note': { en: 'Exactly source, event_id, account_id and amount; numbers as plain integers. Rust parses it — the page trusts nothing in it.',
    ru: 'Ровно source, event_id, account_id и amount; числа — обычные целые. Разбирает Rust: странице ничего из этого не доверяется.' },
  'paste.deliver': { en: 'Deliver the JSON', ru: 'Доставить JSON' },
  'paste.applied': { en: 'applied (200): receipt #{seq}, balance after {balance}',
    ru: 'применено (200): квитанция №{seq}, баланс после — {balance}' },
  'paste.duplicate': { en: 'duplicate (200): already applied as receipt #{seq}, balance after {balance}; nothing changed',
    ru: 'дубликат (200): уже применено с квитанцией №{seq}, баланс после — {balance}; ничего не изменилось' },
  'paste.failed': { en: '{kind} ({status}): nothing was written', ru: '{kind} ({status}): ничего не записано' },
});

let form = null;
let text = null;
let note = null;
let answer = null;
// The last answer, kept to say it again in another language.
let last = null;

/** Builds the box in `root` (the sender's <details id="paste">). */
export function mount(root, services) {
  const box = field('paste-json', 'paste.label', { name: 'json', rows: '4', autocomplete: 'off', 'aria-describedby': 'paste-json-note' }, { className: 'field field-wide', input: 'textarea' });
  text = box.querySelector('textarea');
  text.textContent = '{"source": "provider-a", "event_id": "evt-1", "account_id": 1, "amount": 500}';
  text.after(el('p', { className: 'note', i18n: 'paste.note', attrs: { id: 'paste-json-note' } }));
  note = box.lastChild;
  form = el(
    'form',
    { attrs: { id: 'paste-form', novalidate: '' } },
    box,
    el('div', { className: 'actions' }, el('button', { i18n: 'paste.deliver', attrs: { type: 'submit' } })),
  );
  answer = el('p', { className: 'paste-answer', attrs: { id: 'paste-answer', role: 'status' } });
  root.append(el('summary', { i18n: 'paste.summary' }), form, answer);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    form.setAttribute('aria-busy', 'true');
    try {
      last = { ok: true, value: await services.db.deliverJson(text.value) };
    } catch (error) {
      last = { ok: false, value: error };
    } finally {
      render(true);
      form.setAttribute('aria-busy', 'false');
    }
  });
  onLanguageChange(() => render(false));
}

function render(focus) {
  if (last === null) {
    return;
  }
  const { ok, value } = last;
  if (ok) {
    text.removeAttribute('aria-invalid');
    note.hidden = true;
    note.textContent = '';
    answer.textContent = t(value.outcome === 'applied' ? 'paste.applied' : 'paste.duplicate', {
      seq: value.receipt.seq,
      balance: value.receipt.balance_after,
    });
    answer.dataset.outcome = value.outcome;
    return;
  }
  // The message names the field inside the JSON (`invalid amount: ...`); it
  // goes next to the text box, which is the control to fix.
  note.textContent = errorMessage(value);
  note.hidden = false;
  note.dataset.field = value.field ?? '';
  note.dataset.code = value.code ?? '';
  text.setAttribute('aria-invalid', 'true');
  answer.textContent = t('paste.failed', { kind: value.kind, status: value.http_status });
  answer.dataset.outcome = value.kind;
  if (focus) {
    text.focus();
  }
}
