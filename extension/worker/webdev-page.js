// Service worker, called by the bridges for viewport, page_timing and print_pdf: webdev.viewport,
// webdev.timing and webdev.pdf, a tab's page as a web developer checks it, on allowed sites only.
//
// - viewport: the tab's window resized (chrome.windows) so that the page's layout viewport is a
//   device's size, and put back; the page's own innerWidth, innerHeight and devicePixelRatio.
//   The device pixel ratio, touch and the like need the debugger's emulation, which would have
//   to stay attached while it lasts: not offered.
// - timing: the page's own performance entries, read in the isolated world (no debugger).
// - pdf: the debugger's Page.printToPDF, only where the user turned on the site's "Trusted
//   input" switch (as trusted input, dom/trusted.js: attached for this one call), and not while
//   the tab holds a frame of a site not allowed.

import { fail } from '../lib/errors.js';
import { tabId } from './tabs.js';
import { whileNoForeignFrame, withDebugger } from './dom/trusted.js';
import { runIn, stillThere, topDocument } from './dom/target.js';
import { method } from './traits.js';

const MIN_SIZE = 200;
const MAX_SIZE = 4000;
const saved = new Map(); // window id → its bounds before the first resize

function readViewport() {
  return { inner_width: innerWidth, inner_height: innerHeight, device_pixel_ratio: devicePixelRatio };
}

const size = (v, what) => {
  if (!Number.isInteger(v) || v < MIN_SIZE || v > MAX_SIZE) fail('bad_request', `\`${what}\` must be a whole number of CSS pixels from ${MIN_SIZE} to ${MAX_SIZE}`);
  return v;
};

// Chrome keeps a window at least half on the screen: a size it refuses is the caller's to change.
async function resize(windowId, bounds) {
  try {
    await chrome.windows.update(windowId, bounds);
  } catch (e) {
    fail('bad_request', `Chrome would not size the window to ${bounds.width} × ${bounds.height} (the viewport plus the window's own bars): ${e.message} Ask for a smaller viewport`);
  }
}

// The layout viewport once the page has seen a resize (up to 1 s).
async function settledViewport(doc, want) {
  const until = Date.now() + 1000;
  for (;;) {
    const got = await runIn(doc, readViewport);
    if (!want || (got.inner_width === want.width && got.inner_height === want.height) || Date.now() > until) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Runs in the document: its performance entries, summed up. Largest contentful paint and layout
// shifts come only through an observer (buffered), so it waits a moment for them.
async function readTiming() {
  const ms = (v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : null);
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map((p) => [p.name, ms(p.startTime)]));
  const observed = (type) => new Promise((done) => {
    const seen = [];
    try {
      const o = new PerformanceObserver((list) => seen.push(...list.getEntries()));
      o.observe({ type, buffered: true });
      setTimeout(() => (o.disconnect(), done(seen)), 100);
    } catch {
      done(seen);
    }
  });
  const [lcps, shifts, longs] = await Promise.all(['largest-contentful-paint', 'layout-shift', 'longtask'].map(observed));
  const lcp = lcps.at(-1);
  const res = performance.getEntriesByType('resource');
  const bare = (u) => String(u).split(/[?#]/)[0].slice(0, 300);
  return {
    navigation: nav ? {
      type: nav.type, ttfb: ms(nav.responseStart), dom_content_loaded: ms(nav.domContentLoadedEventEnd),
      load: ms(nav.loadEventEnd), duration: ms(nav.duration), transfer_size: nav.transferSize ?? null,
    } : null,
    first_paint: paint['first-paint'] ?? null,
    first_contentful_paint: paint['first-contentful-paint'] ?? null,
    largest_contentful_paint: lcp ? { time: ms(lcp.startTime), size: lcp.size, element: lcp.element ? lcp.element.tagName.toLowerCase() + (lcp.element.id ? `#${lcp.element.id}` : '') : null } : null,
    cumulative_layout_shift: Math.round(shifts.filter((s) => !s.hadRecentInput).reduce((a, s) => a + s.value, 0) * 1e4) / 1e4,
    long_tasks: { count: longs.length, total_ms: ms(longs.reduce((a, t) => a + t.duration, 0)) },
    resources: {
      count: res.length,
      transfer_size: res.reduce((a, r) => a + (r.transferSize ?? 0), 0),
      slowest: [...res].sort((a, b) => b.duration - a.duration).slice(0, 5).map((r) => ({ url: bare(r.name), type: r.initiatorType, duration: ms(r.duration) })),
    },
    now: ms(performance.now()),
  };
}

export const webdevPageMethods = {
  // {tab_id, width?, height?, reset?}: resize the tab's window so that the page's viewport is
  // width × height, or put the window back (reset); neither: report.
  'webdev.viewport': async (params) => {
    const id = tabId(params);
    const doc = await topDocument(id, params);
    const windowId = doc.tab.windowId;
    let want = null;
    if (params.reset === true) {
      const before = saved.get(windowId);
      if (before) {
        await chrome.windows.update(windowId, before);
        saved.delete(windowId);
      }
    } else if (params.width != null || params.height != null) {
      // A tab behind another in its window keeps its old viewport: bring it to the front.
      if (!doc.tab.active) await chrome.tabs.update(id, { active: true });
      const now = await settledViewport(doc, { width: doc.tab.width, height: doc.tab.height });
      want = { width: size(params.width ?? now.inner_width, 'width'), height: size(params.height ?? now.inner_height, 'height') };
      const win = await chrome.windows.get(windowId);
      if (win.state !== 'normal' && win.state !== undefined) await chrome.windows.update(windowId, { state: 'normal' });
      if (!saved.has(windowId)) saved.set(windowId, win.state === 'normal' ? { left: win.left, top: win.top, width: win.width, height: win.height } : { state: win.state });
      // The window's own frame and bars: what it has beyond the viewport.
      const extra = { width: win.width - now.inner_width, height: win.height - now.inner_height };
      await resize(windowId, { left: 0, top: 0, width: want.width + extra.width, height: want.height + extra.height });
      const got = await settledViewport(doc, want);
      if ((got.inner_width !== want.width || got.inner_height !== want.height) && (got.inner_width !== now.inner_width || got.inner_height !== now.inner_height)) {
        const w2 = await chrome.windows.get(windowId);
        await resize(windowId, { width: w2.width + want.width - got.inner_width, height: w2.height + want.height - got.inner_height });
      }
    }
    const got = await settledViewport(doc, want);
    await stillThere(doc, 'resized its window');
    const win = await chrome.windows.get(windowId);
    return { origin: doc.origin, url: doc.url, ...got, window: { id: windowId, width: win.width, height: win.height, resized: saved.has(windowId) } };
  },

  // The page's navigation, paint and resource timing.
  'webdev.timing': async (params) => {
    const id = tabId(params);
    const doc = await topDocument(id, params);
    const got = await runIn(doc, readTiming);
    await stillThere(doc, 'read its timing');
    return { origin: doc.origin, url: doc.url, ...got };
  },

  // {tab_id, landscape?, print_background?}: the page as a PDF, base64 (the bridge writes it).
  'webdev.pdf': method({ capture: true }, async (params) => {
    const id = tabId(params);
    const doc = await topDocument(id, params);
    return withDebugger(id, doc, 'to print it', `printing tab ${id} to PDF`, async (target) => {
      await stillThere(doc, 'prepared to print');
      // The print carries every frame's words and pixels: none while a frame of a site not
      // allowed is there.
      const got = await whileNoForeignFrame(doc, 'a PDF', () => chrome.debugger.sendCommand(target, 'Page.printToPDF', {
        landscape: params.landscape === true, printBackground: params.print_background !== false, transferMode: 'ReturnAsBase64',
      }));
      await stillThere(doc, 'printed it');
      return { origin: doc.origin, url: doc.url, title: doc.tab.title ?? '', data: got.data };
    });
  }),
};
