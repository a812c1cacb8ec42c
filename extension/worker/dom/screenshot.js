// Service worker, called by the bridges for screenshot: dom.screenshot, what a tab shows, as an
// image, taken with chrome.tabs.captureVisibleTab — no debugger, so no "is being debugged" bar. A
// whole page is scrolled through and stitched in an OffscreenCanvas here in the worker; an element
// is cut out of the visible area. The image is scaled so that its longer side is at most `max_dim`
// (what vision models take in without scaling it down themselves).
//
// A capture shows every frame of the tab, so none is taken while the tab holds a frame of a
// site that is not allowed (dom/trusted.js, `whileNoForeignFrame`: the rule trusted input keeps).

import { TabwireError, fail } from '../../lib/errors.js';
import { tabId } from '../tabs.js';
import { runIn, stillThere, topDocument } from './target.js';
import { whileNoForeignFrame } from './trusted.js';
import { method } from '../traits.js';

const MAX_DIM_DEFAULT = 1568;
const MAX_DIM_LIMIT = 8000;
// Chrome allows captureVisibleTab about twice a second (MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND).
const CAPTURE_SPACING_MS = 510;
// A full page is at most this many screens tall; below that it is cut (and the result says so).
const MAX_SCREENS = 8;

let lastCapture = 0;
let captures = Promise.resolve(); // one capture at a time, spaced for Chrome's rate limit

// Where a ref (from read_page) is on the page. dom-core provides it: until it does, a ref is
// refused with a clear error. `resolve(doc, ref)` → { x, y, width, height } in CSS pixels of
// the viewport, the element scrolled into view.
let refRect = null;
export function useRefRects(resolve) {
  refRect = resolve;
}

export const screenshotMethods = {
  'dom.screenshot': method({ capture: true }, async (params) => {
    const id = tabId(params);
    const { full_page: fullPage = false, max_dim: maxDim = MAX_DIM_DEFAULT, selector = null, ref = null, format = 'png' } = params;
    if (typeof fullPage !== 'boolean') fail('bad_request', '`full_page` must be true or false');
    if (!Number.isInteger(maxDim) || maxDim < 16 || maxDim > MAX_DIM_LIMIT) fail('bad_request', `\`max_dim\` must be a whole number of pixels from 16 to ${MAX_DIM_LIMIT} (default ${MAX_DIM_DEFAULT})`);
    if (format !== 'png' && format !== 'jpeg') fail('bad_request', '`format` must be "png" or "jpeg"');
    if (selector !== null && typeof selector !== 'string') fail('bad_request', '`selector` must be a CSS selector (a string)');
    if ([fullPage, selector !== null, ref !== null].filter(Boolean).length > 1) fail('bad_request', 'pass at most one of `full_page`, `selector` and `ref`');
    const doc = await topDocument(id, params);
    if (!doc.tab.active)
      fail('bad_request', `tab ${id} is not the tab its window shows, and a screenshot is taken of what is on screen; call activate_tab {"tab_id": ${id}} first`);
    let shot;
    if (fullPage) shot = await wholePage(doc);
    else if (selector !== null || ref !== null) shot = await element(doc, selector, ref);
    else shot = await visible(doc);
    const out = await encode(shot.canvas, maxDim, format);
    return { origin: doc.origin, url: doc.url, ...out, ...shot.about };
  }),
};

// One captureVisibleTab of the document's window, as an ImageBitmap; checks that the tab still
// shows the document, and no frame of a site not allowed, before and after.
// captureVisibleTab of a window Chrome draws nothing in (covered by another window, or
// minimized: docs/performance.md, "Pages the user is not looking at") never answers, and would
// hold every capture after it: given up after CAPTURE_WAIT_MS, with what to do.
const CAPTURE_WAIT_MS = 3000;
function drawn(doc, capturing) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new TabwireError('not_scriptable', `Chrome drew nothing to capture in the window of tab ${doc.tab.id} within ${CAPTURE_WAIT_MS} ms: it is covered by another window or minimized, and Chrome draws no frames there; activate_tab {"tab_id": ${doc.tab.id}} shows it (in front of the user), or read it with read_page`)), CAPTURE_WAIT_MS)));
  return Promise.race([capturing, late]).finally(() => clearTimeout(timer));
}

async function capture(doc) {
  const run = captures.then(async () => {
    const wait = lastCapture + CAPTURE_SPACING_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await stillThere(doc, 'took the screenshot');
    let dataUrl;
    try {
      dataUrl = await whileNoForeignFrame(doc, 'a screenshot', () => drawn(doc, chrome.tabs.captureVisibleTab(doc.tab.windowId, { format: 'png' })));
    } finally {
      lastCapture = Date.now();
    }
    await stillThere(doc, 'took the screenshot');
    return createImageBitmap(await (await fetch(dataUrl)).blob());
  });
  captures = run.catch(() => {});
  try {
    return await run;
  } catch (e) {
    if (e.code) throw e;
    fail('not_scriptable', `Chrome could not capture tab ${doc.tab.id}: ${e.message}. Is its window minimised or hidden? Show it and try again`);
  }
}

async function visible(doc) {
  const bitmap = await capture(doc);
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  canvas.getContext('2d').drawImage(bitmap, 0, 0);
  return { canvas, about: {} };
}

async function element(doc, selector, ref) {
  let rect;
  if (ref !== null) {
    if (!refRect) fail('bad_request', 'screenshot cannot take a ref in this version of the extension; pass a CSS `selector` instead');
    rect = await refRect(doc, ref);
  } else {
    rect = await runIn(doc, (sel) => {
      let e;
      try {
        e = document.querySelector(sel);
      } catch (err) {
        return { error: `${JSON.stringify(sel)} is not a CSS selector: ${err.message}` };
      }
      if (!e) return { error: `no element matches ${JSON.stringify(sel)}` };
      e.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = e.getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height, vw: innerWidth, vh: innerHeight };
    }, [selector]);
    if (rect?.error) fail('bad_request', `${rect.error} in tab ${doc.tab.id} (${doc.url}); read_page or find shows what is there`);
  }
  const bitmap = await capture(doc);
  const scale = bitmap.width / (rect.vw ?? bitmap.width);
  const x = Math.max(0, Math.floor(rect.x * scale));
  const y = Math.max(0, Math.floor(rect.y * scale));
  const w = Math.min(bitmap.width, Math.ceil((rect.x + rect.width) * scale)) - x;
  const h = Math.min(bitmap.height, Math.ceil((rect.y + rect.height) * scale)) - y;
  if (w <= 0 || h <= 0) fail('bad_request', `the element ${selector ?? ref} in tab ${doc.tab.id} has no visible area (hidden, empty or off screen)`);
  const canvas = new OffscreenCanvas(w, h);
  canvas.getContext('2d').drawImage(bitmap, x, y, w, h, 0, 0, w, h);
  const clipped = w < Math.floor(rect.width * scale) || h < Math.floor(rect.height * scale);
  return { canvas, about: clipped ? { cut: 'the element is larger than the visible area: only its visible part is shown' } : {} };
}

// Scroll through the page a screen at a time, capture each, stitch; then scroll back.
async function wholePage(doc) {
  const page = await runIn(doc, () => ({
    height: Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
    vh: innerHeight, vw: innerWidth, x: scrollX, y: scrollY,
  }));
  const screens = Math.min(MAX_SCREENS, Math.ceil(page.height / page.vh));
  const height = Math.min(page.height, screens * page.vh);
  let canvas = null;
  let scale = 1;
  try {
    for (let i = 0; i < screens; i++) {
      const want = Math.min(i * page.vh, height - page.vh);
      const at = await runIn(doc, (top) => new Promise((resolve) => {
        window.scrollTo(0, top);
        // Two frames: the scroll is painted. A page that never paints is not waited for.
        const done = () => resolve(scrollY);
        requestAnimationFrame(() => requestAnimationFrame(done));
        setTimeout(done, 200);
      }), [want]);
      const bitmap = await capture(doc);
      if (!canvas) {
        scale = bitmap.width / page.vw;
        canvas = new OffscreenCanvas(bitmap.width, Math.round(height * scale));
      }
      canvas.getContext('2d').drawImage(bitmap, 0, Math.round(at * scale));
    }
  } finally {
    await runIn(doc, (x, y) => window.scrollTo(x, y), [page.x, page.y]).catch(() => {});
  }
  const about = { full_page: true };
  if (height < page.height) about.cut = `the page is ${page.height} CSS pixels tall; only its first ${MAX_SCREENS} screens (${height} px) are shown`;
  return { canvas, about };
}

// Scale to `maxDim` on the longer side, encode; { mime, data (base64), width, height }.
async function encode(source, maxDim, format) {
  const factor = Math.min(1, maxDim / Math.max(source.width, source.height));
  let canvas = source;
  if (factor < 1) {
    canvas = new OffscreenCanvas(Math.max(1, Math.round(source.width * factor)), Math.max(1, Math.round(source.height * factor)));
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(source, 0, 0, canvas.width, canvas.height);
  }
  const mime = format === 'jpeg' ? 'image/jpeg' : 'image/png';
  const blob = await canvas.convertToBlob({ type: mime, quality: 0.85 });
  return { mime, data: base64(new Uint8Array(await blob.arrayBuffer())), width: canvas.width, height: canvas.height };
}

function base64(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
