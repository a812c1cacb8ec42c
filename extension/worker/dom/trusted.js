// Service worker, called by dom.js for an action with `trusted: true` (and by the tests, as
// dom.trusted_input); its debugger and frame rules serve dom/screenshot.js and webdev-page.js.
//
// Trusted input, opt-in per site: one click, one text or one key sequence dispatched through
// chrome.debugger, so the page sees real input (event.isTrusted) — for pages that ignore
// synthetic events. Only when the user turned on "Trusted input" for the site (sites.js
// switches); the debugger is attached for that one action and detached right after, and Chrome
// shows its "is being debugged" bar meanwhile.
//
// Real input goes where the browser sends it (the focused frame, the frame under the point),
// and the page decides that: between any two steps it may move focus into a frame or slide one
// under the pointer. So each step is sent only while every frame of the tab is of an allowed
// site, checked right before it (`checkFrames`). Where the input lands inside the page cannot be
// checked as reliably: the debugger session sees no frame of another site (Page.getFrameTree
// lists only the frames in the page's own process), and clicks are routed by what was last
// painted, not by the layout a check would read.
//
// The same rule, every frame of the tab of an allowed site, holds for what captures the tab
// whole (`whileNoForeignFrame`): a screenshot (dom/screenshot.js) shows every frame's pixels
// and a PDF (webdev-page.js) carries every frame's words, though read_page leaves such a frame out.

import { TabwireError, fail } from '../../lib/errors.js';
import { allows } from '../../lib/sites-store.js';
import { bareUrl, originOf } from '../../lib/sites.js';
import { requireSwitch } from '../sites.js';
import { tabId } from '../tabs.js';
import { stillThere, topDocument } from './target.js';

const MODIFIERS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
const BUTTONS = { left: 1, right: 2, middle: 4 };
const MAX_TEXT = 10_000;
// Keys by name: [key code, code, text typed].
const NAMED = {
  Enter: [13, 'Enter', '\r'], Tab: [9, 'Tab', ''], Escape: [27, 'Escape', ''], Backspace: [8, 'Backspace', ''],
  Delete: [46, 'Delete', ''], ArrowUp: [38, 'ArrowUp', ''], ArrowDown: [40, 'ArrowDown', ''], ArrowLeft: [37, 'ArrowLeft', ''],
  ArrowRight: [39, 'ArrowRight', ''], Home: [36, 'Home', ''], End: [35, 'End', ''], PageUp: [33, 'PageUp', ''],
  PageDown: [34, 'PageDown', ''], Space: [32, 'Space', ' '],
};


// Dispatch one action in tab `id` as real input. `action`: 'click' (x, y in CSS pixels of the
// viewport; button, count, modifiers), 'type' (text) or 'keys' (e.g. "Control+A", "Enter";
// several separated by spaces). Throws `trusted_input_not_enabled` unless the user allowed it.
export async function trustedInput(id, { action, x, y, button = 'left', count = 1, modifiers = [], text, keys } = {}) {
  const steps = plan({ action, x, y, button, count, modifiers, text, keys });
  const doc = await topDocument(id, {});
  await withDebugger(id, doc, 'for trusted input', `trusted input in tab ${id}`, (target) => watchingFrames(id, async (seen) => {
    await stillThere(doc, 'prepared the input'); // the site checked is the site that gets it
    for (const [i, [method, params]] of steps.entries()) {
      await checkFrames(doc, i, steps.length, seen());
      await chrome.debugger.sendCommand(target, method, params);
    }
  }));
  return { origin: doc.origin, url: doc.url, action, dispatched: steps.length };
}

// Run `work(target)` with tabwire's debugger attached to tab `id` — only under the user's
// "Trusted input" switch for the site `doc` shows — and detach it afterwards, whatever happens.
// `purpose` says why it attaches ("for trusted input"), `doing` what failed ("trusted input in
// tab 7"), in the errors.
export async function withDebugger(id, doc, purpose, doing, work) {
  requireSwitch(id, doc.origin, 'trusted_input');
  const target = { tabId: id };
  try {
    await chrome.debugger.attach(target, '1.3');
  } catch (e) {
    fail('not_scriptable', `Chrome would not attach its debugger to tab ${id} ${purpose}: ${e.message}. Close DevTools or another debugger on that tab and try again`);
  }
  try {
    return await work(target);
  } catch (e) {
    if (e instanceof TabwireError) throw e;
    fail('page_error', `${doing} failed: ${e.message}`);
  } finally {
    await chrome.debugger.detach(target).catch(() => {});
  }
}

// The hidden method for tests (specs/protocol.md); the page tools use trustedInput directly.
export const trustedMethods = {
  'dom.trusted_input': (params) => trustedInput(tabId(params), params),
};

// The origin of a frame of tab `id` whose site is not allowed (its top document's, once it
// navigated to one), or null when every frame's is. `doing` says what tabwire was doing if the
// tab closed. The one rule of which frames real input and captures may meet.
async function foreignFrame(id, doing) {
  const frames = await chrome.webNavigation.getAllFrames({ tabId: id }).catch(() => null);
  if (!frames) fail('no_such_tab', `tab ${id} closed while tabwire ${doing}`);
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  for (const frame of frames) {
    const origin = frameOrigin(frame, byId);
    if (!allows(origin)) return origin;
  }
  return null;
}

const allowHint = (origin) => (originOf(origin) ? `; or, if the user trusts that site, the user can allow it (\`tabwire sites allow ${origin}\`)` : '');

// Run `work(seen)` while watching tab `id`'s frames: `seen()` is the origin of a site not
// allowed that a frame of the tab began to load, or committed, since it started (else null).
// A frame is seen as its navigation starts: Chrome's frame list still shows it as the
// about:blank its parent put there until the other site's document commits, and a key sent in
// that moment would reach that document once it has.
async function watchingFrames(id, work) {
  let seen = null;
  const watch = (d) => {
    // about: and data: documents are their parent's, whose own origin the checks see.
    if (d.tabId !== id || seen !== null || /^(about|data):/i.test(d.url)) return;
    const origin = frameOrigin(d, new Map());
    if (!allows(origin)) seen = origin;
  };
  chrome.webNavigation.onBeforeNavigate.addListener(watch);
  chrome.webNavigation.onCommitted.addListener(watch);
  try {
    return await work(() => seen);
  } finally {
    chrome.webNavigation.onBeforeNavigate.removeListener(watch);
    chrome.webNavigation.onCommitted.removeListener(watch);
  }
}

// Throws `not_actionable` when tab `doc.tab.id` holds a frame of a site that is not allowed
// (or began to load one: `seen`), or when its top document is not (it navigated); `sent` of
// `total` steps were sent already.
async function checkFrames(doc, sent, total, seen) {
  const id = doc.tab.id;
  const origin = seen ?? (await foreignFrame(id, 'sent trusted input to it'));
  if (origin === null) return;
  const done = sent === 0 ? 'nothing was sent' : `${sent} of its ${total} steps were sent before the frame was there, the rest were not`;
  fail('not_actionable', `tab ${id} (${doc.url}) holds a frame of ${origin}, a site tabwire is not allowed on; real input could reach it ` +
    `(the page can move focus into that frame or slide it under the pointer at any moment), so trusted input is refused while it is there: ${done}. ` +
    `Act without \`trusted\` (tabwire's own events reach only the element)${allowHint(origin)}`);
}

// `capture()` — a screenshot or a print of tab `doc.tab.id`, named by `what` ("a screenshot") —
// only while every frame of the tab is of an allowed site: checked before it, watched during it
// (a frame that begins to load or commits another site's document meanwhile, even if gone again by the end), and
// checked after it; otherwise what it captured is dropped and `site_not_allowed` names the frame's
// site. Refused rather than the frame hidden for the capture: the page's own scripts could show
// it again (or put it in a shadow root or an allowed frame, out of a hiding rule's reach) in the
// moment between hiding it and capturing.
export async function whileNoForeignFrame(doc, what, capture) {
  const id = doc.tab.id;
  const refuse = (origin) => {
    if (origin === null) return;
    fail('site_not_allowed', `tab ${id} (${doc.url}) holds a frame of ${origin}, a site tabwire is not allowed on; ${what} would show that site's page too, ` +
      `so none is taken while the frame is there. read_page reads this tab without that frame${allowHint(origin)}`);
  };
  return watchingFrames(id, async (seen) => {
    refuse(await foreignFrame(id, `took ${what} of it`));
    const got = await capture();
    refuse(seen() ?? (await foreignFrame(id, `took ${what} of it`)));
    return got;
  });
}

// The origin of a frame's document as its URL tells it: a blob: URL names its origin; about:blank,
// about:srcdoc and data: documents are put there by their parent (or by a frame that may
// navigate it, which is of the parent's origin or an ancestor's), so they count as the parent's.
function frameOrigin(frame, byId) {
  for (let f = frame; f; f = byId.get(f.parentFrameId)) {
    if (/^(about|data):/i.test(f.url)) continue;
    let origin = 'null';
    try {
      origin = new URL(f.url).origin;
    } catch {}
    return origin === 'null' ? bareUrl(f.url) || f.url : origin;
  }
  return bareUrl(frame.url) || frame.url;
}

// The CDP commands for an action, checked before anything is attached.
function plan({ action, x, y, button, count, modifiers, text, keys }) {
  if (!Array.isArray(modifiers) || modifiers.some((m) => !(m in MODIFIERS))) fail('bad_request', `\`modifiers\` must be a list of ${Object.keys(MODIFIERS).join(', ')}`);
  const mask = modifiers.reduce((m, k) => m | MODIFIERS[k], 0);
  switch (action) {
    case 'click': {
      if (!Number.isFinite(x) || !Number.isFinite(y) || x < 0 || y < 0) fail('bad_request', '`x` and `y` must be the point to click, in CSS pixels from the top left of the visible area');
      if (!(button in BUTTONS)) fail('bad_request', '`button` must be left, right or middle');
      if (!Number.isInteger(count) || count < 1 || count > 3) fail('bad_request', '`count` must be 1, 2 or 3 (a single, double or triple click)');
      const mouse = (type, extra) => ['Input.dispatchMouseEvent', { type, x, y, modifiers: mask, ...extra }];
      const steps = [mouse('mouseMoved', { button: 'none' })];
      for (let i = 1; i <= count; i++)
        steps.push(mouse('mousePressed', { button, buttons: BUTTONS[button], clickCount: i }), mouse('mouseReleased', { button, buttons: 0, clickCount: i }));
      return steps;
    }
    case 'type':
      if (typeof text !== 'string' || text === '' || text.length > MAX_TEXT) fail('bad_request', `\`text\` must be the text to type, 1 to ${MAX_TEXT} characters`);
      return [['Input.insertText', { text }]];
    case 'keys': {
      if (typeof keys !== 'string' || keys.trim() === '') fail('bad_request', '`keys` must name keys such as "Enter", "Control+A" or "Shift+Tab Enter"');
      return keys.trim().split(/\s+/).flatMap((combo) => keySteps(combo, mask));
    }
    default:
      return fail('bad_request', '`action` must be click, type or keys');
  }
}

function keySteps(combo, baseMask) {
  const parts = combo.split('+');
  const name = parts.pop();
  let mask = baseMask;
  for (const m of parts) {
    if (!(m in MODIFIERS)) fail('bad_request', `${JSON.stringify(combo)}: ${JSON.stringify(m)} is not a modifier (${Object.keys(MODIFIERS).join(', ')})`);
    mask |= MODIFIERS[m];
  }
  let keyCode, code, text, key = name;
  if (name in NAMED) {
    [keyCode, code, text] = NAMED[name];
    if (name === 'Space') key = ' ';
  } else if (name.length === 1) {
    const upper = name.toUpperCase();
    keyCode = upper.charCodeAt(0);
    code = /[A-Z]/.test(upper) ? `Key${upper}` : /\d/.test(name) ? `Digit${name}` : '';
    // A letter is what the keyboard gives: "A" with Shift, "a" without ("Control+A" is Ctrl+a).
    if (/[a-z]/i.test(name)) key = mask & MODIFIERS.Shift ? upper : name.toLowerCase();
    text = key;
  } else {
    fail('bad_request', `${JSON.stringify(combo)}: unknown key ${JSON.stringify(name)}; use a single character or one of ${Object.keys(NAMED).join(', ')}`);
  }
  if (mask & (MODIFIERS.Control | MODIFIERS.Meta | MODIFIERS.Alt)) text = ''; // a shortcut types nothing
  const ev = (type) => ['Input.dispatchKeyEvent', { type, key, code, windowsVirtualKeyCode: keyCode, modifiers: mask, ...(type === 'keyDown' && text ? { text } : {}) }];
  return [ev('keyDown'), ev('keyUp')];
}
