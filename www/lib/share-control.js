// The "Share" button (panels/share/sharing.js puts it next to the timeline,
// the race lab and step mode; the levels next to a won level), with its
// answer and the link's field. Its words are the share panel's ("share.*").

import { el } from './dom.js';
import { onLanguageChange, t } from './i18n.js';
import { encodeShare } from './share.js';

/**
 * A "Share" button with its answer and its field. `make()` returns the state
 * to share or {error, params}. Returns the element to put next to the
 * experiment's controls.
 */
export function shareControl(id, key, make) {
  const button = el('button', { className: 'secondary', i18n: key, attrs: { type: 'button', id } });
  const answer = el('p', { className: 'share-answer', attrs: { id: `${id}-answer`, role: 'status' } });
  const field = el('input', {
    className: 'share-url',
    attrs: { id: `${id}-url`, type: 'text', readonly: '', 'aria-label': t('share.link'), spellcheck: 'false' },
  });
  field.hidden = true;
  let said = null;
  const say = (text) => {
    said = text;
    answer.textContent = text === null ? '' : t(text.key, text.params);
  };
  onLanguageChange(() => {
    button.textContent = t(key);
    field.setAttribute('aria-label', t('share.link'));
    say(said);
  });
  button.addEventListener('click', async () => {
    const state = make();
    if (state.error) {
      field.hidden = true;
      say({ key: state.error, params: state.params });
      return;
    }
    const made = encodeShare(state);
    if (made.error) {
      field.hidden = true;
      say({ key: made.error });
      return;
    }
    const url = `${location.origin}${location.pathname}${made.fragment}`;
    field.value = url;
    field.hidden = false;
    try {
      await navigator.clipboard.writeText(url);
      say({ key: 'share.copied' });
    } catch {
      say({ key: 'share.copy_field' });
      field.focus();
      field.select();
    }
  });
  return el('div', { className: 'share-control' }, button, answer, field);
}
