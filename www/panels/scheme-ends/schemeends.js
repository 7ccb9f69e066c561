// "Where the scheme ends": the article's last part, runnable.
//
// A unique key plus one transaction make each event count once inside this
// database. Three things they do not give you, each an experiment with its
// explanation and its fix:
//
//   1. Side effects. "Notify the user" goes to another system, which no
//      SQLite transaction can include (src/labs/scheme_ends/outbox.rs). Send before COMMIT,
//      send after COMMIT, or the transactional outbox and its dispatcher;
//      the receiver with or without its own dedup by message id.
//   2. Business keys. Two different events about one order both pass event
//      dedup; a unique business key makes the second a business answer
//      (src/labs/scheme_ends/business.rs).
//   3. Retention. Purging inbox rows makes old events new again
//      (src/labs/scheme_ends/retention.rs), on the lab's simulated clock.
//
// The experiments run on the reader's database through `inboxLab.scheme`
// (client.js; the worker documents the ops), so they share it with the
// panels above: credits go to account 1, the purge purges the whole inbox.
// The rules are Rust's. The page only puts side by side what the database
// committed and what the receiver showed, and calls the difference by its
// name (a notification without a credit, a credit without one, a repeat).
// For that it keeps a memory of this visit — which events this panel
// delivered, how often the dispatcher sent each message — that no table
// records.
//
// Everything typed or returned is rendered with textContent (dom.js).

import { inboxLab, onTablesChanged } from '../../db/client.js';
import { el, formatNumber, whileBusy } from '../../lib/dom.js';
import { currentLanguage, has, onLanguageChange, register, t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';
import { refresh as refreshTables } from '../tables/tables.js';

register({
  en: {
    'se.title': 'Where the scheme ends',
    'se.intro':
      'A unique key and one transaction make each event count once — inside this database. The article ends with what they do not cover. Three experiments on your database: they credit account 1, and the panels above show the same tables.',
    'se.try': 'Try:',
    'se.fix': 'The fix',
    'se.balance': 'Balance of account 1: {balance}',
    'se.no_account': 'Account 1 does not exist in this database: credits are refused.',
    'se.answer': '{event}: {outcome} · HTTP {status}',
    'se.answer_error': '{event}: {outcome} · HTTP {status} — {message}',
    'se.empty': 'empty',

    'se.fx.title': '1. Side effects: “notify the user” is not in the transaction',
    'se.fx.problem':
      'Each credit should notify the user. The notification goes to another system, the user’s phone, and no SQLite transaction can take it back. Send it before COMMIT and a failure leaves the user told about money that never arrived. Send it after COMMIT and a crash in between loses it for good: the sender’s retry is a duplicate, and a duplicate sends nothing.',
    'se.fx.try':
      'send, then COMMIT, with a failure before COMMIT. Then COMMIT, then send, with a crash after COMMIT. Then the outbox, and a dispatcher that crashes after sending — with the receiver’s dedup off, then on.',
    'se.fx.strategy': 'How the handler notifies',
    'se.fx.strategy.send_before_commit': 'send, then COMMIT',
    'se.fx.strategy.send_after_commit': 'COMMIT, then send',
    'se.fx.strategy.outbox': 'outbox: write the message in the same transaction; a dispatcher sends it',
    'se.fx.crash': 'Crash on this delivery',
    'se.fx.crash.none': 'none',
    'se.fx.crash.after_send_before_commit': 'the transaction fails just before COMMIT',
    'se.fx.crash.after_commit_before_send': 'the handler dies between COMMIT and the send (COMMIT, then send only)',
    'se.fx.event': 'Event: {source} / {event_id} → account 1, +{amount}',
    'se.fx.event_note': 'After a 500 the sender retries this event; after a 200 it moves on to the next one.',
    'se.fx.deliver': 'Deliver',
    'se.fx.dispatcher': 'The outbox dispatcher',
    'se.fx.dispatcher_note':
      'A separate loop: take the oldest unsent message, send it, mark it sent. It can die between sending and marking.',
    'se.fx.dispatch': 'Run the dispatcher',
    'se.fx.dispatch_crash': 'Dispatcher crashes after sending',
    'se.fx.dispatched': 'Messages sent: {count}. The outbox is drained.',
    'se.fx.dispatch_idle': 'Nothing to send: no message is pending.',
    'se.fx.dispatch_crashed':
      'The dispatcher sent message {id} and died before marking it sent: the outbox still says pending.',
    'se.fx.dedup': 'The receiver deduplicates by message id',
    'se.fx.dedup_note': 'Switching starts a new receiver with an empty screen; the database stays as it is.',
    'se.fx.ours': 'Our database',
    'se.fx.phone': 'What the user saw',
    'se.fx.phone_dedup': 'receiver with dedup',
    'se.fx.phone_plain': 'receiver without dedup',
    'se.fx.nothing_shown': 'No notifications yet.',
    'se.fx.notification': '+{amount} to account {account}',
    'se.fx.again': 'again',
    'se.fx.outbox': 'outbox',
    'se.fx.sent': 'sent',
    'se.fx.pending': 'pending',
    'se.fx.verdicts': 'Every credit of this panel, and what the user was told',
    'se.fx.credited': 'credited: {answer}',
    'se.fx.shown': 'shown: {count}',
    'se.fx.yes': 'yes',
    'se.fx.no': 'no',
    'se.fx.no_verdicts': 'Deliver an event to see what the user is told.',
    'se.fx.v.once': 'exactly once',
    'se.fx.v.phantom': 'told about a credit that never happened',
    'se.fx.v.lost': 'credited, never notified: lost for good',
    'se.fx.v.pending': 'credited; the message waits in the outbox',
    'se.fx.v.duplicate': 'notified {count} times for one credit',
    'se.fx.v.nothing': 'rolled back: no credit, no notification',
    'se.fx.at_least_once':
      'At-least-once: message {id} went out {sends} times, because the dispatcher died between sending it and marking it sent. The outbox never loses a notification and never sends one for a rolled-back credit — but it can send one twice.',
    'se.fx.at_least_once.dedup': 'The receiver’s own inbox of message ids dropped the repeat: the user saw it once.',
    'se.fx.at_least_once.plain':
      'This receiver does not deduplicate: the user saw it {shown} times. Turn its dedup on and run it again.',
    'se.fx.fix':
      'The transactional outbox: the notification becomes a row written in the same transaction as the credit and the inbox row, so they commit or roll back together, and a dispatcher sends it later. The outbox is at-least-once, so the receiver must deduplicate by message id — the same pattern as our inbox — or the effect must be safe to repeat. A transaction in one database does not reach across the network.',

    'se.bk.title': '2. Business keys: two events, one order',
    'se.bk.problem':
      'Event dedup answers “did I process this event?”, not “did I already activate this order?”. A provider may send evt-7 and, after a resend from its admin panel, evt-8 — both about order A-1. Both pass the inbox, legitimately.',
    'se.bk.try': 'the first event, then another event about the same order, then a replay of the first.',
    'se.bk.source': 'source',
    'se.bk.event_id': 'event_id',
    'se.bk.order_id': 'order_id',
    'se.bk.activate': 'Activate the order',
    'se.bk.first': 'first event about the order',
    'se.bk.second': 'another event, same order',
    'se.bk.replay': 'replay the first event',
    'se.bk.next': 'next order',
    'se.bk.answer': '{event_id} → order {order_id}: {outcome} · HTTP {status}',
    'se.bk.m.activated': 'This event activated the order: its order_events row and the order row committed in one transaction.',
    'se.bk.m.already_active':
      'The order was already activated by {by_source} / {by_event_id}. The business key decided, inside the transaction: a business answer with 200, not a 500 from a constraint. Nothing changed, and the sender has nothing to retry.',
    'se.bk.m.duplicate': 'This very event was processed before: its first answer, {first}, again. Nothing changed.',
    'se.bk.m.error': 'Refused, and nothing was written.',
    'se.bk.fix':
      'A unique business key — here orders.order_id — written in the same transaction as the event’s own inbox row: the same idea as (source, event_id), one level up. Not a hash of the content, though: two real credits can have the same account and amount. Equal data is not equal intent.',

    'se.rt.title': '3. Retention: a purged inbox row makes an old event new',
    'se.rt.problem':
      'The inbox row is the only proof that an event was processed. Purge it, and a late redelivery of that event is applied again. The lab runs on a simulated clock, so waiting days takes a click.',
    'se.rt.try':
      'deliver the event, +1 day twice, purge with a 1-day window, deliver it again — as a sender still inside its redelivery window would.',
    'se.rt.clock': 'Lab clock: day {day}',
    'se.rt.plus_day': '+1 day',
    'se.rt.plus_week': '+7 days',
    'se.rt.window': 'Purge rows older than',
    'se.rt.days_one': '{days} day',
    'se.rt.days_few': '{days} days',
    'se.rt.days_many': '{days} days',
    'se.rt.days_other': '{days} days',
    'se.rt.purge': 'Purge the inbox',
    'se.rt.event': 'Event: {source} / {event_id} → account 1, +{amount}',
    'se.rt.deliver': 'Deliver (or redeliver)',
    'se.rt.next': 'Next event',
    'se.rt.row.none': 'Inbox row for {event_id}: none — not delivered yet, or purged.',
    'se.rt.row.kept': 'Inbox row for {event_id}: kept — a redelivery is a duplicate.',
    'se.rt.row.kept_since': 'Inbox row for {event_id}: kept since day {day} — a redelivery is a duplicate.',
    'se.rt.log.deliver': 'Day {day}: {event_id} → {outcome} · HTTP {status}; balance {balance}.',
    'se.rt.log.error': 'Day {day}: {event_id} → {outcome} · HTTP {status}: {message}',
    'se.rt.log.again':
      'Day {day}: {event_id} → applied AGAIN (HTTP 200): one event, credited {times} times; balance {balance}. The row that proved it was processed had been purged.',
    'se.rt.log.purge': 'Day {day}: purge with a window of {window} — inbox rows deleted: {count}.',
    'se.rt.rule':
      'The rule: keep inbox rows longer than the sender’s redelivery window and any manual resend an operator might do. There is no universally safe number of days; it comes from the sender’s contract.',
    'se.rt.interrupt':
      'The purge is safe to interrupt: it deletes in batches of 100 rows, each its own transaction. Stopped half-way, some rows are gone and the rest are intact; deleting inbox rows never touches a balance, and the next purge finishes the job.',
    'se.rt.scope': 'The purge acts on the whole inbox of your database, including events from the panels above.',
  },
  ru: {
    'se.title': 'Где схема заканчивается',
    'se.intro':
      'Уникальный ключ и одна транзакция гарантируют, что событие учтётся один раз — внутри этой базы. Статья заканчивается тем, чего они не покрывают. Три эксперимента на вашей базе: они зачисляют на счёт 1, а панели выше показывают те же таблицы.',
    'se.try': 'Попробуйте:',
    'se.fix': 'Как исправить',
    'se.balance': 'Баланс счёта 1: {balance}',
    'se.no_account': 'В этой базе нет счёта 1: зачисления отклоняются.',
    'se.answer': '{event}: {outcome} · HTTP {status}',
    'se.answer_error': '{event}: {outcome} · HTTP {status} — {message}',
    'se.empty': 'пусто',

    'se.fx.title': '1. Побочные эффекты: «уведомить пользователя» не входит в транзакцию',
    'se.fx.problem':
      'О каждом зачислении пользователь должен получить уведомление. Оно уходит в другую систему — на телефон пользователя, и никакая транзакция SQLite не может его отозвать. Отправили до COMMIT — при сбое пользователь узнает о деньгах, которые не пришли. Отправили после COMMIT — падение между шагами теряет уведомление навсегда: повтор отправителя окажется дубликатом, а дубликат ничего не отправляет.',
    'se.fx.try':
      'сначала отправить, потом COMMIT — со сбоем перед COMMIT. Затем COMMIT, потом отправка — с падением после COMMIT. Затем outbox и диспетчер, который падает после отправки, — с выключенной и включённой дедупликацией у получателя.',
    'se.fx.strategy': 'Как обработчик уведомляет',
    'se.fx.strategy.send_before_commit': 'отправить, потом COMMIT',
    'se.fx.strategy.send_after_commit': 'COMMIT, потом отправить',
    'se.fx.strategy.outbox': 'outbox: записать сообщение в той же транзакции; отправит диспетчер',
    'se.fx.crash': 'Сбой при этой доставке',
    'se.fx.crash.none': 'нет',
    'se.fx.crash.after_send_before_commit': 'транзакция падает прямо перед COMMIT',
    'se.fx.crash.after_commit_before_send':
      'обработчик падает между COMMIT и отправкой (только «COMMIT, потом отправить»)',
    'se.fx.event': 'Событие: {source} / {event_id} → счёт 1, +{amount}',
    'se.fx.event_note': 'После ответа 500 отправитель повторит это событие, после 200 — перейдёт к следующему.',
    'se.fx.deliver': 'Доставить',
    'se.fx.dispatcher': 'Диспетчер outbox',
    'se.fx.dispatcher_note':
      'Отдельный цикл: взять самое старое неотправленное сообщение, отправить, отметить отправленным. Он может упасть между отправкой и отметкой.',
    'se.fx.dispatch': 'Запустить диспетчер',
    'se.fx.dispatch_crash': 'Диспетчер падает после отправки',
    'se.fx.dispatched': 'Отправлено сообщений: {count}. Outbox пуст.',
    'se.fx.dispatch_idle': 'Отправлять нечего: ожидающих сообщений нет.',
    'se.fx.dispatch_crashed':
      'Диспетчер отправил сообщение {id} и упал, не успев отметить его отправленным: в outbox оно всё ещё ждёт.',
    'se.fx.dedup': 'Получатель отсекает повторы по id сообщения',
    'se.fx.dedup_note': 'Переключение запускает нового получателя с пустым экраном; база не меняется.',
    'se.fx.ours': 'Наша база',
    'se.fx.phone': 'Что увидел пользователь',
    'se.fx.phone_dedup': 'получатель с дедупликацией',
    'se.fx.phone_plain': 'получатель без дедупликации',
    'se.fx.nothing_shown': 'Уведомлений пока нет.',
    'se.fx.notification': '+{amount} на счёт {account}',
    'se.fx.again': 'повтор',
    'se.fx.outbox': 'outbox',
    'se.fx.sent': 'отправлено',
    'se.fx.pending': 'ждёт отправки',
    'se.fx.verdicts': 'Каждое зачисление этой панели и что узнал пользователь',
    'se.fx.credited': 'зачислено: {answer}',
    'se.fx.shown': 'показано: {count}',
    'se.fx.yes': 'да',
    'se.fx.no': 'нет',
    'se.fx.no_verdicts': 'Доставьте событие, чтобы увидеть, что узнает пользователь.',
    'se.fx.v.once': 'ровно один раз',
    'se.fx.v.phantom': 'уведомление о зачислении, которого не было',
    'se.fx.v.lost': 'зачислено, но уведомления нет и не будет',
    'se.fx.v.pending': 'зачислено; сообщение ждёт в outbox',
    'se.fx.v.duplicate': 'одно зачисление, уведомлений: {count}',
    'se.fx.v.nothing': 'откат: ни зачисления, ни уведомления',
    'se.fx.at_least_once':
      'Хотя бы один раз: сообщение {id} ушло несколько раз ({sends}), потому что диспетчер упал между отправкой и отметкой. Outbox не теряет уведомлений и не отправляет их за откатившиеся зачисления — но может отправить одно дважды.',
    'se.fx.at_least_once.dedup': 'Собственный inbox получателя по id сообщений отбросил повтор: пользователь увидел его один раз.',
    'se.fx.at_least_once.plain':
      'Этот получатель не отсекает повторы: пользователь увидел сообщение несколько раз ({shown}). Включите дедупликацию и повторите.',
    'se.fx.fix':
      'Transactional outbox: уведомление становится строкой, записанной в той же транзакции, что зачисление и строка inbox, — они фиксируются или откатываются вместе, а отправляет его позже диспетчер. Outbox доставляет «хотя бы один раз», поэтому получатель должен отсекать повторы по id сообщения — та же схема, что наш inbox, — либо эффект должен допускать повтор. Транзакция в одной базе не распространяется через сеть.',

    'se.bk.title': '2. Бизнес-ключи: два события, один заказ',
    'se.bk.problem':
      'Дедупликация событий отвечает на вопрос «обработал ли я это событие?», а не «активировал ли я уже этот заказ?». Провайдер может прислать evt-7, а после переотправки из своей админки — evt-8, оба про заказ A-1. Оба вполне законно пройдут inbox.',
    'se.bk.try': 'первое событие, затем другое событие про тот же заказ, затем повтор первого.',
    'se.bk.source': 'source',
    'se.bk.event_id': 'event_id',
    'se.bk.order_id': 'order_id',
    'se.bk.activate': 'Активировать заказ',
    'se.bk.first': 'первое событие о заказе',
    'se.bk.second': 'другое событие, тот же заказ',
    'se.bk.replay': 'повтор первого события',
    'se.bk.next': 'следующий заказ',
    'se.bk.answer': '{event_id} → заказ {order_id}: {outcome} · HTTP {status}',
    'se.bk.m.activated':
      'Это событие активировало заказ: строка order_events и строка заказа зафиксированы одной транзакцией.',
    'se.bk.m.already_active':
      'Заказ уже активировало событие {by_source} / {by_event_id}. Решил бизнес-ключ, внутри транзакции: бизнес-ответ с кодом 200, а не 500 от нарушенного ограничения. Ничего не изменилось, и отправителю нечего повторять.',
    'se.bk.m.duplicate': 'Это самое событие уже обрабатывалось: снова его первый ответ, {first}. Ничего не изменилось.',
    'se.bk.m.error': 'Отклонено, ничего не записано.',
    'se.bk.fix':
      'Уникальный ключ бизнес-операции — здесь orders.order_id, — который записывается в той же транзакции, что и собственная строка inbox события: та же идея, что (source, event_id), уровнем выше. Но не хеш содержимого: у двух настоящих зачислений могут совпасть счёт и сумма. Равенство данных ещё не означает равенство намерений.',

    'se.rt.title': '3. Срок хранения: удалённая строка inbox делает старое событие новым',
    'se.rt.problem':
      'Строка inbox — единственное доказательство, что событие обработано. Удалите её, и запоздалая повторная доставка того же события применится снова. Лаборатория живёт по модельным часам, так что подождать несколько дней — один щелчок.',
    'se.rt.try':
      'доставьте событие, дважды +1 день, удалите строки с окном в 1 день и доставьте событие ещё раз — как сделал бы отправитель, ещё не вышедший из своего срока повторной доставки.',
    'se.rt.clock': 'Часы лаборатории: день {day}',
    'se.rt.plus_day': '+1 день',
    'se.rt.plus_week': '+7 дней',
    'se.rt.window': 'Удалять строки старше',
    'se.rt.days_one': '{days} день',
    'se.rt.days_few': '{days} дня',
    'se.rt.days_many': '{days} дней',
    'se.rt.days_other': '{days} дня',
    'se.rt.purge': 'Очистить inbox',
    'se.rt.event': 'Событие: {source} / {event_id} → счёт 1, +{amount}',
    'se.rt.deliver': 'Доставить (или повторить)',
    'se.rt.next': 'Следующее событие',
    'se.rt.row.none': 'Строка inbox для {event_id}: нет — событие ещё не доставлено или строка удалена.',
    'se.rt.row.kept': 'Строка inbox для {event_id}: есть — повторная доставка будет дубликатом.',
    'se.rt.row.kept_since': 'Строка inbox для {event_id}: есть с дня {day} — повторная доставка будет дубликатом.',
    'se.rt.log.deliver': 'День {day}: {event_id} → {outcome} · HTTP {status}; баланс {balance}.',
    'se.rt.log.error': 'День {day}: {event_id} → {outcome} · HTTP {status}: {message}',
    'se.rt.log.again':
      'День {day}: {event_id} → применено СНОВА (HTTP 200): одно и то же событие зачислено уже {times}-й раз; баланс {balance}. Строку, доказывавшую обработку, удалила очистка.',
    'se.rt.log.purge': 'День {day}: очистка с окном {window} — удалено строк inbox: {count}.',
    'se.rt.rule':
      'Правило: храните строки inbox дольше, чем длится повторная доставка у отправителя, с учётом ручных переотправок. Универсального безопасного срока в днях нет — он следует из договора с отправителем.',
    'se.rt.interrupt':
      'Очистку можно безопасно прервать: она удаляет пачками по 100 строк, каждая пачка — своя транзакция. Прерванная на полпути, она оставит часть строк удалёнными, а остальные целыми; удаление строк inbox никогда не трогает баланс, а следующая очистка доделает работу.',
    'se.rt.scope': 'Очистка действует на весь inbox вашей базы, включая события из панелей выше.',
  },
});

const SOURCE = 'shop';
const ACCOUNT = 1;
const AMOUNT = 100;
const DAY_MS = 86_400_000;
const STRATEGIES = ['send_before_commit', 'send_after_commit', 'outbox'];
const CRASHES = ['', 'after_send_before_commit', 'after_commit_before_send'];
const WINDOWS_DAYS = [1, 3, 7, 30];
// The dispatcher's "run" drains the outbox; a bound keeps a bug from looping forever.
const MAX_DISPATCH_ROUNDS = 1000;

// ---- Small helpers ----------------------------------------------------------

/** An element whose text is the translation of `key`, kept up to date by translatePage(). */
function tx(tag, key, options = {}) {
  return el(tag, { ...options, text: t(key), data: { ...options.data, i18n: key } });
}

/** An error object as one line: translated by its code when the page knows it, else Rust's message. */
function errorText(error) {
  const key = `error.${error.kind}.${error.code}`;
  return error.code !== undefined && has(key) ? t(key, error.params ?? {}) : error.message;
}

function isError(reply) {
  return reply !== null && typeof reply === 'object' && typeof reply.kind === 'string';
}

/** "pay-3: applied · HTTP 200", or the error with its message. */
function answerLine(label, reply) {
  if (isError(reply)) {
    return t('se.answer_error', {
      event: label,
      outcome: reply.kind,
      status: reply.http_status,
      message: errorText(reply),
    });
  }
  return t('se.answer', { event: label, outcome: reply.outcome, status: reply.http_status });
}

/**
 * Runs `action` with <main> busy. Outcomes and expected errors are drawn by
 * the action; anything else it throws (busy while step mode holds the lock,
 * a worker that died) is shown in `note`, an element of its own, instead of
 * being lost.
 */
function act(note, action) {
  return whileBusy(async () => {
    note.textContent = '';
    try {
      await action();
    } catch (error) {
      note.textContent = isError(error) ? errorText(error) : String(error);
    }
  });
}

function nextNumber(ids, prefix) {
  let max = 0;
  for (const id of ids) {
    const match = new RegExp(`^${prefix}-(\\d+)$`).exec(id);
    if (match !== null) {
      max = Math.max(max, Number(match[1]));
    }
  }
  return max + 1;
}

function balanceOf(tables) {
  return tables.accounts.find((account) => account.id === ACCOUNT)?.balance ?? null;
}

function showBalance(node, balance) {
  node.textContent =
    balance === null ? t('se.no_account') : t('se.balance', { balance: formatNumber(balance) });
}

function caseHeader(id, titleKey, problemKey, tryKey) {
  return [
    tx('h3', titleKey, { attrs: { id } }),
    tx('p', problemKey),
    el('p', { className: 'se-try' }, tx('strong', 'se.try'), ' ', tx('span', tryKey)),
  ];
}

function fixBox(fixKey, ...more) {
  return el('div', { className: 'se-fix' }, tx('h4', 'se.fix'), tx('p', fixKey), ...more);
}

// ---- 1. Side effects --------------------------------------------------------

const fx = {
  strategy: 'send_before_commit',
  next: 1, // the number of the next pay-N event
  // Since the receiver started: events this panel delivered, and how many
  // times the dispatcher sent each outbox message (a crash after sending
  // counts: the message went out).
  delivered: new Set(),
  sends: new Map(),
  answer: null, // {label, reply}
  dispatchNote: null, // {key, params}
  tables: null,
  receiver: { receiver: null, dedup: false, shown: [] },
  receiverName: null, // which receiver the memory above is about (worker.js names them)
  outbox: [],
};

const fxNodes = {
  crash: el('select', { attrs: { id: 'se-crash', name: 'crash' } }),
  event: el('p', { className: 'se-event', attrs: { id: 'se-event' } }),
  deliver: el('button', { attrs: { type: 'button', id: 'se-deliver' } }),
  answer: el('p', { className: 'se-answer', attrs: { id: 'se-answer', 'aria-live': 'polite' } }),
  dispatch: tx('button', 'se.fx.dispatch', { className: 'secondary', attrs: { type: 'button', id: 'se-dispatch' } }),
  dispatchCrash: tx('button', 'se.fx.dispatch_crash', {
    className: 'danger',
    attrs: { type: 'button', id: 'se-dispatch-crash' },
  }),
  dispatchNote: el('p', { className: 'note', attrs: { id: 'se-dispatch-note', 'aria-live': 'polite' } }),
  dedup: el('input', { attrs: { type: 'checkbox', id: 'se-dedup', 'aria-describedby': 'se-dedup-note' } }),
  balance: el('p', { className: 'se-balance', attrs: { id: 'se-balance' } }),
  phoneKind: el('p', { className: 'note', attrs: { id: 'se-phone-kind' } }),
  shown: el('ol', { className: 'se-shown', attrs: { id: 'se-shown', 'aria-labelledby': 'se-phone-title' } }),
  shownEmpty: tx('p', 'se.fx.nothing_shown', { className: 'muted' }),
  outbox: el('tbody'),
  // A list, not a table: each verdict is a sentence that must wrap on a phone.
  verdicts: el('ul', { className: 'se-verdicts', attrs: { id: 'se-verdicts', 'aria-labelledby': 'se-verdicts-title' } }),
  verdictsEmpty: tx('p', 'se.fx.no_verdicts', { className: 'muted' }),
  lesson: el('div', { className: 'se-lesson', attrs: { id: 'se-lesson', 'aria-live': 'polite' } }),
  error: el('p', { className: 'field-error', attrs: { role: 'status' } }),
};

function buildEffects() {
  const radios = STRATEGIES.map((strategy) => {
    const input = el('input', {
      attrs: { type: 'radio', name: 'se-strategy', value: strategy, id: `se-strategy-${strategy}` },
    });
    input.checked = strategy === fx.strategy;
    input.addEventListener('change', () => {
      fx.strategy = strategy;
      // Another strategy is another experiment: it gets an event of its
      // own, so what an earlier one did to pay-1 (a notification sent
      // before a failed COMMIT) cannot hide this one's lesson.
      if (fx.delivered.has(currentEvent().event_id)) {
        fx.next += 1;
        fx.answer = null;
      }
      syncCrashOptions();
      renderEffects();
    });
    return el('label', { className: 'check' }, input, tx('span', `se.fx.strategy.${strategy}`));
  });
  for (const crash of CRASHES) {
    fxNodes.crash.append(tx('option', `se.fx.crash.${crash || 'none'}`, { attrs: { value: crash } }));
  }
  syncCrashOptions();
  fxNodes.deliver.addEventListener('click', () => act(fxNodes.error, deliverNotified));
  fxNodes.dispatch.addEventListener('click', () => act(fxNodes.error, () => dispatch(false)));
  fxNodes.dispatchCrash.addEventListener('click', () => act(fxNodes.error, () => dispatch(true)));
  fxNodes.dedup.addEventListener('change', () => act(fxNodes.error, resetReceiver));

  const outboxTable = el(
    'table',
    { attrs: { id: 'se-outbox' } },
    tx('caption', 'se.fx.outbox'),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { text: 'message_id', className: 'number', attrs: { scope: 'col' } }),
        el('th', { text: 'event_id', attrs: { scope: 'col' } }),
        el('th', { text: 'amount', className: 'number', attrs: { scope: 'col' } }),
        el('th', { text: 'sent_at', attrs: { scope: 'col' } }),
      ),
    ),
    fxNodes.outbox,
  );
  return el(
    'section',
    { className: 'se-case', attrs: { id: 'se-effects', 'aria-labelledby': 'se-effects-title' } },
    ...caseHeader('se-effects-title', 'se.fx.title', 'se.fx.problem', 'se.fx.try'),
    el(
      'div',
      { className: 'se-controls' },
      el('fieldset', { className: 'se-strategy' }, tx('legend', 'se.fx.strategy'), ...radios),
      el(
        'div',
        { className: 'se-deliver' },
        el('div', { className: 'field' }, tx('label', 'se.fx.crash', { attrs: { for: 'se-crash' } }), fxNodes.crash),
        fxNodes.event,
        tx('p', 'se.fx.event_note', { className: 'note' }),
        el('div', { className: 'actions' }, fxNodes.deliver),
        fxNodes.answer,
      ),
      el(
        'div',
        { className: 'se-dispatcher' },
        tx('h4', 'se.fx.dispatcher'),
        tx('p', 'se.fx.dispatcher_note', { className: 'note' }),
        el('div', { className: 'actions' }, fxNodes.dispatch, fxNodes.dispatchCrash),
        fxNodes.dispatchNote,
        el('label', { className: 'check' }, fxNodes.dedup, tx('span', 'se.fx.dedup')),
        tx('p', 'se.fx.dedup_note', { className: 'note', attrs: { id: 'se-dedup-note' } }),
      ),
    ),
    el(
      'div',
      { className: 'se-results' },
      el(
        'div',
        { className: 'se-box' },
        tx('h4', 'se.fx.ours'),
        fxNodes.balance,
        el('div', { className: 'table-scroll', attrs: { tabindex: '0', role: 'region', 'aria-label': 'outbox' } }, outboxTable),
      ),
      el(
        'div',
        { className: 'se-box se-phone' },
        tx('h4', 'se.fx.phone', { attrs: { id: 'se-phone-title' } }),
        fxNodes.phoneKind,
        fxNodes.shown,
        fxNodes.shownEmpty,
      ),
      el(
        'div',
        { className: 'se-box se-verdict-box' },
        tx('h4', 'se.fx.verdicts', { attrs: { id: 'se-verdicts-title' } }),
        fxNodes.verdicts,
        fxNodes.verdictsEmpty,
      ),
    ),
    fxNodes.error,
    fxNodes.lesson,
    fixBox('se.fx.fix'),
  );
}

// The crash between COMMIT and the send exists only when sending comes after COMMIT.
function syncCrashOptions() {
  const option = fxNodes.crash.querySelector('option[value="after_commit_before_send"]');
  option.disabled = fx.strategy !== 'send_after_commit';
  if (option.disabled && fxNodes.crash.value === 'after_commit_before_send') {
    fxNodes.crash.value = '';
  }
}

function currentEvent() {
  return { source: SOURCE, event_id: `pay-${fx.next}`, account_id: ACCOUNT, amount: AMOUNT };
}

async function deliverNotified() {
  await syncReceiver();
  const event = currentEvent();
  const crash = fxNodes.crash.value || null;
  let reply;
  try {
    reply = await inboxLab.scheme.deliver(event, { strategy: fx.strategy, crash });
  } catch (error) {
    reply = error;
  }
  fx.delivered.add(event.event_id);
  fx.answer = { label: event.event_id, reply };
  // A real sender: a 200 means "done, next event"; anything else, "try this one again".
  if (!isError(reply)) {
    fx.next += 1;
  }
  await load();
  observeEffects('deliver', null, crash);
}

async function dispatch(crash) {
  await syncReceiver();
  let crashedEvent = null; // the event whose message went out before the dispatcher died
  if (!crash) {
    let sent = 0;
    for (let round = 0; round < MAX_DISPATCH_ROUNDS; round += 1) {
      const id = await inboxLab.scheme.dispatchOne({ crash: null });
      if (id === null) {
        break;
      }
      fx.sends.set(id, (fx.sends.get(id) ?? 0) + 1);
      sent += 1;
    }
    fx.dispatchNote =
      sent === 0 ? { key: 'se.fx.dispatch_idle' } : { key: 'se.fx.dispatched', params: { count: sent } };
  } else {
    // The message this round takes is the oldest pending one: the crash
    // answer does not name it, so read it first.
    const pending = (await inboxLab.scheme.outbox()).find((row) => row.sent_at === null);
    try {
      await inboxLab.scheme.dispatchOne({ crash: 'after_send_before_mark' });
      // Only an empty outbox answers: nothing was sent, so nothing to die after.
      fx.dispatchNote = { key: 'se.fx.dispatch_idle' };
    } catch (error) {
      if (error.kind !== 'simulated_crash' || pending === undefined) {
        throw error;
      }
      fx.sends.set(pending.message_id, (fx.sends.get(pending.message_id) ?? 0) + 1);
      fx.dispatchNote = { key: 'se.fx.dispatch_crashed', params: { id: pending.message_id } };
      crashedEvent = pending.event_id;
    }
  }
  await load();
  observeEffects(crash ? 'dispatch_crash' : 'dispatch', crashedEvent);
}

/**
 * What the side-effects experiment shows now, for the levels and a level's
 * share link (lib/observed.js): after which control (`control`, with the
 * Deliver's crash point `crash`), and what the tables and the receiver say.
 */
function observeEffects(control, crashed, crash = null) {
  if (fx.tables !== null) {
    observe('effects', { control, strategy: fx.strategy, crash, dedup: fx.receiver.dedup, crashed, verdicts: verdicts() });
  }
}

async function resetReceiver() {
  const { receiver, dedup } = await inboxLab.scheme.resetReceiver({ dedup: fxNodes.dedup.checked });
  fxNodes.dedup.checked = dedup;
  fx.receiverName = receiver;
  forgetEffects();
  await load();
  observeEffects('dedup', null);
}

function forgetEffects() {
  fx.delivered.clear();
  fx.sends.clear();
  fx.answer = null;
  fx.dispatchNote = null;
}

// The worker replaces its receiver when our story is over: a fresh or
// imported database, or a new worker (another panel, the console or a crash
// may do that behind this panel's back). What this panel remembers — events
// delivered "since the receiver started", events it saw applied for the
// retention hazard — then no longer describes the database, so it goes.
async function syncReceiver() {
  noteReceiver(await inboxLab.scheme.shown());
}

function noteReceiver(receiver) {
  if (fx.receiverName !== null && receiver.receiver !== fx.receiverName) {
    forgetEffects();
    rt.applied.clear();
    rt.receivedAt.clear();
  }
  fx.receiverName = receiver.receiver;
  fx.receiver = receiver;
}

/**
 * Reads everything the three experiments show — both tables, the receiver,
 * the outbox, the lab clock — in one go, so no part of the panel shows an
 * older balance than another, then redraws them and the database panel.
 */
async function load() {
  const [tables, receiver, outbox, now] = await Promise.all([
    inboxLab.tables(),
    inboxLab.scheme.shown(),
    inboxLab.scheme.outbox(),
    inboxLab.scheme.clock(),
  ]);
  fx.tables = tables;
  rt.tables = tables;
  noteReceiver(receiver);
  fx.outbox = outbox;
  rt.now = now;
  fxNodes.dedup.checked = receiver.dedup;
  loadNote.textContent = '';
  renderEffects();
  renderRetention();
  await refreshTables();
}

/** Per event this panel delivered (or the user was told about): credited? shown how often? */
function verdicts() {
  const credited = new Set(
    fx.tables.inbox.filter((row) => row.source === SOURCE).map((row) => row.event_id),
  );
  const messages = new Map(fx.outbox.map((row) => [`outbox:${row.message_id}`, row]));
  const shownPerEvent = new Map();
  for (const notification of fx.receiver.shown) {
    // Direct sends are named after the event, outbox messages after their row.
    const direct = `event:${SOURCE}/`;
    const eventId = notification.message_id.startsWith(direct)
      ? notification.message_id.slice(direct.length)
      : messages.get(notification.message_id)?.event_id;
    if (eventId !== undefined) {
      shownPerEvent.set(eventId, (shownPerEvent.get(eventId) ?? 0) + 1);
    }
  }
  const events = [...new Set([...fx.delivered, ...shownPerEvent.keys()])].sort(
    (a, b) => Number(a.slice(4)) - Number(b.slice(4)) || a.localeCompare(b),
  );
  return events.map((eventId) => {
    const isCredited = credited.has(eventId);
    const shown = shownPerEvent.get(eventId) ?? 0;
    const pending = fx.outbox.some((row) => row.event_id === eventId && row.sent_at === null);
    let verdict;
    if (!isCredited) {
      verdict = shown > 0 ? 'phantom' : 'nothing';
    } else if (shown === 0) {
      verdict = pending ? 'pending' : 'lost';
    } else {
      verdict = shown === 1 ? 'once' : 'duplicate';
    }
    return { eventId, credited: isCredited, shown, verdict };
  });
}

const VERDICT_CLASS = { once: 'se-ok', nothing: '', pending: '', phantom: 'se-bad', lost: 'se-bad', duplicate: 'se-bad' };

function renderEffects() {
  fxNodes.event.textContent = t('se.fx.event', { ...currentEvent(), amount: AMOUNT });
  fxNodes.deliver.textContent = `${t('se.fx.deliver')} ${currentEvent().event_id}`;
  fxNodes.answer.textContent = fx.answer === null ? '' : answerLine(fx.answer.label, fx.answer.reply);
  fxNodes.answer.className = `se-answer ${fx.answer !== null && isError(fx.answer.reply) ? 'se-bad' : ''}`;
  fxNodes.dispatchNote.textContent = fx.dispatchNote === null ? '' : t(fx.dispatchNote.key, fx.dispatchNote.params);
  if (fx.tables === null) {
    return; // not loaded yet
  }
  showBalance(fxNodes.balance, balanceOf(fx.tables));
  fxNodes.phoneKind.textContent = t(fx.receiver.dedup ? 'se.fx.phone_dedup' : 'se.fx.phone_plain');

  const seen = new Set();
  fxNodes.shown.replaceChildren(
    ...fx.receiver.shown.map((n) => {
      const again = seen.has(n.message_id);
      seen.add(n.message_id);
      return el(
        'li',
        { className: again ? 'se-bad' : '' },
        el('span', {
          text: t('se.fx.notification', { amount: formatNumber(n.amount), account: n.account_id }),
        }),
        ' ',
        el('code', { text: n.message_id }),
        ...(again ? [' ', el('strong', { text: t('se.fx.again') })] : []),
      );
    }),
  );
  fxNodes.shownEmpty.hidden = fx.receiver.shown.length > 0;

  fxNodes.outbox.replaceChildren(
    ...(fx.outbox.length === 0
      ? [el('tr', {}, el('td', { className: 'muted', text: t('se.empty'), attrs: { colspan: '4' } }))]
      : fx.outbox.map((row) =>
          el(
            'tr',
            { data: { sent: row.sent_at === null ? 'no' : 'yes' } },
            el('td', { className: 'number', text: row.message_id }),
            el('td', { text: row.event_id }),
            el('td', { className: 'number', text: formatNumber(row.amount) }),
            el('td', {
              className: row.sent_at === null ? 'se-pending' : '',
              text: row.sent_at === null ? t('se.fx.pending') : t('se.fx.sent'),
            }),
          ),
        )),
  );

  const rows = verdicts();
  fxNodes.verdictsEmpty.hidden = rows.length > 0;
  fxNodes.verdicts.replaceChildren(
    ...rows.map((v) =>
      el(
        'li',
        { data: { verdict: v.verdict } },
        el('strong', { text: v.eventId, data: { field: 'event' } }),
        ' · ',
        el('span', { text: t('se.fx.credited', { answer: t(v.credited ? 'se.fx.yes' : 'se.fx.no') }), data: { field: 'credited' } }),
        ' · ',
        el('span', { text: t('se.fx.shown', { count: v.shown }), data: { field: 'shown' } }),
        el('br'),
        el('span', {
          className: VERDICT_CLASS[v.verdict],
          text: t(`se.fx.v.${v.verdict}`, { count: v.shown }),
          data: { field: 'verdict' },
        }),
      ),
    ),
  );

  // The at-least-once lesson, as soon as the dispatcher sent a message twice.
  const resent = [...fx.sends].filter(([, sends]) => sends > 1);
  fxNodes.lesson.replaceChildren(
    ...resent.map(([id, sends]) => {
      const shown = fx.receiver.shown.filter((n) => n.message_id === `outbox:${id}`).length;
      return el(
        'p',
        { className: shown > 1 ? 'se-bad' : 'se-ok', data: { message: id } },
        el('span', { text: t('se.fx.at_least_once', { id, sends }) }),
        ' ',
        el('strong', {
          text: shown > 1 ? t('se.fx.at_least_once.plain', { shown }) : t('se.fx.at_least_once.dedup'),
        }),
      );
    }),
  );
}

// ---- 2. Business keys -------------------------------------------------------

const bk = {
  round: 1, // order A-<round>; its events evt-<2·round+5> and evt-<2·round+6>: A-1 ← evt-7, evt-8
  log: [], // {event_id, order_id, reply}, newest first
};

const bkNodes = {
  form: el('form', { className: 'se-order-form', attrs: { id: 'se-order-form', novalidate: '' } }),
  eventId: el('input', { attrs: { id: 'se-order-event', name: 'event_id', autocomplete: 'off', spellcheck: 'false' } }),
  orderId: el('input', { attrs: { id: 'se-order-id', name: 'order_id', autocomplete: 'off', spellcheck: 'false' } }),
  log: el('ol', { className: 'se-log', attrs: { id: 'se-order-log', 'aria-live': 'polite' } }),
  error: el('p', { className: 'field-error', attrs: { role: 'status' } }),
};

function orderEvents() {
  return { first: `evt-${2 * bk.round + 5}`, second: `evt-${2 * bk.round + 6}`, order: `A-${bk.round}` };
}

function fillOrder(which) {
  const { first, second, order } = orderEvents();
  bkNodes.eventId.value = which === 'second' ? second : first;
  bkNodes.orderId.value = order;
}

function buildBusinessKeys() {
  fillOrder('first');
  // A "do it" button (.small) submits; a chip only fills the form (base.css).
  const chip = (key, action, className = 'secondary small') => {
    const button = tx('button', key, { className, attrs: { type: 'button', 'data-order': key.split('.').pop() } });
    button.addEventListener('click', action);
    return button;
  };
  const submitAs = (which) => () => {
    fillOrder(which);
    bkNodes.form.requestSubmit();
  };
  bkNodes.form.append(
    el(
      'div',
      { className: 'field' },
      tx('label', 'se.bk.source', { attrs: { for: 'se-order-source' } }),
      el('input', { attrs: { id: 'se-order-source', value: SOURCE, readonly: '' } }),
    ),
    el('div', { className: 'field' }, tx('label', 'se.bk.event_id', { attrs: { for: 'se-order-event' } }), bkNodes.eventId),
    el('div', { className: 'field' }, tx('label', 'se.bk.order_id', { attrs: { for: 'se-order-id' } }), bkNodes.orderId),
    el('div', { className: 'actions' }, tx('button', 'se.bk.activate', { attrs: { type: 'submit' } })),
  );
  bkNodes.form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(bkNodes.error, activate);
  });
  return el(
    'section',
    { className: 'se-case', attrs: { id: 'se-keys', 'aria-labelledby': 'se-keys-title' } },
    ...caseHeader('se-keys-title', 'se.bk.title', 'se.bk.problem', 'se.bk.try'),
    el(
      'div',
      { className: 'chips', attrs: { role: 'group', 'aria-labelledby': 'se-keys-title' } },
      chip('se.bk.first', submitAs('first')),
      chip('se.bk.second', submitAs('second')),
      chip('se.bk.replay', submitAs('first')),
      chip(
        'se.bk.next',
        () => {
          bk.round += 1;
          fillOrder('first');
          bkNodes.eventId.focus();
        },
        'chip',
      ),
    ),
    bkNodes.form,
    bkNodes.error,
    bkNodes.log,
    fixBox('se.bk.fix'),
  );
}

async function activate() {
  // Passed as typed: Rust decides what a valid key is.
  const eventId = bkNodes.eventId.value;
  const orderId = bkNodes.orderId.value;
  let reply;
  try {
    reply = await inboxLab.scheme.activate(SOURCE, eventId, orderId);
  } catch (error) {
    reply = error;
  }
  bk.log.unshift({ event_id: eventId, order_id: orderId, reply });
  renderBusinessKeys();
}

function renderBusinessKeys() {
  bkNodes.log.replaceChildren(
    ...bk.log.map(({ event_id, order_id, reply }) => {
      const failed = isError(reply);
      const outcome = failed ? reply.kind : reply.outcome;
      const meaning = failed ? `${errorText(reply)} ${t('se.bk.m.error')}` : t(`se.bk.m.${reply.outcome}`, reply);
      return el(
        'li',
        { className: failed ? 'se-bad' : `se-outcome-${outcome}`, data: { outcome } },
        el('p', {
          className: 'se-log-head',
          text: t('se.bk.answer', { event_id, order_id, outcome, status: reply.http_status }),
        }),
        el('p', { className: 'note', text: meaning }),
      );
    }),
  );
}

// ---- 3. Retention -----------------------------------------------------------

const rt = {
  next: 1, // the number of the ret-N event
  now: 0,
  windowDays: 1,
  applied: new Map(), // event_id → how many times this visit saw it applied
  receivedAt: new Map(), // event_id → lab time of its last application, this visit
  log: [], // newest first
  tables: null,
};

const rtNodes = {
  clock: el('p', { className: 'se-clock', attrs: { id: 'se-clock', 'aria-live': 'polite' } }),
  window: el('select', { attrs: { id: 'se-window', name: 'window' } }),
  event: el('p', { className: 'se-event', attrs: { id: 'se-ret-event' } }),
  row: el('p', { className: 'se-row', attrs: { id: 'se-ret-row' } }),
  balance: el('p', { className: 'se-balance', attrs: { id: 'se-ret-balance' } }),
  log: el('ol', { className: 'se-log', attrs: { id: 'se-ret-log', 'aria-live': 'polite' } }),
  note: el('p', { className: 'field-error', attrs: { role: 'status' } }),
};

function buildRetention() {
  for (const days of WINDOWS_DAYS) {
    rtNodes.window.append(el('option', { attrs: { value: days }, text: daysText(days) }));
  }
  rtNodes.window.addEventListener('change', () => {
    rt.windowDays = Number(rtNodes.window.value);
  });
  const button = (key, id, action, className = 'secondary') => {
    const node = tx('button', key, { className, attrs: { type: 'button', id } });
    node.addEventListener('click', () => act(rtNodes.note, action));
    return node;
  };
  return el(
    'section',
    { className: 'se-case', attrs: { id: 'se-retention', 'aria-labelledby': 'se-retention-title' } },
    ...caseHeader('se-retention-title', 'se.rt.title', 'se.rt.problem', 'se.rt.try'),
    el(
      'div',
      { className: 'se-controls' },
      el(
        'div',
        { className: 'se-clock-box' },
        rtNodes.clock,
        el(
          'div',
          { className: 'actions' },
          button('se.rt.plus_day', 'se-plus-day', () => advance(1)),
          button('se.rt.plus_week', 'se-plus-week', () => advance(7)),
        ),
      ),
      el(
        'div',
        {},
        rtNodes.event,
        el(
          'div',
          { className: 'actions' },
          button('se.rt.deliver', 'se-ret-deliver', deliverRetained, ''),
          button('se.rt.next', 'se-ret-next', async () => {
            rt.next += 1;
            renderRetention();
          }),
        ),
        rtNodes.row,
        rtNodes.balance,
      ),
      el(
        'div',
        {},
        el('div', { className: 'field' }, tx('label', 'se.rt.window', { attrs: { for: 'se-window' } }), rtNodes.window),
        el('div', { className: 'actions' }, button('se.rt.purge', 'se-purge', purge, 'danger')),
        tx('p', 'se.rt.scope', { className: 'note' }),
      ),
    ),
    rtNodes.note,
    rtNodes.log,
    fixBox('se.rt.rule', tx('p', 'se.rt.interrupt')),
  );
}

function retainedEvent() {
  return { source: SOURCE, event_id: `ret-${rt.next}`, account_id: ACCOUNT, amount: AMOUNT };
}

function daysText(days) {
  // 1 день, 3 дня, 7 дней: the language's own plural forms (one, few, many, other).
  return t(`se.rt.days_${new Intl.PluralRules(currentLanguage()).select(days)}`, { days });
}

function day(ms) {
  return (ms / DAY_MS).toLocaleString(currentLanguage(), { maximumFractionDigits: 2 });
}

async function advance(days) {
  await inboxLab.scheme.advanceClock(days * DAY_MS);
  await load();
  observe('retention', { action: 'advance', at: rt.now, days });
}

async function deliverRetained() {
  await syncReceiver();
  const event = retainedEvent();
  let reply;
  try {
    reply = await inboxLab.deliver(event);
  } catch (error) {
    reply = error;
  }
  const entry = { kind: 'deliver', at: rt.now, event_id: event.event_id, reply, times: 0 };
  if (!isError(reply) && reply.outcome === 'applied') {
    entry.times = (rt.applied.get(event.event_id) ?? 0) + 1;
    rt.applied.set(event.event_id, entry.times);
    rt.receivedAt.set(event.event_id, rt.now);
  }
  rt.log.unshift(entry);
  await load();
  observe('retention', { action: 'deliver', at: entry.at, event, answer: reply });
}

async function purge() {
  await syncReceiver();
  const days = rt.windowDays;
  const count = await inboxLab.scheme.purge(days * DAY_MS);
  rt.log.unshift({ kind: 'purge', at: rt.now, count, days });
  await load();
  observe('retention', { action: 'purge', at: rt.now, count, days });
}

function renderRetention() {
  rtNodes.clock.textContent = t('se.rt.clock', { day: day(rt.now) });
  for (const option of rtNodes.window.options) {
    option.textContent = daysText(Number(option.value));
  }
  rtNodes.window.value = String(rt.windowDays);
  const event = retainedEvent();
  rtNodes.event.textContent = t('se.rt.event', { ...event, amount: AMOUNT });
  if (rt.tables !== null) {
    const kept = rt.tables.inbox.some((row) => row.source === SOURCE && row.event_id === event.event_id);
    const since = rt.receivedAt.get(event.event_id);
    rtNodes.row.textContent = !kept
      ? t('se.rt.row.none', event)
      : since === undefined
        ? t('se.rt.row.kept', event)
        : t('se.rt.row.kept_since', { ...event, day: day(since) });
    rtNodes.row.dataset.kept = String(kept);
    showBalance(rtNodes.balance, balanceOf(rt.tables));
  }
  rtNodes.log.replaceChildren(
    ...rt.log.map((entry) => {
      if (entry.kind === 'purge') {
        return el('li', {
          data: { kind: 'purge' },
          text: t('se.rt.log.purge', { day: day(entry.at), count: entry.count, window: daysText(entry.days) }),
        });
      }
      const { reply } = entry;
      if (isError(reply)) {
        return el('li', {
          className: 'se-bad',
          data: { kind: 'deliver', outcome: reply.kind },
          text: t('se.rt.log.error', {
            day: day(entry.at),
            event_id: entry.event_id,
            outcome: reply.kind,
            status: reply.http_status,
            message: errorText(reply),
          }),
        });
      }
      const again = entry.times > 1;
      return el('li', {
        className: again ? 'se-hazard' : '',
        data: { kind: 'deliver', outcome: again ? 'applied_again' : reply.outcome },
        text: t(again ? 'se.rt.log.again' : 'se.rt.log.deliver', {
          day: day(entry.at),
          event_id: entry.event_id,
          outcome: reply.outcome,
          status: reply.http_status,
          times: entry.times,
          balance: formatNumber(reply.receipt.balance_after),
        }),
      });
    }),
  );
}

// ---- Start --------------------------------------------------------------------

// Where a failed load says why, under the three experiments.
const loadNote = el('p', { className: 'field-error', attrs: { role: 'status' } });

// Writes from elsewhere — the panels above, the console, another tab — and a
// database reopened by a new worker change what this panel shows too (a new
// worker also has a new, empty receiver). Redraw once they settle, as
// tables.js does: a burst of writes is one redraw.
const SETTLE_MS = 300;
let settleTimer = 0;

/** Fills the section `#scheme-ends` with the three experiments and loads what they show. */
export function mount() {
  const section = document.querySelector('#scheme-ends');
  if (section === null) {
    throw new Error('schemeends.js: index.html has no <section id="scheme-ends">');
  }
  section.append(
    tx('p', 'se.intro', { className: 'se-intro' }),
    buildEffects(),
    buildBusinessKeys(),
    buildRetention(),
  );
  renderEffects();
  renderRetention();

  onLanguageChange(() => {
    renderEffects();
    renderBusinessKeys();
    renderRetention();
  });

  section.append(loadNote);

  whileBusy(() =>
    inboxLab.ready.then(
      () =>
        loadAll().catch((error) => {
          loadNote.textContent = isError(error) ? errorText(error) : String(error);
        }),
      () => {
        // The status line already says why the database cannot be used.
      },
    ),
  );

  onTablesChanged(() => {
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      load().catch((error) => {
        loadNote.textContent = isError(error) ? errorText(error) : String(error);
      });
    }, SETTLE_MS);
  });
}

async function loadAll() {
  const tables = await inboxLab.tables();
  const outbox = await inboxLab.scheme.outbox();
  // Continue numbering after the events an earlier visit left in the database.
  const shopEvents = [
    ...tables.inbox.filter((row) => row.source === SOURCE).map((row) => row.event_id),
    ...outbox.map((row) => row.event_id),
  ];
  fx.next = nextNumber(shopEvents, 'pay');
  rt.next = nextNumber(shopEvents, 'ret');
  await load();
}
