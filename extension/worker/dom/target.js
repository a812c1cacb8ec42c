// Service worker, for the methods that run a script in a tab's page (dom/, network.js, webdev.js,
// webdev-page.js): the document a tool acts on — the top document of a tab, checked against the
// allowed sites (sites.js) at the moment the call runs, and pinned by its documentId so that a
// script runs in that document or not at all — never in the page the tab navigated to meanwhile.

import { TabwireError } from '../../lib/errors.js';
import { sitesReady } from '../../lib/sites-store.js';
import { originOf, withoutFragment } from '../../lib/sites.js';
import { checkSite, expectedOrigin } from '../sites.js';
import { getTab } from '../tabs.js';
import { checkNoDialog } from './open-dialogs.js';

// { tab, origin, url, documentId } of tab `id`'s top document, once it may answer (its site
// allowed, no dialog of the browser's blocking it).
export async function topDocument(id, params) {
  await sitesReady;
  const expected = expectedOrigin(params);
  const tab = await getTab(id);
  const frame = await chrome.webNavigation.getFrame({ tabId: id, frameId: 0 }).catch(() => null);
  const url = frame?.url || tab.url || '';
  const origin = originOf(url);
  checkSite(id, origin, expected, url);
  await checkNoDialog(id); // its scripts could not run
  return { tab, origin, url: withoutFragment(url), documentId: frame?.documentId ?? null };
}

// Whether tab `doc.tab.id` still shows that document; throws `origin_changed` if not.
export async function stillThere(doc, what) {
  const frame = await chrome.webNavigation.getFrame({ tabId: doc.tab.id, frameId: 0 }).catch(() => null);
  if (frame && doc.documentId && frame.documentId === doc.documentId) return;
  throw new TabwireError('origin_changed', `tab ${doc.tab.id} moved on from ${doc.url} while tabwire ${what}; nothing of the new page was kept. Call again`);
}

// Run `func(...args)` in that document (world 'ISOLATED' or 'MAIN'); its result.
export async function runIn(doc, func, args = [], world = 'ISOLATED') {
  const target = doc.documentId ? { tabId: doc.tab.id, documentIds: [doc.documentId] } : { tabId: doc.tab.id, frameIds: [0] };
  let done;
  try {
    done = await chrome.scripting.executeScript({ target, func, args, world, injectImmediately: true });
  } catch (e) {
    if (/no (document|frame)/i.test(e.message))
      throw new TabwireError('origin_changed', `tab ${doc.tab.id} moved on from ${doc.url} before tabwire could act; nothing was done. Call again`);
    if (/error page/i.test(e.message))
      throw new TabwireError('not_scriptable', `tab ${doc.tab.id} shows Chrome's error page for ${doc.url}; navigate it again once the site is up`);
    throw new TabwireError('not_scriptable', `Chrome would not run tabwire's script in tab ${doc.tab.id} (${doc.url}): ${e.message}`);
  }
  return done?.[0]?.result;
}
