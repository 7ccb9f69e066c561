// The levels: a path through the lab, one goal at a time, in the spirit of
// The Deadlock Empire — but on real SQLite. A level is data (LEVELS below):
// where it is played, the handler it starts with, `won(seen)` — true once
// the observations seen since the level was opened (lib/observed.js: the
// answers, verdicts and balances the worker really returned, the tables as
// queried) meet its goal —, `why(seen)` — the reason the last of them did
// not —, and "show me": the winning actions, each through another panel's
// actions (the sender's, the race lab's, or a share link's action played by
// share/replay.js), judged like anything the reader does.
//
// Its texts are `level.<id>.title`, `.goal`, `.hint`, `.why.*`, `.learned`.
// The screen, the progress and the judging are levelscreen.js; nothing here
// looks at a click.

import { register } from '../../lib/i18n.js';

register({
  'level.1.title': { en: 'Once, then again', ru: 'Один раз и ещё раз' },
  'level.1.goal': { en: 'Deliver a new event, then deliver it again: one “applied”, one “duplicate”, and the balance credited once.',
    ru: 'Доставьте новое событие, а затем доставьте его снова: один ответ «применено», один «дубликат», зачисление на баланс — одно.' },
  'level.1.hint': { en: 'On Deliver, choose the preset “new event” (an event_id never seen), keep the atomic handler, press Deliver twice.',
    ru: 'На экране «Доставка» выберите заготовку «новое событие» (event_id, которого ещё не было), оставьте обработчик atomic и нажмите «Доставить» дважды.' },
  'level.2.title': { en: 'The lost response', ru: 'Потерянный ответ' },
  'level.2.goal': { en: 'Let the first response get lost and the sender retry: the event is credited once, and Rust’s verdict is “correct”.',
    ru: 'Пусть первый ответ потеряется, а отправитель повторит: событие зачислено один раз, и вердикт Rust — «верно».' },
  'level.2.hint': { en: 'Tick “Lose the first response”, keep the atomic handler, and deliver a new event: the retry hears “duplicate”.',
    ru: 'Отметьте «Потерять первый ответ», оставьте обработчик atomic и доставьте новое событие: повтор услышит «дубликат».' },
  'level.3.title': { en: 'A crash in the middle', ru: 'Сбой посередине' },
  'level.3.goal': { en: 'Crash between the INSERT and the UPDATE, let the sender’s query show that nothing stayed (no inbox row, the balance unchanged), and let the retry apply it.',
    ru: 'Устройте сбой между INSERT и UPDATE, пусть запрос отправителя покажет, что ничего не осталось (строки в inbox нет, баланс прежний), а повтор применит событие.' },
  'level.3.hint': { en: 'Choose “Crash on the first attempt: after the INSERT into inbox”, keep the atomic handler, and deliver a new event.',
    ru: 'Выберите «Сбой при первой попытке: после INSERT в inbox», оставьте обработчик atomic и доставьте новое событие.' },
  'level.4.title': { en: 'Twenty at once', ru: 'Двадцать сразу' },
  'level.4.goal': { en: 'Deliver the same event twenty times at once: exactly one “applied”, nineteen “duplicate”, the balance credited once.',
    ru: 'Доставьте одно и то же событие двадцать раз одновременно: ровно один ответ «применено», девятнадцать «дубликат», зачисление одно.' },
  'level.4.hint': { en: 'Put a new event in the form, keep the atomic handler, then in Burst use N = 20 and “The same event N times”.',
    ru: 'Поставьте в форму новое событие, оставьте обработчик atomic, затем в «Залпе» задайте N = 20 и нажмите «Одно событие N раз».' },
  'level.5.title': { en: 'Break it yourself', ru: 'Сломайте сами' },
  'level.5.goal': { en: 'In the race lab, make check_then_act credit the event twice by stepping the two deliveries yourself. Winning unlocks “Explore every interleaving”.',
    ru: 'В лаборатории гонок заставьте check_then_act зачислить событие дважды, продвигая обе доставки самостоятельно. Победа открывает «Перебрать все порядки».' },
  'level.5.hint': { en: 'Choose check_then_act and “Start the race”. Advance A once (its SELECT finds nothing), then B once (so does its), then let each run to its end.',
    ru: 'Выберите check_then_act и нажмите «Начать гонку». Продвиньте A на шаг (её SELECT ничего не находит), затем B на шаг (её тоже), затем доведите каждую до конца.' },
  'level.6.title': { en: 'Registered, never credited', ru: 'Записано, но не зачислено' },
  'level.6.goal': { en: 'Make two_transactions lose a credit: Rust’s verdict on an answer the sender heard is “credit lost”.',
    ru: 'Заставьте two_transactions потерять зачисление: вердикт Rust на ответ, который услышал отправитель, — «зачисление потеряно».' },
  'level.6.hint': { en: 'Choose the handler two_transactions and “Crash on the first attempt: after the INSERT into inbox”, then deliver a new event. Watch what the retry hears.',
    ru: 'Выберите обработчик two_transactions и «Сбой при первой попытке: после INSERT в inbox», затем доставьте новое событие. Посмотрите, что услышит повтор.' },
  'level.7.title': { en: 'All or nothing', ru: 'Всё или ничего' },
  'level.7.goal': { en: 'Kill the worker in the middle of its commits, really, and let the crash lab show that every event is either entirely there or entirely absent, and nothing answered “200” was lost.',
    ru: 'По-настоящему убейте воркер посреди его коммитов, и пусть лаборатория сбоев покажет: каждое событие либо записано целиком, либо отсутствует целиком, и ничего, на что ответили «200», не потеряно.' },
  'level.7.hint': { en: 'On Crash, press “Run the sweep” (without the control) or “Run random kills”. The control recovers through a broken lock check: it is there to be caught, and it does not win.',
    ru: 'В разделе «Сбои» нажмите «Запустить перебор» (без контроля) или «Убивать в случайный момент». Контроль восстанавливается через сломанную проверку блокировки: он нужен, чтобы его поймали, и уровень не засчитывает.' },
  'level.8.title': { en: 'The first result, replayed', ru: 'Первый результат, повторённый' },
  'level.8.goal': { en: 'The article’s exercise 3: deliver an event, then another one to the same account, then the first one again. The replay must answer the stored first receipt — its balance is the old one — not a result computed now.',
    ru: 'Упражнение 3 из статьи: доставьте событие, затем другое на тот же счёт, затем снова первое. Повтор должен вернуть сохранённую первую квитанцию — с прежним балансом, — а не результат, вычисленный сейчас.' },
  'level.8.hint': { en: 'Deliver a new event and note its receipt; deliver another new event; then put the first event_id back and deliver it. Compare the receipt with the inbox row.',
    ru: 'Доставьте новое событие и запомните его квитанцию; доставьте ещё одно новое событие; затем верните первый event_id и доставьте его снова. Сравните квитанцию со строкой inbox.' },
  'level.9.title': { en: 'The outbox', ru: 'Outbox' },
  'level.9.goal': { en: 'Deliver with the transactional outbox, let the dispatcher crash after sending and before marking the message sent, run it again: with the receiver deduplicating by message id, the credited event is shown exactly once.',
    ru: 'Доставьте через транзакционный outbox, пусть диспетчер упадёт после отправки, но до отметки об отправке, запустите его снова: получатель отсекает повторы по id сообщения, и зачисленное событие показано ровно один раз.' },
  'level.9.hint': { en: 'In “Where the scheme ends”, tick “The receiver deduplicates by message id”, choose the outbox, Deliver, press “Dispatcher crashes after sending”, then “Run the dispatcher”.',
    ru: 'В разделе «Где схема заканчивается» отметьте «Получатель отсекает повторы по id сообщения», выберите outbox, нажмите «Доставить», затем «Диспетчер падает после отправки», затем «Запустить диспетчер».' },
  'level.10.title': { en: 'Forgotten, so new again', ru: 'Забыто — значит, снова новое' },
  'level.10.goal': { en: 'Deliver an event, let the lab’s clock run past the retention window, purge the inbox, and deliver the same event again: it is applied a second time, because the row that remembered it is gone.',
    ru: 'Доставьте событие, прокрутите часы лаборатории дальше срока хранения, очистите inbox и доставьте то же событие снова: оно применится второй раз, потому что строки, которая его помнила, больше нет.' },
  'level.10.hint': { en: 'In “Where the scheme ends”, retention: “Deliver (or redeliver)”, “+7 days” until the event is older than the window, “Purge the inbox”, then “Deliver (or redeliver)” again.',
    ru: 'В разделе «Где схема заканчивается», срок хранения: «Доставить (или повторить)», «+7 дней», пока событие не станет старше срока, «Очистить inbox», затем снова «Доставить (или повторить)».' },
});

// Why a level is not won yet (`level.<id>.why.<name>`, or `levels.why.<name>`
// where several levels share the reason), and what winning it showed
// (`level.<id>.learned`; all ten are the closing summary).
register({
  'levels.why.old': { en: 'that event was already applied before this level started — deliver a new event id.',
    ru: 'это событие уже было применено до начала уровня — доставьте новый event_id.' },
  'levels.why.unheard': { en: 'the sender heard no answer in the end — deliver again.',
    ru: 'в итоге отправитель не услышал ответа — доставьте снова.' },
  'levels.why.handler': { en: 'that ran {handler}; this level is about {wanted}.', ru: 'работал {handler}, а этот уровень — про {wanted}.' },
  'levels.why.refused': { en: 'the answer was “{outcome}”, not what the goal asks for.', ru: 'ответ был «{outcome}», а цель требует другого.' },
  'level.1.why.once': { en: 'one “applied” — now deliver the same event again.', ru: 'одно «применено» — теперь доставьте то же событие ещё раз.' },
  'level.1.why.again': { en: 'the same event was applied a second time: {handler} does not recognise an event it has seen — use atomic.',
    ru: 'то же событие применено второй раз: {handler} не узнаёт уже виденное событие — возьмите atomic.' },
  'level.2.why.not_lost': { en: 'the response was not lost on the first attempt — tick “Lose the first response”.',
    ru: 'при первой попытке ответ не потерялся — отметьте «Потерять первый ответ».' },
  'level.2.why.again': { en: 'the retry was applied again: {handler} credited the event twice — use atomic.',
    ru: 'повтор применён снова: {handler} зачислил событие дважды — возьмите atomic.' },
  'level.3.why.no_crash': { en: 'the first attempt did not crash after the INSERT — choose that crash point.',
    ru: 'первая попытка не упала после INSERT — выберите эту точку сбоя.' },
  'level.3.why.not_reached': { en: 'the first attempt answered “{outcome}” instead of crashing: the crash point was not reached.',
    ru: 'первая попытка ответила «{outcome}», а не упала: до точки сбоя дело не дошло.' },
  'level.3.why.stayed': { en: 'after the crash the inbox row stayed: {handler} committed the INSERT on its own — use atomic.',
    ru: 'после сбоя строка inbox осталась: {handler} зафиксировал INSERT отдельно — возьмите atomic.' },
  'level.4.why.count': { en: '{count} deliveries, not 20 — set N = 20.', ru: 'доставок {count}, а не 20 — задайте N = 20.' },
  'level.4.why.many': { en: '{applied} of the {count} were applied: {handler} let more than one through — use atomic.',
    ru: 'применено {applied} из {count}: {handler} пропустил больше одной — возьмите atomic.' },
  'level.5.why.serial': { en: 'no double credit: one delivery’s SELECT ran after the other’s INSERT — advance A once, then B once, before either writes.',
    ru: 'двойного зачисления нет: SELECT одной доставки выполнился после INSERT другой — продвиньте A на шаг, затем B на шаг, пока ни одна не записала.' },
  'level.6.why.no_crash': { en: 'no crash after the INSERT: both transactions committed, so the credit is there — choose that crash point.',
    ru: 'сбоя после INSERT не было: обе транзакции зафиксированы, зачисление на месте — выберите эту точку сбоя.' },
  'level.7.why.control': { en: 'that was the control: its broken lock check is there to be caught, and it does not win.',
    ru: 'это был контроль: его сломанная проверка блокировки нужна, чтобы её поймали, и уровень он не засчитывает.' },
  'level.7.why.missed': { en: 'no kill landed in the middle of a commit — run the kills again.',
    ru: 'ни одно убийство не пришлось на середину коммита — запустите ещё раз.' },
  'level.8.why.applied': { en: 'applied. Now another new event must move the balance on, and then this one be delivered again.',
    ru: 'применено. Теперь другое новое событие должно сдвинуть баланс, а затем это нужно доставить снова.' },
  'level.8.why.again': { en: 'that event was applied again: {handler} computed a new result instead of returning the stored receipt — use atomic.',
    ru: 'событие применено снова: {handler} вычислил новый результат вместо сохранённой квитанции — возьмите atomic.' },
  'level.8.why.nothing_between': { en: 'nothing moved the balance between the first delivery and this replay — deliver another new event in between.',
    ru: 'между первой доставкой и повтором баланс не сдвинулся — доставьте в промежутке другое новое событие.' },
  'level.9.why.strategy': { en: 'that was {strategy}, not the outbox.', ru: 'это была стратегия {strategy}, а не outbox.' },
  'level.9.why.no_crash': { en: 'the dispatcher has not crashed after sending yet — press “Dispatcher crashes after sending”.',
    ru: 'диспетчер ещё не падал после отправки — нажмите «Диспетчер падает после отправки».' },
  'level.9.why.no_dedup': { en: 'the receiver does not deduplicate: the message sent twice is shown twice — tick “The receiver deduplicates by message id”.',
    ru: 'получатель не отсекает повторы: сообщение, отправленное дважды, показано дважды — отметьте «Получатель отсекает повторы по id сообщения».' },
  'level.10.why.remembered': { en: '“duplicate”: the inbox still remembers this event — let the clock pass the window and purge first.',
    ru: '«дубликат»: inbox ещё помнит это событие — прокрутите часы дальше срока хранения и сначала очистите.' },
  'level.10.why.nothing_purged': { en: 'the purge removed nothing: every row is younger than the window.',
    ru: 'очистка ничего не удалила: все строки моложе срока хранения.' },
  'level.1.learned': { en: 'The inbox row is the memory: the second delivery of one event changes nothing and answers “duplicate”.',
    ru: 'Строка inbox — это память: вторая доставка того же события ничего не меняет и отвечает «дубликат».' },
  'level.2.learned': { en: 'A lost response is retried, and the retry is safe: the event is recognised and not credited again.',
    ru: 'Потерянный ответ повторяют, и повтор безопасен: событие узнано и не зачислено снова.' },
  'level.3.learned': { en: 'One transaction is all or nothing: a crash between the INSERT and the UPDATE leaves no trace, so the retry applies the event.',
    ru: 'Одна транзакция — всё или ничего: сбой между INSERT и UPDATE не оставляет следов, и повтор применяет событие.' },
  'level.4.learned': { en: 'Under concurrency the unique key decides: twenty at once, one applied, nineteen duplicates.',
    ru: 'При конкуренции решает уникальный ключ: двадцать сразу — одно применено, девятнадцать дубликатов.' },
  'level.5.learned': { en: 'Checking first and inserting later is a race: two deliveries can both see nothing and both credit.',
    ru: 'Сначала проверить, потом вставить — это гонка: две доставки могут обе ничего не найти и обе зачислить.' },
  'level.6.learned': { en: 'Two transactions split what must stay together: the row is remembered, the credit lost, and the retry hears “duplicate”.',
    ru: 'Две транзакции разделяют то, что должно быть вместе: строка запомнена, зачисление потеряно, повтор слышит «дубликат».' },
  'level.7.learned': { en: 'SQLite’s commit is atomic even when the process dies mid-write: every event is whole or absent.',
    ru: 'Коммит SQLite атомарен, даже если процесс умер посреди записи: каждое событие целиком или никак.' },
  'level.8.learned': { en: 'A duplicate returns the stored first result, not a result computed now.',
    ru: 'Дубликат возвращает сохранённый первый результат, а не вычисленный сейчас.' },
  'level.9.learned': { en: 'The outbox sends at least once; the receiver’s own deduplication makes it count once.',
    ru: 'Outbox отправляет хотя бы один раз; ровно один раз его делает дедупликация у самого получателя.' },
  'level.10.learned': { en: 'Deduplication lasts as long as its rows: once purged, an old event is new again.',
    ru: 'Дедупликация живёт столько, сколько её строки: после очистки старое событие снова новое.' },
  'levels.summary': { en: 'Every level is won. What the ten levels showed:', ru: 'Все уровни пройдены. Что показали десять уровней:' },
});

// ---- What the observations say ----------------------------------------------

function sends(seen) {
  return seen.filter((o) => o.kind === 'send');
}

/** The answer the sender finally heard, or null if it heard none. */
function lastHeard(send) {
  const last = send.attempts.at(-1);
  return last === undefined || last.lost ? null : last.answer;
}

function gained(balance) {
  return balance.before === null || balance.after === null ? null : balance.after - balance.before;
}

function sameKey(a, b) {
  return a.source === b.source && a.event_id === b.event_id;
}

/** Whether an earlier send of this level applied the event of `send`. */
function appliedBefore(seen, send) {
  const all = sends(seen);
  return all.slice(0, all.indexOf(send)).some((s) => sameKey(s.event, send.event) && s.attempts.some((a) => a.answer?.outcome === 'applied'));
}

function outcome(answer) {
  return answer?.outcome ?? answer?.kind ?? '—';
}

/**
 * The reason shared by the sender's levels, from the last send, or null:
 * no answer heard, an event applied before this level (it answers
 * "duplicate" at once), a refusal.
 */
function sendWhy(seen, send) {
  const first = send.attempts[0]?.answer;
  if (first?.outcome === 'duplicate' && !appliedBefore(seen, send)) {
    return ['levels.why.old'];
  }
  const heard = lastHeard(send);
  if (heard === null) {
    return ['levels.why.unheard'];
  }
  return heard.outcome === undefined ? ['levels.why.refused', { outcome: outcome(heard) }] : null;
}

/** A level's `why`: null until there is an observation of `kind`, then `reason(last, seen)` of the last one. */
function whyLast(kind, reason) {
  return (seen) => {
    const last = seen.findLast((o) => o.kind === kind);
    return last === undefined ? null : reason(last, seen);
  };
}

/** Whether a send's first attempt passed `first(attempt, send)`, a retry then heard `heard`, judged correct, crediting the amount once. */
function retried(seen, heard, first) {
  return sends(seen).some((send) => {
    const [attempt, ...retries] = send.attempts;
    const last = lastHeard(send);
    return (
      attempt !== undefined &&
      first(attempt, send) &&
      retries.length > 0 &&
      last?.outcome === heard &&
      last.verdict?.kind === 'correct' &&
      gained(send.balance) === send.event.amount
    );
  });
}

/** A reason that the last observation of `kind` ran another handler than `wanted`. */
function handlerWhy(o, wanted) {
  return o.handler === wanted ? null : ['levels.why.handler', { handler: o.handler, wanted }];
}

// ---- The levels -------------------------------------------------------------

/** A new event, its key never used: the first delivery of it is the first. */
export function freshEvent(level) {
  return { source: 'provider-a', event_id: `level${level}-${Date.now().toString(36)}`, account_id: 1, amount: 100 };
}

/** A send of the sender's form, as a share link holds it (lib/share.js). */
function send(event, { handler = 'atomic', fault = null, lose = false } = {}) {
  return (panels) => panels.sender.replaySend({ event, handler, fault, lose, attempts: 5, delay: 1000 });
}

/** One action of a level's share link, through the lab's own controls (share/replay.js). */
function act(action) {
  return (panels) => panels.replay.perform(action);
}

// Each level: {id, section, evidence (the panel scrolled to after each step
// of "show me", if not the section's), handler (the sender's handler when
// the level starts, atomic unless named), won(seen), why(seen) → [key, params] | null,
// showMe(event) → its steps, each `(panels) => promise`, played one at a
// time; `event` is the level's fresh event, the one its form starts with}.
export const LEVELS = Object.freeze([
  {
    id: 1,
    section: 'deliver',
    // An "applied" that credited the amount, then a "duplicate" of the same
    // key that changed nothing.
    won: (seen) => {
      const all = sends(seen);
      return all.some(
        (first, i) =>
          lastHeard(first)?.outcome === 'applied' &&
          gained(first.balance) === first.event.amount &&
          all
            .slice(i + 1)
            .some(
              (again) =>
                sameKey(again.event, first.event) && lastHeard(again)?.outcome === 'duplicate' && gained(again.balance) === 0,
            ),
      );
    },
    why: whyLast('send', (last, seen) => {
      if (lastHeard(last)?.outcome === 'applied') {
        return appliedBefore(seen, last) ? ['level.1.why.again', { handler: last.handler }] : ['level.1.why.once'];
      }
      return sendWhy(seen, last);
    }),
    showMe: (event) => [send(event), send(event)],
  },
  {
    id: 2,
    section: 'deliver',
    // The first answer was "applied" and lost; a retry heard "duplicate";
    // Rust's verdict on it is correct; the balance grew by the amount once.
    won: (seen) => retried(seen, 'duplicate', (first) => first.lost === true && first.answer?.outcome === 'applied'),
    why: whyLast('send', (last, seen) => {
      if (last.attempts[0]?.lost !== true) {
        return sendWhy(seen, last) ?? ['level.2.why.not_lost'];
      }
      return sendWhy(seen, last) ?? (lastHeard(last).outcome === 'applied' ? ['level.2.why.again', { handler: last.handler }] : null);
    }),
    showMe: (event) => [send(event, { lose: true })],
  },
  {
    id: 3,
    section: 'deliver',
    // The first attempt crashed after its INSERT; the sender's query of the
    // tables then found no inbox row and the balance as before; a retry
    // applied it, correct, crediting the amount once.
    won: (seen) =>
      retried(
        seen,
        'applied',
        (first, send) =>
          send.fault === 'after_insert' &&
          first.answer?.outcome === undefined &&
          first.seen !== null &&
          first.seen.row === false &&
          first.seen.balance === send.balance.before,
      ),
    why: whyLast('send', (last, seen) => {
      const first = last.attempts[0];
      if (last.fault !== 'after_insert') {
        return ['level.3.why.no_crash'];
      }
      if (first?.answer?.outcome !== undefined) {
        return sendWhy(seen, last) ?? ['level.3.why.not_reached', { outcome: outcome(first.answer) }];
      }
      return first?.seen?.row === true ? ['level.3.why.stayed', { handler: last.handler }] : sendWhy(seen, last);
    }),
    showMe: (event) => [send(event, { fault: 'after_insert' })],
  },
  {
    id: 4,
    section: 'deliver',
    evidence: 'burst',
    won: (seen) =>
      seen.some(
        (o) =>
          o.kind === 'burst' &&
          o.count === 20 &&
          o.counts.applied === 1 &&
          o.counts.duplicate === 19 &&
          gained(o.balance) === o.event.amount,
      ),
    why: whyLast('burst', (last) => {
      const applied = last.counts.applied ?? 0;
      if (last.count !== 20) {
        return ['level.4.why.count', { count: last.count }];
      }
      if (applied === 0) {
        return ['levels.why.old'];
      }
      return applied > 1 ? ['level.4.why.many', { applied, count: last.count, handler: last.handler }] : null;
    }),
    showMe: (event) => [act({ do: 'burst', event, handler: 'atomic', count: 20 })],
  },
  {
    id: 5,
    section: 'race',
    // Rust's verdict on a race the reader stepped (not the explorer's replay).
    won: (seen) =>
      seen.some((o) => o.kind === 'race' && o.handler === 'check_then_act' && !o.replayed && o.verdict.double_credit === true),
    why: whyLast('race', (last) => handlerWhy(last, 'check_then_act') ?? ['level.5.why.serial']),
    showMe: () => [(panels) => panels.raceLab.playRace('check_then_act', [0, 1])],
    unlock: (won, panels) => panels.raceLab.showExplorer(won),
  },
  {
    id: 6,
    section: 'deliver',
    handler: 'two_transactions',
    // Rust's verdict on an answer the sender heard: the credit was lost.
    won: (seen) =>
      sends(seen).some((send) => send.handler === 'two_transactions' && send.attempts.some((a) => !a.lost && a.answer?.verdict?.kind === 'credit_lost')),
    why: whyLast('send', (last, seen) => {
      return handlerWhy(last, 'two_transactions') ?? sendWhy(seen, last) ?? (last.fault !== 'after_insert' ? ['level.6.why.no_crash'] : null);
    }),
    showMe: (event) => [send(event, { handler: 'two_transactions', fault: 'after_insert' })],
  },
  {
    id: 7,
    section: 'crash',
    // The crash lab's own verdict (its worker's checks in Rust, after every
    // reopening): workers really killed mid-commit, nothing partial, nothing
    // answered lost. The control (a broken lock check) never wins.
    won: (seen) =>
      seen.some(
        (o) =>
          o.kind === 'crash' &&
          !o.control &&
          o.points > 0 &&
          (o.run === 'sweep' || o.summary.killed_mid_stream > 0) &&
          o.summary.partial === 0 &&
          o.summary.lost_acknowledged === 0,
      ),
    why: whyLast('crash', (last) => {
      return last.control ? ['level.7.why.control'] : last.run === 'kills' && !(last.summary.killed_mid_stream > 0) ? ['level.7.why.missed'] : null;
    }),
    showMe: () => [act({ do: 'crash', run: 'kills', mode: 'delete', trials: 10 })],
  },
  {
    id: 8,
    section: 'deliver',
    // The article's exercise 3: an event applied (receipt R), another event
    // applied after it (the balance moved on), then the first one replayed:
    // the answer is R itself — its balance_after the old one, not the
    // balance now — and R is the receipt the inbox holds, as queried.
    won: (seen) => {
      const all = sends(seen);
      return all.some((first, i) => {
        const receipt = lastHeard(first)?.outcome === 'applied' ? lastHeard(first).receipt : null;
        if (!receipt) {
          return false;
        }
        const laterIndex = all.findIndex(
          (other, j) => j > i && !sameKey(other.event, first.event) && other.event.account_id === first.event.account_id && gained(other.balance) > 0,
        );
        return (
          laterIndex > i &&
          all.slice(laterIndex + 1).some((replay) => {
            const heard = lastHeard(replay);
            return (
              sameKey(replay.event, first.event) &&
              heard?.outcome === 'duplicate' &&
              heard.receipt?.seq === receipt.seq &&
              heard.receipt.balance_after === receipt.balance_after &&
              replay.stored?.seq === receipt.seq &&
              replay.balance.after !== receipt.balance_after
            );
          })
        );
      });
    },
    why: whyLast('send', (last, seen) => {
      const heard = lastHeard(last);
      if (heard?.outcome === 'applied') {
        return appliedBefore(seen, last) ? ['level.8.why.again', { handler: last.handler }] : ['level.8.why.applied'];
      }
      return sendWhy(seen, last) ?? (heard?.outcome === 'duplicate' ? ['level.8.why.nothing_between'] : null);
    }),
    showMe: (event) => [send(event), send({ ...event, event_id: `${event.event_id}-other` }), send(event)],
  },
  {
    id: 9,
    section: 'scheme-ends',
    // The outbox: its dispatcher died after sending a message and before
    // marking it sent, so it sends it again — and the receiver, deduplicating
    // by message id, still shows the credited event exactly once.
    won: (seen) =>
      seen.some(
        (crash, i) =>
          crash.kind === 'effects' &&
          crash.strategy === 'outbox' &&
          crash.crashed !== null &&
          seen
            .slice(i + 1)
            .some(
              (later) =>
                later.kind === 'effects' &&
                later.dedup === true &&
                later.verdicts.some((v) => v.eventId === crash.crashed && v.credited && v.verdict === 'once'),
            ) &&
          seen.slice(i + 1).some((later) => later.kind === 'effects' && later.verdicts.some((v) => v.eventId === crash.crashed && v.shown > 0)),
      ),
    why: whyLast('effects', (last, seen) => {
      if (last.strategy !== 'outbox') {
        return ['level.9.why.strategy', { strategy: last.strategy }];
      }
      if (!seen.some((o) => o.kind === 'effects' && o.strategy === 'outbox' && o.crashed !== null)) {
        return ['level.9.why.no_crash'];
      }
      return last.dedup ? null : ['level.9.why.no_dedup'];
    }),
    showMe: () =>
      [
        { control: 'dedup' },
        { control: 'deliver' },
        { control: 'dispatch_crash' },
        { control: 'dispatch' },
      ].map((control) => act({ do: 'effects', strategy: 'outbox', crash: null, dedup: true, ...control })),
  },
  {
    id: 10,
    section: 'scheme-ends',
    // Retention: an event applied, a purge that really deleted inbox rows,
    // then the same event applied AGAIN — the worker answered "applied"
    // twice for one key, because its row was gone.
    won: (seen) => {
      const r = seen.filter((o) => o.kind === 'retention');
      const applied = (o) => o.action === 'deliver' && o.answer?.outcome === 'applied';
      return r.some(
        (first, i) =>
          applied(first) &&
          r.some(
            (purge, j) =>
              j > i &&
              purge.action === 'purge' &&
              purge.count > 0 &&
              r.slice(j + 1).some((again) => applied(again) && sameKey(again.event, first.event)),
          ),
      );
    },
    why: (seen) => {
      const last = seen.findLast((o) => o.kind === 'retention');
      if (last?.action === 'purge' && last.count === 0) {
        return ['level.10.why.nothing_purged'];
      }
      return last?.action === 'deliver' && last.answer?.outcome === 'duplicate' ? ['level.10.why.remembered'] : null;
    },
    showMe: () =>
      [
        { control: 'deliver', next: true },
        { control: 'advance', days: 7 },
        { control: 'purge', days: 1 },
        { control: 'deliver', next: false },
      ].map((step) => act({ do: 'retention', ...step })),
  },
]);
