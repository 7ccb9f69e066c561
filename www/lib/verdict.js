// What a delivery really did, in words: the `verdict` Rust adds to every
// delivery's answer and error object (src/labs/verdicts/, documented in
// www/db/worker.js). The page judges nothing itself: it shows the kind with
// a colour AND a word, and explains it with the facts Rust reported and
// the handler's own lesson — never the atomic handler's prose for a
// mistake.
//
//   verdict = {kind, handler, heard, credits_before, credits, credits_known,
//              kept: {row, credit}, sent: {account_id, amount} | null,
//              stored_before, stored_after: {account_id, amount, receipt} | null,
//              balance: {account, before, after} | null,
//              breaks_on: "repeat" | … | null, unreached: {fault, why} | null}
//
// A mistake found correct wears "Correct this time" on a dashed badge and
// names what breaks it (`breaks_on`), apart from atomic's solid "Correct".

import { el, formatNumber } from './dom.js';
import { outcomeWord } from './errors.js';
import { register, t } from './i18n.js';

register({
  'verdict.label': { en: 'Verdict', ru: 'Вердикт' },
  'verdict.kind.correct': { en: 'Correct', ru: 'Верно' },
  'verdict.kind.correct_this_time': { en: 'Correct this time', ru: 'Верно на этот раз' },
  'verdict.kind.credited_twice': { en: 'Credited twice', ru: 'Зачислено дважды' },
  'verdict.kind.credit_lost': { en: 'Credit lost', ru: 'Зачисление потеряно' },
  'verdict.kind.false_duplicate': { en: 'False duplicate', ru: 'Ложный дубликат' },
  'verdict.kind.history_rewritten': { en: 'History rewritten', ru: 'История переписана' },
  'verdict.kind.failed_after_commit': { en: 'Failed after committing', ru: 'Ошибка после фиксации' },
  'verdict.kind.unknown': { en: 'Not judged', ru: 'Без вердикта' },
  'verdict.why.credited_twice': { en: 'This event has now been credited {credits} times: this delivery paid it again (balance {before} → {after}).',
    ru: 'Зачислений этого события уже {credits}: эта доставка заплатила повторно (баланс {before} → {after}).' },
  'verdict.why.credit_lost': { en: 'Answered “{heard}”, so the sender stops — but the event’s credit was never committed: it is registered in the inbox, and the balance never got it ({before} → {after}). Lost for good.',
    ru: 'Ответ «{heard}», и отправитель больше не повторит, но зачисление этого события так и не зафиксировано: в inbox оно записано, а баланс его не получил ({before} → {after}). Потеряно навсегда.' },
  'verdict.why.false_duplicate': { en: 'Answered “duplicate” (200) for a payload that is not the stored one: stored account {stored_account}, amount {stored_amount}; sent account {sent_account}, amount {sent_amount}. The sender believes its payload was accepted; it was never applied.',
    ru: 'Ответ «duplicate» (200) на содержимое, которое не совпадает с сохранённым: сохранены счёт {stored_account} и сумма {stored_amount}, отправлены счёт {sent_account} и сумма {sent_amount}. Отправитель думает, что его содержимое принято, а оно так и не применено.' },
  'verdict.why.history_rewritten': { en: 'The stored first delivery was replaced: account {stored_account}, amount {stored_amount} → account {now_account}, amount {now_amount}. What the first delivery did can no longer be read back, and the event has been credited {credits} times.',
    ru: 'Сохранённая первая доставка заменена: счёт {stored_account}, сумма {stored_amount} → счёт {now_account}, сумма {now_amount}. Что сделала первая доставка, прочитать уже нельзя, а зачислений этого события уже {credits}.' },
  'verdict.why.failed_after_commit': { en: 'Answered “{heard}”, which tells the sender to try again as if nothing happened — yet {kept} was already committed (balance {before} → {after}).',
    ru: 'Ответ «{heard}» велит отправителю повторить, будто ничего не произошло, а между тем уже зафиксировано: {kept} (баланс {before} → {after}).' },
  'verdict.why.unknown': { en: 'The tables could not be read after this delivery, so nothing is claimed about it.',
    ru: 'После этой доставки таблицы прочитать не удалось, поэтому о ней ничего не утверждается.' },
  'verdict.why.refused': { en: 'Refused before any SQL ran: nothing changed.', ru: 'Отклонено до всякого SQL: ничего не изменилось.' },
  'verdict.kept.both': { en: 'the inbox row and the credit', ru: 'строка inbox и зачисление' },
  'verdict.kept.row': { en: 'the inbox row, without the credit', ru: 'строка inbox, но не зачисление' },
  'verdict.kept.credit': { en: 'the credit, without the inbox row', ru: 'зачисление, но не строка inbox' },
  'verdict.correct.atomic': { en: 'Correct: the unique key decided who was first, and the inbox row, the credit and the receipt committed together or not at all.',
    ru: 'Верно: кто первый, решил уникальный ключ, а строка inbox, зачисление и квитанция зафиксированы вместе — или не зафиксировано ничего.' },
  'verdict.correct.no_dedup': { en: 'Correct this time only because nothing repeated: no_dedup records nothing, so the next delivery of this event pays again.',
    ru: 'Верно лишь потому, что повторов ещё не было: no_dedup ничего не записывает, и следующая доставка этого события заплатит снова.' },
  'verdict.correct.check_then_act': { en: 'Correct this time: nothing raced it and it did not die between its statements. Its SELECT, UPDATE and INSERT each commit on their own, so a crash after the UPDATE, or a second delivery at the same moment, credits twice.',
    ru: 'На этот раз верно: никто не вклинился и обработчик не упал между запросами. Его SELECT, UPDATE и INSERT фиксируются по отдельности, поэтому сбой после UPDATE или вторая доставка в тот же момент зачисляют дважды.' },
  'verdict.correct.two_transactions': { en: 'Correct this time: both of its transactions committed, or neither. A crash between them leaves the event registered without its credit, and the retry is answered “duplicate”.',
    ru: 'На этот раз верно: обе его транзакции зафиксированы (или ни одна). Сбой между ними оставляет событие записанным без зачисления, а на повтор придёт «duplicate».' },
  'verdict.correct.insert_or_ignore': { en: 'Correct this time: its transaction held, and any stored payload matched. INSERT OR IGNORE never compares payloads, so the same key with another amount is answered “duplicate”.',
    ru: 'На этот раз верно: транзакция устояла, а сохранённое содержимое, если было, совпало. INSERT OR IGNORE содержимое не сравнивает, поэтому тот же ключ с другой суммой получит «duplicate».' },
  'verdict.correct.insert_or_replace': { en: 'Correct this time: nothing was stored under this key yet. INSERT OR REPLACE deletes the stored row on every repeat and credits again.',
    ru: 'На этот раз верно: под этим ключом ещё ничего не было. INSERT OR REPLACE при каждом повторе удаляет сохранённую строку и зачисляет снова.' },
  'verdict.lesson.no_dedup': { en: 'no_dedup’s mistake: no inbox, so nothing says this event was seen.',
    ru: 'Ошибка no_dedup: inbox нет, и ничто не помнит, что событие уже было.' },
  'verdict.lesson.check_then_act': { en: 'check_then_act’s mistake: SELECT, UPDATE and INSERT are separate commits, so the credit can be kept without the record of it.',
    ru: 'Ошибка check_then_act: SELECT, UPDATE и INSERT фиксируются по отдельности, и зачисление может остаться без записи о нём.' },
  'verdict.lesson.two_transactions': { en: 'two_transactions’ mistake: the event is registered in one transaction and credited in another.',
    ru: 'Ошибка two_transactions: событие записывается в одной транзакции, а зачисляется в другой.' },
  'verdict.lesson.insert_or_ignore': { en: 'insert_or_ignore’s mistake: “no row inserted” is taken for “already done”, and the payload is never compared.',
    ru: 'Ошибка insert_or_ignore: «строка не вставлена» принимается за «уже сделано», а содержимое не сравнивается.' },
  'verdict.lesson.insert_or_replace': { en: 'insert_or_replace’s mistake: a repeat deletes the stored row and writes its own, so it is applied again.',
    ru: 'Ошибка insert_or_replace: повтор удаляет сохранённую строку и пишет свою, поэтому применяется снова.' },
  'verdict.lesson.atomic': { en: 'The atomic handler cannot do this; if you see it, it is a bug: please report it.',
    ru: 'Атомарный обработчик так ошибиться не может; если вы это видите, это дефект — сообщите о нём.' },
  'verdict.facts': { en: 'What ran, per Rust: kept by this delivery — {kept}; credits of this event so far: {credits}; account {account}: {before} → {after}.',
    ru: 'Что выполнено, по данным Rust: эта доставка сохранила — {kept}; зачислений этого события сейчас: {credits}; счёт {account}: {before} → {after}.' },
  'verdict.facts.unwatched': { en: ' (credits before this page watched it are inferred from the inbox row)',
    ru: ' (зачисления до того, как страница начала следить, выведены из строки inbox)' },
  'verdict.kept.none': { en: 'nothing', ru: 'ничего' },
  'verdict.breaks.repeat': { en: 'a repeat of this event breaks it', ru: 'его сломает повтор этого события' },
  'verdict.breaks.other_payload': { en: 'the same key with another amount breaks it', ru: 'его сломает тот же ключ с другой суммой' },
  'verdict.breaks.crash_after_insert': { en: 'a crash after its INSERT breaks it', ru: 'его сломает сбой после INSERT' },
  'verdict.breaks.crash_after_update': { en: 'a crash after its UPDATE breaks it', ru: 'его сломает сбой после UPDATE' },
  'verdict.unreached.absent.after_insert': { en: 'This handler has no INSERT into inbox: the crash point was not reached.',
    ru: 'У этого обработчика нет INSERT в inbox: точка сбоя не достигнута.' },
  'verdict.unreached.absent.after_update': { en: 'This handler has no UPDATE of the balance: the crash point was not reached.',
    ru: 'У этого обработчика нет UPDATE баланса: точка сбоя не достигнута.' },
  'verdict.unreached.not_run.after_insert': { en: 'This delivery answered before its INSERT into inbox ran: the crash point was not reached.',
    ru: 'Эта доставка ответила раньше, чем выполнила INSERT в inbox: точка сбоя не достигнута.' },
  'verdict.unreached.not_run.after_update': { en: 'This delivery answered before its UPDATE of the balance ran: the crash point was not reached.',
    ru: 'Эта доставка ответила раньше, чем выполнила UPDATE баланса: точка сбоя не достигнута.' },
  'verdict.unreached.no_row.after_insert': { en: 'The INSERT into inbox inserted no row (the event was already there): the crash point was not reached.',
    ru: 'INSERT в inbox не вставил строку (событие уже было): точка сбоя не достигнута.' },
  'verdict.unreached.no_row.after_update': { en: 'The UPDATE of the balance changed no row: the crash point was not reached.',
    ru: 'UPDATE баланса не изменил ни одной строки: точка сбоя не достигнута.' },
  'verdict.no_account': { en: 'no such account', ru: 'такого счёта нет' },
});

/** Kinds that are not "correct", in the order of src/labs/verdicts/mod.rs. */
export const WRONG_KINDS = Object.freeze(['credited_twice', 'credit_lost', 'false_duplicate', 'history_rewritten', 'failed_after_commit']);

function money(value) {
  return value === null || value === undefined ? t('verdict.no_account') : formatNumber(value);
}

function keptText(kept) {
  if (kept.row && kept.credit) {
    return t('verdict.kept.both');
  }
  if (kept.row) {
    return t('verdict.kept.row');
  }
  return kept.credit ? t('verdict.kept.credit') : t('verdict.kept.none');
}

/**
 * The verdict's word on its badge — "Correct", "Correct this time" (a
 * mistake, right by luck: dashed), "Credited twice", ... — coloured as well.
 */
export function verdictBadge({ kind, breaks_on: lucky }) {
  const word = t(lucky ? 'verdict.kind.correct_this_time' : `verdict.kind.${kind}`);
  return el('span', { className: `verdict-badge verdict-${kind}${lucky ? ' verdict-lucky' : ''}`, text: word });
}

/** What is said next to the badge wherever it is shown: what breaks a mistake right this time; why a crash point was not reached. */
export function verdictNotes({ breaks_on: breaks, unreached }) {
  return [
    ...(breaks ? [t(`verdict.breaks.${breaks}`)] : []),
    ...(unreached ? [t(`verdict.unreached.${unreached.why}.${unreached.fault}`)] : []),
  ];
}

/**
 * Why, in the handler's own terms: what went wrong and the mistake's
 * lesson, or why a correct answer was correct (for a mistake: "this time").
 */
export function verdictWhy(verdict) {
  const balance = verdict.balance ?? {};
  const params = {
    heard: outcomeWord(verdict.heard), // in words: "simulated crash", not simulated_crash
    credits: verdict.credits,
    before: money(balance.before),
    after: money(balance.after),
    kept: keptText(verdict.kept),
    sent_account: verdict.sent?.account_id,
    sent_amount: money(verdict.sent?.amount),
    stored_account: verdict.stored_before?.account_id,
    stored_amount: money(verdict.stored_before?.amount),
    now_account: verdict.stored_after?.account_id,
    now_amount: money(verdict.stored_after?.amount),
  };
  if (verdict.heard === 'refused') {
    return t('verdict.why.refused');
  }
  if (verdict.kind === 'correct') {
    return t(`verdict.correct.${verdict.handler}`);
  }
  if (verdict.kind === 'unknown') {
    return t('verdict.why.unknown');
  }
  return `${t(`verdict.why.${verdict.kind}`, params)} ${t(`verdict.lesson.${verdict.handler}`)}`;
}

/** The facts the verdict was drawn from, in one sentence (null when refused). */
export function verdictFacts(verdict) {
  if (verdict.heard === 'refused' || verdict.balance === null) {
    return null;
  }
  const { account, before, after } = verdict.balance;
  const text = t('verdict.facts', {
    kept: keptText(verdict.kept),
    credits: verdict.credits,
    account,
    before: money(before),
    after: money(after),
  });
  return verdict.credits_known ? text : `${text}${t('verdict.facts.unwatched')}`;
}

/**
 * The verdict as an element: the word on a coloured badge (the colour
 * repeats the word, never replaces it) and, unless `short`, why and the
 * facts. `data-verdict` carries the kind for tests and styling.
 */
export function verdictElement(verdict, { short = false } = {}) {
  const badge = verdictBadge(verdict);
  if (short) {
    return el('span', { className: 'judged judged-short', data: { verdict: verdict.kind }, attrs: { title: verdictWhy(verdict) } }, badge);
  }
  const facts = verdictFacts(verdict);
  return el(
    'div',
    { className: `judged verdict-box verdict-box-${verdict.kind === 'correct' ? 'ok' : 'wrong'}`, data: { verdict: verdict.kind } },
    el(
      'p',
      { className: 'verdict-head' },
      el('span', { className: 'verdict-label', text: `${t('verdict.label')}: ` }),
      badge,
      ...verdictNotes(verdict).map((note) => el('span', { className: 'verdict-note', text: ` · ${note}` })),
    ),
    el('p', { className: 'verdict-why', text: verdictWhy(verdict) }),
    ...(facts === null ? [] : [el('p', { className: 'verdict-facts', text: facts })]),
  );
}
