// Bursts: many deliveries in flight at once, with the sender's event and
// handler.
//
// * The same event N times: the article's "20 concurrent deliveries". With
//   the atomic handler exactly one is applied and N-1 are duplicates, and the
//   balance grows once. (The worker has one connection, so it answers them one
//   after another; real parallel connections are the race lab's subject and
//   the native tests'.)
// * N different events: throughput. One message per delivery would cost the
//   worker more than the commit itself, so the events go in batches
//   (`inboxLab.deliverMany`: each delivery still its own transaction, judged
//   and counted by Rust), a few batches in the worker at a time: each answer
//   lets the next batch go, and Cancel stops sending. The progress bar is
//   drawn at most once per frame (requestAnimationFrame) and the tables at
//   most once a second, so 10,000 deliveries never freeze the page.

import { button, clearErrors, countsText, el, field, fold, formatNumber, showFieldError, whileBusy } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { observe } from '../../lib/observed.js';
import { balanceIn, creditVerdict } from '../../lib/send.js';
import { resultStrip } from '../../lib/strip.js';
import { countOutcomes } from '../../lib/timeline.js';

register({
  'burst.title': { en: 'Burst', ru: 'Залп' },
  'burst.intro': { en: 'Uses the sender’s event and handler. All deliveries are in flight together; the worker’s single connection takes them one at a time (the race lab interleaves real connections).',
    ru: 'Берёт событие и обработчик отправителя. Все доставки летят одновременно; единственное соединение воркера обрабатывает их по очереди (настоящие параллельные соединения чередует лаборатория гонок).' },
  'burst.count': { en: 'How many (N)', ru: 'Сколько (N)' },
  'burst.same': { en: 'The same event N times', ru: 'Одно событие N раз' },
  'burst.distinct': { en: 'N different events', ru: 'N разных событий' },
  'burst.bad_count': { en: 'N: a whole number from 1 to {max}.', ru: 'N: целое число от 1 до {max}.' },
  'burst.same_result': { en: '{count} deliveries of ({source}, {event_id}) at once: {counts}.',
    ru: 'Доставок ({source}, {event_id}) одновременно: {count}. Итог: {counts}.' },
  'burst.distinct_result': { en: '{count} different events in {seconds} s ({rate} per second): {counts}.',
    ru: 'Разных событий: {count} за {seconds} с ({rate} в секунду). Итог: {counts}.' },
  'burst.progress': { en: 'Delivered {done} of {count}', ru: 'Доставлено {done} из {count}' },
  'burst.cancel': { en: 'Cancel', ru: 'Отменить' },
  'burst.cancelled_result': { en: 'Cancelled: {done} of {count} different events were delivered in {seconds} s, each in its own transaction; none was cut in half. {counts}.',
    ru: 'Отменено: доставлено {done} из {count} разных событий за {seconds} с, каждое в своей транзакции; ни одна не оборвана посередине. Итог: {counts}.' },
  'burst.balance_ok': { en: 'Balance of account {account}: {before} → {after} = {amount} × {applied} applied. Exact.',
    ru: 'Баланс счёта {account}: {before} → {after} = {amount} × {applied} применённых. Точно.' },
  'burst.balance_wrong': { en: 'Balance of account {account}: {before} → {after}, but {amount} × {applied} applied = {expected}!',
    ru: 'Баланс счёта {account}: {before} → {after}, а {amount} × {applied} применённых = {expected}!' },
});

/**
 * A burst of different events goes to the worker in batches of this many
 * deliveries (each its own transaction), so a message carries a hundred
 * commits rather than one, and Cancel waits for at most a few batches.
 */
const BATCH = 100;
/** Batches kept in the worker at once: one running, the next ones queued, so it never waits for the page. */
const BATCHES_IN_FLIGHT = 3;
/** How often the tables are redrawn during a burst of different events. */
const TABLES_EVERY_MS = 1000;
/** The largest N the form accepts. */
const MAX_BURST = 20_000;

let form = null;
let buttons = null;
let progressBox = null;
let progress = null;
let progressLabel = null;
let output = null;
// The answer next to the buttons (lib/strip.js): the outcomes counted, the balance before → after.
let strip = null;
// The page's services (app.js): the database, the timeline, the tables, the sender.
let services = null;
let cancelButton = null;
// The last result, kept to redraw it in another language.
let shown = null;
// Set by "Cancel" during a burst of different events: no new delivery
// starts; those already in flight finish (each is its own transaction).
let cancelled = false;

// One burst at a time: the buttons are off until it is over.
function run(burst) {
  clearErrors(form);
  const text = form.elements.count.value.trim();
  const count = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(count >= 1 && count <= MAX_BURST)) {
    showFieldError(form, 'count', () => t('burst.bad_count', { max: formatNumber(MAX_BURST) }));
    return;
  }
  whileBusy(async () => {
    buttons.forEach((b) => (b.disabled = true));
    strip.working();
    try {
      const { sender } = services.panels;
      const result = await burst(sender.formEvent(), count, sender.formHandler());
      draw(result);
      strip.show({ outcome: countsText(result.counts), balance: { account: result.event.account_id, ...result.balance } });
    } catch (error) {
      strip.clear();
      throw error;
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });
}

/**
 * Delivers `event` `count` times at once. Every delivery is a timeline
 * entry. Resolves to `{kind: "same", event, count, counts, balance}`.
 */
async function burstSame(event, count, handler) {
  const before = await balanceOf(event.account_id);
  const answers = await Promise.all(
    Array.from({ length: count }, async () => {
      const started = performance.now();
      const answer = await deliver(event, handler);
      services.timeline.add({
        at: services.panels.sender.now(),
        event,
        attempt: 1,
        of: 1,
        handler,
        via: 'burst',
        answer,
        lost: false,
        tookMs: performance.now() - started,
        steps: answer?.steps ?? null, // what Rust says the handler ran
      });
      return answer;
    }),
  );
  const after = balanceIn(await services.refreshTables(), event.account_id);
  const counts = countOutcomes(answers);
  observe('burst', { event, handler, count, counts, balance: { before, after } });
  return { kind: 'same', event, count, counts, balance: { before, after } };
}

/**
 * Delivers `count` different events — the base event with event_ids
 * `<event_id>-<run>-1 … -count` — in batches of `BATCH`, `BATCHES_IN_FLIGHT`
 * batches at a time (each delivery still its own transaction; Rust counts
 * what each batch's deliveries answered). The tables are redrawn while it
 * runs, at most every `TABLES_EVERY_MS`. One timeline entry for the whole
 * burst. Resolves to `{kind: "distinct", event, count, done, cancelled,
 * counts, ms, balance}`.
 */
async function burstDistinct(event, count, handler) {
  const run = Date.now().toString(36); // a fresh key space for every run
  const before = await balanceOf(event.account_id);
  const counts = {};
  let next = 0;
  let done = 0;
  let frame = 0;
  const paint = () => {
    frame = 0;
    progress.value = done;
    progressLabel.textContent = t('burst.progress', { done: formatNumber(done), count: formatNumber(count) });
  };
  progress.max = count;
  paint();
  progressBox.hidden = false;
  const started = performance.now();
  let tablesAt = -Infinity; // the first batch's answer redraws them at once
  cancelled = false;
  cancelButton.hidden = false;
  cancelButton.disabled = false;
  // Each of these loops keeps one batch in the worker: it sends a batch,
  // waits for Rust's counts, and sends the next until none are left or
  // Cancel was pressed. Cancel therefore stops between transactions: the
  // batches already sent finish, every delivery in them whole.
  const slot = async () => {
    while (next < count && !cancelled) {
      const first = next + 1;
      next = Math.min(count, next + BATCH);
      const events = [];
      for (let i = first; i <= next; i += 1) {
        events.push({ ...event, event_id: `${event.event_id}-${run}-${i}` });
      }
      const answer = await deliverMany(events, handler);
      if (answer.outcomes) {
        for (const [outcome, n] of Object.entries(answer.outcomes)) {
          counts[outcome] = (counts[outcome] ?? 0) + n;
        }
      } else {
        // The batch as a whole got no answer (the worker was restarted):
        // none of its deliveries was confirmed, each counts under that error.
        counts[answer.kind] = (counts[answer.kind] ?? 0) + events.length;
      }
      done += events.length;
      if (frame === 0) {
        frame = requestAnimationFrame(paint);
      }
      const now = performance.now();
      if (now - tablesAt >= TABLES_EVERY_MS) {
        tablesAt = now;
        services.refreshTables(); // not awaited: drawn when read, the burst goes on
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(BATCHES_IN_FLIGHT, Math.ceil(count / BATCH)) }, slot));
  } finally {
    cancelButton.hidden = true;
  }
  const ms = performance.now() - started;
  cancelAnimationFrame(frame);
  paint();
  services.timeline.add({ via: 'burst_distinct', count: done, counts, tookMs: ms });
  const after = balanceIn(await services.refreshTables(), event.account_id);
  return { kind: 'distinct', event, count, done, cancelled: done < count, counts, ms, balance: { before, after } };
}

/** A batch's counts, or the error object that answered the whole batch. */
function deliverMany(events, handler) {
  return services.db.deliverMany(events, { handler }).catch((error) => error);
}

/** The handler's answer, error objects included. */
function deliver(event, handler) {
  return services.db.deliver(event, { handler }).catch((error) => error);
}

async function balanceOf(accountId) {
  return balanceIn(await services.refreshTables(), accountId);
}

function draw(result) {
  shown = result;
  const { event, count, counts, balance } = result;
  const lines = [];
  if (result.kind === 'same') {
    lines.push(t('burst.same_result', { count: formatNumber(count), source: event.source, event_id: event.event_id, counts: countsText(counts) }));
    lines.push(creditVerdict({ account: event.account_id, amount: event.amount, ...balance }));
  } else {
    const seconds = result.ms / 1000;
    lines.push(
      t(result.cancelled ? 'burst.cancelled_result' : 'burst.distinct_result', {
        done: formatNumber(result.done ?? count),
        count: formatNumber(count),
        seconds: seconds.toFixed(1),
        rate: formatNumber(Math.round((result.done ?? count) / seconds)),
        counts: countsText(counts),
      }),
    );
    lines.push(distinctBalance(event, counts.applied ?? 0, balance));
  }
  output.replaceChildren(
    ...lines.filter((line) => line !== null).map((text, i) => el('p', { className: i === 0 ? 'summary' : 'note', text })),
  );
}

// N different events: each applied one adds `amount`, nothing else may.
function distinctBalance(event, applied, { before, after }) {
  if (typeof event.amount !== 'number' || before === null || after === null) {
    return null;
  }
  const expected = before + event.amount * applied;
  const params = {
    account: event.account_id,
    before: formatNumber(before),
    after: formatNumber(after),
    amount: formatNumber(event.amount),
    applied: formatNumber(applied),
    expected: formatNumber(expected),
  };
  return t(after === expected ? 'burst.balance_ok' : 'burst.balance_wrong', params);
}

/** Builds the burst in `root` (#burst). Returns `burstSame` and `burstDistinct` (the console API's `burst` and `burstDistinct`). */
export function mount(root, pageServices) {
  services = pageServices;
  form = el(
    'form',
    { className: 'inline-form', attrs: { id: 'burst-form', novalidate: '' } },
    field('burst-count', 'burst.count', { name: 'count', value: '20', inputmode: 'numeric', autocomplete: 'off' }),
  );
  buttons = [button('burst.same', 'burst-same', null, ''), button('burst.distinct', 'burst-distinct')];
  progressLabel = el('label', { attrs: { for: 'burst-progress', id: 'burst-progress-label' } });
  progress = el('progress', { attrs: { id: 'burst-progress', max: '1', value: '0' } });
  progressBox = el('div', { className: 'progress-box', attrs: { id: 'burst-progress-box', hidden: '' } }, progressLabel, progress);
  output = el('div', { attrs: { id: 'burst-result', 'aria-live': 'polite' } });
  // Behind a disclosure, so the Deliver section stays short on a phone.
  root.append(
    fold(
      'burst-fold',
      el('h2', { i18n: 'burst.title', attrs: { id: 'burst-title' } }),
      el('p', { className: 'note', i18n: 'burst.intro' }),
      form,
      el('div', { className: 'actions' }, ...buttons),
      progressBox,
      output,
    ),
  );
  strip = resultStrip();
  buttons[1].after(strip.element);
  buttons[0].addEventListener('click', () => run(burstSame));
  buttons[1].addEventListener('click', () => run(burstDistinct));
  // "Cancel" lives next to the progress it stops; it stays usable while
  // the burst keeps the page busy.
  cancelButton = el('button', { className: 'danger small', i18n: 'burst.cancel', attrs: { type: 'button', id: 'burst-cancel', hidden: '' } });
  cancelButton.addEventListener('click', () => {
    cancelled = true;
    cancelButton.disabled = true;
  });
  progressBox.append(cancelButton);
  onLanguageChange(() => {
    if (shown !== null) {
      draw(shown);
    }
    if (!progressBox.hidden) {
      progressLabel.textContent = t('burst.progress', { done: formatNumber(progress.value), count: formatNumber(progress.max) });
    }
  });
  return { burstSame, burstDistinct };
}
