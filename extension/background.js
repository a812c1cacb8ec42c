// The service worker's entry: wires the modules. Every listener is registered here, in the
// first turn of the worker (MV3 delivers events only to listeners registered synchronously).
//
// What the worker holds in memory, and how each piece comes back after Chrome stops and
// restarts it (an open native port keeps it alive, so this happens when the host is gone):
//
// | module    | state                                   | after a restart                      |
// |-----------|-----------------------------------------|--------------------------------------|
// | native.js | the link to the host (idle, connecting, | connect() runs at start; requests in |
// |           | open, backoff), requests in flight,     | flight were failed to the bridges by |
// |           | chunk streams being joined              | the host (browser_disconnected)      |
// | sites.js  | the allowed sites, parsed               | read from chrome.storage.local       |
// |           |                                         | (sitesReady); checks wait for it     |
// | page.js   | each tab's page port, its last state,   | a page reconnects when a call asks   |
// |           | its pending calls                       | its relay ({type: "connect"}); the   |
// |           |                                         | relay re-sends its last state        |
// | limits.js | each tab's event buckets                | start full                           |
// | chat.js   | running operations, observer ports      | bridges catch up with chat.status;   |
// |           |                                         | observers reconnect on their next    |
// |           |                                         | milestone                            |
// | tabs.js   | each tab's last url/title/status        | chrome.tabs.query at start           |
// | status.js | the connection status for the popup     | chrome.storage.session               |
// | dom.js    | per tab: ref numbering, last 4          | refs stay in the pages (dom/refs.js);|
// | settle.js | snapshots; requests of running actions  | `since` needs a new read_page        |
// | activity  | the last 50 tab actions (activity.js)   | chrome.storage.session               |
// | dom/logs  | each tab's last 500 requests            | start empty                          |
// | workflow  | the live workflows (workflow.js), the   | the bridges send them again to the   |
// |           | ports that follow them                  | new host; followers reconnect        |

import { withActivity } from './activity.js';
import { chatMethods, listenForChats } from './chat.js';
import { domMethods, refRect } from './dom.js';
import { evaluateMethods } from './dom/evaluate.js';
import { logMethods, watchNetwork } from './dom/logs.js';
import { screenshotMethods, useRefRects } from './dom/screenshot.js';
import { trustedMethods } from './dom/trusted.js';
import { connect, isConnected, sendEvent, startNative } from './native.js';
import { listenForPages, pageMethods } from './page.js';
import { allowedBy, checkSite, currentSites, onSitesChanged, siteMethods, sitesReady, syncContentScripts } from './sites.js';
import { watchSettling } from './settle.js';
import { carrier } from './status.js';
import { tabMethods, watchTabs } from './tabs.js';
import { listenForWorkflows, workflowMethods } from './workflow.js';

// Read once: getManifest() costs about 0.1 ms a call, and `ping` is what doctor times.
const VERSION = chrome.runtime.getManifest().version;

const methods = {
  ping: () => ({ pong: true, extension_version: VERSION, carrier: carrier() }),
  echo: (params) => params,
  ...tabMethods,
  ...pageMethods,
  ...chatMethods,
  ...siteMethods,
  ...workflowMethods,
  ...domMethods,
  ...screenshotMethods,
  ...logMethods,
  ...evaluateMethods,
  ...trustedMethods,
};

// Bridges hear the list once after each hello and after every change, wherever it was made
// (the popup or the sites.* methods both only write storage; sites.js calls this once a change).
const sendSites = () => sendEvent('sites', null, { sites: currentSites() });

// For the benchmarks (the origin checks in tests/bench/sites.rs, the page hops in
// tests/bench/floors.rs), which reach this worker through the debugger. Nothing else can: no
// page or content script sees the worker's global.
globalThis.tabwireChecks = { allowedBy, checkSite };
globalThis.tabwireMethods = methods;

watchTabs();
watchSettling();
useRefRects(refRect);
watchNetwork();
listenForPages();
listenForChats();
listenForWorkflows();
onSitesChanged(() => {
  syncContentScripts();
  if (!isConnected()) return; // the next connect sends the list after hello
  try {
    sendSites();
  } catch (e) {
    console.warn('tabwire: the sites event was not sent:', e.message);
  }
});
chrome.runtime.onStartup.addListener(connect);
chrome.runtime.onInstalled.addListener(connect);
// The content scripts are registered for the allowed sites before the host is started, so a
// page opened once the host is up has them.
startNative(withActivity(methods), { ready: sitesReady.then(syncContentScripts), onConnect: sendSites });
