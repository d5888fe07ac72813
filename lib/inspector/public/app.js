// The inspector page: plain DOM, no framework. Rows come from /api/deliveries and then live from /api/events
// (server-sent events); a row opens the delivery (/api/deliveries/:id) with its headers, payload and subscribers.
// Two hooks (two GitHub Apps on one URL) get one event under one delivery id: each record names its hook, the
// detail is of the record picked, and its replay sends that hook's delivery again, never "the id".
const rows = new Map();
const tbody = document.getElementById('rows');
const table = document.getElementById('deliveries');
const detail = document.getElementById('detail');
let selected;
/** The last replay's answer, shown again when the detail is redrawn. */
let replayResult;

/** The log masks signature and credential headers; this is a second guard so the page never shows one. */
const SECRET_HEADER = /signature|token|secret|password|passwd|api-?key|auth|credential|session|cookie/i;
const safeHeader = (name, value) =>
  SECRET_HEADER.test(name) && !String(value).includes('[masked]') ? '[masked]' : String(value);

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const eventName = (r) => (r.event ? (r.action ? `${r.event}.${r.action}` : r.event) : '—');
const time = (ms) =>
  new Date(ms).toLocaleTimeString(undefined, { hour12: false }) +
  `.${String(new Date(ms).getMilliseconds()).padStart(3, '0')}`;
const tone = (r) =>
  r.httpStatus >= 500 ? 'bad' : r.httpStatus >= 400 ? 'warn' : r.outcome === 'duplicate' ? 'dup' : 'ok';

function subscriberList(subscribers) {
  const names = Object.keys(subscribers ?? {}).sort();
  if (names.length === 0) return el('span', { class: 'muted' }, '—');
  return names.map((name) => {
    const s = subscribers[name];
    return el(
      'span',
      {
        class: `chip ${s.outcome === 'ok' ? 'ok' : 'bad'}`,
        title: s.error ? `${s.error.name}: ${s.error.message ?? ''}` : `${s.durationMs} ms`,
      },
      // Subscribers report their function name: the stack's `forgebridge-<stage>-` prefix is left out.
      `${name.replace(/^forgebridge-[\w]+-/, '')} ${s.outcome === 'ok' ? '✓' : '✗'}`,
    );
  });
}

function rowOf(r) {
  return el(
    'tr',
    {
      'data-record-id': r.recordId,
      'data-delivery-id': r.deliveryId ?? '',
      'data-hook': r.hook,
      'data-outcome': r.outcome,
      class: r.recordId === selected?.recordId ? 'selected' : undefined,
      onclick: () => open(r),
    },
    el('td', { class: 'time' }, time(r.receivedAt)),
    el('td', { class: 'event' }, eventName(r)),
    el('td', { class: 'id' }, r.deliveryId ?? el('span', { class: 'muted' }, '(none)')),
    el('td', { class: 'hook' }, r.hook ?? el('span', { class: 'muted' }, '—')),
    el('td', { class: 'status' }, el('span', { class: `badge ${tone(r)}` }, `${r.httpStatus} ${r.outcome}`)),
    el('td', { class: `verdict ${r.verdict === 'verified' ? '' : 'warn'}` }, r.verdict),
    el(
      'td',
      { class: 'rules' },
      r.rules.length
        ? r.rules.map((n) => el('span', { class: 'chip' }, n))
        : el('span', { class: 'muted' }, '—'),
    ),
    el('td', { class: 'subscribers' }, subscriberList(r.subscribers)),
  );
}

function upsert(r) {
  const previous = rows.get(r.recordId);
  rows.set(r.recordId, r);
  const row = rowOf(r);
  if (previous?.node) previous.node.replaceWith(row);
  else {
    // Newest first: before the first row older than this one.
    const next = [...rows.values()]
      .filter(
        (o) =>
          o.node &&
          (o.receivedAt < r.receivedAt || (o.receivedAt === r.receivedAt && o.recordId < r.recordId)),
      )
      .sort((a, b) => b.receivedAt - a.receivedAt)[0];
    tbody.insertBefore(row, next?.node ?? null);
  }
  r.node = row;
  // The hook column shows once a listed record names its hook.
  if (r.hook !== undefined) table.classList.add('with-hooks');
  document.getElementById('empty').hidden = rows.size > 0;
  const changed =
    previous === undefined || JSON.stringify(previous.subscribers) !== JSON.stringify(r.subscribers);
  if (selected?.deliveryId && selected.deliveryId === r.deliveryId && changed)
    refresh().catch(() => undefined);
}

/**
 * The ingest's answer in two words: `202 accepted`, `200 duplicate`, `401 bad_signature`; on a deployed stage
 * what the replay did: `published event <id>`, `archive replay <name> starting`.
 */
function answerText({ status, body, mode, eventId, name, state }) {
  if (mode === 'republish') return `published event ${eventId}`;
  if (mode === 'archive') return `archive replay ${name} ${String(state).toLowerCase()}`;
  const b = typeof body === 'object' && body !== null ? body : {};
  const word = b.duplicate
    ? 'duplicate'
    : b.queued
      ? 'queued'
      : (b.error ?? (status < 300 ? 'accepted' : ''));
  return `${status} ${word}`.trim();
}

async function api(path, init) {
  const response = await fetch(path, init);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message ?? `${response.status}`);
  return body;
}

/** A JSON value as nested <details>: objects and arrays fold, the first two levels open. */
function jsonTree(value, key, depth = 0) {
  const label = key === undefined ? [] : [el('span', { class: 'key' }, JSON.stringify(key)), ': '];
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
    return el(
      'details',
      { open: depth < 2 },
      el('summary', {}, ...label, el('span', { class: 'muted' }, summary)),
      el(
        'div',
        { class: 'children' },
        entries.map(([k, v]) => jsonTree(v, Array.isArray(value) ? undefined : k, depth + 1)),
      ),
    );
  }
  return el(
    'div',
    { class: 'leaf' },
    ...label,
    el('span', { class: `v ${value === null ? 'null' : typeof value}` }, JSON.stringify(value)),
  );
}

function payloadView(record) {
  if (record.body === undefined) {
    return el('p', { class: 'muted' }, `payload not stored (${record.payloadOmitted ?? 'absent'})`);
  }
  if (record.bodyEncoding === 'base64') return el('pre', {}, `base64: ${record.body}`);
  try {
    return el('div', { class: 'json' }, jsonTree(JSON.parse(record.body)));
  } catch {
    return el('pre', {}, record.body);
  }
}

function detailView(details, recordId) {
  const record = details.records.find((r) => r.recordId === recordId) ?? details.records[0];
  const hooks = details.hooks ?? [];
  const twoHooks = hooks.length > 1;
  // What a replay sends again: this record's hook's delivery (its id alone may name two hooks' deliveries).
  const replaying = `${details.deliveryId}\n${record.hook ?? ''}`;
  const result = el(
    'output',
    { id: 'replay-result' },
    replayResult?.key === replaying ? replayResult.text : '',
  );
  const fresh = el('input', { type: 'checkbox', id: 'fresh-id' });
  // A live update may redraw the detail while a replay is in flight: the answer goes to the output shown then.
  const show = (text) => {
    replayResult = { key: replaying, text };
    const output = document.getElementById('replay-result') ?? result;
    output.textContent = text;
  };
  const replay = async () => {
    show('sending…');
    try {
      const answer = await api(
        `/api/deliveries/${encodeURIComponent(details.deliveryId)}/replay?source=${encodeURIComponent(details.source)}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ freshId: fresh.checked, hook: record.hook }),
        },
      );
      show(answerText(answer) + (fresh.checked ? ` (new id ${answer.deliveryId})` : ''));
    } catch (error) {
      show(`replay failed: ${error.message}`);
    }
  };
  const failed = record.verdict !== 'verified' && record.verdict !== 'not_checked';
  return [
    el(
      'div',
      { class: 'detail-head' },
      el('h2', {}, eventName(record)),
      el('button', { type: 'button', class: 'close', title: 'close', onclick: () => close() }, '×'),
    ),
    el(
      'dl',
      { class: 'facts' },
      el('dt', {}, 'delivery'),
      el('dd', { class: 'id' }, details.deliveryId),
      el('dt', {}, 'source'),
      el('dd', {}, `${details.source}${record.forge ? ` (${record.forge})` : ''}`),
      record.hook ? [el('dt', {}, 'hook'), el('dd', { class: 'id', id: 'hook' }, record.hook)] : [],
      el('dt', {}, 'received'),
      el('dd', {}, new Date(record.receivedAt).toISOString()),
      el('dt', {}, 'answer'),
      el(
        'dd',
        {},
        el('span', { class: `badge ${tone(record)}` }, `${record.httpStatus} ${record.outcome}`),
        record.errorCode ? ` ${record.errorCode}` : '',
      ),
      el('dt', {}, 'verdict'),
      el('dd', {}, record.verdict),
      el('dt', {}, 'body'),
      el('dd', {}, `${record.bodyBytes} bytes${record.payloadRef ? ' (claim check in S3)' : ''}`),
      record.eventId ? [el('dt', {}, 'event id'), el('dd', { class: 'id' }, record.eventId)] : [],
      el('dt', {}, 'rules'),
      el('dd', {}, record.rules.length ? record.rules.join(', ') : '—'),
    ),
    // One event, two hooks: said plainly, and which of the two this record (and its replay) is.
    twoHooks
      ? el(
          'p',
          { class: 'hooks-note', id: 'hooks-note' },
          el('strong', {}, `${hooks.length} hooks: ${hooks.join(', ')}`),
          ` — one event delivered to each hook, each its own delivery; this is hook ${record.hook ?? '(none)'}'s.`,
        )
      : [],
    // A failed signature's diagnosis (the ingest's plain-words reasons), else the reason or the bare verdict.
    failed || record.reason
      ? el(
          'div',
          { class: `diagnosis ${failed ? 'bad' : ''}`, id: 'diagnosis' },
          el('strong', {}, record.reason ?? `signature check: ${record.verdict}`),
          record.diagnosis?.length
            ? el(
                'ul',
                {},
                record.diagnosis.map((d) => el('li', { 'data-code': d.code }, d.message)),
              )
            : [],
        )
      : [],
    el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          id: 'replay',
          onclick: replay,
          disabled: !(record.replayable ?? details.replayable),
        },
        twoHooks && record.hook ? `Replay hook ${record.hook}` : 'Replay',
      ),
      el('label', {}, fresh, ' fresh delivery id'),
      result,
    ),
    // Each hook's delivery has its own subscribers' outcomes: this record's hook's.
    el('h3', {}, twoHooks && record.hook ? `Subscribers of hook ${record.hook}` : 'Subscribers'),
    el('div', { class: 'subs' }, subscriberList(record.subscribers ?? details.subscribers)),
    details.records.length > 1
      ? [
          el('h3', {}, `Requests of this delivery (${details.records.length})`),
          el(
            'ul',
            { class: 'requests' },
            details.records.map((r) =>
              el(
                'li',
                {
                  class: r.recordId === record.recordId ? 'current' : undefined,
                  'data-hook': r.hook,
                  onclick: () => open(r),
                },
                `${time(r.receivedAt)} · ${r.hook ? `hook ${r.hook} · ` : ''}${r.httpStatus} ${r.outcome}`,
              ),
            ),
          ),
        ]
      : [],
    el('h3', {}, 'Headers'),
    el(
      'table',
      { class: 'headers' },
      Object.entries(record.headers ?? {}).map(([name, value]) =>
        el('tr', {}, el('th', {}, name), el('td', {}, safeHeader(name, value))),
      ),
    ),
    el('h3', {}, 'Payload'),
    payloadView(record),
  ];
}

async function open(r) {
  selected = r;
  for (const row of tbody.children) row.classList.toggle('selected', row.dataset.recordId === r.recordId);
  detail.hidden = false;
  if (!r.deliveryId) {
    detail.replaceChildren(el('p', {}, `No delivery id: ${r.verdict}${r.reason ? ` — ${r.reason}` : ''}`));
    return;
  }
  await refresh();
}

async function refresh() {
  if (!selected?.deliveryId) return;
  const current = selected;
  const details = await api(
    `/api/deliveries/${encodeURIComponent(current.deliveryId)}?source=${encodeURIComponent(current.source ?? 'default')}`,
  );
  if (selected !== current) return;
  detail.replaceChildren(...detailView(details, current.recordId).flat());
}

function close() {
  selected = undefined;
  detail.hidden = true;
  for (const row of tbody.children) row.classList.remove('selected');
}

async function setupSamples() {
  const { events, sources, target } = await api('/api/samples');
  document.getElementById('target').textContent = target ?? '';
  // A deployed stage gets no samples from here: the control goes.
  if (events.length === 0) {
    document.getElementById('sample').hidden = true;
    return;
  }
  const select = document.getElementById('sample-event');
  select.replaceChildren(
    ...events.map((name) => el('option', { value: name, selected: name === 'issues.opened' }, name)),
  );
  document
    .getElementById('sample-source')
    .replaceChildren(...sources.map((name) => el('option', { value: name }, name)));
  document.getElementById('sample').addEventListener('submit', async (event) => {
    event.preventDefault();
    const output = document.getElementById('sample-result');
    output.textContent = 'sending…';
    try {
      const answer = await api('/api/samples', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: select.value, source: document.getElementById('sample-source').value }),
      });
      output.textContent = answerText(answer);
    } catch (error) {
      output.textContent = error.message;
    }
  });
}

function connect() {
  const live = document.getElementById('live');
  const events = new EventSource('/api/events');
  events.addEventListener('open', async () => {
    live.textContent = 'live';
    live.classList.add('on');
    // Load after the stream is open: whatever changes from now on is pushed, so nothing falls in between.
    const { records } = await api('/api/deliveries?limit=100');
    for (const r of records.reverse()) upsert(r);
  });
  events.addEventListener('record', (message) => upsert(JSON.parse(message.data)));
  events.addEventListener('error', () => {
    live.textContent = 'reconnecting…';
    live.classList.remove('on');
  });
}

connect();
setupSamples().catch(() => undefined);
