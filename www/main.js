// The page: forms in, answers and tables out. It holds no rules of its own:
// everything it shows comes from the database worker through `inboxLab`
// (client.js), the same API the browser console gets.
//
// Everything a user typed or the database returned is rendered with
// textContent, never parsed as HTML.

import { inboxLab, onStatus } from './client.js';

// A number field becomes a JS number only if it is written the way an integer
// is written. Anything else ("1.5", "05", " 5", "1e3", "") is passed on as the
// string it is, so Rust rejects it and says why, instead of the page quietly
// turning "05" into 5. (Digits past 2^53 round to a number Rust rejects as
// out of range, so they are not silently accepted either.)
const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

// What each answer teaches, keyed by outcome or error kind.
const MEANING = {
  applied:
    'First delivery of this (source, event_id): the inbox row, the credit and the receipt were committed in one transaction.',
  duplicate:
    'Already applied with the same payload, so nothing changed. The receipt is the one stored by the first application; a 200 tells the sender to stop retrying.',
  invalid_input: 'Rejected before any SQL ran. Retrying the same input fails the same way: fix it.',
  payload_conflict:
    'The same key arrived with another payload. That is a contract error by the sender, never a silent success. Nothing changed.',
  unknown_account: 'The foreign key refused the inbox row, so nothing changed.',
  balance_limit: 'The balance would pass 2^53-1, the largest integer JavaScript holds exactly. Nothing was written.',
  busy: 'A lock timeout proves nothing about earlier deliveries, so it is never answered as a duplicate. Nothing was written: retry later.',
  simulated_crash:
    'The transaction rolled back: neither the inbox row nor the credit exists. Deliver again without the crash and it applies.',
  storage: 'The storage failed and nothing was committed. Retrying is safe: an event is applied at most once.',
};

const main = document.querySelector('main');
const deliverForm = document.querySelector('#deliver-form');
const accountForm = document.querySelector('#account-form');
const answer = document.querySelector('#answer');
const statusLine = document.querySelector('#status');
const tablesError = document.querySelector('#tables-error');
const tablesNote = document.querySelector('#tables-note');

// The (source, event_id) of the last successful delivery, to point out its inbox row.
let lastKey = null;
// Actions still waiting for the database. While any is, <main> is aria-busy,
// so assistive technology (and the end-to-end tests) wait for the whole update.
let inFlight = 0;

let phase = null;
onStatus((status) => {
  showStatus(status);
  // A new worker after a crash: the broken transaction was rolled back, so
  // show the tables as they really are now.
  if (status.phase === 'ready' && phase === 'restarting') {
    whileBusy(refreshTables);
  }
  phase = status.phase;
});
whileBusy(() =>
  inboxLab.ready.then(refreshTables, () => {
    // Already on the status line, from onStatus.
  }),
);

deliverForm.addEventListener('submit', (event) => {
  event.preventDefault();
  whileBusy(deliver);
});

async function deliver() {
  clearErrors(deliverForm);
  const fields = deliverForm.elements;
  const delivery = {
    source: fields.source.value,
    event_id: fields.event_id.value,
    account_id: numberOrText(fields.account_id.value),
    amount: numberOrText(fields.amount.value),
  };
  const fault = fields.fault.value || undefined;
  try {
    const reply = await inboxLab.deliver(delivery, { fault });
    lastKey = { source: delivery.source, event_id: delivery.event_id };
    showReply(reply);
  } catch (error) {
    lastKey = null;
    showReply(error);
    showFieldError(deliverForm, error);
  }
  await refreshTables();
}

// Restoring the example also clears the messages that belonged to the old values.
deliverForm.addEventListener('reset', () => clearErrors(deliverForm));

accountForm.addEventListener('submit', (event) => {
  event.preventDefault();
  whileBusy(addAccount);
});

async function addAccount() {
  clearErrors(accountForm);
  const text = accountForm.elements.account_id.value;
  try {
    const created = await inboxLab.addAccount(numberOrText(text));
    tablesNote.textContent = created ? `Account ${text} added at balance 0.` : `Account ${text} already exists.`;
  } catch (error) {
    tablesNote.textContent = showFieldError(accountForm, error) ? '' : error.message;
  }
  await refreshTables();
}

document.querySelector('#reset').addEventListener('click', () => {
  // A native dialog: keyboard- and screen-reader-friendly with no code of ours.
  if (window.confirm('Delete the database and start again with account 1 at balance 0?')) {
    whileBusy(reset);
  }
});

async function reset() {
  try {
    await inboxLab.reset();
    lastKey = null;
    clearErrors(deliverForm);
    clearErrors(accountForm);
    answer.replaceChildren(paragraph('Nothing delivered yet.', 'muted'));
    tablesNote.textContent = 'The database was reset: account 1, balance 0, empty inbox.';
  } catch (error) {
    tablesNote.textContent = `Reset failed: ${error.message}`;
  }
  await refreshTables();
}

async function whileBusy(action) {
  inFlight += 1;
  main.setAttribute('aria-busy', 'true');
  try {
    await action();
  } finally {
    inFlight -= 1;
    if (inFlight === 0) {
      main.setAttribute('aria-busy', 'false');
    }
  }
}

function numberOrText(text) {
  return CANONICAL_INTEGER.test(text) ? Number(text) : text;
}

function showStatus({ phase, storage, busy, error }) {
  statusLine.dataset.phase = busy && phase === 'ready' ? 'working' : phase;
  if (phase === 'opening') {
    statusLine.textContent = 'Opening the database…';
  } else if (phase === 'restarting') {
    statusLine.textContent = `The database worker crashed (${error.message}). Starting a new one…`;
  } else if (phase === 'failed') {
    statusLine.textContent = `Cannot use the database: ${error.message}`;
  } else if (busy) {
    statusLine.textContent = 'Working…';
  } else if (storage === 'opfs') {
    statusLine.textContent = 'Ready. Stored in OPFS: it survives a reload.';
  } else {
    statusLine.textContent = `Ready. Stored in ${storage}: a reload starts from scratch.`;
  }
}

// `reply` is either a success {outcome, http_status, receipt} or an error
// {kind, message, http_status, retryable, field?}.
function showReply(reply) {
  const failed = reply.kind !== undefined;
  const rows = [
    ['outcome', failed ? reply.kind : reply.outcome],
    ['HTTP status', String(reply.http_status)],
  ];
  if (failed) {
    rows.push(['retryable', reply.retryable ? 'yes: deliver it again later' : 'no: fix the request']);
    rows.push(['message', reply.message]);
  } else {
    rows.push(['receipt', `#${reply.receipt.seq}, balance after: ${reply.receipt.balance_after}`]);
  }
  const list = document.createElement('dl');
  list.className = failed ? 'reply reply-error' : 'reply reply-ok';
  for (const [term, value] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = value;
    dd.dataset.term = term;
    list.append(dt, dd);
  }
  const meaning = MEANING[failed ? reply.kind : reply.outcome];
  answer.replaceChildren(list, ...(meaning ? [paragraph(meaning, 'meaning')] : []));
}

// Puts an invalid_input message next to the control it is about (Rust names
// it in `field`, which is also the control's name) and moves the focus there,
// so a keyboard user lands where the fix is. Returns whether there was one.
function showFieldError(form, error) {
  const control = error.field ? form.elements.namedItem(error.field) : null;
  if (control === null) {
    return false;
  }
  const note = document.getElementById(`${control.id}-error`);
  note.textContent = error.message;
  note.hidden = false;
  control.setAttribute('aria-invalid', 'true');
  control.focus();
  return true;
}

function clearErrors(form) {
  for (const control of form.querySelectorAll('[aria-invalid]')) {
    control.removeAttribute('aria-invalid');
  }
  for (const note of form.querySelectorAll('.field-error')) {
    note.hidden = true;
    note.textContent = '';
  }
}

async function refreshTables() {
  try {
    const { accounts, inbox } = await inboxLab.tables();
    tablesError.hidden = true;
    renderRows('#accounts', accounts, (a) => [a.id, a.balance]);
    renderRows(
      '#inbox',
      inbox,
      (row) => [row.source, row.event_id, row.account_id, row.amount, `#${row.receipt.seq}`, row.receipt.balance_after],
      (row) => lastKey !== null && row.source === lastKey.source && row.event_id === lastKey.event_id,
    );
  } catch (error) {
    tablesError.textContent = `Cannot read the tables: ${error.message}`;
    tablesError.hidden = false;
  }
}

function renderRows(selector, rows, cells, isCurrent = () => false) {
  const table = document.querySelector(selector);
  const body = table.tBodies[0];
  const columns = table.tHead.rows[0].cells;
  if (rows.length === 0) {
    const td = document.createElement('td');
    td.colSpan = columns.length;
    td.className = 'muted';
    td.textContent = 'empty';
    body.replaceChildren(tableRow([td]));
    return;
  }
  body.replaceChildren(
    ...rows.map((row) => {
      const tds = cells(row).map((value, i) => {
        const td = document.createElement('td');
        td.textContent = String(value);
        td.className = columns[i].className;
        return td;
      });
      const tr = tableRow(tds);
      if (isCurrent(row)) {
        tr.className = 'current';
      }
      return tr;
    }),
  );
}

function tableRow(cells) {
  const tr = document.createElement('tr');
  tr.append(...cells);
  return tr;
}

function paragraph(text, className) {
  const p = document.createElement('p');
  p.textContent = text;
  p.className = className;
  return p;
}
