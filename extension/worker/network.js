// webdev.network: block requests, or answer them with a given body, in one tab, with Chrome's
// declarativeNetRequest session rules (no debugger). Only requests to an allowed site: a rule's
// pattern starts with an allowed origin and its `/`, and Chrome gets it anchored there
// (`|origin/…`), so it cannot match a URL of any other site. Each rule also names its tab
// (`tabIds`), so the user's other tabs are untouched.
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
// What Chrome's rules can do: block (the page sees a network error), or redirect to a `data:`
// URL, which the page's fetch, XHR or <script> reads with status 200 and the data URL's type as
// its Content-Type. They cannot set another status or other response headers.

import { TabwireError, fail } from '../lib/errors.js';
import { dataUrl, parsePattern } from '../lib/network-rules.js';
import { allows, onSitesChanged } from './sites.js';
import { tabId } from './tabs.js';
import { topDocument } from './dom/target.js';

const MAX_RULES = 100; // per session
const GRACE_MS = 30_000;
const HOLD_SLACK_MS = 20_000; // a hold ends this long before its timeout
// Every kind of request, for `offline` (the default leaves out the tab's own navigations).
const ALL_TYPES = ['main_frame', 'sub_frame', 'stylesheet', 'script', 'image', 'font', 'object', 'xmlhttprequest', 'ping', 'csp_report', 'media', 'other'];

const rules = new Map(); // rule id → { id, session, tab_id, action, url_pattern, origin, content_type?, bytes? }
const holds = new Map(); // session → holds in flight
const orphans = new Map(); // session → timer that removes its rules unless a hold comes
let nextId = 1;

// At the worker's start: no rule of an earlier run has a session holding it any more.
const ready = (async () => {
  const old = await chrome.declarativeNetRequest.getSessionRules().catch(() => []);
  if (old.length) await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: old.map((r) => r.id) }).catch(() => {});
})();

// Registered in the worker's first turn (background.js).
export function watchNetworkRules() {
  chrome.tabs.onRemoved.addListener((id) => drop((r) => r.tab_id === id));
  onSitesChanged(() => drop((r) => !allows(r.origin)));
}

async function drop(which) {
  const gone = [...rules.values()].filter(which);
  if (!gone.length) return 0;
  for (const r of gone) rules.delete(r.id);
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: gone.map((r) => r.id) }).catch(() => {});
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

async function addRule(session, info, action, resourceTypes) {
  const mine = [...rules.values()].filter((r) => r.session === session).length;
  if (mine >= MAX_RULES) fail('too_large', `a session has at most ${MAX_RULES} network rules; remove some first (network_rules action remove)`);
  const id = nextId++;
  const condition = { urlFilter: info.filter, tabIds: [info.tab_id], isUrlFilterCaseSensitive: false };
  if (resourceTypes) condition.resourceTypes = resourceTypes;
  try {
    await chrome.declarativeNetRequest.updateSessionRules({ addRules: [{ id, priority: 1, action, condition }] });
  } catch (e) {
    fail('bad_request', `Chrome refused the rule for ${info.url_pattern}: ${e.message}`);
  }
  const { filter, ...kept } = info;
  const rule = { id, session, ...kept };
  rules.set(id, rule);
  orphan(session);
  return rule;
}

const shown = ({ session, ...r }) => r;

export const networkMethods = {
  // {session, action: block|mock|offline|online|list|remove, tab_id?, url_pattern?, body?,
  //  content_type?, rule_id?, expected_origin?}
  'webdev.network': async (params) => {
    await ready;
    const session = sessionKey(params);
    const action = params.action;
    const own = (r) => r.session === session && (params.tab_id == null || r.tab_id === params.tab_id);
    switch (action) {
      case 'block':
      case 'mock': {
        const id = tabId(params);
        const doc = await topDocument(id, params);
        const { origin, urlFilter } = parsePattern(params.url_pattern, allows);
        const info = { tab_id: id, action, url_pattern: params.url_pattern, origin, filter: urlFilter };
        if (action === 'block') return { origin: doc.origin, url: doc.url, rules: [shown(await addRule(session, info, { type: 'block' }))] };
        const type = params.content_type ?? 'application/json';
        const data = dataUrl(params.body, type);
        const rule = await addRule(session, { ...info, content_type: type, bytes: data.bytes }, { type: 'redirect', redirect: { url: data.url } });
        return { origin: doc.origin, url: doc.url, rules: [shown(rule)] };
      }
      case 'offline': {
        const id = tabId(params);
        const doc = await topDocument(id, params);
        const info = { tab_id: id, action, url_pattern: `${doc.origin}/*`, origin: doc.origin, filter: `|${doc.origin}/` };
        return { origin: doc.origin, url: doc.url, rules: [shown(await addRule(session, info, { type: 'block' }, ALL_TYPES))] };
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
    await ready;
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
