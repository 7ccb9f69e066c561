// The sender panel: the form, and what the sender heard — the event in the
// form delivered the way a real webhook sender does (lib/send.js), losing
// responses on purpose, so the reader sees why the handler must be
// idempotent. The sender's log tells the story of the latest send; its last
// line says how often the event has been credited, as Rust counted it.
// Every line about a send names its event.

import { clearErrors, el, field, formatNumber, formatSeconds, numberOrText, showError, showFieldError, whileBusy } from '../../lib/dom.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { RetryPolicy, SimulatedClock, parsePolicy } from '../../lib/retry.js';
import { EXAMPLE, eventName, eventSummary, sendEvent } from '../../lib/send.js';
import { HANDLERS } from '../../lib/share.js';
import { resultStrip } from '../../lib/strip.js';
import { outcomeOf } from '../../lib/timeline.js';
import { verdictElement } from '../../lib/verdict.js';

register({
  'sender.title': { en: 'Sender', ru: 'Отправитель' },
  'sender.presets': { en: 'Presets:', ru: 'Заготовки:' },
  'sender.preset.example': { en: 'example', ru: 'пример' },
  'sender.preset.next': { en: 'new event', ru: 'новое событие' },
  'sender.preset.provider_b': { en: 'provider-b', ru: 'от provider-b' },
  'sender.preset.missing_account': { en: 'account 42', ru: 'счёт 42' },
  'sender.preset.amount_zero': { en: 'amount 0', ru: 'сумма 0' },
  'sender.handler': { en: 'Handler', ru: 'Обработчик' },
  'sender.handler.atomic': { en: 'atomic (the article’s)', ru: 'atomic (как в статье)' },
  'sender.handler.no_dedup': { en: 'no_dedup (wrong)', ru: 'no_dedup (ошибка)' },
  'sender.handler.check_then_act': { en: 'check_then_act (wrong)', ru: 'check_then_act (ошибка)' },
  'sender.handler.two_transactions': { en: 'two_transactions (wrong)', ru: 'two_transactions (ошибка)' },
  'sender.handler.insert_or_ignore': { en: 'insert_or_ignore (wrong)', ru: 'insert_or_ignore (ошибка)' },
  'sender.handler.insert_or_replace': { en: 'insert_or_replace (wrong)', ru: 'insert_or_replace (ошибка)' },
  'handler.atomic': { en: 'The article’s handler: the unique key decides who is first, and the inbox row, the credit and the receipt commit in one transaction.',
    ru: 'Обработчик из статьи: кто первый, решает уникальный ключ, а строка inbox, зачисление и квитанция фиксируются одной транзакцией.' },
  'handler.no_dedup': { en: 'Wrong: no inbox at all. Every delivery credits again, so a retried lost response is paid twice.',
    ru: 'Ошибка: inbox нет вовсе. Каждая доставка зачисляет снова, и повтор после потерянного ответа оплачивается дважды.' },
  'handler.check_then_act': { en: 'Wrong: SELECT from the inbox, then UPDATE, then INSERT, each committed on its own. A crash in between credits without recording.',
    ru: 'Ошибка: SELECT из inbox, потом UPDATE, потом INSERT, и каждый фиксируется сам по себе. Сбой между ними — зачисление без записи.' },
  'handler.two_transactions': { en: 'Wrong: registers the event in one transaction and credits in another. A crash between leaves it “processed” without the credit.',
    ru: 'Ошибка: событие регистрируется в одной транзакции, а зачисляется в другой. Сбой между ними оставляет событие «обработанным» без зачисления.' },
  'handler.insert_or_ignore': { en: 'Wrong: INSERT OR IGNORE takes “no row inserted” for “already done”. A redelivery with another amount comes back as “duplicate”: the payload is never compared.',
    ru: 'Ошибка: INSERT OR IGNORE принимает «строка не вставлена» за «уже сделано». Повторная доставка с другой суммой возвращается как «duplicate»: содержимое не сравнивается.' },
  'handler.insert_or_replace': { en: 'Wrong: INSERT OR REPLACE deletes the first record and writes the new one, so every repeat is applied again.',
    ru: 'Ошибка: INSERT OR REPLACE удаляет первую запись и пишет новую, поэтому каждый повтор применяется снова.' },
  'sender.fault': { en: 'Crash on the first attempt', ru: 'Сбой при первой попытке' },
  'sender.fault.none': { en: 'none', ru: 'нет' },
  'sender.fault.after_insert': { en: 'after the INSERT into inbox', ru: 'после INSERT в inbox' },
  'sender.fault.after_update': { en: 'after the UPDATE, before COMMIT', ru: 'после UPDATE, до COMMIT' },
  'sender.policy': { en: 'How the sender behaves', ru: 'Как ведёт себя отправитель' },
  'sender.lose': { en: 'Lose the first response: the handler commits, the sender hears nothing',
    ru: 'Потерять первый ответ: обработчик фиксирует транзакцию, а отправитель ничего не слышит' },
  'sender.attempts': { en: 'Attempts at most', ru: 'Попыток не больше' },
  'sender.first_delay': { en: 'First wait, s (then doubled)', ru: 'Первая пауза, с (дальше вдвое длиннее)' },
  'sender.policy.note': { en: 'Retries on 5xx and lost responses, stops on 200 and 4xx. The waits run on a simulated clock: nobody waits for real.',
    ru: 'Повторяет при 5xx и потерянном ответе, останавливается на 200 и 4xx. Паузы идут по модельным часам: ждать по-настоящему не нужно.' },
  'sender.deliver': { en: 'Deliver', ru: 'Доставить' },
  'sender.restore': { en: 'Restore the example', ru: 'Вернуть пример' },
  'sender.redeliver': { en: 'Redeliver the last event:', ru: 'Доставить последнее событие ещё раз:' },
  'sender.redeliver.same': { en: 'the same', ru: 'то же самое' },
  'sender.redeliver.amount': { en: 'with another amount', ru: 'с другой суммой' },
  'sender.redeliver.account': { en: 'to another account', ru: 'на другой счёт' },
  'sender.heard': { en: 'What the sender heard', ru: 'Что услышал отправитель' },
  'sender.answer_event': { en: 'The answer to {event}', ru: 'Ответ на {event}' },
  'sender.nothing': { en: 'Nothing delivered yet.', ru: 'Пока ничего не доставлено.' },
  'sender.log': { en: 'Sender’s log', ru: 'Журнал отправителя' },
  'sender.clock': { en: 'simulated clock: t={seconds} s', ru: 'модельные часы: t={seconds} с' },
  'sender.error.attempts': { en: 'Attempts: a whole number from {min} to {max}.', ru: 'Попытки: целое число от {min} до {max}.' },
  'sender.error.first_delay': { en: 'First wait: seconds from {min} to {max}, such as 1 or 0.5.',
    ru: 'Первая пауза: секунды от {min} до {max}, например 1 или 0.5.' },
  'answer.outcome': { en: 'outcome', ru: 'исход' },
  'answer.status': { en: 'HTTP status', ru: 'HTTP-статус' },
  'answer.retryable': { en: 'retryable', ru: 'повторять?' },
  'answer.message': { en: 'message', ru: 'сообщение' },
  'answer.receipt': { en: 'receipt', ru: 'квитанция' },
  'answer.retry_yes': { en: 'yes: deliver it again later', ru: 'да: доставить ещё раз позже' },
  'answer.retry_no': { en: 'no: fix the request', ru: 'нет: исправьте запрос' },
  'answer.receipt_text': { en: '#{seq}, balance after: {balance}', ru: '№{seq}, баланс после: {balance}' },
  'answer.no_receipt': { en: 'none: this handler keeps no receipt', ru: 'нет: этот обработчик квитанций не хранит' },
  'answer.no_answer': { en: 'no answer', ru: 'ответа нет' },
  'meaning.applied': { en: 'First delivery of this (source, event_id): the inbox row, the credit and the receipt were committed in one transaction.',
    ru: 'Первая доставка этой пары (source, event_id): строка inbox, зачисление и квитанция зафиксированы одной транзакцией.' },
  'meaning.duplicate': { en: 'Already applied with the same payload, so nothing changed. The receipt is the one stored by the first application; a 200 tells the sender to stop retrying.',
    ru: 'Событие уже применено с тем же содержимым, поэтому ничего не изменилось. Квитанция та, что сохранило первое применение; ответ 200 говорит отправителю: хватит повторять.' },
  'meaning.invalid_input': { en: 'Rejected before any SQL ran. Retrying the same input fails the same way: fix it.',
    ru: 'Отклонено до всякого SQL. Тот же запрос снова упадёт так же: его нужно исправить.' },
  'meaning.payload_conflict': { en: 'The same key arrived with another payload. That is a contract error by the sender, never a silent success. Nothing changed.',
    ru: 'Тот же ключ пришёл с другим содержимым. Это нарушение контракта отправителем, а не тихий успех. Ничего не изменилось.' },
  'meaning.unknown_account': { en: 'The foreign key refused the inbox row, so nothing changed.',
    ru: 'Внешний ключ не пропустил строку inbox, поэтому ничего не изменилось.' },
  'meaning.balance_limit': { en: 'The balance would pass 2^53-1, the largest integer JavaScript holds exactly. Nothing was written.',
    ru: 'Баланс превысил бы 2^53-1 — самое большое целое, которое JavaScript хранит точно. Ничего не записано.' },
  'meaning.busy': { en: 'A lock timeout proves nothing about earlier deliveries, so it is never answered as a duplicate. Nothing was written: retry later.',
    ru: 'Тайм-аут блокировки ничего не говорит о прошлых доставках, поэтому он никогда не выдаётся за дубликат. Ничего не записано: повторите позже.' },
  'meaning.simulated_crash': { en: 'The transaction rolled back: neither the inbox row nor the credit exists. A retry applies it.',
    ru: 'Транзакция откатилась: нет ни строки inbox, ни зачисления. Повторная доставка его применит.' },
  'meaning.storage': { en: 'The storage failed and nothing was committed. Retrying is safe: an event is applied at most once.',
    ru: 'Отказало хранилище, ничего не зафиксировано. Повторять безопасно: событие применяется не более одного раза.' },
  'meaning.no_answer': { en: 'The sender heard nothing, so it cannot know whether the event was applied. Only an idempotent handler makes delivering it again safe.',
    ru: 'Отправитель ничего не услышал и не может знать, применено ли событие. Доставить его снова безопасно только благодаря идемпотентному обработчику.' },
  'log.attempt': { en: 't={time} s · attempt {attempt} → {outcome}, {status}', ru: 't={time} с · попытка {attempt} → {outcome}, {status}' },
  'log.attempt_no_answer': { en: 't={time} s · attempt {attempt} → no answer: the worker was killed mid-transaction',
    ru: 't={time} с · попытка {attempt} → ответа нет: воркер убит посреди транзакции' },
  'log.receipt': { en: 'receipt #{seq}', ru: 'квитанция №{seq}' },
  'log.lost': { en: 'response lost', ru: 'ответ потерян' },
  'log.seen_row': { en: 'in the database now: the inbox row ({source}, {event_id}) is there; account {account} has balance {balance}',
    ru: 'в базе сейчас: строка inbox ({source}, {event_id}) есть; баланс счёта {account} — {balance}' },
  'log.seen_no_row': { en: 'in the database now: no inbox row ({source}, {event_id}); account {account} has balance {balance}',
    ru: 'в базе сейчас: строки inbox ({source}, {event_id}) нет; баланс счёта {account} — {balance}' },
  'log.no_account': { en: 'no such account', ru: 'такого счёта нет' },
  'log.retry_lost': { en: 'no answer: it may or may not have been applied; retry in {seconds} s',
    ru: 'ответа нет: применено или нет — неизвестно; повтор через {seconds} с' },
  'log.retry_error': { en: '{status}: a temporary failure; retry in {seconds} s', ru: '{status}: временный сбой; повтор через {seconds} с' },
  'log.stop_success': { en: '200: stop, the handler took responsibility', ru: '200: стоп, обработчик взял ответственность на себя' },
  'log.stop_client_error': { en: '{status}: stop, the same request would fail the same way', ru: '{status}: стоп, тот же запрос упадёт так же' },
  'log.give_up': { en: 'gave up; attempts made: {attempts}', ru: 'отправитель сдался, попыток было: {attempts}' },
});

// The panel's elements (mount): the form in #sender, what came back in #heard;
// the page's services (app.js).
let services = null;
let form = null;
let answerBox = null;
let logList = null;
let summaryLine = null;
let clockLine = null;
let redeliverButtons = [];
let handlerNote = null;
// The answer next to the button that sent (lib/strip.js): Deliver, or the redeliver chips.
let deliverStrip = null;
let redeliverStrip = null;

/** The sender's clock: it only moves when the sender waits before a retry. */
const clock = new SimulatedClock();

// The send whose log is on screen (the one that changed last), and the
// answer last shown `{answer, event}`; both are redrawn when the language changes.
let shownSend = null;
let shownAnswer = null;
// The event of the latest send, for the "redeliver" buttons.
let lastEvent = null;

/** The event in the form, each number field as Rust should see it. */
function formEvent() {
  const fields = form.elements;
  return {
    source: fields.source.value,
    event_id: fields.event_id.value,
    account_id: numberOrText(fields.account_id.value),
    amount: numberOrText(fields.amount.value),
  };
}

/**
 * The form's options `{handler, fault, loseResponse, policy}`, or null after
 * showing what is wrong next to the policy fields.
 */
function formOptions() {
  clearErrors(form);
  const fields = form.elements;
  const parsed = parsePolicy({ attempts: fields.attempts.value, firstDelay: fields.first_delay.value });
  if (parsed.errors) {
    for (const { field, limits } of parsed.errors.reverse()) {
      showFieldError(form, field, () => t(`sender.error.${field}`, limits));
    }
    return null;
  }
  return {
    handler: fields.handler.value,
    fault: fields.fault.value || null,
    loseResponse: fields.lose_response.checked,
    policy: parsed.policy,
  };
}

/** Sets the form's crash point ("after_insert", "after_update" or null). */
function setFault(fault) {
  setSelect('fault', fault ?? '');
}

/** Sets the form's handler. */
function setHandler(handler) {
  setSelect('handler', handler);
  describeHandler();
}

/** Ticks or clears "lose the first response". */
function setLoseResponse(on) {
  form.elements.lose_response.checked = Boolean(on);
}

function setSelect(name, value) {
  const select = form.elements[name];
  if (![...select.options].some((option) => option.value === value)) {
    throw new RangeError(`${name} must be one of ${[...select.options].map((o) => JSON.stringify(o.value)).join(', ')}`);
  }
  select.value = value;
}

/**
 * One send (lib/send.js `sendEvent`), its log and answer shown as it goes;
 * `strip`, if given, shows the last answer and the balance before → after.
 */
async function send(event, { strip = null, ...options }) {
  clearErrors(form);
  strip?.working();
  // The line of an earlier send would stand beside this one's: cleared.
  for (const other of [deliverStrip, redeliverStrip]) {
    if (other !== strip) {
      other.clear();
    }
  }
  lastEvent = event;
  for (const button of redeliverButtons) {
    button.disabled = false;
  }
  return sendEvent(services, clock, event, options, (record, heard) => {
    showLog(record);
    if (heard === undefined) {
      return;
    }
    showAnswer(heard.lost ? { lost: heard.answer } : heard.answer, event);
    const { before, after } = record.summary;
    strip?.show({ event: eventName(event), answer: heard.answer, lost: heard.lost, balance: { account: event.account_id, before, after } });
    if (!heard.lost && heard.answer?.kind === 'invalid_input') {
      showError(form, heard.answer);
    }
  });
}
// ---- The log ----------------------------------------------------------------

function showLog(record) {
  shownSend = record;
  logList.replaceChildren(...record.attempts.map(attemptItem));
  showClock();
  const summary = record.summary === null ? null : eventSummary(record.summary);
  summaryLine.hidden = summary === null;
  summaryLine.textContent = summary ?? '';
}

function showClock() {
  clockLine.textContent = t('sender.clock', { seconds: formatSeconds(clock.now) });
}

function attemptItem({ attempt, at, answer, lost, seen, decision }) {
  const time = formatSeconds(at);
  let text;
  if (answer === null) {
    text = t('log.attempt_no_answer', { time, attempt });
  } else {
    text = t('log.attempt', { time, attempt, outcome: outcomeWord(outcomeOf(answer)), status: answer.http_status });
    if (lost) {
      text += ` · ${t('log.lost')}`;
    } else if (answer.receipt) {
      text += ` · ${t('log.receipt', { seq: answer.receipt.seq })}`;
    }
  }
  const lines = [el('p', { className: 'log-attempt', text })];
  if (seen) {
    const params = {
      ...shownSend.event,
      account: shownSend.event.account_id,
      balance: seen.balance === null ? t('log.no_account') : formatNumber(seen.balance),
    };
    lines.push(el('p', { className: 'log-seen', text: t(seen.row ? 'log.seen_row' : 'log.seen_no_row', params) }));
  }
  lines.push(el('p', { className: `log-decision decision-${decision.action}`, text: decisionText(decision, answer, attempt) }));
  return el('li', { data: { attempt, action: decision.action } }, ...lines);
}

function decisionText(decision, answer, attempt) {
  if (decision.action === 'retry') {
    const seconds = formatSeconds(decision.delayMs);
    return decision.reason === 'lost'
      ? t('log.retry_lost', { seconds })
      : t('log.retry_error', { seconds, status: answer.http_status });
  }
  if (decision.action === 'give_up') {
    return t('log.give_up', { attempts: attempt });
  }
  return decision.reason === 'success' ? t('log.stop_success') : t('log.stop_client_error', { status: answer.http_status });
}

// ---- The answer -------------------------------------------------------------

// `answer` is a success {outcome, http_status, receipt}, an error {kind,
// message, http_status, retryable, field?}, or {lost: answer} when the sender
// never heard it; `event` the event it answers, named above it.
function showAnswer(answer, event) {
  shownAnswer = answer === null ? null : { answer, event };
  if (answer === null) {
    answerBox.replaceChildren(el('p', { className: 'muted', text: t('sender.nothing') }));
    return;
  }
  answerBox.replaceChildren(el('p', { className: 'answer-event', text: t('sender.answer_event', { event: eventName(event) }) }));
  if (answer.lost !== undefined) {
    const list = replyList([['outcome', t('answer.no_answer')]], 'reply reply-error');
    // The sender heard nothing; the page still shows what really happened.
    const verdict = answer.lost?.verdict;
    answerBox.append(
      list,
      el('p', { className: 'meaning', text: t('meaning.no_answer') }),
      ...(verdict ? [verdictElement(verdict)] : []),
    );
    return;
  }
  const failed = answer.kind !== undefined;
  const rows = [
    ['outcome', outcomeWord(failed ? answer.kind : answer.outcome)],
    ['HTTP status', String(answer.http_status)],
  ];
  if (failed) {
    rows.push(['retryable', t(answer.retryable ? 'answer.retry_yes' : 'answer.retry_no')]);
    rows.push(['message', errorMessage(answer)]);
  } else if (answer.receipt) {
    rows.push(['receipt', t('answer.receipt_text', { seq: answer.receipt.seq, balance: answer.receipt.balance_after })]);
  } else {
    rows.push(['receipt', t('answer.no_receipt')]);
  }
  const verdict = answer.verdict;
  // The atomic handler's meaning is true of the atomic handler only (and of
  // a refusal before any SQL, whichever the handler); a mistake is
  // explained by its verdict, in its own terms.
  const atomicProse = !verdict || verdict.handler === 'atomic' || verdict.heard === 'refused';
  const ok = verdict ? verdict.kind === 'correct' && !failed : !failed;
  answerBox.append(
    replyList(rows, ok ? 'reply reply-ok' : 'reply reply-error'),
    ...(atomicProse ? [el('p', { className: 'meaning', text: t(`meaning.${failed ? answer.kind : answer.outcome}`) })] : []),
    ...(verdict ? [verdictElement(verdict)] : []),
  );
}

// `term` is the stable name (kept in data-term for tests and styling); the
// visible label is translated.
const TERM_KEYS = {
  outcome: 'answer.outcome',
  'HTTP status': 'answer.status',
  retryable: 'answer.retryable',
  message: 'answer.message',
  receipt: 'answer.receipt',
};

function replyList(rows, className) {
  const list = el('dl', { className });
  for (const [term, value] of rows) {
    list.append(el('dt', { text: t(TERM_KEYS[term]) }), el('dd', { text: value, data: { term } }));
  }
  return list;
}

/** Forgets the shown answer, log and answer lines (after a reset). */
function clearShown() {
  shownSend = null;
  showAnswer(null);
  logList.replaceChildren();
  summaryLine.hidden = true;
  deliverStrip.clear();
  redeliverStrip.clear();
}

// ---- Presets and "redeliver" ------------------------------------------------

// Each preset sets every field its lesson depends on (the example's account
// and amount unless the lesson is about them), so what an earlier preset or
// "redeliver … to another account" left in the form cannot change its answer.
const PRESETS = {
  example: () => EXAMPLE,
  // A key not delivered yet — the next number after the current event_id,
  // "evt-1" → "evt-2" — with the example's account and amount.
  next: (current) => ({ ...EXAMPLE, source: current.source || EXAMPLE.source, event_id: nextId(current.event_id) }),
  provider_b: () => ({ ...EXAMPLE, source: 'provider-b' }),
  missing_account: () => ({ ...EXAMPLE, event_id: 'evt-42', account_id: 42 }),
  amount_zero: () => ({ ...EXAMPLE, amount: 0 }),
};

function nextId(id) {
  const match = /^(.*?)(\d+)$/.exec(id);
  return match ? `${match[1]}${Number(match[2]) + 1}` : `${id}-2`;
}

// Another amount or account for the same key: the handler must refuse it (422).
const REDELIVER = {
  same: (event) => event,
  amount: (event) => ({ ...event, amount: typeof event.amount === 'number' ? event.amount + 200 : 700 }),
  account: (event) => ({ ...event, account_id: typeof event.account_id === 'number' ? event.account_id + 1 : 2 }),
};

/** Puts `event` in the form. */
function fillForm(event) {
  for (const field of ['source', 'event_id', 'account_id', 'amount']) {
    form.elements[field].value = String(event[field]);
  }
}

/**
 * Puts `event` in the form for the reader to send (a workshop chip): opens
 * the deliver screen, fills the form, and moves the focus to Deliver —
 * pressing it is the reader's part.
 */
function fillFormForReader(event) {
  services.panels.nav.open('deliver');
  clearErrors(form);
  fillForm(event);
  form.querySelector('button[type=submit]').focus();
}

/**
 * Sets the whole form to a send a share link holds (www/lib/share.js:
 * {event, handler, fault, lose, attempts, delay}), as a reader would.
 */
function setForm({ event, handler, fault, lose, attempts, delay }) {
  clearErrors(form);
  fillForm(event);
  setHandler(handler);
  setFault(fault);
  setLoseResponse(lose);
  form.elements.attempts.value = String(attempts);
  form.elements.first_delay.value = String(delay / 1000);
}

/**
 * Replays a send of a share link: the form set to it, then sent as "Deliver"
 * sends it (its answer next to Deliver). Resolves once the send is over.
 */
function replaySend(send) {
  setForm(send);
  return sendForm(deliverStrip);
}

/** Puts `event` in the form and sends it with the form's options, as "Deliver" does; `strip` shows the answer. */
function deliverFromForm(event, strip = null) {
  fillForm(event);
  return sendForm(strip);
}

async function sendForm(strip) {
  const options = formOptions();
  if (options !== null) {
    await send(formEvent(), { ...options, strip });
  }
}

// The note under the handler says what the chosen one does.
function describeHandler() {
  handlerNote.textContent = t(`handler.${form.elements.handler.value}`);
}

const FAULTS = ['none', 'after_insert', 'after_update'];

/** A group of chips: its label (`key`), then `chips`. */
function chipGroup(id, key, className, chips) {
  return el('div', { className, attrs: { role: 'group', 'aria-labelledby': id } }, el('span', { className: 'group-label', i18n: key, attrs: { id } }), ...chips);
}

/** A select `#name` with its options, each `[value, key]`. */
function selectField(name, options, describedBy) {
  const box = field(name, `sender.${name}`, { name, 'aria-describedby': describedBy }, { className: 'field field-wide', input: 'select' });
  box.querySelector('select').append(...options.map(([value, key]) => el('option', { i18n: key, attrs: { value } })));
  return box;
}

/** The form: the event's fields, the handler, the crash point, how the sender behaves. */
function buildForm() {
  const text = { autocomplete: 'off' };
  const number = { inputmode: 'numeric', autocomplete: 'off' };
  const handler = selectField('handler', HANDLERS.map((h) => [h, `sender.handler.${h}`]), 'handler-note');
  handlerNote = el('p', { className: 'note', attrs: { id: 'handler-note' } });
  handler.querySelector('select').after(handlerNote);
  return el(
    'form',
    { attrs: { id: 'deliver-form', novalidate: '' } },
    ...Object.entries(EXAMPLE).map(([name, value]) =>
      field(name, name, { name, value, ...(typeof value === 'number' ? number : text) }),
    ),
    handler,
    selectField('fault', FAULTS.map((f) => [f === 'none' ? '' : f, `sender.fault.${f}`])),
    el(
      'fieldset',
      { className: 'field-wide policy' },
      el('legend', { i18n: 'sender.policy' }),
      el('label', { className: 'check' }, el('input', { attrs: { id: 'lose_response', name: 'lose_response', type: 'checkbox' } }), el('span', { i18n: 'sender.lose' })),
      el(
        'div',
        { className: 'policy-fields' },
        field('attempts', 'sender.attempts', { name: 'attempts', value: '5', ...number }),
        field('first_delay', 'sender.first_delay', { name: 'first_delay', value: '1', inputmode: 'decimal', autocomplete: 'off' }),
      ),
      el('p', { className: 'note', i18n: 'sender.policy.note' }),
    ),
    el(
      'div',
      { className: 'actions' },
      el('button', { i18n: 'sender.deliver', attrs: { type: 'submit' } }),
      el('button', { className: 'secondary', i18n: 'sender.restore', attrs: { type: 'reset' } }),
    ),
  );
}

/**
 * Builds the sender in `root` (#sender); what came back goes in #heard (the
 * timeline's panel). Returns the actions levels, share links, step mode,
 * bursts, the workshop and the console API drive the sender with.
 */
export function mount(root, pageServices) {
  services = pageServices;
  form = buildForm();
  const presets = Object.keys(PRESETS).map((name) =>
    el('button', { className: 'chip', i18n: `sender.preset.${name}`, data: { preset: name }, attrs: { type: 'button' } }),
  );
  redeliverButtons = Object.keys(REDELIVER).map((name) =>
    el('button', { className: 'secondary small', i18n: `sender.redeliver.${name}`, data: { redeliver: name }, attrs: { type: 'button', disabled: '' } }),
  );
  root.append(
    el('h2', { i18n: 'sender.title', attrs: { id: 'sender-title' } }),
    chipGroup('presets-label', 'sender.presets', 'chips', presets),
    form,
    el('details', { className: 'paste', attrs: { id: 'paste' } }), // the paste panel's mount point
    chipGroup('redeliver-label', 'sender.redeliver', 'chips redeliver', redeliverButtons),
  );
  answerBox = document.querySelector('#answer');
  logList = document.querySelector('#sender-log');
  summaryLine = document.querySelector('#sender-summary');
  clockLine = document.querySelector('#sender-clock');
  deliverStrip = resultStrip();
  form.querySelector('.actions').append(deliverStrip.element);
  redeliverStrip = resultStrip();
  document.querySelector('.redeliver').after(redeliverStrip.element);

  for (const button of presets) {
    button.addEventListener('click', () => {
      clearErrors(form);
      fillForm(PRESETS[button.dataset.preset](formEvent()));
    });
  }

  for (const button of redeliverButtons) {
    button.addEventListener('click', () => {
      // Show what goes out, then send it the way the Deliver button does.
      whileBusy(() => deliverFromForm(REDELIVER[button.dataset.redeliver](lastEvent), redeliverStrip));
    });
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    whileBusy(() => sendForm(deliverStrip));
  });

  // "Restore the example" also clears the messages that belonged to the old
  // values, and describes the handler once the form has its old values back.
  form.addEventListener('reset', () => {
    clearErrors(form);
    setTimeout(describeHandler);
  });
  form.elements.handler.addEventListener('change', describeHandler);
  describeHandler();

  onLanguageChange(() => {
    describeHandler();
    if (shownSend !== null) {
      showLog(shownSend);
    } else {
      showClock();
    }
    if (shownAnswer !== null) {
      showAnswer(shownAnswer.answer, shownAnswer.event);
    }
  });

  showClock();
  return {
    send,
    // A policy for callers outside the form (the console API): validated the same way.
    policyOf: ({ attempts = 5, firstDelayMs = 1000 } = {}) => new RetryPolicy({ attempts, firstDelayMs }),
    formEvent,
    formOptions,
    formHandler: () => form.elements.handler.value,
    now: () => clock.now, // the sender's simulated time (ms)
    setFault,
    setHandler,
    setLoseResponse,
    setForm,
    fillFormForReader,
    replaySend,
    clearShown,
    showError: (error) => showError(form, error),
  };
}
