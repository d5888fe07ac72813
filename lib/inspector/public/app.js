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
        title: s.error
          ? `${s.error.name}: ${s.error.message ?? ''}`
          : `${s.durationMs} ms${s.forgeWaitMs ? `, ${s.forgeWaitMs} ms waiting for the forge api` : ''}`,
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

async function setupSamples(catalogue) {
  const { events, sources, target } = catalogue;
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

// Replay to a subscriber: a selection of the log (window, source, event, one subscriber's outcome) previewed first
// (/api/bulk-replay/preview: the count and a sample, nothing sent), then sent to that subscriber alone
// (POST /api/bulk-replay), its progress polled (/api/bulk-replay/:id). Where the inspector cannot invoke the
// subscriber (a deployed stage), the panel shows the CLI command of the selection instead.
const bulk = (id) => document.getElementById(`bulk-${id}`);
/** The selection of the last preview with a count, what the button sends; undefined once a field changed. */
let previewed;
let bulkAvailable = false;
let bulkRunning = false;
/** The subscriber the button names: the last previewed, also once its run ended. */
let bulkSubscriber;

const shortName = (name) => name.replace(/^forgebridge-[\w]+-/, '');
/** A `datetime-local` value (local time, to the second) of epoch ms. */
const localInput = (ms) =>
  new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
const inputTime = (value) => (value === '' ? undefined : new Date(value).toISOString());

function bulkSelection() {
  const selection = {
    since: inputTime(bulk('since').value),
    until: inputTime(bulk('until').value),
    source: bulk('source').value.trim() || undefined,
    event: bulk('event').value.trim() || undefined,
    outcome: bulk('outcome').value,
  };
  const subscriber = bulk('subscriber').value;
  return subscriber === '' ? selection : { ...selection, subscriber };
}

const postJson = (path, body) =>
  api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function updateStart() {
  const start = bulk('start');
  const name = previewed?.subscriber ?? bulkSubscriber;
  start.textContent = name ? `Replay to ${shortName(name)}` : 'Replay to a subscriber';
  start.title = name ?? '';
  start.disabled = bulkRunning || !bulkAvailable || !(previewed?.count > 0);
}

/** The CLI command of the selection, for an inspector that does not send (a deployed stage's). */
function updateCommand() {
  if (bulkAvailable) return;
  const s = bulkSelection();
  const stage = /^stage "(.+)"$/.exec(document.getElementById('target').textContent)?.[1] ?? '<stage>';
  const quote = (value) => (/^[\w.:+-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`);
  bulk('command').textContent = [
    'npx forgebridge replay',
    `--stage ${quote(stage)}`,
    `--since ${s.since ?? '1h'}`,
    s.until ? `--until ${s.until}` : '',
    s.source ? `--source ${quote(s.source)}` : '',
    s.event ? `--event ${quote(s.event)}` : '',
    `--subscriber ${quote(s.subscriber ? shortName(s.subscriber) : '<subscriber>')}`,
    `--outcome ${s.outcome}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** Fills the subscriber select with those that reported on a delivery of the window, keeping the choice. */
async function loadSubscribers() {
  const select = bulk('subscriber');
  const { subscriber, ...selection } = bulkSelection();
  if (selection.since === undefined) return;
  const { subscribers } = await postJson('/api/bulk-replay/preview', selection);
  const keep = subscribers.includes(select.value) ? select.value : subscribers[0];
  select.replaceChildren(
    ...(subscribers.length === 0
      ? [el('option', { value: '' }, 'none reported in this window')]
      : subscribers.map((name) =>
          el('option', { value: name, title: name, selected: name === keep }, shortName(name)),
        )),
  );
  bulk('preview').disabled = subscribers.length === 0;
  updateCommand();
}

function showPreview(answer) {
  previewed = { ...bulkSelection(), subscriber: answer.subscriber, count: answer.count };
  bulkSubscriber = answer.subscriber;
  bulk('result').hidden = false;
  bulk('stale').hidden = true;
  bulk('count').textContent = String(answer.count);
  const what = answer.outcome === 'error' ? 'reported error' : 'reported on';
  bulk('what').textContent =
    `deliver${answer.count === 1 ? 'y' : 'ies'} ${shortName(answer.subscriber)} ${what}`;
  bulk('window').textContent =
    `${new Date(answer.since).toLocaleString()} to ${answer.until ? new Date(answer.until).toLocaleString() : 'now'}` +
    `${answer.source ? `, source ${answer.source}` : ''}${answer.event ? `, ${answer.event}` : ''}`;
  bulk('sample')
    .querySelector('tbody')
    .replaceChildren(
      ...answer.sample.map((d) =>
        el(
          'tr',
          { 'data-delivery-id': d.deliveryId },
          el('td', { class: 'time' }, time(d.receivedAt)),
          el('td', { class: 'event' }, d.event),
          el('td', { class: 'id' }, d.deliveryId),
          el('td', { class: 'muted' }, d.error ?? d.outcome),
        ),
      ),
    );
  const more = answer.count - answer.sample.length;
  bulk('more').hidden = more <= 0;
  bulk('more').textContent = `and ${more} more`;
  updateStart();
}

async function preview() {
  bulk('error').textContent = '';
  try {
    showPreview(await postJson('/api/bulk-replay/preview', bulkSelection()));
  } catch (error) {
    previewed = undefined;
    bulk('result').hidden = true;
    bulk('error').textContent = error.message;
    updateStart();
  }
}

function showRun(run) {
  const bar = bulk('bar');
  bar.hidden = false;
  bar.max = Math.max(run.total, 1);
  bar.value = run.total === 0 ? 1 : run.done;
  const failed = run.failed > 0 ? `, ${run.failed} failed` : '';
  const progress = bulk('progress');
  progress.dataset.state = run.state;
  progress.classList.toggle('bad', run.failed > 0);
  progress.textContent =
    run.state === 'running'
      ? `${run.done} / ${run.total} sent to ${shortName(run.subscriber)}${failed}`
      : `${run.failed === 0 ? 'replayed' : 'replayed with failures'}: ${run.sent} of ${run.total} to ${shortName(run.subscriber)} in ${(run.durationMs / 1000).toFixed(1)} s${failed}`;
  bulk('failures').replaceChildren(
    ...run.failures.map((f) => el('li', {}, el('span', { class: 'id' }, f.deliveryId), ` ${f.error}`)),
  );
}

async function follow(run) {
  bulkRunning = true;
  updateStart();
  try {
    let current = run;
    showRun(current);
    while (current.state === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 300));
      current = await api(`/api/bulk-replay/${encodeURIComponent(current.id)}`);
      showRun(current);
    }
  } finally {
    // The count shown is what was selected before the run: a new preview says what is left (0 for `error` once
    // the subscriber took them all), and only then can it be sent again.
    previewed = undefined;
    bulk('stale').hidden = bulk('result').hidden;
    bulkRunning = false;
    updateStart();
  }
}

async function startBulk() {
  if (previewed === undefined) return;
  const { count, ...selection } = previewed;
  bulk('error').textContent = '';
  bulkRunning = true;
  updateStart();
  try {
    const run = await postJson('/api/bulk-replay', selection);
    await follow(run);
  } catch (error) {
    bulk('error').textContent = error.message;
    bulkRunning = false;
    updateStart();
  }
}

async function setupBulk(catalogue) {
  const status = await api('/api/bulk-replay');
  bulkAvailable = status.available;
  bulk('run').hidden = !bulkAvailable;
  bulk('cli').hidden = bulkAvailable;
  bulk('since').value = localInput(Date.now() - 60 * 60_000);
  bulk('sources').replaceChildren(...catalogue.sources.map((name) => el('option', { value: name })));
  // The events of the catalogue, and each event alone (`issues`: any action).
  const events = [...new Set(catalogue.events.flatMap((name) => [name.split('.')[0], name]))].sort();
  bulk('events').replaceChildren(...events.map((name) => el('option', { value: name })));
  let timer;
  const changed = (event) => {
    // A changed selection needs a preview of its own before it is sent.
    previewed = undefined;
    bulkSubscriber = undefined;
    bulk('result').hidden = true;
    updateStart();
    updateCommand();
    if (event.target === bulk('subscriber') || event.target === bulk('outcome')) return;
    clearTimeout(timer);
    timer = setTimeout(
      () => loadSubscribers().catch((error) => (bulk('error').textContent = error.message)),
      250,
    );
  };
  for (const id of ['since', 'until', 'source', 'event', 'subscriber', 'outcome']) {
    bulk(id).addEventListener('input', changed);
    bulk(id).addEventListener('change', changed);
  }
  bulk('form').addEventListener('submit', (event) => {
    event.preventDefault();
    preview();
  });
  bulk('start').addEventListener('click', () => startBulk());
  document.getElementById('bulk').addEventListener('toggle', () => {
    if (document.getElementById('bulk').open) loadSubscribers().catch(() => undefined);
  });
  updateCommand();
  // A run started before this page loaded: followed, or its summary shown.
  if (status.run?.state === 'running') follow(status.run).catch(() => undefined);
  else if (status.run) showRun(status.run);
}

connect();
api('/api/samples')
  .then((catalogue) => Promise.all([setupSamples(catalogue), setupBulk(catalogue)]))
  .catch(() => undefined);
