// The texts of "where the scheme ends": English and Russian side by side.

export const STRINGS = {
  'se.title': { en: 'Where the scheme ends', ru: 'Где схема заканчивается' },
  'se.intro': {
    en: 'A unique key and one transaction make each event count once — inside this database. The article ends with what they do not cover. Three experiments on your database, one at a time: they credit account 1, and the other sections show the same tables.',
    ru: 'Уникальный ключ и одна транзакция гарантируют, что событие учтётся один раз — внутри этой базы. Статья заканчивается тем, чего они не покрывают. Три эксперимента на вашей базе, по одному: они зачисляют на счёт 1, а другие разделы показывают те же таблицы.',
  },
  'se.tabs': { en: 'The three experiments', ru: 'Три эксперимента' },
  'se.tab.effects': { en: '1. Side effects', ru: '1. Побочные эффекты' },
  'se.tab.keys': { en: '2. Business keys', ru: '2. Бизнес-ключи' },
  'se.tab.retention': { en: '3. Retention', ru: '3. Срок хранения' },
  'se.try': { en: 'Try:', ru: 'Попробуйте:' },
  'se.fix': { en: 'The fix', ru: 'Как исправить' },
  'se.balance': { en: 'Balance of account 1: {balance}', ru: 'Баланс счёта 1: {balance}' },
  'se.no_account': {
    en: 'Account 1 does not exist in this database: credits are refused.',
    ru: 'В этой базе нет счёта 1: зачисления отклоняются.',
  },
  'se.answer': { en: '{event}: {outcome} · HTTP {status}', ru: '{event}: {outcome} · HTTP {status}' },
  'se.answer_error': {
    en: '{event}: {outcome} · HTTP {status} — {message}',
    ru: '{event}: {outcome} · HTTP {status} — {message}',
  },
  'se.empty': { en: 'empty', ru: 'пусто' },
  'se.fx.title': {
    en: '1. Side effects: “notify the user” is not in the transaction',
    ru: '1. Побочные эффекты: «уведомить пользователя» не входит в транзакцию',
  },
  'se.fx.problem': {
    en: 'Each credit should notify the user. The notification goes to another system, the user’s phone, and no SQLite transaction can take it back. Send it before COMMIT and a failure leaves the user told about money that never arrived. Send it after COMMIT and a crash in between loses it for good: the sender’s retry is a duplicate, and a duplicate sends nothing.',
    ru: 'О каждом зачислении пользователь получает уведомление. Оно уходит в другую систему — на его телефон, и никакая транзакция SQLite его не отзовёт. Отправили до COMMIT — при сбое пользователь узнает о деньгах, которые не пришли. Отправили после COMMIT — падение между шагами теряет уведомление навсегда: повтор отправителя окажется дубликатом, а дубликат ничего не отправляет.',
  },
  'se.fx.try': {
    en: 'send, then COMMIT, with a failure before COMMIT. Then COMMIT, then send, with a crash after COMMIT. Then the outbox, and a dispatcher that crashes after sending — with the receiver’s dedup off, then on.',
    ru: 'сначала отправить, потом COMMIT — со сбоем перед COMMIT. Затем COMMIT, потом отправка — с падением после COMMIT. Затем outbox и диспетчер, который падает после отправки, — с выключенной и включённой дедупликацией у получателя.',
  },
  'se.fx.strategy': { en: 'How the handler notifies', ru: 'Как обработчик уведомляет' },
  'se.fx.strategy.send_before_commit': { en: 'send, then COMMIT', ru: 'отправить, потом COMMIT' },
  'se.fx.strategy.send_after_commit': { en: 'COMMIT, then send', ru: 'COMMIT, потом отправить' },
  'se.fx.strategy.outbox': {
    en: 'outbox: write the message in the same transaction; a dispatcher sends it',
    ru: 'outbox: записать сообщение в той же транзакции; отправит диспетчер',
  },
  'se.fx.crash': { en: 'Crash on this delivery', ru: 'Сбой при этой доставке' },
  'se.fx.crash.none': { en: 'none', ru: 'нет' },
  'se.fx.crash.after_send_before_commit': {
    en: 'the transaction fails just before COMMIT',
    ru: 'транзакция падает прямо перед COMMIT',
  },
  'se.fx.crash.after_commit_before_send': {
    en: 'the handler dies between COMMIT and the send (COMMIT, then send only)',
    ru: 'обработчик падает между COMMIT и отправкой (только «COMMIT, потом отправить»)',
  },
  'se.fx.event': {
    en: 'Event: {source} / {event_id} → account 1, +{amount}',
    ru: 'Событие: {source} / {event_id} → счёт 1, +{amount}',
  },
  'se.fx.event_note': {
    en: 'After a 500 the sender retries this event; after a 200 it moves on to the next one.',
    ru: 'После ответа 500 отправитель повторит это событие, после 200 — перейдёт к следующему.',
  },
  'se.fx.deliver': { en: 'Deliver', ru: 'Доставить' },
  'se.fx.dispatcher': { en: 'The outbox dispatcher', ru: 'Диспетчер outbox' },
  'se.fx.dispatcher_note': {
    en: 'A separate loop: take the oldest unsent message, send it, mark it sent. It can die between sending and marking.',
    ru: 'Отдельный цикл: взять самое старое неотправленное сообщение, отправить, отметить отправленным. Он может упасть между отправкой и отметкой.',
  },
  'se.fx.dispatch': { en: 'Run the dispatcher', ru: 'Запустить диспетчер' },
  'se.fx.dispatch_crash': { en: 'Dispatcher crashes after sending', ru: 'Диспетчер падает после отправки' },
  'se.fx.dispatched': {
    en: 'Messages sent: {count}. The outbox is drained.',
    ru: 'Отправлено сообщений: {count}. Outbox пуст.',
  },
  'se.fx.dispatch_idle': {
    en: 'Nothing to send: no message is pending.',
    ru: 'Отправлять нечего: ожидающих сообщений нет.',
  },
  'se.fx.dispatch_crashed': {
    en: 'The dispatcher sent message {id} and died before marking it sent: the outbox still says pending.',
    ru: 'Диспетчер отправил сообщение {id} и упал, не успев отметить его отправленным: в outbox оно всё ещё ждёт.',
  },
  'se.fx.dedup': { en: 'The receiver deduplicates by message id', ru: 'Получатель отсекает повторы по id сообщения' },
  'se.fx.dedup_note': {
    en: 'Switching starts a new receiver with an empty screen; the database stays as it is.',
    ru: 'Переключение запускает нового получателя с пустым экраном; база не меняется.',
  },
  'se.fx.ours': { en: 'Our database', ru: 'Наша база' },
  'se.fx.phone': { en: 'What the user saw', ru: 'Что увидел пользователь' },
  'se.fx.nothing_shown': { en: 'No notifications yet.', ru: 'Уведомлений пока нет.' },
  'se.fx.notification': { en: '+{amount} to account {account}', ru: '+{amount} на счёт {account}' },
  'se.fx.again': { en: 'again', ru: 'повтор' },
  'se.fx.outbox': { en: 'outbox', ru: 'outbox' },
  'se.fx.sent': { en: 'sent', ru: 'отправлено' },
  'se.fx.pending': { en: 'pending', ru: 'ждёт отправки' },
  'se.fx.verdicts': {
    en: 'Every credit of this panel, and what the user was told',
    ru: 'Каждое зачисление этой панели и что узнал пользователь',
  },
  'se.fx.credited': { en: 'credited: {answer}', ru: 'зачислено: {answer}' },
  'se.fx.shown': { en: 'shown: {count}', ru: 'показано: {count}' },
  'se.fx.yes': { en: 'yes', ru: 'да' },
  'se.fx.no': { en: 'no', ru: 'нет' },
  'se.fx.no_verdicts': {
    en: 'Deliver an event to see what the user is told.',
    ru: 'Доставьте событие, чтобы увидеть, что узнает пользователь.',
  },
  'se.fx.v.once': { en: 'exactly once', ru: 'ровно один раз' },
  'se.fx.v.phantom': {
    en: 'told about a credit that never happened',
    ru: 'уведомление о зачислении, которого не было',
  },
  'se.fx.v.lost': { en: 'credited, never notified: lost for good', ru: 'зачислено, но уведомления нет и не будет' },
  'se.fx.v.pending': { en: 'credited; the message waits in the outbox', ru: 'зачислено; сообщение ждёт в outbox' },
  'se.fx.v.duplicate': { en: 'notified {count} times for one credit', ru: 'одно зачисление, уведомлений: {count}' },
  'se.fx.v.nothing': { en: 'rolled back: no credit, no notification', ru: 'откат: ни зачисления, ни уведомления' },
  'se.fx.at_least_once': {
    en: 'At-least-once: message {id} went out {sends} times, because the dispatcher died between sending it and marking it sent. The outbox never loses a notification and never sends one for a rolled-back credit — but it can send one twice.',
    ru: 'Хотя бы один раз: сообщение {id} ушло несколько раз ({sends}), потому что диспетчер упал между отправкой и отметкой. Outbox не теряет уведомлений и не отправляет их за откатившиеся зачисления — но может отправить одно дважды.',
  },
  'se.fx.at_least_once.dedup': {
    en: 'The receiver’s own inbox of message ids dropped the repeat: the user saw it once.',
    ru: 'Собственный inbox получателя по id сообщений отбросил повтор: пользователь увидел его один раз.',
  },
  'se.fx.at_least_once.plain': {
    en: 'This receiver does not deduplicate: the user saw it {shown} times. Turn its dedup on and run it again.',
    ru: 'Этот получатель не отсекает повторы: пользователь увидел сообщение несколько раз ({shown}). Включите дедупликацию и повторите.',
  },
  'se.fx.fix': {
    en: 'The transactional outbox: the notification becomes a row written in the same transaction as the credit and the inbox row, so they commit or roll back together, and a dispatcher sends it later. The outbox is at-least-once, so the receiver must deduplicate by message id — the same pattern as our inbox — or the effect must be safe to repeat. A transaction in one database does not reach across the network.',
    ru: 'Transactional outbox: уведомление становится строкой, записанной в той же транзакции, что зачисление и строка inbox, — они фиксируются или откатываются вместе, а отправляет его позже диспетчер. Outbox доставляет «хотя бы один раз», поэтому получатель должен отсекать повторы по id сообщения — та же схема, что наш inbox, — либо эффект должен допускать повтор. Транзакция в одной базе не распространяется через сеть.',
  },
  'se.bk.title': { en: '2. Business keys: two events, one order', ru: '2. Бизнес-ключи: два события, один заказ' },
  'se.bk.problem': {
    en: 'Event dedup answers “did I process this event?”, not “did I already activate this order?”. A provider may send evt-7 and, after a resend from its admin panel, evt-8 — both about order A-1. Both pass the inbox, legitimately.',
    ru: 'Дедупликация событий отвечает на вопрос «обработал ли я это событие?», а не «активировал ли я уже этот заказ?». Провайдер может прислать evt-7, а после переотправки из своей админки — evt-8, оба про заказ A-1. Оба вполне законно пройдут inbox.',
  },
  'se.bk.try': {
    en: 'activate with the first event, then with another event about the same order, then with the first again (a replay).',
    ru: 'активируйте заказ первым событием, затем другим событием про тот же заказ, затем снова первым (повтор).',
  },
  'se.bk.source': { en: 'source', ru: 'source' },
  'se.bk.event_id': { en: 'event_id', ru: 'event_id' },
  'se.bk.order_id': { en: 'order_id', ru: 'order_id' },
  'se.bk.activate': { en: 'Activate the order', ru: 'Активировать заказ' },
  'se.bk.fills': { en: 'Put in the form:', ru: 'Вписать в форму:' },
  'se.bk.first': { en: 'first event about the order', ru: 'первое событие о заказе' },
  'se.bk.second': { en: 'another event, same order', ru: 'другое событие, тот же заказ' },
  'se.bk.next': { en: 'next order', ru: 'следующий заказ' },
  'se.bk.answer': {
    en: '{event_id} → order {order_id}: {outcome} · HTTP {status}',
    ru: '{event_id} → заказ {order_id}: {outcome} · HTTP {status}',
  },
  'se.bk.m.activated': {
    en: 'This event activated the order: its order_events row and the order row committed in one transaction.',
    ru: 'Это событие активировало заказ: строка order_events и строка заказа зафиксированы одной транзакцией.',
  },
  'se.bk.m.already_active': {
    en: 'The order was already activated by {by_source} / {by_event_id}. The business key decided, inside the transaction: a business answer with 200, not a 500 from a constraint. Nothing changed, and the sender has nothing to retry.',
    ru: 'Заказ уже активировало событие {by_source} / {by_event_id}. Решил бизнес-ключ, внутри транзакции: бизнес-ответ с кодом 200, а не 500 от нарушенного ограничения. Ничего не изменилось, и отправителю нечего повторять.',
  },
  'se.bk.m.duplicate': {
    en: 'This very event was processed before: its first answer, {first}, again. Nothing changed.',
    ru: 'Это самое событие уже обрабатывалось: снова его первый ответ, {first}. Ничего не изменилось.',
  },
  'se.bk.m.error': { en: 'Refused, and nothing was written.', ru: 'Отклонено, ничего не записано.' },
  'se.bk.fix': {
    en: 'A unique business key — here orders.order_id — written in the same transaction as the event’s own inbox row: the same idea as (source, event_id), one level up. Not a hash of the content, though: two real credits can have the same account and amount. Equal data is not equal intent.',
    ru: 'Уникальный ключ бизнес-операции — здесь orders.order_id, — который записывается в той же транзакции, что и собственная строка inbox события: та же идея, что (source, event_id), уровнем выше. Но не хеш содержимого: у двух настоящих зачислений могут совпасть счёт и сумма. Равенство данных ещё не означает равенство намерений.',
  },
  'se.rt.title': {
    en: '3. Retention: a purged inbox row makes an old event new',
    ru: '3. Срок хранения: удалённая строка inbox делает старое событие новым',
  },
  'se.rt.problem': {
    en: 'The inbox row is the only proof that an event was processed. Purge it, and a late redelivery of that event is applied again. The lab runs on a simulated clock, so waiting days takes a click.',
    ru: 'Строка inbox — единственное доказательство, что событие обработано. Удалите её, и запоздалая повторная доставка того же события применится снова. Лаборатория живёт по модельным часам, так что подождать несколько дней — один щелчок.',
  },
  'se.rt.try': {
    en: 'deliver the event, +1 day twice, purge with a 1-day window, deliver it again — as a sender still inside its redelivery window would.',
    ru: 'доставьте событие, дважды +1 день, удалите строки с окном в 1 день и доставьте событие ещё раз — как сделал бы отправитель, ещё не вышедший из своего срока повторной доставки.',
  },
  'se.rt.clock': { en: 'Lab clock: day {day}', ru: 'Часы лаборатории: день {day}' },
  'se.rt.plus_day': { en: '+1 day', ru: '+1 день' },
  'se.rt.plus_week': { en: '+7 days', ru: '+7 дней' },
  'se.rt.window': { en: 'Purge rows older than', ru: 'Удалять строки старше' },
  'se.rt.days_one': { en: '{days} day', ru: '{days} день' },
  'se.rt.days_few': { en: '{days} days', ru: '{days} дня' },
  'se.rt.days_many': { en: '{days} days', ru: '{days} дней' },
  'se.rt.days_other': { en: '{days} days', ru: '{days} дня' },
  'se.rt.purge': { en: 'Purge the inbox', ru: 'Очистить inbox' },
  'se.rt.event': {
    en: 'Event: {source} / {event_id} → account 1, +{amount}',
    ru: 'Событие: {source} / {event_id} → счёт 1, +{amount}',
  },
  'se.rt.deliver': { en: 'Deliver (or redeliver)', ru: 'Доставить (или повторить)' },
  'se.rt.next': { en: 'Next event', ru: 'Следующее событие' },
  'se.rt.row.none': {
    en: 'Inbox row for {event_id}: none — not delivered yet, or purged.',
    ru: 'Строка inbox для {event_id}: нет — событие ещё не доставлено или строка удалена.',
  },
  'se.rt.row.kept_since': {
    en: 'Inbox row for {event_id}: kept since day {day} — a redelivery is a duplicate.',
    ru: 'Строка inbox для {event_id}: есть с дня {day} — повторная доставка будет дубликатом.',
  },
  'se.rt.log.deliver': {
    en: 'Day {day}: {event_id} → {outcome} · HTTP {status}; balance {balance}.',
    ru: 'День {day}: {event_id} → {outcome} · HTTP {status}; баланс {balance}.',
  },
  'se.rt.log.error': {
    en: 'Day {day}: {event_id} → {outcome} · HTTP {status}: {message}',
    ru: 'День {day}: {event_id} → {outcome} · HTTP {status}: {message}',
  },
  'se.rt.log.again': {
    en: 'Day {day}: {event_id} → applied AGAIN (HTTP 200): one event, credited {times} times; balance {balance}. The row that proved it was processed had been purged.',
    ru: 'День {day}: {event_id} → применено СНОВА (HTTP 200): одно и то же событие зачислено уже {times}-й раз; баланс {balance}. Строку, доказывавшую обработку, удалила очистка.',
  },
  'se.rt.log.purge': {
    en: 'Day {day}: purge with a window of {window} — inbox rows deleted: {count}.',
    ru: 'День {day}: очистка с окном {window} — удалено строк inbox: {count}.',
  },
  'se.rt.rule': {
    en: 'The rule: keep inbox rows longer than the sender’s redelivery window and any manual resend an operator might do. There is no universally safe number of days; it comes from the sender’s contract.',
    ru: 'Правило: храните строки inbox дольше, чем длится повторная доставка у отправителя, с учётом ручных переотправок. Универсального безопасного срока в днях нет — он следует из договора с отправителем.',
  },
  'se.rt.interrupt': {
    en: 'The purge is safe to interrupt: it deletes in batches of 100 rows, each its own transaction. Stopped half-way, some rows are gone and the rest are intact; deleting inbox rows never touches a balance, and the next purge finishes the job.',
    ru: 'Очистку можно безопасно прервать: она удаляет пачками по 100 строк, каждая пачка — своя транзакция. Прерванная на полпути, она оставит часть строк удалёнными, а остальные целыми; удаление строк inbox никогда не трогает баланс, а следующая очистка доделает работу.',
  },
  'se.rt.scope': {
    en: 'The purge acts on the whole inbox of your database, including events from the other sections.',
    ru: 'Очистка действует на весь inbox вашей базы, включая события из других разделов.',
  },
};
