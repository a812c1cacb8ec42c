// Service worker, for dom.js, which starts an `Activity` before each action and asks it when the
// page has settled: what a tab does after tabwire acted on it, seen from the worker — navigations
// of its top frame (webNavigation) and tabs it opens (an opener tab id). The page's own requests
// are followed in the page (page-world/requests.js, isolated/agent.js), which costs no other page
// anything.

const activities = new Map(); // tab id → Set<Activity>

export class Activity {
  // `session`: the id of the session whose call this is (null for none): a download the action
  // starts is that session's (downloads.js).
  constructor(tabId, session = null) {
    this.tabId = tabId;
    this.session = session;
    this.t0 = Date.now();
    this.navigation = null; // { url, committed, loaded }
    this.newTabs = [];
    this.downloads = []; // started by this action (downloads.js)
    this.wake = null;
    const set = activities.get(tabId) ?? new Set();
    activities.set(tabId, set.add(this));
    hear(true);
  }

  stop() {
    const set = activities.get(this.tabId);
    set?.delete(this);
    if (set?.size === 0) activities.delete(this.tabId);
    if (activities.size === 0) hear(false);
  }

  poke() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  // Resolves at the next change, or after `ms`.
  changed(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.wake = () => (clearTimeout(timer), resolve());
    });
  }
}

// The actions running now, in every tab: downloads.js gives a download to the one that
// started it.
export const running = () => [...activities.values()].flatMap((set) => [...set]);

const each = (tabId, fn) => activities.get(tabId)?.forEach((a) => (fn(a), a.poke()));

const LISTENERS = [
  [chrome.webNavigation.onBeforeNavigate, (d) => {
    if (d.frameId === 0) each(d.tabId, (a) => (a.navigation = { url: d.url, committed: false, loaded: false }));
  }],
  // Same-document changes (pushState, #hash) come as onHistoryStateUpdated instead.
  [chrome.webNavigation.onCommitted, (d) => {
    if (d.frameId === 0) each(d.tabId, (a) => (a.navigation = { ...(a.navigation ?? {}), url: d.url, committed: true }));
  }],
  [chrome.webNavigation.onDOMContentLoaded, (d) => {
    if (d.frameId === 0) each(d.tabId, (a) => a.navigation && (a.navigation.loaded = true));
  }],
  [chrome.webNavigation.onErrorOccurred, (d) => {
    if (d.frameId === 0) each(d.tabId, (a) => a.navigation && (a.navigation.loaded = true, a.navigation.error = d.error));
  }],
];

// The navigations are heard only while an action runs (an Activity exists), so
// that the user's own browsing, on any site, does not wake the worker.
function hear(on) {
  for (const [event, fn] of LISTENERS) {
    if (on && !event.hasListener(fn)) event.addListener(fn);
    else if (!on && event.hasListener(fn)) event.removeListener(fn);
  }
}

export function watchSettling() {
  chrome.tabs.onCreated.addListener((tab) => {
    if (tab.openerTabId !== undefined) each(tab.openerTabId, (a) => a.newTabs.push(tab.id));
  });
}
