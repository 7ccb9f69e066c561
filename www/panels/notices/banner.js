// Where the database lives, said where nobody can miss it.
//
// * The storage banner: when the database is in memory — asked for with
//   `?storage=memory`, or because OPFS cannot be used (insecure origin, no
//   OPFS, a private window refusing it, the pool failing to install) — a
//   banner under the title says nothing will be kept, and why. It stays as
//   long as the database is in memory: there is no "dismiss", because the
//   reader's next reload would lose their data without warning.
// * The tab note: in a tab that is not the owner (www/db/tabs.js), a line says
//   that another tab holds the database and this one forwards to it; while
//   the database file is still held by a closing worker, it says that too.
//
// Both render from client.js's status and re-render on a language switch.
// Text goes in through textContent only.

import { SCRATCH, onStatus } from '../../db/client.js';
import { el } from '../../lib/dom.js';
import { errorMessage } from '../../lib/errors.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'storage.banner.title': { en: 'Nothing will be kept.', ru: 'Ничего не сохранится.' },
  'storage.banner.memory': { en: 'This page keeps its database in memory: reloading or closing it loses every event and balance.',
    ru: 'База данных этой страницы хранится в памяти: после перезагрузки или закрытия пропадут все события и балансы.' },
  'storage.banner.requested': { en: 'The page was opened with ?storage=memory.', ru: 'Страница открыта с параметром ?storage=memory.' },
  'storage.banner.why': { en: 'Why: {reason}', ru: 'Причина: {reason}' },
  'tabs.follower': { en: 'Another tab of this page holds the database. This tab sends its requests there and shows the same tables; if that tab closes, one of the others takes over.',
    ru: 'База данных открыта в другой вкладке этой страницы. Эта вкладка отправляет запросы туда и показывает те же таблицы; если ту вкладку закрыть, её работу подхватит одна из оставшихся.' },
  'tabs.waiting': { en: 'Waiting for another tab or worker to release the database file (attempt {attempt} of {attempts})…',
    ru: 'Ждём, пока другая вкладка или обработчик освободит файл базы данных (попытка {attempt} из {attempts})…' },
});

let banner = null;
let tabNote = null;
let last = null;

export function mount() {
  banner = document.querySelector('#storage-banner');
  tabNote = document.querySelector('#tab-note');
  onStatus((status) => {
    last = status;
    render();
  });
  onLanguageChange(render);
}

function render() {
  if (last === null) {
    return;
  }
  const { storage, fallback, role, waiting } = last;
  if (banner !== null) {
    // A page opened by a share link is in memory on purpose, and says so in
    // its own note (www/panels/share/replay.js).
    const inMemory = !SCRATCH && (storage === 'memory' || fallback !== null);
    banner.hidden = !inMemory;
    if (inMemory) {
      const title = el('strong', { text: t('storage.banner.title') });
      const why = fallback ? t('storage.banner.why', { reason: errorMessage(fallback) }) : t('storage.banner.requested');
      banner.replaceChildren(title, ` ${t('storage.banner.memory')} ${why}`);
      banner.dataset.reason = fallback?.code ?? 'requested';
    }
  }
  if (tabNote !== null) {
    const text = waiting ? t('tabs.waiting', waiting) : role === 'follower' ? t('tabs.follower') : '';
    tabNote.textContent = text;
    tabNote.hidden = text === '';
    tabNote.dataset.role = role;
  }
}
