// Every error a reader can see, in English and Russian.
//
// Errors arrive as objects `{kind, code, message, http_status, retryable,
// params, field?}` (www/lib/problem.js). `message` is Rust's English sentence —
// what the CLI prints — and stays the fallback. The page shows
//
//   errorMessage(error)  ===  t(`error.${kind}.${code}`, {...params, field})
//
// instead, so the same error reads in the reader's language and is
// re-rendered when the language changes. The English texts here are Rust's
// sentences word for word (tests/e2e/hardening-hostile.test.mjs compares
// them for every error of its catalogue), so switching the page to these
// texts changes nothing for English readers — except that a crash point's
// name (`fault`) is said in words (`error.fault.<name>`), and a cancelled
// console query, made here, is a sentence of its own.
//
// tests/e2e/unit-i18n.test.mjs checks that every code Rust can report
// (`errorCodes()` in the wasm module) and every code made in JavaScript
// (`LOCAL_CODES`) has a text here in both languages.

import { has, register, t } from './i18n.js';
import { isErrorObject } from './problem.js';

// Codes whose `expected` / `got` params are type names, said in words.
const TYPED = new Set(['wrong_type', 'not_object']);

register({
  // ---- what an answer was, in a word (the strip, the timeline, counts) ----
  'outcome.applied': { en: 'applied', ru: 'применено' },
  'outcome.duplicate': { en: 'duplicate', ru: 'дубликат' },
  'outcome.activated': { en: 'activated', ru: 'активирован' },
  'outcome.already_active': { en: 'already active', ru: 'уже активен' },
  'outcome.invalid_input': { en: 'invalid input', ru: 'неверный ввод' },
  'outcome.payload_conflict': { en: 'payload conflict', ru: 'конфликт данных' },
  'outcome.unknown_account': { en: 'unknown account', ru: 'нет такого счёта' },
  'outcome.no_stored_result': { en: 'no stored result', ru: 'нет сохранённого результата' },
  'outcome.balance_limit': { en: 'balance limit', ru: 'превышен предел баланса' },
  'outcome.busy': { en: 'busy', ru: 'занято' },
  'outcome.simulated_crash': { en: 'simulated crash', ru: 'имитация сбоя' },
  'outcome.storage': { en: 'storage error', ru: 'ошибка хранилища' },
  'outcome.unauthorized': { en: 'unauthorized', ru: 'не подтверждено' },
  'outcome.payload_too_large': { en: 'payload too large', ru: 'тело слишком большое' },
  // Where a simulated crash fired (`fault` of error.simulated_crash.fault).
  'error.fault.after_insert': { en: 'after the INSERT into inbox', ru: 'после INSERT в inbox' },
  'error.fault.after_update': { en: 'after the UPDATE of the balance', ru: 'после UPDATE баланса' },
  'error.fault.step_throw': { en: 'where step mode threw', ru: 'там, где пошаговый режим бросил исключение' },
  'error.fault.after_send_before_commit': { en: 'after sending the notification, before COMMIT', ru: 'после отправки уведомления, до COMMIT' },
  'error.fault.after_commit_before_send': { en: 'after COMMIT, before sending the notification', ru: 'после COMMIT, до отправки уведомления' },
  'error.fault.after_send_before_mark': { en: 'after sending the message, before marking it sent',
    ru: 'после отправки сообщения, до отметки «отправлено»' },
  // ---- signed webhooks (src/labs/webhooks/): refused before the inbox ----
  'error.unauthorized.missing_signature': { en: 'unauthorized: the webhook-signature header is missing',
    ru: 'не подтверждено: нет заголовка webhook-signature' },
  'error.unauthorized.malformed_signature': { en: 'unauthorized: malformed webhook-signature header: {detail}',
    ru: 'не подтверждено: неверный заголовок webhook-signature: {detail}' },
  'error.unauthorized.no_v1_signature': { en: 'unauthorized: no v1 signature in webhook-signature (only versions: {versions})',
    ru: 'не подтверждено: в webhook-signature нет подписи v1 (только версии: {versions})' },
  'error.unauthorized.unknown_source': { en: 'unauthorized: no secret is configured for the source {source}',
    ru: 'не подтверждено: для источника {source} секрет не задан' },
  'error.unauthorized.stale_timestamp': { en: 'unauthorized: the timestamp {timestamp} is older than {tolerance} seconds from now ({now})',
    ru: 'не подтверждено: метка времени {timestamp} старше, чем на {tolerance} с от текущего момента ({now})' },
  'error.unauthorized.future_timestamp': { en: 'unauthorized: the timestamp {timestamp} is further ahead than {tolerance} seconds from now ({now})',
    ru: 'не подтверждено: метка времени {timestamp} впереди больше чем на {tolerance} с от текущего момента ({now})' },
  'error.unauthorized.signature_mismatch': { en: 'unauthorized: none of the {signatures} v1 signatures matches any of the {secrets} secrets of the source {source}',
    ru: 'не подтверждено: ни одна из подписей v1 ({signatures}) не подходит ни к одному секрету источника {source} ({secrets})' },
  'error.payload_too_large.body_too_large': { en: 'the body is {bytes} bytes; at most {max} are accepted',
    ru: 'тело запроса — {bytes} байт; допускается не больше {max}' },
  'error.invalid_input.wrong_prefix': { en: 'invalid {field}: must start with "whsec_", followed by the key in base64',
    ru: 'поле {field}: должно начинаться с "whsec_", за которым идёт ключ в base64' },
  'error.invalid_input.bad_base64': { en: 'invalid {field}: the part after "whsec_" is not base64: {detail}',
    ru: 'поле {field}: часть после "whsec_" — не base64: {detail}' },
  'error.invalid_input.empty_key': { en: 'invalid {field}: the key is empty', ru: 'поле {field}: ключ пуст' },
  'error.invalid_input.key_too_short': { en: 'invalid {field}: the key is {bytes} bytes; at least {min} are required',
    ru: 'поле {field}: ключ — {bytes} байт; нужно не меньше {min}' },
  'error.invalid_input.key_too_long': { en: 'invalid {field}: the key is {bytes} bytes; at most {max} are allowed',
    ru: 'поле {field}: ключ — {bytes} байт; допускается не больше {max}' },
  // ---- invalid_input: fix the input; the same bytes fail the same way ----
  'error.invalid_input.empty': { en: 'invalid {field}: must not be empty', ru: 'поле {field}: не может быть пустым' },
  'error.invalid_input.whitespace_only': { en: 'invalid {field}: must not be only whitespace',
    ru: 'поле {field}: не может состоять из одних пробелов' },
  'error.invalid_input.too_long': { en: 'invalid {field}: is {bytes} bytes of UTF-8; at most {max} are allowed',
    ru: 'поле {field}: {bytes} байт в UTF-8, а допускается не больше {max}' },
  'error.invalid_input.control_char': { en: 'invalid {field}: contains the control character {char} at byte {at}',
    ru: 'поле {field}: управляющий символ {char} в байте {at}' },
  'error.invalid_input.invisible_char': { en: 'invalid {field}: contains the invisible character {char} at byte {at}',
    ru: 'поле {field}: невидимый символ {char} в байте {at}' },
  'error.invalid_input.lone_surrogate': { en: 'invalid {field}: contains a lone surrogate (invalid UTF-16), which has no UTF-8 form',
    ru: 'поле {field}: одиночный суррогат (неверный UTF-16) — у такой строки нет записи в UTF-8' },
  'error.invalid_input.not_canonical_integer': { en: 'invalid {field}: must be a base-10 integer without a plus sign, spaces, leading zeros, decimal point or exponent, got {got}',
    ru: 'поле {field}: нужно целое число в десятичной записи — без «+», пробелов, ведущих нулей, десятичной точки и экспоненты; получено {got}' },
  'error.invalid_input.not_whole_number': { en: 'invalid {field}: must be a whole number, got {got}',
    ru: 'поле {field}: нужно целое число, получено {got}' },
  'error.invalid_input.decimal_or_exponent': { en: 'invalid {field}: must be a whole number written without a decimal point or exponent, got {got}',
    ru: 'поле {field}: нужно целое число, записанное без десятичной точки и экспоненты; получено {got}' },
  'error.invalid_input.out_of_range': { en: 'invalid {field}: must be between {min} and {max}, got {got}',
    ru: 'поле {field}: допустимо от {min} до {max}, получено {got}' },
  'error.invalid_input.wrong_type': { en: 'invalid {field}: must be {expected}, got {got}',
    ru: 'поле {field}: ожидается {expected}, получено: {got}' },
  'error.invalid_input.string_for_number': { en: 'invalid {field}: must be a number, got the string {value}',
    ru: 'поле {field}: нужно число, а получена строка {value}' },
  'error.invalid_input.missing_field': { en: 'invalid {field}: is missing', ru: 'поле {field}: отсутствует' },
  'error.invalid_input.unexpected_field': { en: 'invalid {field}: unexpected field {name}: only source, event_id, account_id and amount are allowed',
    ru: 'событие: лишнее поле {name}; допускаются только source, event_id, account_id и amount' },
  'error.invalid_input.duplicate_field': { en: 'invalid {field}: duplicate field {name}: each field may appear only once',
    ru: 'событие: поле {name} встречается больше одного раза; каждое поле допускается один раз' },
  'error.invalid_input.not_json': { en: 'invalid {field}: not valid JSON: {detail}',
    ru: 'событие: это не JSON (строка {line}, столбец {column}): {detail}' },
  'error.invalid_input.not_object': { en: 'invalid {field}: expected an object with source, event_id, account_id and amount, got {got}',
    ru: 'событие: ожидается объект с полями source, event_id, account_id и amount, получено: {got}' },
  'error.invalid_input.unknown_value': { en: 'invalid {field}: is {got}, expected one of: {expected}',
    ru: 'поле {field}: значение {got} не подходит, допустимы: {expected}' },
  'error.invalid_input.other': { en: 'invalid {field}: {text}', ru: 'поле {field}: {text}' },
  'error.invalid_input.sql_empty': { en: 'invalid {field}: type a SELECT statement or a read-only PRAGMA',
    ru: 'поле {field}: введите оператор SELECT или PRAGMA только для чтения' },
  'error.invalid_input.sql_multiple': { en: 'invalid {field}: only one statement at a time', ru: 'поле {field}: только один оператор за раз' },
  'error.invalid_input.sql_writes': { en: 'invalid {field}: this statement would write to the database; the console is read-only (use the delivery form to change data)',
    ru: 'поле {field}: этот оператор изменил бы базу данных, а консоль — только для чтения (данные меняются через форму доставки)' },
  'error.invalid_input.sql_changes_connection': { en: 'invalid {field}: this statement would change the connection (a PRAGMA with a value, a transaction or ATTACH); the console is read-only',
    ru: 'поле {field}: этот оператор изменил бы соединение (PRAGMA со значением, транзакция или ATTACH), а консоль — только для чтения' },
  'error.invalid_input.sql_rejected': { en: 'invalid {field}: SQLite cannot run this: {detail}',
    ru: 'поле {field}: SQLite не может выполнить это: {detail}' },
  'error.invalid_input.sql_pragma_not_allowed': { en: 'invalid {field}: PRAGMA {name} is not one the console runs: only pragmas that read are allowed (such as journal_mode, page_size or table_info(inbox))',
    ru: 'поле {field}: PRAGMA {name} консоль не выполняет — разрешены только PRAGMA, которые читают (например, journal_mode, page_size или table_info(inbox))' },
  'error.invalid_input.query_budget': { en: "invalid {field}: the query was stopped: it used up the console's budget of {seconds} s or {steps} steps of SQLite's virtual machine; nothing was changed (narrow it with WHERE or LIMIT)",
    ru: 'поле {field}: запрос остановлен — он исчерпал бюджет консоли ({seconds} с или {steps} шагов виртуальной машины SQLite); ничего не изменено (сузьте запрос с помощью WHERE или LIMIT)' },
  'error.invalid_input.value_too_big': { en: 'invalid {field}: a value would be longer than {max} bytes, the most the console computes; ask for a part of it (substr) or its length (length)',
    ru: 'поле {field}: значение было бы длиннее {max} байт — больше консоль не вычисляет; запросите его часть (substr) или длину (length)' },
  'error.invalid_input.query_memory': { en: 'invalid {field}: the query needed more memory than SQLite may use here ({mib} MiB) and was stopped; nothing was changed (ask for fewer or shorter rows)',
    ru: 'поле {field}: запросу понадобилось больше памяти, чем SQLite может занять здесь ({mib} МиБ), и он остановлен; ничего не изменено (запросите меньше строк или строки покороче)' },
  'error.invalid_input.result_too_big': { en: 'invalid {field}: the column names alone are {bytes} bytes; a result holds at most {max}: give the columns short names with AS',
    ru: 'поле {field}: одни только имена столбцов занимают {bytes} байт, а результат вмещает не больше {max}; дайте столбцам короткие имена с помощью AS' },
  'error.invalid_input.query_cancelled': { en: 'You cancelled the query before it finished; nothing was changed.',
    ru: 'Вы отменили запрос до того, как он завершился; ничего не изменено.' },
  'error.invalid_input.file_too_big': { en: 'invalid {field}: the file is {bytes} bytes; at most {max} are accepted',
    ru: 'поле {field}: файл занимает {bytes} байт, а принимается не больше {max}' },
  'error.invalid_input.not_sqlite': { en: 'invalid {field}: not a SQLite database: the file does not start with the SQLite header',
    ru: 'поле {field}: это не база SQLite — файл не начинается с заголовка SQLite' },
  'error.invalid_input.file_unreadable': { en: 'invalid {field}: SQLite cannot read this file: {detail}',
    ru: 'поле {field}: SQLite не может прочитать этот файл: {detail}' },
  'error.invalid_input.integrity_failed': { en: 'invalid {field}: integrity_check failed: {detail}',
    ru: 'поле {field}: integrity_check нашёл ошибки: {detail}' },
  'error.invalid_input.unsupported_version': { en: 'invalid {field}: schema version {version} is not one this build reads (1 to {max})',
    ru: 'поле {field}: версию схемы {version} эта сборка не читает (поддерживаются от 1 до {max})' },
  'error.invalid_input.schema_differs': { en: "invalid {field}: the tables are not inbox-lab's: {detail}",
    ru: 'поле {field}: это не таблицы inbox-lab: {detail}' },
  'error.invalid_input.dangling_account': { en: 'invalid {field}: inconsistent data: an inbox row points to a missing account',
    ru: 'поле {field}: данные не согласованы — строка inbox ссылается на несуществующий счёт' },
  'error.invalid_input.receipt_above_counter': { en: 'invalid {field}: inconsistent data: receipt number {seq} is above the receipt counter {last_seq}',
    ru: 'поле {field}: данные не согласованы — номер квитанции {seq} больше счётчика квитанций {last_seq}' },
  'error.invalid_input.row_invalid': { en: 'invalid {field}: row {row} of table {table}, column {column}: {detail}',
    ru: 'поле {field}: строка {row} таблицы {table}, столбец {column}: {detail}' },
  'error.invalid_input.inconsistent': { en: 'invalid {field}: inconsistent data: {detail}', ru: 'поле {field}: данные не согласованы: {detail}' },
  'error.invalid_input.import_budget': { en: 'invalid {field}: checking the file took more than its budget ({seconds} s for a file of this size); it was stopped and nothing was imported',
    ru: 'поле {field}: проверка файла превысила отведённый бюджет ({seconds} с для файла такого размера); она остановлена, ничего не импортировано' },
  'error.invalid_input.judge_budget': { en: 'invalid {field}: the judge was stopped at its limit of {seconds} s while running the {check} check: a statement of this handler runs far too long; nothing was judged',
    ru: 'поле {field}: судья остановлен на пределе в {seconds} с во время проверки {check}: инструкция этого обработчика выполняется слишком долго; ничего не оценено' },
  'error.invalid_input.other_order': { en: 'invalid {field}: event ({event_source}, {event_id}) was already processed for order {order}',
    ru: 'поле {field}: событие ({event_source}, {event_id}) уже обработано для заказа {order}' },
  'error.invalid_input.clock_backwards': { en: 'invalid {field}: the clock only moves forward', ru: 'поле {field}: часы идут только вперёд' },
  'error.invalid_input.bad_window': { en: 'invalid {field}: the window must be ≥ 0 and the batch ≥ 1',
    ru: 'поле {field}: окно должно быть ≥ 0, а пакет — ≥ 1' },
  'error.invalid_input.clock_limit': { en: 'invalid {field}: the clock is at {now} ms and cannot move {ms} ms more: its largest time is {max} ms',
    ru: 'поле {field}: часы показывают {now} мс и не могут уйти ещё на {ms} мс: их наибольшее время — {max} мс' },
  'error.invalid_input.unknown_op': { en: 'unknown op {op}: expected one of {expected}', ru: 'неизвестная операция {op}; допустимы: {expected}' },
  'error.invalid_input.bad_options': { en: 'invalid fault: the second argument must be an object such as {fault: "after_insert"}',
    ru: 'поле fault: второй аргумент должен быть объектом, например {fault: "after_insert"}' },
  'error.invalid_input.not_cloneable': { en: 'cannot send this request to the database worker: {detail}',
    ru: 'запрос не удалось передать обработчику базы данных: {detail}' },
  'error.invalid_input.unknown_delivery': { en: 'invalid delivery: expected 0, 1 or 2', ru: 'поле delivery: ожидается 0, 1 или 2' },
  'error.invalid_input.not_bytes': { en: 'invalid file: expected the bytes of a .sqlite3 file', ru: 'поле file: ожидаются байты файла .sqlite3' },
  'error.invalid_input.options_unreadable': { en: 'cannot read the options: {detail}', ru: 'не удалось прочитать объект параметров: {detail}' },
  // Type names inside `wrong_type` and `not_object`.
  'error.type.null': { en: 'null', ru: 'null' },
  'error.type.undefined': { en: 'undefined', ru: 'undefined' },
  'error.type.boolean': { en: 'a boolean', ru: 'логическое значение' },
  'error.type.number': { en: 'a number', ru: 'число' },
  'error.type.bigint': { en: 'a BigInt', ru: 'BigInt' },
  'error.type.string': { en: 'a string', ru: 'строка' },
  'error.type.symbol': { en: 'a symbol', ru: 'символ (Symbol)' },
  'error.type.function': { en: 'a function', ru: 'функция' },
  'error.type.array': { en: 'an array', ru: 'массив' },
  'error.type.object': { en: 'an object', ru: 'объект' },
  // ---- 422: the request is understood and refused ----
  'error.payload_conflict.payload_differs': { en: 'event ({event_source}, {event_id}) was already applied as account {stored_account_id}, amount {stored_amount}; this delivery says account {account_id}, amount {amount}',
    ru: 'событие ({event_source}, {event_id}) уже применено: счёт {stored_account_id}, сумма {stored_amount}; а в этой доставке счёт {account_id}, сумма {amount}' },
  'error.unknown_account.no_such_account': { en: 'account {account_id} does not exist', ru: 'счёта {account_id} не существует' },
  'error.no_stored_result.no_receipt': { en: 'event ({event_source}, {event_id}) was registered without a stored result (by a mistaken handler); whether it was credited is unknown, so there is no first answer to replay',
    ru: 'событие ({event_source}, {event_id}) зарегистрировано без сохранённого результата (ошибочным обработчиком); неизвестно, было ли зачисление, поэтому повторить первый ответ нельзя' },
  'error.balance_limit.over_limit': { en: 'crediting {amount} to account {account_id} (balance {balance}) would pass the balance limit {limit}',
    ru: 'зачисление {amount} на счёт {account_id} (баланс {balance}) превысило бы предел баланса {limit}' },
  // ---- busy: nothing was written, retry later ----
  'error.busy.locked': { en: 'the database is locked by another connection; nothing was written, retry later',
    ru: 'база данных заблокирована другим соединением; ничего не записано, повторите позже' },
  'error.busy.no_owner': { en: 'no tab acknowledged this request within {seconds} s (the tab that holds the database may be closing or frozen); it was not confirmed, retry later (retrying is safe)',
    ru: 'ни одна вкладка не приняла запрос за {seconds} с (вкладка с базой данных, возможно, закрывается или заморожена); он не подтверждён — повторите позже (повтор безопасен)' },
  'error.busy.owner_timeout': { en: 'the tab that holds the database took this request but did not answer within {seconds} s; it was not confirmed, retry later (retrying is safe)',
    ru: 'вкладка с базой данных приняла запрос, но не ответила за {seconds} с; он не подтверждён — повторите позже (повтор безопасен)' },
  // ---- 500: rolled back or not confirmed; retrying is safe ----
  'error.simulated_crash.fault': { en: 'simulated crash {fault}: the handler died here; whatever it had not yet committed is undone',
    ru: 'имитация сбоя {fault}: обработчик упал здесь; всё, что он не успел зафиксировать, отменено' },
  'error.storage.full': { en: 'storage error: the storage is full (database or disk full); the transaction was rolled back, retry after freeing space',
    ru: 'хранилище переполнено (нет места для базы данных или на диске); транзакция откачена — повторите, когда освободится место' },
  'error.storage.corrupt': { en: 'storage error: {detail}', ru: 'ошибка хранилища: файл повреждён или это не база данных ({detail})' },
  'error.storage.io': { en: 'storage error: {detail}', ru: 'ошибка хранилища: сбой чтения или записи ({detail})' },
  'error.storage.no_memory': { en: 'storage error: out of memory ({detail})', ru: 'ошибка хранилища: не хватило памяти ({detail})' },
  'error.storage.unusable': { en: 'storage error: the stored database cannot be used: {detail}',
    ru: 'сохранённую базу данных нельзя использовать: {detail}' },
  'error.storage.opfs_unavailable': { en: 'storage error: OPFS storage is unavailable: {detail}', ru: 'хранилище OPFS недоступно: {detail}' },
  'error.storage.other': { en: 'storage error: {detail}', ru: 'ошибка хранилища: {detail}' },
  'error.storage.insecure_context': { en: 'OPFS storage is unavailable: this page is not served from a secure origin (https or localhost)',
    ru: 'хранилище OPFS недоступно: страница открыта не с защищённого адреса (https или localhost)' },
  'error.storage.no_opfs': { en: 'OPFS storage is unavailable: this browser has no origin private file system',
    ru: 'хранилище OPFS недоступно: в этом браузере нет приватной файловой системы (OPFS)' },
  'error.storage.in_use': { en: 'the database is held by another tab, window or worker of this page and was not released within {seconds} s; close the other inbox-lab tabs and reload ({detail})',
    ru: 'база данных занята другой вкладкой, окном или обработчиком этой страницы и не освободилась за {seconds} с; закройте другие вкладки inbox-lab и перезагрузите страницу ({detail})' },
  'error.storage.open_failed': { en: 'cannot open the database: {detail}', ru: 'не удалось открыть базу данных: {detail}' },
  'error.storage.crashed': { en: 'the database worker crashed and is being restarted: {detail}',
    ru: 'обработчик базы данных (worker) упал и перезапускается: {detail}' },
  'error.storage.killed': { en: 'the database worker was killed (Worker.terminate)',
    ru: 'обработчик базы данных (worker) остановлен принудительно (Worker.terminate)' },
  'error.storage.unconfirmed': { en: '{detail}. This request was not confirmed; retrying it is safe (an event is applied at most once).',
    ru: 'запрос не подтверждён ({detail}); повторить его безопасно — событие применяется не более одного раза.' },
  'error.storage.worker_stopped': { en: 'the database worker stopped: {detail}', ru: 'обработчик базы данных (worker) остановился: {detail}' },
  'error.storage.owner_closed': { en: 'the tab that held the database went away before answering. This request was not confirmed; retrying it is safe (an event is applied at most once).',
    ru: 'вкладка, в которой была открыта база данных, закрылась, не ответив. Запрос не подтверждён; повторить его безопасно — событие применяется не более одного раза.' },
  'error.storage.crash_worker_failed': { en: 'the crash worker failed: {detail}',
    ru: 'обработчик лаборатории сбоев (worker) не справился: {detail}' },
  'error.storage.bench_failed': { en: 'the bench failed: {detail}', ru: 'замер не удался: {detail}' },
});

/** An answer's outcome or error kind in words of the current language ("applied", "payload conflict"). */
export function outcomeWord(outcome) {
  return has(`outcome.${outcome}`) ? t(`outcome.${outcome}`) : outcome;
}

/**
 * The error's text in the current language: `error.<kind>.<code>` with its
 * params, or Rust's English `message` if the code has no text (an error
 * from an older worker, or not an error object at all).
 */
export function errorMessage(error) {
  if (!isErrorObject(error)) {
    return String(error?.message ?? error);
  }
  const key = `error.${error.kind}.${error.code}`;
  if (typeof error.code !== 'string' || !has(key)) {
    return error.message;
  }
  const params = { ...(error.params ?? {}), field: error.field ?? '' };
  if (has(`error.fault.${params.fault}`)) {
    params.fault = t(`error.fault.${params.fault}`);
  }
  if (TYPED.has(error.code)) {
    for (const name of ['expected', 'got']) {
      if (has(`error.type.${params[name]}`)) {
        params[name] = t(`error.type.${params[name]}`);
      }
    }
  }
  return t(key, params);
}
