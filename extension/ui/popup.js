// The toolbar popup, for the person whose browser it is: the connection in one line (details
// below it, from the status the worker keeps in chrome.storage.session, worker/status.js), Stop,
// the site of the tab it was opened for with its switches, the assistant sessions with their tab
// groups, last actions and a Stop each, what the assistant did, and the allowed sites. Changes
// are written to storage through lib/sites-store.js, lib/pause-store.js and
// lib/groups-store.js, as the worker reads them; the worker follows storage (registration,
// `sites` event, ending calls). No module of the service worker is loaded here, nor its native
// port (lib/layers.test.js checks).

import { followGroups, setWhenEnded, whenEnded } from '../lib/groups-store.js';
import { isPaused, onPauseChanged, sessionsPaused, setPaused, setSessionPaused } from '../lib/pause-store.js';
import { allowSite, allowedBy, currentOptions, currentSites, onSitesChanged, revokeSite, setSwitch, sitesReady } from '../lib/sites-store.js';
import { cookiesNeedEveryPort, everyPort, originOf } from '../lib/sites.js';
import { giveTab, takers } from './give-tab.js';

const el = (id) => document.getElementById(id);

const show = (status) => {
  const s = status ?? { connected: false, last_error: 'the extension has not started yet' };
  el('connected').textContent = s.connected ? 'Connected' : 'Not connected';
  el('connected').className = s.connected ? 'on' : 'off';
  el('bridges-line').textContent = s.connected
    ? ` · ${s.bridges ?? 0} ${s.bridges === 1 ? 'session' : 'sessions'}`
    : ' · see the details below';
  el('host_pid').textContent = s.host_pid ?? '—';
  el('carrier').textContent = s.connected ? (s.carrier ?? '—') : '—';
  el('bridges').textContent = s.connected ? String(s.bridges ?? 0) : '—';
  el('since').textContent = s.since ? new Date(s.since).toLocaleTimeString() : '—';
  el('last_error').textContent = s.last_error ?? '—';
  el('extension_id').textContent = chrome.runtime.id;
  el('versions').textContent = versions(s.host_version ?? null);
};

// Both versions, and which side is older and what to do when they differ.
function versions(host) {
  const mine = chrome.runtime.getManifest().version;
  if (!host) return `extension ${mine}`;
  if (host === mine) return `extension and host ${mine}`;
  const older = compare(mine, host) < 0
    ? `the extension is older than tabwire-host ${host}: reload tabwire in chrome://extensions (it was updated on disk by \`tabwire install\`)`
    : `tabwire-host ${host} is older than this extension: update tabwire, then run \`tabwire install\``;
  return `extension ${mine}, host ${host} — ${older}`;
}

function compare(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

chrome.storage.session.get('status').then(({ status }) => show(status));
chrome.storage.session.onChanged.addListener((changes) => {
  if (changes.status) show(changes.status.newValue);
});

// The tab this popup is about: the active tab of the last focused window. Opened in a tab of
// its own (tests do that), the popup is about `?tab=<id>`, else the other http(s) tab used last.
async function findTarget() {
  const me = await chrome.tabs.getCurrent();
  if (!me) return (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0] ?? null;
  const asked = Number(new URLSearchParams(location.search).get('tab'));
  if (Number.isInteger(asked) && asked > 0) return chrome.tabs.get(asked).catch(() => null);
  const others = (await chrome.tabs.query({})).filter((t) => t.id !== me.id && /^https?:/.test(t.url ?? ''));
  return others.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0))[0] ?? null;
}

let target = null; // { id, origin } (origin null: not an http(s) page)
let allowedHere = false; // allowed from this popup: the tab needs a reload to get tabwire

function render() {
  const origin = target?.origin ?? null;
  const by = origin && allowedBy(origin);
  el('site').textContent = target === null ? 'no tab' : origin ?? 'not a web site';
  el('site-status').textContent =
    origin === null ? 'does not run here (only on http and https sites)'
      : by ? `allowed${by === origin ? '' : ` (by ${by})`}`
        : 'not allowed';
  el('site-status').className = by ? 'on' : 'off';
  el('allow').hidden = origin === null || !!by;
  el('reload').hidden = !(allowedHere && by);
  el('site-switches').hidden = !by;
  el('site-switches').replaceChildren(...(by ? switchesOf(by).children : []));

  const list = el('sites');
  list.replaceChildren(...currentSites().map((pattern) => {
    const li = document.createElement('li');
    const text = document.createElement('span');
    text.textContent = pattern;
    const revoke = document.createElement('button');
    revoke.textContent = 'Revoke';
    revoke.dataset.pattern = pattern;
    revoke.title = `Stop tabwire on ${pattern} (open pages are cut off at once)`;
    const row = document.createElement('div');
    row.className = 'row';
    text.className = 'wrap';
    row.append(text, revoke);
    li.append(row, switchesOf(pattern));
    return li;
  }));
  el('no-sites').hidden = currentSites().length > 0;
}

// A site's three switches, as check boxes with their names.
function switchesOf(pattern) {
  const switches = document.createElement('div');
  switches.className = 'switches';
  for (const [name, label] of [['scripts', 'Run scripts'], ['trusted_input', 'Trusted input'], ['cookies', 'Cookies']]) {
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.dataset.site = pattern;
    box.dataset.switch = name;
    box.checked = currentOptions()[pattern]?.[name] === true;
    const tag = document.createElement('label');
    tag.append(box, ` ${label}`);
    // Cookies are per host, not per port: only a pattern of every port may have them (lib/sites.js).
    if (name === 'cookies' && !everyPort(pattern)) {
      box.disabled = true;
      tag.title = cookiesNeedEveryPort(pattern);
    }
    switches.append(tag);
  }
  return switches;
}

// Run a change; show what went wrong, if anything.
async function attempt(what) {
  el('error').hidden = true;
  try {
    await what();
  } catch (e) {
    el('error').textContent = `Not done: ${e.message}`;
    el('error').hidden = false;
  }
  render();
}

el('allow').addEventListener('click', () => attempt(async () => {
  await allowSite(target.origin);
  allowedHere = true;
}));

el('reload').addEventListener('click', () => attempt(async () => {
  await chrome.tabs.reload(target.id);
  allowedHere = false;
}));

el('sites').addEventListener('click', (e) => {
  const pattern = e.target.closest?.('button[data-pattern]')?.dataset.pattern;
  if (pattern) attempt(() => revokeSite(pattern));
});

document.body.addEventListener('change', (e) => {
  const box = e.target.closest?.('input[data-switch]');
  if (box) attempt(() => setSwitch(box.dataset.site, box.dataset.switch, box.checked));
});

onSitesChanged(render);

// The assistant's last actions (worker/activity.js), newest first.
function showActivity(entries) {
  const list = Array.isArray(entries) ? [...entries].reverse() : [];
  el('activity').replaceChildren(...list.map((a) => {
    const li = document.createElement('li');
    const when = document.createElement('span');
    when.className = 'when';
    when.textContent = new Date(a.time).toLocaleTimeString();
    const what = document.createElement('span');
    what.textContent = `${a.method}${a.tab === null ? '' : ` · tab ${a.tab}`}`;
    const result = document.createElement('span');
    result.textContent = a.result;
    result.className = a.result === 'ok' ? 'on' : 'failed';
    if (a.message) result.title = a.message;
    const where = document.createElement('span');
    where.className = 'where';
    where.textContent = a.origin ?? '';
    li.append(when, what, result, where);
    return li;
  }));
  el('no-activity').hidden = list.length > 0;
}

chrome.storage.session.get('activity').then(({ activity }) => showActivity(activity));
chrome.storage.session.onChanged.addListener((changes) => {
  if (changes.activity) showActivity(changes.activity.newValue);
});

Promise.all([sitesReady, findTarget()]).then(([, tab]) => {
  target = tab ? { id: tab.id, origin: originOf(tab.url ?? '') } : null;
  render();
  chrome.storage.session.get('handovers').then(({ handovers }) => showHandover(handovers));
});

// The hand-over of this popup's tab (ask_user; worker/handover.js), if one is open: who asks,
// the assistant's message, and Done and Cancel, the only buttons that answer it (the bar in the
// page has none: a page can hide or copy anything drawn there). Done waits a moment after the
// hand-over shows or changes, so that a click meant for what was there before cannot press it.
let asked = null; // the hand-over shown: { id, message, session }
let doneTimer = null;
function showHandover(handovers) {
  const h = target ? handovers?.[target.id] : undefined;
  el('handover').hidden = !h;
  el('handover-who').textContent = h?.session ? `${h.session} asks you, in this tab` : 'Your assistant asks you, in this tab';
  el('handover-message').textContent = h?.message ?? '';
  if (h?.id === asked?.id) return;
  asked = h ?? null;
  el('handover-done').disabled = true;
  clearTimeout(doneTimer);
  doneTimer = setTimeout(() => (el('handover-done').disabled = false), 500);
}
chrome.storage.session.onChanged.addListener((changes) => {
  if (changes.handovers) showHandover(changes.handovers.newValue);
});
for (const answer of ['done', 'cancel']) {
  el(`handover-${answer}`).addEventListener('click', () => asked && attempt(() => chrome.storage.session.set({ handover_answer: { tab: target.id, id: asked.id, answer, at: Date.now() } })));
}

// "Give this tab to": the running assistant sessions with a tab group (give-tab.js); the tab
// joins that group, as if the user dragged it there.
const giving = findTarget();
async function showTakers() {
  const tab = await giving;
  const found = tab ? await takers(tab.id) : [];
  el('give').hidden = found.length === 0;
  el('give-to').replaceChildren(...found.map(({ name, group }) => Object.assign(document.createElement('option'), { value: group, textContent: name })));
}
showTakers();
el('give-button').addEventListener('click', () => attempt(async () => {
  await giveTab((await giving).id, Number(el('give-to').value));
  await showTakers();
}));

// Stop all: ends every call of every assistant session in this browser at once and refuses new
// ones until Resume (lib/pause-store.js; worker/pause.js ends the calls). Only this page can
// press either: no tool can.
let pausedAll = false;
let pausedOnes = {};
function showPause(paused, sessions) {
  pausedAll = paused;
  if (sessions) pausedOnes = sessions;
  el('stop').hidden = paused;
  el('resume').hidden = !paused;
  el('pause-state').textContent = paused ? 'Stopped: the assistant can do nothing in this browser.' : '';
  el('pause-state').className = paused ? 'off' : 'note';
  showSessions();
}
Promise.all([isPaused(), sessionsPaused()]).then(([paused, sessions]) => showPause(paused, sessions));
onPauseChanged(showPause);
el('stop').addEventListener('click', () => attempt(() => setPaused(true)));
el('resume').addEventListener('click', () => attempt(() => setPaused(false)));

// The live assistant sessions (worker/groups.js keeps them, each worker a session of its own):
// each with its tab group's colour and title, how many tabs it has, its last action, and its own
// Stop (or Resume), which ends that session's calls and leaves the others running.
const GROUP_COLORS = { grey: '#5f6368', blue: '#1a73e8', red: '#d93025', yellow: '#f9ab00', green: '#188038', pink: '#d01884', purple: '#a142f4', cyan: '#007b83', orange: '#fa903e' };
// Each read once, then followed (a change heard before a read answers is the newer); shown
// once both are known.
let groups = null; // lib/groups-store.js
let actions = null; // the activity log (showActivity, above)
async function showSessions() {
  if (groups === null || actions === null) return;
  const live = Object.values(groups?.sessions ?? {}).filter((s) => !s.done);
  const tabs = live.length > 0 ? await chrome.tabs.query({}) : [];
  el('sessions').replaceChildren(...live.map((s) => {
    const li = document.createElement('li');
    li.dataset.session = s.id;
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = GROUP_COLORS[s.color] ?? GROUP_COLORS.grey;
    const name = document.createElement('span');
    name.className = 'name wrap';
    const count = tabs.filter((t) => s.groups.includes(t.groupId)).length;
    name.textContent = `${s.name} · ${count} ${count === 1 ? 'tab' : 'tabs'}`;
    name.title = `Its tabs are in the tab group "${s.name}"`;
    const stopped = Object.hasOwn(pausedOnes, s.id);
    const button = document.createElement('button');
    button.dataset.session = s.id;
    button.dataset.name = s.name;
    button.dataset.action = stopped ? 'resume' : 'stop';
    button.textContent = stopped ? 'Resume' : 'Stop';
    button.title = stopped ? `Let ${s.name} act again` : `End ${s.name}'s calls now; the other sessions go on`;
    const last = document.createElement('span');
    last.className = 'last wrap';
    const a = actions.findLast((x) => x.session === s.id);
    if (stopped || pausedAll) {
      last.className += ' stopped';
      last.textContent = stopped ? 'Stopped by you' : 'Stopped (Stop all)';
    } else {
      last.textContent = a ? `${new Date(a.time).toLocaleTimeString()} ${a.method}${a.tab === null ? '' : ` · tab ${a.tab}`} · ${a.result}` : 'No action yet';
    }
    li.append(swatch, name, button, last);
    return li;
  }));
  el('no-sessions').hidden = live.length > 0;
}
el('sessions').addEventListener('click', (e) => {
  const b = e.target.closest?.('button[data-session]');
  if (b) attempt(() => setSessionPaused({ id: b.dataset.session, name: b.dataset.name }, b.dataset.action === 'stop'));
});
const actionsIn = (value) => (Array.isArray(value) ? value : []);
followGroups((stored) => {
  groups = stored;
  showSessions();
});
chrome.storage.session.get('activity').then((got) => {
  actions ??= actionsIn(got.activity);
  showSessions();
});
chrome.storage.session.onChanged.addListener((changes) => {
  if (!changes.activity) return;
  actions = actionsIn(changes.activity.newValue);
  showSessions();
});

// What becomes of a session's tab group when it ends (worker/groups.js reads it then): kept for
// the user, collapsed and titled "… (done)", or its tabs closed.
whenEnded().then((choice) => (el('when-ended').value = choice));
el('when-ended').addEventListener('change', () => attempt(() => setWhenEnded(el('when-ended').value)));
