// Service worker, called by the bridges for network_rules: webdev.network blocks the requests a
// page makes with fetch and XHR, or answers them with a given body, in one tab — in the page itself
// (page-world/requests.js applies the rules, isolated/network-rules.js keeps them in the document's
// sessionStorage so that the next load has them from its first request). No browser-wide
// permission: declarativeNetRequest (or webRequest) would make Chrome route every request of every
// page through the extension, which costs each page the user opens (docs/performance.md). So a rule
// reaches what the page asks for with fetch and XHR only — not its own document, scripts, styles or
// images.
//
// Only requests to an allowed site: a rule's pattern starts with an allowed origin and its `/`,
// matched from the start of the URL, so it cannot match a URL of any other site. Each rule
// names its tab, and the origin of the page it was made for (`page`): only documents of that
// origin in that tab get it (each frame is sent its own, lib/network-rules.js rulesForDocument),
// so a frame of another allowed site in the tab neither sees a rule nor meets it. The user's
// other tabs are untouched.
//
// Every rule belongs to the session that made it (`session`, a key the bridge makes up per MCP
// session): only that session lists and removes it. A session holds `webdev.network_hold` open
// while it has rules; the host cancels a bridge's requests in flight when it goes, so the hold
// ends with the session and its rules are removed then (also on Stop, and when the link to the
// host closes). A hold ends by itself before its timeout and the bridge sends the next one; a
// session with rules and no hold for GRACE_MS loses them. Rules of a closed tab, and of a site
// the user stops allowing, go too; and all at the worker's start (their holds went with the
// worker before).
//
// A tab's rules are sent to its pages at each change and every RENEW_MS, valid for LEASE_MS:
// a tab that is on another site when its rules go keeps them in that site's storage until
// then, unused unless it comes back within that time.
//
// A mock answers with a data: URL, which the page's fetch and XHR read with status 200 and the
// data URL's type as its Content-Type; a block fails the request as a network error.

import { TabwireError, fail } from '../lib/errors.js';
import { dataUrl, parsePattern, rulesForDocument } from '../lib/network-rules.js';
import { allows, onSitesChanged } from '../lib/sites-store.js';
import { originOf } from '../lib/sites.js';
import { tabId } from './tabs.js';
import { topDocument } from './dom/target.js';

const MAX_RULES = 100; // per session
const GRACE_MS = 30_000;
const HOLD_SLACK_MS = 20_000; // a hold ends this long before its timeout

const LEASE_MS = 90_000;
const RENEW_MS = 30_000;

const rules = new Map(); // rule id → { id, session, tab_id, page, action, url_pattern, origin, pattern, content_type?, bytes?, data? }
const holds = new Map(); // session → holds in flight
const orphans = new Map(); // session → timer that removes its rules unless a hold comes
let nextId = 1;

let renewing = null; // the timer that sends the rules again while there are some

// Tab `id`'s rules as they are now (expiring unless sent again), to each document of an allowed
// site in it: those of its own origin, none to another (an empty list clears what it had).
// Addressed by documentId, so a frame that navigated meanwhile gets nothing.
async function send(id) {
  const mine = [...rules.values()].filter((r) => r.tab_id === id);
  const frames = (await chrome.webNavigation.getAllFrames({ tabId: id }).catch(() => null)) ?? [];
  const expires = Date.now() + LEASE_MS;
  await Promise.all(frames.map((f) => {
    const origin = originOf(f.url);
    if (origin === null || !f.documentId || !allows(origin)) return null;
    const message = { type: 'netrules.set', rules: rulesForDocument(mine, origin), expires };
    return chrome.tabs.sendMessage(id, message, { documentId: f.documentId }).catch(() => {});
  }));
}

// After a change: the tabs it touched, and the renewal as long as rules are left.
async function changed(tabs) {
  await Promise.all([...new Set(tabs)].map(send));
  if (rules.size > 0 && !renewing) renewing = setInterval(() => new Set([...rules.values()].map((r) => r.tab_id)).forEach(send), RENEW_MS);
  if (rules.size === 0 && renewing) {
    clearInterval(renewing);
    renewing = null;
  }
}

// Registered in the worker's first turn (background.js).
export function watchNetworkRules() {
  chrome.tabs.onRemoved.addListener((id) => drop((r) => r.tab_id === id));
  onSitesChanged(() => drop((r) => !allows(r.origin)));
}

async function drop(which) {
  const gone = [...rules.values()].filter(which);
  if (!gone.length) return 0;
  for (const r of gone) rules.delete(r.id);
  await changed(gone.map((r) => r.tab_id));
  return gone.length;
}

function sessionKey(params) {
  const s = params?.session;
  if (typeof s !== 'string' || !/^[\w-]{8,64}$/.test(s)) fail('bad_request', 'a network rule call needs its session\'s key (`session`)');
  return s;
}

// Rules of a session without a hold go after GRACE_MS.
function orphan(session) {
  if ((holds.get(session) ?? 0) > 0 || orphans.has(session)) return;
  orphans.set(session, setTimeout(() => {
    orphans.delete(session);
    if (!holds.get(session)) drop((r) => r.session === session);
  }, GRACE_MS));
}

async function addRule(session, info) {
  const mine = [...rules.values()].filter((r) => r.session === session).length;
  if (mine >= MAX_RULES) fail('too_large', `a session has at most ${MAX_RULES} network rules; remove some first (network_rules action remove)`);
  const rule = { id: nextId++, session, ...info };
  rules.set(rule.id, rule);
  orphan(session);
  await changed([rule.tab_id]);
  return rule;
}

const shown = ({ session, data, pattern, page, ...r }) => r;

export const networkMethods = {
  // {session, action: block|mock|offline|online|list|remove, tab_id?, url_pattern?, body?,
  //  content_type?, rule_id?, expected_origin?}
  'webdev.network': async (params) => {
    const session = sessionKey(params);
    const action = params.action;
    const own = (r) => r.session === session && (params.tab_id == null || r.tab_id === params.tab_id);
    switch (action) {
      case 'block':
      case 'mock': {
        const id = tabId(params);
        const doc = await topDocument(id, params);
        const { origin, pattern } = parsePattern(params.url_pattern, allows);
        const info = { tab_id: id, page: doc.origin, action, url_pattern: params.url_pattern, origin, pattern };
        if (action === 'block') return { origin: doc.origin, url: doc.url, rules: [shown(await addRule(session, info))] };
        const type = params.content_type ?? 'application/json';
        const data = dataUrl(params.body, type);
        const rule = await addRule(session, { ...info, content_type: type, bytes: data.bytes, data: data.url });
        return { origin: doc.origin, url: doc.url, rules: [shown(rule)] };
      }
      case 'offline': {
        const id = tabId(params);
        const doc = await topDocument(id, params);
        const info = { tab_id: id, page: doc.origin, action, url_pattern: `${doc.origin}/*`, origin: doc.origin, pattern: `${doc.origin}/*` };
        return { origin: doc.origin, url: doc.url, rules: [shown(await addRule(session, info))] };
      }
      case 'online': {
        const id = tabId(params);
        const removed = await drop((r) => r.session === session && r.tab_id === id && r.action === 'offline');
        return { rules: [...rules.values()].filter(own).map(shown), removed };
      }
      case 'list':
        return { rules: [...rules.values()].filter(own).map(shown) };
      case 'remove': {
        const which = params.rule_id;
        if (which != null) {
          const rule = rules.get(which);
          if (!rule || rule.session !== session) fail('bad_request', `this session has no network rule ${which}; network_rules action list shows its rules`);
        }
        const removed = await drop((r) => own(r) && (which == null || r.id === which));
        return { rules: [...rules.values()].filter(own).map(shown), removed };
      }
      default:
        fail('bad_request', `\`action\` must be block, mock, offline, online, list or remove; got ${JSON.stringify(action)}`);
    }
  },

  // Held open by a session that has rules: when it ends without answering (the session went, the
  // host cancelled it, Stop), the session's rules go. It answers by itself before its timeout.
  'webdev.network_hold': async (params, { signal, timeoutMs = 60_000 } = {}) => {
    const session = sessionKey(params);
    holds.set(session, (holds.get(session) ?? 0) + 1);
    clearTimeout(orphans.get(session));
    orphans.delete(session);
    let ended = false;
    try {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, Math.max(1000, timeoutMs - HOLD_SLACK_MS));
        const abort = () => {
          clearTimeout(timer);
          reject(signal.reason ?? new TabwireError('browser_disconnected', 'the session ended'));
        };
        if (signal?.aborted) abort();
        signal?.addEventListener('abort', abort, { once: true });
      });
    } catch (e) {
      ended = true;
      await drop((r) => r.session === session);
      throw e;
    } finally {
      const left = (holds.get(session) ?? 1) - 1;
      if (left > 0) holds.set(session, left);
      else holds.delete(session);
      if (!ended) orphan(session);
    }
    return { renew: true, rules: [...rules.values()].filter((r) => r.session === session).length };
  },
};
