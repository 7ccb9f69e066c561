// Signed webhooks: who may deliver at all. The inbox makes each event count
// once; it cannot tell who sent it. This panel shows the sources' secrets,
// how to send a real signed webhook to this page (curl + openssl), every
// request the relay passed on with its verdict (relay.js), and a level:
// "dedup poisoning", won or lost by the receiver's one switch.
//
// The level sends real HTTP requests to `/hooks/{source}` — the path curl
// takes — so each answer is what the server relayed back from Rust: every
// verdict below is computed from those answers, never assumed.

import { inboxLab } from '../../db/client.js';
import { errorMessage, outcomeWord } from '../../lib/errors.js';
import { button, el, tableHead } from '../../lib/dom.js';
import { onLanguageChange, register, t } from '../../lib/i18n.js';
import { receiver, relayStatus, requests, start, subscribe } from './relay.js';

register({
  'hooks.title': { en: 'Signed webhooks: deduplication does not prove who sent it',
    ru: 'Подписанные вебхуки: дедупликация не доказывает, кто отправил' },
  'hooks.intro': { en: 'The inbox makes every event count once. It cannot tell who sent it: anyone who reaches the endpoint can invent an event, or reuse a real event id first. A secret shared with each provider, checked before anything touches the inbox, can (Standard Webhooks: HMAC-SHA256 over id, timestamp and body).',
    ru: 'Таблица входящих засчитывает каждое событие один раз. Кто его отправил, она сказать не может: любой, кто доберётся до адреса, может выдумать событие или первым занять настоящий идентификатор. Это может секрет, общий с каждым поставщиком и проверяемый до всякой записи во входящие (Standard Webhooks: HMAC-SHA256 от id, метки времени и тела).' },
  'hooks.relay.connecting': { en: 'Relay: connecting to the server…', ru: 'Ретранслятор: подключаемся к серверу…' },
  'hooks.relay.connected': { en: 'Relay: on. A POST to {url} reaches this page and is answered by its handler.',
    ru: 'Ретранслятор включён. POST на {url} доходит до этой страницы, и отвечает её обработчик.' },
  'hooks.relay.unavailable': { en: 'Relay: not available. Real webhooks need the page served by “cargo xtask serve” and opened with the link it printed — after a restart, its new link (the level below needs it too).',
    ru: 'Ретранслятор недоступен. Настоящим вебхукам нужна страница, открытая через «cargo xtask serve» по ссылке, которую он напечатал, — после перезапуска по новой ссылке (уровню ниже тоже).' },
  'hooks.relay.locked': { en: 'Relay: locked. The server hands webhooks only to a tab opened with the link “cargo xtask serve” printed (it ends in ?relay=…), so that no other program on this computer can take them or answer in this page’s name. Open that link in this tab.',
    ru: 'Ретранслятор заблокирован. Сервер передаёт вебхуки только вкладке, открытой по ссылке, которую напечатал «cargo xtask serve» (она кончается на ?relay=…), чтобы никакая другая программа на этом компьютере не могла их забрать или ответить от имени этой страницы. Откройте эту ссылку в этой вкладке.' },
  'hooks.relay.follower': { en: 'Relay: the tab that runs the database receives the webhooks; this one shows the tables.',
    ru: 'Ретранслятор: вебхуки принимает вкладка, в которой работает база; эта показывает таблицы.' },
  'hooks.relay.static': { en: 'Real webhooks: not on this host. This copy of the page is served as plain files, and a file server cannot pass an HTTP request on to a page, so the level that sends real requests is hidden. The secrets and signatures below work here; real senders need the page served by “cargo xtask serve”.',
    ru: 'Настоящие вебхуки на этом хостинге недоступны. Эта копия страницы раздаётся как обычные файлы, а файловый сервер не умеет передать HTTP-запрос странице, поэтому уровень с настоящими запросами скрыт. Секреты и подписи ниже работают и здесь; настоящим отправителям нужна страница, открытая через «cargo xtask serve».' },
  'hooks.relay.offline': { en: 'Real webhooks: not while the browser is offline.', ru: 'Настоящие вебхуки недоступны, пока браузер не в сети.' },
  'hooks.source': { en: 'Source', ru: 'Источник' },
  'hooks.show': { en: 'Show its secret', ru: 'Показать секрет' },
  'hooks.rotate': { en: 'Rotate', ru: 'Сменить' },
  'hooks.copy': { en: 'Copy', ru: 'Копировать' },
  'hooks.copied': { en: 'Copied.', ru: 'Скопировано.' },
  'hooks.copy_failed': { en: 'Could not copy: select the text and copy it.', ru: 'Не удалось скопировать: выделите текст и скопируйте его.' },
  'hooks.secret': { en: 'Secret of {source}', ru: 'Секрет источника {source}' },
  'hooks.rotated': { en: 'Rotated. The previous secret keeps verifying until the next rotation.',
    ru: 'Секрет сменён. Прежний принимается до следующей смены.' },
  'hooks.forget': { en: 'Forget all secrets', ru: 'Забыть все секреты' },
  'hooks.forgotten': { en: 'All secrets forgotten: a sender still signing with one now gets 401.',
    ru: 'Все секреты забыты: отправитель, который ещё подписывает ими, теперь получает 401.' },
  'hooks.damaged': { en: 'The secrets’ database cannot be used; “Forget all secrets” starts afresh (the inbox is not touched).',
    ru: 'Базой секретов пользоваться нельзя; «Забыть все секреты» начинает заново (входящие не затрагиваются).' },
  'hooks.curl': { en: 'Send a real webhook from a terminal (curl and openssl):', ru: 'Отправить настоящий вебхук из терминала (curl и openssl):' },
  'hooks.verify': { en: 'Check signatures before the inbox (uncheck to see what happens without)',
    ru: 'Проверять подписи до записи во входящие (снимите, чтобы увидеть, что будет без этого)' },
  'hooks.verify_off': { en: 'Signatures are NOT checked: anyone can deliver anything to this inbox.',
    ru: 'Подписи НЕ проверяются: кто угодно может доставить что угодно.' },
  'hooks.level.title': { en: 'Level: dedup poisoning', ru: 'Уровень: отравление дедупликации' },
  'hooks.level.goal': { en: 'A forger learns the id of a real event before it arrives and sends it first, with an amount of its choice. Win: the genuine event is credited, the forgery is not.',
    ru: 'Злоумышленник узнаёт id настоящего события до его прихода и отправляет его первым, с суммой на свой выбор. Победа: настоящее событие зачислено, подделка — нет.' },
  'hooks.level.forge': { en: '1. The forger sends the id first (amount 1, no valid signature)',
    ru: '1. Злоумышленник первым отправляет id (сумма 1, без верной подписи)' },
  'hooks.level.genuine': { en: '2. The provider delivers the genuine event (amount 500, signed)',
    ru: '2. Поставщик доставляет настоящее событие (сумма 500, с подписью)' },
  'hooks.level.replay': { en: '3. Replay the genuine request unchanged (captured on the wire)',
    ru: '3. Повторить настоящий запрос как есть (перехвачен в сети)' },
  'hooks.level.stale': { en: '4. Replay a capture from 6 minutes ago', ru: '4. Повторить запрос, перехваченный 6 минут назад' },
  'hooks.level.new': { en: 'New round', ru: 'Новый раунд' },
  'hooks.level.answer': { en: '{status} · {what}', ru: '{status} · {what}' },
  'hooks.level.won': { en: 'Won: the forgery was refused (401) before the inbox, by {check}, and the genuine event was applied — 500 credited.',
    ru: 'Победа: подделка отклонена (401) до входящих — её остановила {check}, — а настоящее событие применено: 500 зачислено.' },
  'hooks.level.lost_conflict': { en: 'Lost: the forger’s event took the id; the genuine one is refused as payload_conflict and its 500 are never credited. The inbox did its job — it was given the wrong event first.',
    ru: 'Поражение: событие злоумышленника заняло id; настоящее отклонено как payload_conflict, и его 500 не будут зачислены никогда. Входящие сработали как должны — им первым дали не то событие.' },
  'hooks.level.lost_applied': { en: 'Lost: the forgery was applied.', ru: 'Поражение: подделка применена.' },
  'hooks.level.replays': { en: 'Replays: the same signed request inside the 5-minute window is a harmless duplicate ({inside}); outside it, it is refused before the inbox by {check} ({outside}).',
    ru: 'Повторы: тот же подписанный запрос в пределах 5 минут — безвредный дубликат ({inside}); вне окна его до входящих отклоняет {check} ({outside}).' },
  'hooks.check.signature_mismatch': { en: 'the signature check (no signature matches a secret of the source)',
    ru: 'проверка подписи (ни одна подпись не совпала с секретом источника)' },
  'hooks.check.stale_timestamp': { en: 'the timestamp check (signed longer ago than the window allows)',
    ru: 'проверка метки времени (подписано раньше, чем допускает окно)' },
  'hooks.check.unknown_source': { en: 'the source check (no secret is configured for the source)',
    ru: 'проверка источника (для него не задан секрет)' },
  'hooks.check.other': { en: 'the check “{code}”', ru: 'проверка «{code}»' },
  'hooks.level.pending': { en: 'Press 1, then 2.', ru: 'Нажмите 1, затем 2.' },
  'hooks.level.event': { en: 'This round’s event id: {id}', ru: 'id события в этом раунде: {id}' },
  'hooks.log.title': { en: 'Requests the relay passed on, newest first', ru: 'Запросы, переданные ретранслятором, новые сверху' },
  'hooks.log.empty': { en: 'None yet.', ru: 'Пока нет.' },
  'hooks.log.time': { en: 'Time', ru: 'Время' },
  'hooks.log.source': { en: 'Source', ru: 'Источник' },
  'hooks.log.id': { en: 'webhook-id', ru: 'webhook-id' },
  'hooks.log.status': { en: 'Status', ru: 'Статус' },
  'hooks.log.verdict': { en: 'Verdict and why', ru: 'Итог и причина' },
  'hooks.log.unchecked': { en: 'signature not checked', ru: 'подпись не проверялась' },
});

const GENUINE_AMOUNT = 500;
const FORGED_AMOUNT = 1;

// What the panel shows; `render()` draws it again after each change.
const state = {
  secret: null, // {source, secret}
  note: null, // {key} or {error}
  // This round: its webhook-id, and each step's answer {status, body}.
  round: null,
};

let ui = null;

/**
 * Fills `root` (#hooks) and subscribes to the server's relay. Returns
 * `requests`, what the relay passed on (the console API's `hooks.requests`).
 */
export function mount(root, services) {
  ui = build(root);
  newRound();
  subscribe(render);
  onLanguageChange(render);
  start(services);
  render();
  return { requests };
}

function build(root) {
  const text = (tag, key, className) => el(tag, { className, i18n: key });
  const u = {};
  u.relay = el('p', { className: 'hooks-relay', attrs: { id: 'hooks-relay', role: 'status' } });
  u.source = el('input', { attrs: { id: 'hooks-source', value: 'provider-a', autocomplete: 'off', spellcheck: 'false' } });
  u.show = button('hooks.show', 'hooks-show', () => secretCall(inboxLab.hooks.secret, null), '');
  u.forget = button('hooks.forget', 'hooks-forget', forget, 'danger');
  u.rotate = button('hooks.rotate', 'hooks-rotate', () => secretCall(inboxLab.hooks.rotate, 'hooks.rotated'));
  u.secretLabel = el('label', { attrs: { for: 'hooks-secret' } });
  u.secret = el('input', { attrs: { id: 'hooks-secret', readonly: '', spellcheck: 'false' } });
  u.copy = button('hooks.copy', 'hooks-copy', copy);
  u.secretRow = el('div', { className: 'hooks-secret' }, u.secretLabel, el('div', { className: 'hooks-row' }, u.secret, u.copy, u.rotate));
  u.note = el('p', { className: 'hooks-note', attrs: { id: 'hooks-note', role: 'status' } });
  u.curlIntro = text('p', 'hooks.curl');
  u.curl = el('code', { attrs: { id: 'hooks-curl' } });
  u.curlBox = el('div', {}, u.curlIntro, el('pre', { className: 'hooks-curl' }, u.curl));
  u.verify = el('input', { attrs: { type: 'checkbox', id: 'hooks-verify', checked: '' } });
  u.verify.addEventListener('change', () => {
    receiver.verify = u.verify.checked;
    render();
  });
  u.verifyOff = el('p', { className: 'hooks-warning', i18n: 'hooks.verify_off', attrs: { id: 'hooks-verify-off', role: 'alert' } });

  u.steps = {};
  const stepRow = (name, key, action) => {
    const answer = el('p', { className: 'hooks-answer', attrs: { id: `hooks-answer-${name}`, 'aria-live': 'polite' } });
    u.steps[name] = { button: button(key, `hooks-${name}`, action), answer };
    return el('li', { className: 'hooks-step' }, u.steps[name].button, answer);
  };
  u.roundId = el('p', { className: 'muted', attrs: { id: 'hooks-round' } });
  u.verdict = el('p', { className: 'hooks-verdict', attrs: { id: 'hooks-verdict', role: 'status' } });
  u.replays = el('p', { className: 'hooks-verdict', attrs: { id: 'hooks-replays', role: 'status' } });
  u.log = el('tbody', { attrs: { id: 'hooks-log' } });

  root.append(
    text('p', 'hooks.intro', 'muted'),
    u.relay,
    el('div', { className: 'hooks-row' }, el('label', { attrs: { for: 'hooks-source' }, i18n: 'hooks.source' }), u.source, u.show, u.forget),
    u.secretRow,
    u.note,
    u.curlBox,
    el('p', {}, el('label', { className: 'check' }, u.verify, ' ', text('span', 'hooks.verify'))),
    u.verifyOff,
    (u.levelTitle = text('h3', 'hooks.level.title')),
    text('p', 'hooks.level.goal'),
    u.roundId,
    el(
      'ol',
      { className: 'hooks-steps' },
      stepRow('forge', 'hooks.level.forge', forge),
      stepRow('genuine', 'hooks.level.genuine', genuine),
      stepRow('replay', 'hooks.level.replay', replay),
      stepRow('stale', 'hooks.level.stale', stale),
    ),
    button('hooks.level.new', 'hooks-new', async () => {
      newRound();
      render();
    }),
    u.verdict,
    u.replays,
    text('h3', 'hooks.log.title'),
    el(
      'div',
      { className: 'hooks-log-wrap' },
      el(
        'table',
        { className: 'hooks-log' },
        tableHead(['time', 'source', 'id', 'status', 'verdict'].map((c) => ({ i18n: `hooks.log.${c}` }))),
        u.log,
      ),
    ),
  );
  // The level and the request log need the relay (real HTTP requests): on a
  // host without one they are hidden, and the relay line says why.
  u.relayOnly = [];
  for (let node = u.levelTitle; node !== null; node = node.nextElementSibling) {
    u.relayOnly.push(node);
  }
  return u;
}

// ---- secrets ------------------------------------------------------------------------------

async function secretCall(call, noteKey) {
  try {
    state.secret = await call(ui.source.value);
    state.note = noteKey === null ? null : { key: noteKey };
  } catch (error) {
    state.note = { error };
  }
  render();
}

async function forget() {
  try {
    await inboxLab.hooks.forget();
    state.secret = null;
    state.note = { key: 'hooks.forgotten' };
  } catch (error) {
    state.note = { error };
  }
  render();
}

async function copy() {
  try {
    await navigator.clipboard.writeText(ui.secret.value);
    state.note = { key: 'hooks.copied' };
  } catch {
    ui.secret.select();
    state.note = { key: 'hooks.copy_failed' };
  }
  render();
}

/** The shell commands that sign and send one webhook, for the secret shown. */
function curlExample({ source, secret }) {
  // Quoted for the shell: encodeURIComponent leaves ' as it is.
  const url = new URL(`hooks/${encodeURIComponent(source).replaceAll("'", '%27')}`, document.baseURI).href;
  const key = secret.slice('whsec_'.length);
  return [
    `secret='${key}'`,
    `id="evt-$(date +%s)"; ts="$(date +%s)"`,
    `body='{"account_id": 1, "amount": 500}'`,
    `hexkey="$(printf '%s' "$secret" | base64 -d | od -An -tx1 | tr -d ' \\n')"`,
    `sig="$(printf '%s.%s.%s' "$id" "$ts" "$body" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | base64)"`,
    `curl -i '${url}' -H 'content-type: application/json' \\`,
    `  -H "webhook-id: $id" -H "webhook-timestamp: $ts" -H "webhook-signature: v1,$sig" \\`,
    `  --data-binary "$body"`,
  ].join('\n');
}

// ---- the level ----------------------------------------------------------------------------

function newRound() {
  state.round = { id: `poison-${Date.now().toString(36)}`, answers: {}, captured: null };
}

/** POSTs one webhook to this server, as any sender would; `{status, body}`. */
async function post(source, { id, timestamp, signature, body }) {
  const headers = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp) };
  if (signature !== null) {
    headers['webhook-signature'] = signature;
  }
  const response = await fetch(`hooks/${encodeURIComponent(source)}`, { method: 'POST', headers, body });
  const answer = await response.json().catch(() => null);
  return { status: response.status, body: answer };
}

function bodyOf(amount) {
  return JSON.stringify({ account_id: 1, amount });
}

function nowSecs() {
  return Math.floor(Date.now() / 1000);
}

async function step(name, request) {
  try {
    state.round.answers[name] = await request();
  } catch (error) {
    state.round.answers[name] = { status: null, body: { message: String(error?.message ?? error) } };
  }
  render();
}

async function forge() {
  // The forger has no secret: the best it can do is a made-up signature.
  const fake = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const { id } = state.round;
  const source = ui.source.value;
  await step('forge', async () => {
    // The provider was set up before anyone forged: its secret exists, so the signature check is what meets the forger.
    await inboxLab.hooks.secret(source);
    return post(source, { id, timestamp: nowSecs(), signature: `v1,${fake}`, body: bodyOf(FORGED_AMOUNT) });
  });
}

/** The round's genuine request, signed with the provider's secret as of `timestamp`. */
async function signed(source, timestamp) {
  const request = { id: state.round.id, timestamp, body: bodyOf(GENUINE_AMOUNT) };
  request.signature = await inboxLab.hooks.sign(source, request.id, request.timestamp, request.body);
  return request;
}

async function genuine() {
  const source = ui.source.value;
  await step('genuine', async () => {
    await inboxLab.hooks.secret(source); // the provider and the receiver share it
    state.round.captured = await signed(source, nowSecs()); // what someone on the wire could copy
    return post(source, state.round.captured);
  });
}

async function replay() {
  const captured = state.round.captured;
  await step('replay', () => (captured === null ? Promise.reject(new Error('send 2 first')) : post(ui.source.value, captured)));
}

async function stale() {
  const source = ui.source.value;
  // A request captured 6 minutes ago: signed then, replayed now.
  await step('stale', async () => post(source, await signed(source, nowSecs() - 6 * 60)));
}

/** The level's verdict, from the answers the server really gave. */
function verdictKey({ forge: forged, genuine: real }) {
  if (forged === undefined || real === undefined) {
    return 'hooks.level.pending';
  }
  if (forged.status === 200) {
    return real.body?.kind === 'payload_conflict' ? 'hooks.level.lost_conflict' : 'hooks.level.lost_applied';
  }
  if (forged.status === 401 && real.status === 200 && real.body?.outcome === 'applied') {
    return 'hooks.level.won';
  }
  return 'hooks.level.pending';
}

/** Which check refused a request, from the code of Rust's refusal (src/labs/webhooks/refusal.rs). */
function check(answer) {
  const code = answer?.body?.code ?? '';
  return t(['signature_mismatch', 'stale_timestamp', 'unknown_source'].includes(code) ? `hooks.check.${code}` : 'hooks.check.other', { code });
}

function what(body) {
  if (body === null || body === undefined) {
    return '—';
  }
  if (body.outcome) {
    const word = outcomeWord(body.outcome);
    return body.receipt ? `${word} #${body.receipt.seq}` : word;
  }
  if (!body.kind) {
    return String(body.message ?? '');
  }
  // The kind in words, then the sentence — once: the sentence may already
  // start with it ("unauthorized: …", «не подтверждено: …»).
  const word = outcomeWord(body.kind);
  const message = errorMessage(body).replace(new RegExp(`^${body.kind}: `), '');
  return message.startsWith(`${word}: `) ? message : `${word}: ${message}`;
}

function answerText(answer) {
  return answer === undefined ? '' : t('hooks.level.answer', { status: answer.status ?? '—', what: what(answer.body) });
}

// ---- drawing ------------------------------------------------------------------------------

/** An error next to the secret controls; a storage error says the way out. */
function errorNote(error) {
  return error.kind === 'storage' ? `${errorMessage(error)} ${t('hooks.damaged')}` : errorMessage(error);
}

function render() {
  const relay = relayStatus();
  ui.relay.dataset.state = relay;
  ui.relay.textContent = t(`hooks.relay.${relay}`, { url: `${new URL('hooks/', document.baseURI).href}{source}` });
  ui.secretRow.hidden = state.secret === null;
  // The curl example, the level and the log need the relay; a static host has none.
  const noRelay = relay === 'static' || relay === 'offline';
  ui.curlBox.hidden = state.secret === null || noRelay;
  for (const node of ui.relayOnly) {
    node.hidden = noRelay;
  }
  if (state.secret !== null) {
    ui.secretLabel.textContent = t('hooks.secret', { source: state.secret.source });
    ui.secret.value = state.secret.secret;
    ui.curl.textContent = curlExample(state.secret);
  }
  ui.note.hidden = state.note === null;
  ui.note.textContent = state.note === null ? '' : state.note.error ? errorNote(state.note.error) : t(state.note.key);
  ui.verifyOff.hidden = receiver.verify;

  const { answers, id } = state.round;
  ui.roundId.textContent = t('hooks.level.event', { id });
  for (const [name, { button, answer }] of Object.entries(ui.steps)) {
    answer.textContent = answerText(answers[name]);
    answer.dataset.status = String(answers[name]?.status ?? '');
    answer.dataset.code = answers[name]?.body?.code ?? '';
    button.disabled = relay !== 'connected' && relay !== 'follower';
  }
  const key = verdictKey(answers);
  ui.verdict.textContent = t(key, { check: check(answers.forge) });
  ui.verdict.dataset.verdict = key.split('.').at(-1);
  const inside = answers.replay;
  const outside = answers.stale;
  ui.replays.hidden = inside === undefined || outside === undefined;
  ui.replays.textContent =
    inside && outside ? t('hooks.level.replays', { inside: answerText(inside), outside: answerText(outside), check: check(outside) }) : '';

  const rows = requests().reverse();
  ui.log.replaceChildren(
    ...(rows.length === 0
      ? [el('tr', {}, el('td', { attrs: { colspan: 5 }, className: 'muted', text: t('hooks.log.empty') }))]
      : rows.map((r) =>
          el(
            'tr',
            { data: { status: r.status } },
            ...[r.at.slice(11, 19), r.source, r.webhook_id ?? '—', r.status, `${what(r.body)}${r.verify ? '' : ` · ${t('hooks.log.unchecked')}`}`].map(
              (text) => el('td', { text }),
            ),
          ),
        )),
  );
}
