// The answer next to the action: one line placed beside a control that acts
// (Deliver, a burst, a step), so what happened shows where the reader is
// looking — on a phone too, where the panels that explain it in detail are
// further down.
//
//   const strip = resultStrip();           // a <p>, for the panel to place
//   actions.append(strip.element);
//   strip.working();                       // while it runs
//   strip.show({ answer, balance: { account, before, after } });
//
// It reads:   provider-a / evt-1 · applied · HTTP 200 · account 1: 0 → 500 · Correct
//             the event (if given)  outcome  status  balance before → after  verdict (a badge)
//
// and, after the badge, what the verdict says next to it (lib/verdict.js
// `verdictNotes`: what breaks a mistake right this time, a crash point not reached).
//
// Every part comes from what really ran: `answer` is the handler's answer
// (or error object) as the worker returned it, null when no answer came
// back; the balances are read from the database before and after; the
// verdict is `answer.verdict`, computed in Rust (src/labs/verdicts/), in the
// same words and colours as everywhere else (lib/verdict.js, its badge) —
// the strip says nothing of a verdict when an answer carries none. Like
// every text on the page it is written with textContent.

import { el, formatNumber } from './dom.js';
import { outcomeWord } from './errors.js';
import { onLanguageChange, register, t } from './i18n.js';
import { WRONG_KINDS, verdictBadge, verdictNotes, verdictWhy } from './verdict.js';

register({
  'strip.working': { en: 'working…', ru: 'выполняется…' },
  'strip.no_answer': { en: 'no answer', ru: 'ответа нет' },
  'strip.lost': { en: 'response lost', ru: 'ответ потерян' },
  'strip.http': { en: 'HTTP {status}', ru: 'HTTP {status}' },
  'strip.balance': { en: 'account {account}: {before} → {after}', ru: 'счёт {account}: {before} → {after}' },
  'strip.balance_none': { en: 'no such account', ru: 'такого счёта нет' },
});

const strips = new Set();
onLanguageChange(() => strips.forEach((strip) => strip.redraw()));

/**
 * A result strip. `show({event, answer, lost, balance, outcome, http})`:
 * `event` the name of the event it answers (a text; none: not shown),
 * `answer` an answer or error object (null: none came back), `lost` the
 * answer was thrown away on the way back, `balance` `{account, before,
 * after}` or null; `outcome` and `http` override what `answer` says (a
 * burst's counts, for example).
 */
export function resultStrip() {
  const element = el('p', { className: 'strip', attrs: { role: 'status', hidden: '' } });
  let shown = null;

  const strip = {
    element,
    working() {
      shown = { working: true };
      strip.redraw();
    },
    show(result) {
      shown = result;
      strip.redraw();
      // The button may sit at the window's edge: bring the answer in, as
      // little as needed. Not while its section is hidden.
      if (element.closest('[hidden]') === null) {
        element.scrollIntoView({ block: 'nearest' });
      }
    },
    clear() {
      shown = null;
      strip.redraw();
    },
    redraw() {
      element.hidden = shown === null;
      element.replaceChildren(...(shown === null ? [] : parts(shown)));
      element.dataset.state = shown === null ? '' : stateOf(shown);
    },
  };
  strips.add(strip);
  return strip;
}

function parts(result) {
  if (result.working) {
    return [el('span', { className: 'strip-part', text: t('strip.working') })];
  }
  const { answer = null, lost = false, balance = null } = result;
  const texts = result.event ? [{ className: 'strip-event', text: result.event }] : [];
  const outcome =
    result.outcome ?? (answer === null ? t('strip.no_answer') : outcomeWord(answer.outcome ?? answer.kind ?? ''));
  texts.push({ className: 'strip-outcome', text: lost ? `${outcome} (${t('strip.lost')})` : outcome });
  const http = result.http ?? (lost ? null : answer?.http_status);
  if (typeof http === 'number') {
    texts.push({ className: 'strip-http', text: t('strip.http', { status: http }) });
  }
  if (balance !== null && balance !== undefined) {
    texts.push({
      className: 'strip-balance',
      text:
        balance.before === null && balance.after === null
          ? t('strip.balance_none')
          : t('strip.balance', {
              account: balance.account,
              before: balance.before === null ? '—' : formatNumber(balance.before),
              after: balance.after === null ? '—' : formatNumber(balance.after),
            }),
    });
  }
  const verdict = answer?.verdict;
  const nodes = texts.map((part) => el('span', part));
  if (typeof verdict?.kind === 'string') {
    // The verdict's own badge (lib/verdict.js); why, on hover, in the handler's words.
    nodes.push(
      el(
        'span',
        { className: 'strip-verdict', data: { verdict: verdict.kind }, attrs: { title: verdictWhy(verdict) } },
        verdictBadge(verdict),
      ),
      ...verdictNotes(verdict).map((note) => el('span', { className: 'strip-note', text: note })),
    );
  }
  return nodes.flatMap((node, i) => [
    ...(i === 0 ? [] : [el('span', { className: 'strip-sep', text: ' · ', attrs: { 'aria-hidden': 'true' } })]),
    node,
  ]);
}

/** ok, refused (4xx), failed (5xx or no answer), wrong (a verdict that says a mistake did harm), working. */
function stateOf(result) {
  if (result.working) {
    return 'working';
  }
  const kind = result.answer?.verdict?.kind;
  if (WRONG_KINDS.includes(kind)) {
    return 'wrong';
  }
  const http = result.http ?? result.answer?.http_status;
  if (result.answer === null || result.lost || http >= 500) {
    return 'failed';
  }
  return http >= 400 ? 'refused' : 'ok';
}
