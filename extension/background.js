// The service worker's entry: wires the modules. Every listener is registered here, in the
// first turn of the worker (MV3 delivers events only to listeners registered synchronously).

import { chatMethods, listenForChats } from './chat.js';
import { connect, startNative } from './native.js';
import { listenForPages, pageMethods } from './page.js';
import { tabMethods, watchTabs } from './tabs.js';

// Read once: getManifest() costs about 0.1 ms a call, and `ping` is what doctor times.
const VERSION = chrome.runtime.getManifest().version;

const methods = {
  ping: () => ({ pong: true, extension_version: VERSION }),
  echo: (params) => params,
  ...tabMethods,
  ...pageMethods,
  ...chatMethods,
};

watchTabs();
listenForPages();
listenForChats();
chrome.runtime.onStartup.addListener(connect);
chrome.runtime.onInstalled.addListener(connect);
startNative(methods);
