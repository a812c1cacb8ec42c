// Service worker, its entry (manifest.json's background.service_worker): wires the modules. Every
// listener is registered here, in the first turn of the worker (MV3 delivers events only to
// listeners registered synchronously) — but for those filtered by the allowed sites (tabs.js),
// added once the list is read or a call needs them: what they hear matters only while the host is
// connected, whose open port keeps the worker running.
// Where things run (folders of extension/): worker/ is this service worker; isolated/ the
// content scripts of the isolated world; page-world/ what runs in the page's own world; ui/ the
// extension's pages; lib/ pure logic they share, and the stored state (its *-store.js) that the
// popup and the worker both read and write. content-scripts.js says which file goes where.
//
// What the worker holds in memory, and how each piece comes back after Chrome stops and
// restarts it (an open native port keeps it alive, so this happens when the host is gone):
//
// | module       | state                                   | after a restart                      |
// |--------------|-----------------------------------------|--------------------------------------|
// | native.js    | the link to the host (idle, connecting, | connect() runs at start; requests in |
// |              | open, backoff), requests in flight,     | flight were failed to the bridges by |
// |              | chunk streams being joined              | the host (browser_disconnected)      |
// | sites-store  | (lib/) the allowed sites, parsed        | read from chrome.storage.local       |
// |              |                                         | (sitesReady); checks wait for it     |
// | page.js      | each tab's page port, its last state,   | a page reconnects when a call asks   |
// |              | its pending calls                       | its relay (`page.connect`); the      |
// |              |                                         | relay re-sends its last state        |
// | rate-limit   | each tab's event buckets                | start full                           |
// | chat.js      | running operations, observer ports      | bridges catch up with chat.status;   |
// |              |                                         | observers reconnect on their next    |
// |              |                                         | milestone                            |
// | tabs.js      | each tab's last url/title/status, the   | chrome.tabs.query at start (and at   |
// |              | tabs that show an allowed site          | each change of the allowed sites)    |
// | status.js    | the connection status for the popup     | chrome.storage.session               |
// | dom.js       | per tab: ref numbering, last 4          | refs stay in the pages               |
// | settle.js    | snapshots; requests of running actions  | (isolated/refs.js); `since` needs a  |
// |              |                                         | new read_page                        |
// | activity.js  | the last 50 tab actions                 | chrome.storage.session               |
// | downloads.js | which downloads were reported           | forgotten (Chrome keeps the files)   |
// | handover.js  | the tabs handed over to the user        | forgotten: the ask_user call fails   |
// | pause-store  | (lib/) whether the user pressed Stop    | chrome.storage.session               |
// | groups.js    | each session's tab groups, name, colour | chrome.storage.session (groups-store |
// |              |                                         | in lib/)                             |
// | network.js   | each session's network rules, its holds | Chrome's session rules are removed   |
// |              |                                         | at start (their holds went)          |
// | webdev-page  | each window's size before a resize      | forgotten                            |
// | workflow.js  | the live workflows, the ports that      | the bridges send them again to the   |
// |              | follow them                             | new host; followers reconnect        |
// | clock.js     | background tabs' timers                 | gone with their ports: those tabs'   |
// |              |                                         | own (throttled) timers fire instead  |

import { allowedBy, currentSites, onSitesChanged } from '../lib/sites-store.js';
import { withActivity } from './activity.js';
import { chatMethods, listenForChats } from './chat.js';
import { keepTime } from './clock.js';
import { syncContentScripts } from './content-scripts.js';
import { domMethods, refRect } from './dom.js';
import { downloadMethods, watchDownloads } from './downloads.js';
import { groupMethods, onOwnersChanged, sessionsAttached, trackTabGroups, watchGroups, withGroups } from './groups.js';
import { handoverMethods, watchHandovers, withHandover } from './handover.js';
import { auditMethods } from './dom/audit.js';
import { evaluateMethods } from './dom/evaluate.js';
import { logMethods } from './dom/logs.js';
import { networkMethods, watchNetworkRules } from './network.js';
import { screenshotMethods, useRefRects } from './dom/screenshot.js';
import { trustedMethods } from './dom/trusted.js';
import { connect, fastLinkDebug, isConnected, onHostStatus, sendEvent, startNative } from './native.js';
import { announceAgain, listenForPages, pageMethods } from './page.js';
import { withPause } from './pause.js';
import { listen } from './router.js';
import { checkSite, siteMethods, watchChromeSiteAccess } from './sites.js';
import { watchSettling } from './settle.js';
import { carrier } from './status.js';
import { tabMethods, watchTabs } from './tabs.js';
import { method } from './traits.js';
import { webdevMethods } from './webdev.js';
import { webdevPageMethods } from './webdev-page.js';
import { listenForWorkflows, workflowMethods } from './workflow.js';

// Read once: getManifest() costs about 0.1 ms a call, and `ping` is what doctor times.
const VERSION = chrome.runtime.getManifest().version;

// Every method the bridges call. Each says what it is beside its handler (traits.js), which is
// all the guards wrapped around them below read.
const methods = {
  ping: method({ pageless: true }, () => ({ pong: true, extension_version: VERSION, carrier: carrier() })),
  echo: method({ pageless: true }, (params) => params),
  ...tabMethods,
  ...pageMethods,
  ...chatMethods,
  ...siteMethods,
  ...workflowMethods,
  ...domMethods,
  ...screenshotMethods,
  ...logMethods,
  ...evaluateMethods,
  ...auditMethods,
  ...trustedMethods,
  ...webdevMethods,
  ...webdevPageMethods,
  ...networkMethods,
  ...downloadMethods,
  ...handoverMethods,
  ...groupMethods,
};

// Bridges hear the list once after each hello and after every change, wherever it was made
// (the popup or the sites.* methods both only write storage; lib/sites-store.js calls this once a
// change).
const sendSites = () => sendEvent('sites', null, { sites: currentSites() });

// The one handle for the tests and the benchmarks, which reach this worker through the debugger
// (the origin checks in bridge/benches/browser/sites.rs, the page hops in
// bridge/benches/browser/floors.rs, the fast link in bridge/tests/host/fast_link.rs). Nothing else
// can: no page or content script sees the worker's global.
globalThis.tabwireDebug = { checks: { allowedBy, checkSite }, methods, fastLink: fastLinkDebug };

listen(); // the one onMessage and onConnect listener; the modules below register with it
trackTabGroups(); // before watchTabs: each tab event names its owner
watchTabs();
watchSettling();
watchDownloads();
watchHandovers();
watchGroups();
onHostStatus(sessionsAttached);
useRefRects(refRect);
watchNetworkRules();
listenForPages();
onOwnersChanged(announceAgain); // a tab changed hands: its page's commands reach its new owner
listenForChats();
listenForWorkflows();
keepTime();
onSitesChanged(() => {
  syncContentScripts();
  if (!isConnected()) return; // the next connect sends the list after hello
  try {
    sendSites();
  } catch (e) {
    console.warn('tabwire: the sites event was not sent:', e.message);
  }
});
// The sites Chrome's own Site access setting leaves out are revoked, now and when it changes.
const inChromesBounds = watchChromeSiteAccess();
chrome.runtime.onStartup.addListener(connect);
chrome.runtime.onInstalled.addListener(connect);
// The content scripts are registered for the allowed sites (those Chrome still grants) before
// the host is started, so a page opened once the host is up has them.
startNative(withActivity(withGroups(withPause(withHandover(methods)))), { ready: inChromesBounds.then(syncContentScripts), onConnect: sendSites });
