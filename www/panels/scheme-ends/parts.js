// What the three experiments of "where the scheme ends" draw alike: their
// event's constants, a translated element, an answer line, an error shown
// where it belongs, a case's header and its fix (a disclosure).

import { el, formatNumber, whileBusy } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { t } from '../../lib/i18n.js';

export const SOURCE = 'shop';
export const ACCOUNT = 1;
export const AMOUNT = 100;

/** An element whose text is the translation of `key`, kept up to date by translatePage(). */
export function tx(tag, key, options = {}) {
  return el(tag, { ...options, text: t(key), data: { ...options.data, i18n: key } });
}

export function isError(reply) {
  return reply !== null && typeof reply === 'object' && typeof reply.kind === 'string';
}

/** The answer of `call`, or the error it was refused with: both are drawn. */
export function answerOf(call) {
  return call.catch((error) => error);
}

/**
 * Runs `action` with <main> busy. Outcomes and expected errors are drawn by
 * the action; anything else it throws (busy while step mode holds the lock,
 * a worker that died) is shown in `note`, an element of its own, instead of
 * being lost.
 */
export function act(note, action) {
  return whileBusy(async () => {
    note.textContent = '';
    try {
      await action();
    } catch (error) {
      note.textContent = isError(error) ? errorMessage(error) : String(error);
    }
  });
}

/** The number after the highest `<prefix>-N` among `ids`: where this visit's events continue. */
export function nextNumber(ids, prefix) {
  let max = 0;
  for (const id of ids) {
    const match = new RegExp(`^${prefix}-(\\d+)$`).exec(id);
    if (match !== null) {
      max = Math.max(max, Number(match[1]));
    }
  }
  return max + 1;
}

export function showBalance(node, tables) {
  const balance = tables.accounts.find((account) => account.id === ACCOUNT)?.balance;
  node.textContent =
    balance === undefined ? t('se.no_account') : t('se.balance', { balance: formatNumber(balance) });
}

export function caseHeader(id, titleKey, problemKey, tryKey) {
  return [
    tx('h3', titleKey, { attrs: { id } }),
    tx('p', problemKey),
    el('p', { className: 'se-try' }, tx('strong', 'se.try'), ' ', tx('span', tryKey)),
  ];
}

/** The fix, behind a disclosure: read once the experiment has shown the problem. */
export function fixBox(fixKey, ...more) {
  return el('details', { className: 'se-fix' }, tx('summary', 'se.fix'), tx('p', fixKey), ...more);
}
