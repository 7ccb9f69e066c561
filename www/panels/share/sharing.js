// "Share": a link to the state of an experiment, next to the experiment —
// the sender's timeline, the race lab's race, step mode's crash point, a won
// level. The link is the page's URL with the state in its fragment
// (www/lib/share.js, one format for all); opening it replays the state on a
// scratch database (replay.js).
//
// The link is copied to the clipboard; whether or not that works (a browser
// may refuse without a permission), it is also shown in a read-only field
// next to the button, selected when the clipboard refused, so it can be
// copied by hand. The answer — copied, or why there is nothing to share — is
// written next to the button.
//
// What the timeline's link holds is recorded here, from what the sender
// reported when each send was over (lib/observed.js): the deliveries as sent
// (Deliver and the redeliver chips: event, handler, crash point, lost
// response, retry policy), never the form as it is now. Bursts, step mode and
// webhooks are on the timeline too but not in its link: step mode and a
// level have links of their own. "Clear" on the timeline forgets them.

import { register } from '../../lib/i18n.js';
import { onObserved } from '../../lib/observed.js';
import { LIMITS, orderText, sendState } from '../../lib/share.js';
import { shareControl } from '../../lib/share-control.js';

register({
  'share.button.timeline': { en: 'Share these deliveries', ru: 'Поделиться этими доставками' },
  'share.button.race': { en: 'Share this race', ru: 'Поделиться этой гонкой' },
  'share.button.step': { en: 'Share this crash point', ru: 'Поделиться этой точкой сбоя' },
  'share.button.level': { en: 'Share this win', ru: 'Поделиться этой победой' },
  'share.link': { en: 'Link', ru: 'Ссылка' },
  'share.copied': { en: 'Link copied to the clipboard. Opening it replays this on a scratch database.',
    ru: 'Ссылка скопирована в буфер обмена. Открыв её, вы повторите это на черновой базе.' },
  'share.copy_field': { en: 'The clipboard is not available here: the link is selected in the field — copy it from there.',
    ru: 'Буфер обмена здесь недоступен: ссылка выделена в поле — скопируйте её оттуда.' },
  'share.nothing.timeline': { en: 'Nothing to share yet: deliver something first.', ru: 'Делиться пока нечем: сначала доставьте что-нибудь.' },
  'share.nothing.race': { en: 'Nothing to share yet: start a race and advance it.', ru: 'Делиться пока нечем: начните гонку и продвиньте её.' },
  'share.nothing.step': { en: 'Nothing to share yet: step a delivery to its end (Next statement or Throw here).',
    ru: 'Делиться пока нечем: пройдите доставку по шагам до конца («Следующий оператор» или «Бросить исключение»).' },
  'share.nothing.level': { en: 'Win this level in this visit to share how: the link holds the actions that won it.',
    ru: 'Пройдите этот уровень в этот визит, чтобы поделиться тем, как: ссылка хранит действия, которые привели к победе.' },
  'share.level_other': { en: 'This win cannot be shared as a link: it was won with step mode or with a race replayed from a link, which a level’s link does not replay.',
    ru: 'Этой победой нельзя поделиться ссылкой: она получена в пошаговом режиме или гонкой, повторённой по ссылке, а их ссылка уровня не повторяет.' },
  'share.killed': { en: 'A delivery ended by killing the worker cannot be shared: the scratch database a link opens lives in the worker’s memory and would die with it.',
    ru: 'Доставкой, оборванной убийством воркера, поделиться нельзя: черновая база, которую открывает ссылка, живёт в памяти воркера и погибла бы вместе с ним.' },
  'share.too_many': { en: 'Too many to share: {count} deliveries or steps, at most {max}.',
    ru: 'Слишком много, чтобы поделиться: доставок или шагов — {count}, можно не больше {max}.' },
  'share.kind': { en: 'This share link holds an experiment this page does not know ({kind}).',
    ru: 'В ссылке эксперимент, которого эта страница не знает ({kind}).' },
  'share.shape': { en: 'This share link is damaged: “{field}” is not what it should be.',
    ru: 'Ссылка повреждена: «{field}» — не то, что должно быть.' },
  'share.handler': { en: 'This share link names an unknown handler: “{name}”.', ru: 'В ссылке неизвестный обработчик: «{name}».' },
  'share.fault': { en: 'This share link names an unknown crash point: “{name}”.', ru: 'В ссылке неизвестная точка сбоя: «{name}».' },
  'share.level': { en: 'This share link names a level that does not exist: {level}.', ru: 'В ссылке уровень, которого нет: {level}.' },
  'share.name': { en: 'This share link asks for something this page does not have: “{name}” as {field}.',
    ru: 'Ссылка просит то, чего на этой странице нет: «{name}» в поле {field}.' },
  'share.event': { en: 'Delivery {n} of this share link is invalid: {message}', ru: 'Доставка {n} из ссылки недопустима: {message}' },
});

// The timeline's sends, as a link holds them (share.js `send`), oldest first.
let sends = [];

/** Puts the Share buttons next to the timeline, the race lab and step mode. */
export function mount(root, { timeline, panels }) {
  onObserved((o) => {
    if (o.kind === 'send' && !o.stepped) {
      sends.push(sendState({ ...o, ...o.policy }));
    }
  });
  timeline.subscribe(() => {
    if (timeline.entries().length === 0) {
      sends = [];
    }
  });

  document.querySelector('#timeline-clear').after(
    shareControl('share-timeline', 'share.button.timeline', () => {
      if (sends.length === 0) {
        return { error: 'share.nothing.timeline' };
      }
      if (sends.length > LIMITS.sends) {
        return { error: 'share.too_many', params: { count: sends.length, max: LIMITS.sends } };
      }
      return { kind: 'timeline', sends };
    }),
  );

  document.querySelector('#race-start').parentElement.after(
    shareControl('share-race', 'share.button.race', () => {
      const race = panels.raceLab.sharedRace();
      if (race === null) {
        return { error: 'share.nothing.race' };
      }
      if (race.order.length > LIMITS.steps) {
        return { error: 'share.too_many', params: { count: race.order.length, max: LIMITS.steps } };
      }
      return { kind: 'race', handler: race.handler, deliveries: race.deliveries, order: orderText(race.order) };
    }),
  );

  document.querySelector('#step-kill').parentElement.after(
    shareControl('share-step', 'share.button.step', () => {
      const run = panels.stepper.sharedStep();
      if (run === null) {
        return { error: 'share.nothing.step' };
      }
      if (run.killed) {
        return { error: 'share.killed' };
      }
      return { kind: 'step', send: run.send, next: run.next, end: run.end };
    }),
  );
}
