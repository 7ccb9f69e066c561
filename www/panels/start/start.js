// The start screen: what the lab is (index.html), and the article's ideas,
// each with the screen where you can try it and the file of this project that
// holds it — the same map as README.md's "Where each idea lives".
//
// The files are named, not linked: the page serves only www/, and the code is
// read in the repository (or a clone of it), not through the playground.

import { el } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';

register({
  'start.title': { en: 'Start here', ru: 'С чего начать' },
  'start.open': { en: 'Open the lab: deliver an event', ru: 'Открыть лабораторию: доставить событие' },
  'start.levels': { en: 'Start with level 1', ru: 'Начать с уровня 1' },
  'start.ideas': { en: 'The article’s ideas, where to try each, and the code that holds it',
    ru: 'Идеи статьи: где попробовать каждую и в каком коде она живёт' },
  'start.try': { en: 'Try it: {section}', ru: 'Попробовать: {section}' },
  'start.code': { en: 'Code:', ru: 'Код:' },
  'idea.key': { en: 'A unique key (source, event_id) in an inbox table decides which delivery is the first.',
    ru: 'Уникальный ключ (source, event_id) в таблице inbox решает, какая доставка первая.' },
  'idea.transaction': { en: 'Registering the event and crediting the balance happen in ONE transaction: a crash between them leaves nothing.',
    ru: 'Регистрация события и зачисление на баланс идут в ОДНОЙ транзакции: сбой между ними не оставляет ничего.' },
  'idea.duplicate': { en: 'A duplicate is a success carrying the first receipt, not an error; a lock timeout is never a duplicate.',
    ru: 'Дубликат — это успех с первой квитанцией, а не ошибка; истёкшее ожидание блокировки дубликатом не бывает.' },
  'idea.mistakes': { en: 'The mistakes the article warns about (check-then-act, two transactions, INSERT OR IGNORE / REPLACE) fail in their own ways.',
    ru: 'Ошибки, о которых предупреждает статья (проверить-потом-сделать, две транзакции, INSERT OR IGNORE / REPLACE), ломаются каждая по-своему.' },
  'idea.handler': { en: 'Write the handler yourself, in plain SQL lines: the race explorer, a fault after every statement and the article’s cases judge it.',
    ru: 'Напишите обработчик сами, строками SQL: его проверят перебор гонок, сбой после каждого оператора и случаи из статьи.' },
  'idea.crash': { en: 'A commit survives a crash at any storage operation, or leaves nothing at all.',
    ru: 'Коммит переживает сбой на любой операции с хранилищем — или не оставляет ничего.' },
  'idea.ends': { en: 'Where one key and one transaction stop helping: side effects, business keys, retention.',
    ru: 'Где один ключ и одна транзакция перестают помогать: побочные эффекты, бизнес-ключи, срок хранения.' },
  'idea.webhooks': { en: 'Deduplication does not prove who sent an event: verify the signature first.',
    ru: 'Дедупликация не доказывает, кто прислал событие: сначала проверьте подпись.' },
  'idea.tools': { en: 'Look inside: a read-only SQL console, export and import, a benchmark.',
    ru: 'Заглянуть внутрь: SQL-консоль только для чтения, экспорт и импорт, замер скорости.' },
});

/** Each idea: its text, the route where it can be tried, and the files that hold it. */
const IDEAS = [
  { key: 'idea.key', route: 'sender', section: 'nav.deliver', files: ['src/core/event.rs', 'src/core/schema.rs'] },
  { key: 'idea.transaction', route: 'stepper', section: 'nav.deliver', files: ['src/core/apply.rs', 'src/core/trace.rs'] },
  { key: 'idea.duplicate', route: 'sender', section: 'nav.deliver', files: ['src/core/outcome.rs', 'src/core/error.rs'] },
  { key: 'idea.mistakes', route: 'race-lab', section: 'nav.race', files: ['src/labs/handlers/mod.rs', 'src/labs/race/explorer.rs'] },
  { key: 'idea.handler', route: 'handler', section: 'nav.handler', files: ['src/labs/handlers/', 'docs/handler-language.md'] },
  { key: 'idea.crash', route: 'crash', section: 'nav.crash', files: ['src/storage/iolog.rs', 'src/labs/crash/'] },
  { key: 'idea.ends', route: 'scheme-ends', section: 'nav.scheme_ends', files: ['src/labs/scheme_ends/'] },
  { key: 'idea.webhooks', route: 'webhooks', section: 'nav.webhooks', files: ['src/labs/webhooks/'] },
  { key: 'idea.tools', route: 'tools', section: 'nav.tools', files: ['src/labs/tools/', 'www/db/worker.js'] },
];

let list = null;

export function mount() {
  list = document.querySelector('#ideas');
  draw();
  onLanguageChange(draw);
}

function draw() {
  list.replaceChildren(
    ...IDEAS.map(({ key, route, section, files }) =>
      el(
        'li',
        {},
        el('span', { text: t(key) }),
        ' ',
        el('a', { text: t('start.try', { section: t(section) }), attrs: { href: `#/${route}` } }),
        el('span', { className: 'idea-code' }, `${t('start.code')} `, ...files.flatMap((file, i) => [i ? ', ' : '', el('code', { text: file })])),
      ),
    ),
  );
}
