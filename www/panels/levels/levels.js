// The levels: a path through the lab, one goal at a time, in the spirit of
// The Deadlock Empire — but on real SQLite. A level is data:
//
//   {id,        1, 2, … (the order of the path, and the link #/levels/<id>)
//    section,   the route of the screen where you act (nav.js)
//    won(seen), true once the observations seen since the level was opened
//               (lib/observed.js: the answers, verdicts and balances the
//               worker really returned, the tables as queried) meet its goal
//    showMe(panels), performs the winning actions in sight, through the lab's
//               own controls (`panels`: every panel's actions, app.js); what it
//               wins is judged like anything the reader does
//    unlock(won, panels)} optional: shows what winning the level opens (or hides it)
//
// Its texts are `level.<id>.title`, `.goal`, `.hint`. The screen, the
// progress and the judging are levelscreen.js; nothing here looks at a click.

import { register } from '../../lib/i18n.js';
import { nextObserved } from '../../lib/observed.js';

register({
  en: {
    'level.1.title': 'Once, then again',
    'level.1.goal': 'Deliver a new event, then deliver it again: one “applied”, one “duplicate”, and the balance credited once.',
    'level.1.hint':
      'On Deliver, choose the preset “new event” (an event_id never seen), keep the atomic handler, press Deliver twice.',
    'level.2.title': 'The lost response',
    'level.2.goal': 'Let the first response get lost and the sender retry: the event is credited once, and Rust’s verdict is “correct”.',
    'level.2.hint': 'Tick “Lose the first response”, keep the atomic handler, and deliver a new event: the retry hears “duplicate”.',
    'level.3.title': 'A crash in the middle',
    'level.3.goal':
      'Crash between the INSERT and the UPDATE, let the sender’s query show that nothing stayed (no inbox row, the balance unchanged), and let the retry apply it.',
    'level.3.hint':
      'Choose “Crash on the first attempt: after the INSERT into inbox”, keep the atomic handler, and deliver a new event.',
    'level.4.title': 'Twenty at once',
    'level.4.goal': 'Deliver the same event twenty times at once: exactly one “applied”, nineteen “duplicate”, the balance credited once.',
    'level.4.hint': 'Put a new event in the form, keep the atomic handler, then in Burst use N = 20 and “The same event N times”.',
    'level.5.title': 'Break it yourself',
    'level.5.goal':
      'In the race lab, make check_then_act credit the event twice by stepping the two deliveries yourself. Winning unlocks “Explore every interleaving”.',
    'level.5.hint':
      'Choose check_then_act and “Start the race”. Advance A once (its SELECT finds nothing), then B once (so does its), then let each run to its end.',
    'level.6.title': 'Registered, never credited',
    'level.6.goal': 'Make two_transactions lose a credit: Rust’s verdict on an answer the sender heard is “credit lost”.',
    'level.6.hint':
      'Choose the handler two_transactions and “Crash on the first attempt: after the INSERT into inbox”, then deliver a new event. Watch what the retry hears.',
    'level.7.title': 'All or nothing',
    'level.7.goal':
      'Kill the worker in the middle of its commits, really, and let the crash lab show that every event is either entirely there or entirely absent, and nothing answered “200” was lost.',
    'level.7.hint':
      'On Crash, press “Run the sweep” (without the control) or “Run random kills”. The control recovers through a broken lock check: it is there to be caught, and it does not win.',
    'level.8.title': 'The first result, replayed',
    'level.8.goal':
      'The article’s exercise 3: deliver an event, then another one to the same account, then the first one again. The replay must answer the stored first receipt — its balance is the old one — not a result computed now.',
    'level.8.hint':
      'Deliver a new event and note its receipt; deliver another new event; then put the first event_id back and deliver it. Compare the receipt with the inbox row.',
    'level.9.title': 'The outbox',
    'level.9.goal':
      'Deliver with the transactional outbox, let the dispatcher crash after sending and before marking the message sent, run it again: with the receiver deduplicating by message id, the credited event is shown exactly once.',
    'level.9.hint':
      'In “Where the scheme ends”, tick “The receiver deduplicates by message id”, choose the outbox, Deliver, press “Dispatcher crashes after sending”, then “Run the dispatcher”.',
    'level.10.title': 'Forgotten, so new again',
    'level.10.goal':
      'Deliver an event, let the lab’s clock run past the retention window, purge the inbox, and deliver the same event again: it is applied a second time, because the row that remembered it is gone.',
    'level.10.hint':
      'In “Where the scheme ends”, retention: “Deliver (or redeliver)”, “+7 days” until the event is older than the window, “Purge the inbox”, then “Deliver (or redeliver)” again.',
  },
  ru: {
    'level.1.title': 'Один раз и ещё раз',
    'level.1.goal':
      'Доставьте новое событие, а затем доставьте его снова: один ответ «применено», один «дубликат», зачисление на баланс — одно.',
    'level.1.hint':
      'На экране «Доставка» выберите заготовку «новое событие» (event_id, которого ещё не было), оставьте обработчик atomic и нажмите «Доставить» дважды.',
    'level.2.title': 'Потерянный ответ',
    'level.2.goal':
      'Пусть первый ответ потеряется, а отправитель повторит: событие зачислено один раз, и вердикт Rust — «верно».',
    'level.2.hint':
      'Отметьте «Потерять первый ответ», оставьте обработчик atomic и доставьте новое событие: повтор услышит «дубликат».',
    'level.3.title': 'Сбой посередине',
    'level.3.goal':
      'Устройте сбой между INSERT и UPDATE, пусть запрос отправителя покажет, что ничего не осталось (строки в inbox нет, баланс прежний), а повтор применит событие.',
    'level.3.hint': 'Выберите «Сбой при первой попытке: после INSERT в inbox», оставьте обработчик atomic и доставьте новое событие.',
    'level.4.title': 'Двадцать сразу',
    'level.4.goal':
      'Доставьте одно и то же событие двадцать раз одновременно: ровно один ответ «применено», девятнадцать «дубликат», зачисление одно.',
    'level.4.hint':
      'Поставьте в форму новое событие, оставьте обработчик atomic, затем в «Залпе» задайте N = 20 и нажмите «Одно событие N раз».',
    'level.5.title': 'Сломайте сами',
    'level.5.goal':
      'В лаборатории гонок заставьте check_then_act зачислить событие дважды, продвигая обе доставки самостоятельно. Победа открывает «Перебрать все порядки».',
    'level.5.hint':
      'Выберите check_then_act и нажмите «Начать гонку». Продвиньте A на шаг (её SELECT ничего не находит), затем B на шаг (её тоже), затем доведите каждую до конца.',
    'level.6.title': 'Записано, но не зачислено',
    'level.6.goal': 'Заставьте two_transactions потерять зачисление: вердикт Rust на ответ, который услышал отправитель, — «зачисление потеряно».',
    'level.6.hint':
      'Выберите обработчик two_transactions и «Сбой при первой попытке: после INSERT в inbox», затем доставьте новое событие. Посмотрите, что услышит повтор.',
    'level.7.title': 'Всё или ничего',
    'level.7.goal':
      'По-настоящему убейте воркер посреди его коммитов, и пусть лаборатория сбоев покажет: каждое событие либо записано целиком, либо отсутствует целиком, и ничего, на что ответили «200», не потеряно.',
    'level.7.hint':
      'В разделе «Сбои» нажмите «Запустить перебор» (без контроля) или «Убивать в случайный момент». Контроль восстанавливается через сломанную проверку блокировки: он нужен, чтобы его поймали, и уровень не засчитывает.',
    'level.8.title': 'Первый результат, повторённый',
    'level.8.goal':
      'Упражнение 3 из статьи: доставьте событие, затем другое на тот же счёт, затем снова первое. Повтор должен вернуть сохранённую первую квитанцию — с прежним балансом, — а не результат, вычисленный сейчас.',
    'level.8.hint':
      'Доставьте новое событие и запомните его квитанцию; доставьте ещё одно новое событие; затем верните первый event_id и доставьте его снова. Сравните квитанцию со строкой inbox.',
    'level.9.title': 'Outbox',
    'level.9.goal':
      'Доставьте через транзакционный outbox, пусть диспетчер упадёт после отправки, но до отметки об отправке, запустите его снова: получатель отсекает повторы по id сообщения, и зачисленное событие показано ровно один раз.',
    'level.9.hint':
      'В разделе «Где схема заканчивается» отметьте «Получатель отсекает повторы по id сообщения», выберите outbox, нажмите «Доставить», затем «Диспетчер падает после отправки», затем «Запустить диспетчер».',
    'level.10.title': 'Забыто — значит, снова новое',
    'level.10.goal':
      'Доставьте событие, прокрутите часы лаборатории дальше срока хранения, очистите inbox и доставьте то же событие снова: оно применится второй раз, потому что строки, которая его помнила, больше нет.',
    'level.10.hint':
      'В разделе «Где схема заканчивается», срок хранения: «Доставить (или повторить)», «+7 дней», пока событие не станет старше срока, «Очистить inbox», затем снова «Доставить (или повторить)».',
  },
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

// ---- The levels -------------------------------------------------------------

/** A new event, its key never used: the first delivery of it is the first. */
function freshEvent(level) {
  return { source: 'provider-a', event_id: `level${level}-${Date.now().toString(36)}`, account_id: 1, amount: 100 };
}

/** Sets the sender's form and presses Deliver, as a reader would; resolves when the send is over. */
async function deliverInSight({ sender }, event, { handler = 'atomic', fault = null, loseResponse = false } = {}) {
  sender.setHandler(handler);
  sender.setFault(fault);
  sender.setLoseResponse(loseResponse);
  sender.fillFormForReader(event);
  const done = nextObserved('send');
  document.querySelector('#deliver-form button[type=submit]').click();
  return done;
}

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
    showMe: async (panels) => {
      const event = freshEvent(1);
      await deliverInSight(panels, event);
      await deliverInSight(panels, event);
    },
  },
  {
    id: 2,
    section: 'deliver',
    // The first answer was "applied" and lost; a retry heard "duplicate";
    // Rust's verdict on it is correct; the balance grew by the amount once.
    won: (seen) =>
      sends(seen).some((send) => {
        const [first, ...retries] = send.attempts;
        const heard = lastHeard(send);
        return (
          first?.lost === true &&
          first.answer?.outcome === 'applied' &&
          retries.length > 0 &&
          heard?.outcome === 'duplicate' &&
          heard.verdict?.kind === 'correct' &&
          gained(send.balance) === send.event.amount
        );
      }),
    showMe: async (panels) => {
      try {
        await deliverInSight(panels, freshEvent(2), { loseResponse: true });
      } finally {
        panels.sender.setLoseResponse(false);
      }
    },
  },
  {
    id: 3,
    section: 'deliver',
    // The first attempt crashed after its INSERT; the sender's query of the
    // tables then found no inbox row and the balance as before; a retry
    // applied it, correct, crediting the amount once.
    won: (seen) =>
      sends(seen).some((send) => {
        const [first, ...retries] = send.attempts;
        const heard = lastHeard(send);
        return (
          send.fault === 'after_insert' &&
          first !== undefined &&
          first.answer?.outcome === undefined &&
          first.seen !== null &&
          first.seen.row === false &&
          first.seen.balance === send.balance.before &&
          retries.length > 0 &&
          heard?.outcome === 'applied' &&
          heard.verdict?.kind === 'correct' &&
          gained(send.balance) === send.event.amount
        );
      }),
    showMe: async (panels) => {
      try {
        await deliverInSight(panels, freshEvent(3), { fault: 'after_insert' });
      } finally {
        panels.sender.setFault(null);
      }
    },
  },
  {
    id: 4,
    section: 'deliver',
    won: (seen) =>
      seen.some(
        (o) =>
          o.kind === 'burst' &&
          o.count === 20 &&
          o.counts.applied === 1 &&
          o.counts.duplicate === 19 &&
          gained(o.balance) === o.event.amount,
      ),
    showMe: async (panels) => {
      panels.sender.setHandler('atomic');
      panels.sender.fillFormForReader(freshEvent(4));
      const count = document.querySelector('#burst-count');
      count.value = '20';
      const done = nextObserved('burst');
      document.querySelector('#burst-same').click();
      await done;
    },
  },
  {
    id: 5,
    section: 'race',
    // Rust's verdict on a race the reader stepped (not the explorer's replay).
    won: (seen) =>
      seen.some((o) => o.kind === 'race' && o.handler === 'check_then_act' && !o.replayed && o.verdict.double_credit === true),
    showMe: async (panels) => {
      panels.nav.open('race');
      await panels.raceLab.playRace('check_then_act', [0, 1]);
    },
    unlock: (won, panels) => panels.raceLab.showExplorer(won),
  },
  {
    id: 6,
    section: 'deliver',
    // Rust's verdict on an answer the sender heard: the credit was lost.
    won: (seen) =>
      sends(seen).some((send) => send.handler === 'two_transactions' && send.attempts.some((a) => !a.lost && a.answer?.verdict?.kind === 'credit_lost')),
    showMe: async (panels) => {
      try {
        await deliverInSight(panels, freshEvent(6), { handler: 'two_transactions', fault: 'after_insert' });
      } finally {
        panels.sender.setFault(null);
        panels.sender.setHandler('atomic');
      }
    },
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
    showMe: async (panels) => {
      panels.nav.open('crash');
      document.querySelector('#crash-kills-trials').value = '10';
      const done = nextObserved('crash', 300_000);
      document.querySelector('#crash-kills-run').click();
      await done;
    },
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
    showMe: async (panels) => {
      const first = freshEvent(8);
      await deliverInSight(panels, first);
      await deliverInSight(panels, { ...first, event_id: `${first.event_id}-other` });
      await deliverInSight(panels, first);
    },
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
    showMe: async (panels) => {
      panels.nav.open('scheme-ends');
      const click = async (selector) => {
        const done = nextObserved('effects');
        document.querySelector(selector).click();
        await done;
      };
      if (!document.querySelector('#se-dedup').checked) {
        await click('#se-dedup');
      }
      document.querySelector('#se-strategy-outbox').click();
      await click('#se-deliver');
      await click('#se-dispatch-crash');
      await click('#se-dispatch');
    },
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
    showMe: async (panels) => {
      panels.nav.open('scheme-ends');
      const click = async (selector) => {
        const done = nextObserved('retention');
        document.querySelector(selector).click();
        await done;
      };
      const advance = (selector) =>
        new Promise((resolve) => {
          // "+7 days" answers with the clock, not an observation: wait for the clock line to change.
          const clock = document.querySelector('#se-clock');
          const before = clock.textContent;
          const watch = new MutationObserver(() => {
            if (clock.textContent !== before) {
              watch.disconnect();
              resolve();
            }
          });
          watch.observe(clock, { subtree: true, childList: true, characterData: true });
          document.querySelector(selector).click();
        });
      await click('#se-ret-deliver');
      await advance('#se-plus-week');
      const windowSelect = document.querySelector('#se-window');
      windowSelect.value = '1'; // purge what is older than a day: the event is a week old
      windowSelect.dispatchEvent(new Event('change'));
      await click('#se-purge');
      await click('#se-ret-deliver');
    },
  },
]);
