// ISOLATED world, top frame, document_end, only on the sites the user allows: the requests of
// this document, for network_requests (worker/dom/logs.js asks when the assistant does). Two
// sources, each entry saying which (`seen`):
//   - "browser": the document's resource timing — its own load and every request it made since
//     its navigation began (the buffered entries, then each new one), with status and
//     duration. The browser makes these; a page cannot forge one.
//   - "page": a fetch or XHR as page-world/requests.js told it — its method, a failure, one
//     still running. A page can send or keep back these events; they describe only itself.
// The two are never mixed: a fetch the page told of and the browser timed is listed twice, once
// in each word, so a page cannot lend its method or its failure to the browser's record. Each
// source keeps its own last MAX, counting those let go: a page that floods its own events lets
// go of its own words only, never of what the browser saw.
(() => {
  const MAX = 500;
  const MAX_URL = 500;
  // Resource timing's initiator → the kind of request, as Chrome's own names have it.
  const TYPES = { fetch: 'xmlhttprequest', xmlhttprequest: 'xmlhttprequest', script: 'script', link: 'stylesheet', css: 'image', img: 'image', image: 'image', iframe: 'sub_frame', frame: 'sub_frame', video: 'media', audio: 'media', beacon: 'ping', navigation: 'main_frame' };
  const seen = { browser: [], page: [] }; // the browser's record, the page's word
  let dropped = 0;
  const told = new Map(); // id → a fetch/XHR the page told of, until it tells of its end
  const cut = (url) => (url.length > MAX_URL ? `${url.slice(0, MAX_URL)}…` : url);
  const at = (t) => Math.round(performance.timeOrigin + t);

  const keep = (entry) => {
    const log = seen[entry.seen];
    log.push(entry);
    if (log.length > MAX) {
      log.shift();
      dropped += 1;
    }
  };

  // Resource timing knows no method: a fetch or XHR's is the page's word alone.
  const timed = (e) => {
    const type = TYPES[e.initiatorType] ?? 'other';
    keep({ origin: location.origin, method: type === 'xmlhttprequest' ? null : 'GET', url: cut(e.name), type, status: e.responseStatus || null, ms: Math.round(e.duration), error: null, time: at(e.startTime), seen: 'browser' });
  };
  new PerformanceObserver((list) => list.getEntries().forEach(timed)).observe({ type: 'resource', buffered: true });

  // page-world/requests.js: {kind: start, id, url, method} and {kind: end, id, status?, error?}.
  window.addEventListener('tabwire:request', (e) => {
    if (typeof e.detail !== 'string' || e.detail.length > 10_000) return;
    let d;
    try {
      d = JSON.parse(e.detail);
    } catch {
      return;
    }
    if (d.kind === 'start' && typeof d.url === 'string') {
      // An answered fetch whose body is never read makes no timing entry: the oldest such go.
      if (told.size >= MAX) told.delete(told.keys().next().value);
      const method = typeof d.method === 'string' ? d.method.slice(0, 20).toUpperCase() : 'GET';
      const entry = { origin: location.origin, method, url: cut(d.url), type: 'xmlhttprequest', status: null, ms: null, error: null, time: Date.now(), started: performance.now(), seen: 'page' };
      told.set(d.id, entry);
      keep(entry);
    } else if (d.kind === 'end' && told.has(d.id)) {
      const entry = told.get(d.id);
      entry.ms = Math.round(performance.now() - entry.started);
      told.delete(d.id);
      if (typeof d.error === 'string') entry.error = d.error.slice(0, 200);
      else if (Number.isInteger(d.status) && d.status > 0) entry.status = d.status;
    }
  });

  // What the page did while it was parsed comes now.
  window.dispatchEvent(new Event('tabwire:requests-ready'));

  // The worker's `network.read`, through this world's router (router.js).
  globalThis.tabwireAnswer('network', (verb) => {
    if (verb !== 'read') throw Object.assign(new Error(`the request log has no call network.${verb}`), { code: 'bad_request' });
    const nav = performance.getEntriesByType('navigation')[0];
    const load = nav && { origin: location.origin, method: null, url: cut(nav.name), type: 'main_frame', status: nav.responseStatus || null, ms: Math.round(nav.responseEnd - nav.startTime), error: null, time: at(0), seen: 'browser' };
    const requests = [...seen.browser, ...seen.page].map(({ started: _, ...r }) => r).sort((a, b) => a.time - b.time);
    return { requests: load ? [load, ...requests] : requests, recorded_since: at(0), load_recorded: Boolean(load), dropped, kept_at_most: MAX };
  });
})();
