// MAIN world, every frame of an allowed site, document_start: tells the ISOLATED world's agent
// (isolated/agent.js) and the request log (isolated/request-log.js) when the page starts a
// fetch or an XHR and when it ends, so that an action waits for the requests it started. An XHR ends at `loadend`. A fetch ends when it
// fails, or when it is answered and the page did not start reading the body at once;
// otherwise its resource timing entry ends it, which the browser makes once the body is in
// (the agent sees it; an unread body makes none). Only http(s) requests.
//
// The page can send these events itself, or keep them from the agent: it can only make an
// action it hosts wait longer (never past its cap) or less. Hearing the page's requests from
// the browser (webRequest) would cost every page of every site, allowed or not
// (docs/performance.md).
(() => {
  let next = 0;
  // Sent at once (an action's watch hears it), and kept until the request log listens
  // (document_end, top frame), up to a limit, for it to hear what came before.
  let early = [];
  const send = (detail) => window.dispatchEvent(new CustomEvent('tabwire:request', { detail }));
  const tell = (detail) => {
    const json = JSON.stringify(detail);
    if (early && early.length < 200) early.push(json);
    send(json);
  };
  window.addEventListener('tabwire:requests-ready', (e) => {
    const queued = early ?? [];
    early = null;
    queued.forEach(send);
  }, { once: true });
  // The URL a request goes to, as its resource timing entry names it; null if not http(s).
  const resolve = (url) => {
    try {
      const href = new URL(url, document.baseURI).href.split('#')[0];
      return /^https?:/.test(href) ? href : null;
    } catch {
      return null;
    }
  };
  const start = (href, kind, method) => {
    if (href === null) return null;
    const id = ++next;
    tell({ kind: 'start', id, url: href, by: kind, method: String(method ?? 'GET') });
    return id;
  };
  // `status` of an answer, or `error`: why there is none.
  const ended = (id, how) => tell({ kind: 'end', id, ...how });

  // network_rules (worker/network.js, through isolated/network-rules.js): this tab's block and
  // mock rules for this origin, in this document's sessionStorage (kept per tab and origin, so
  // the page's next load has them before its first request) until they expire, unless renewed.
  // A blocked request goes to a URL the browser fails as a network error; a mocked one to the
  // data: URL of its answer (status 200, its Content-Type). A block wins over a mock.
  const KEY = 'tabwire:network-rules';
  const FAIL = 'data:;base64,%';
  let rules = { list: [], until: 0 };
  const glob = (pattern) => new RegExp(`^${pattern.replace(/\|$/, '\u0000').replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace('\u0000', '$')}`, 'i');
  const take = (json) => {
    try {
      const got = JSON.parse(json);
      const list = got.rules.map((r) => ({ action: r.action, to: r.action === 'mock' ? String(r.data) : FAIL, re: glob(String(r.pattern)) }));
      rules = { list, until: Number(got.expires) };
    } catch {
      rules = { list: [], until: 0 };
    }
  };
  // Read at the page's first request, not before: the first touch of sessionStorage waits on
  // the browser, which would hold back the parsing of every page.
  let stored = false;
  window.addEventListener('tabwire:network-rules', (e) => typeof e.detail === 'string' && ((stored = true), take(e.detail)));
  const ruleFor = (href) => {
    if (!stored) {
      stored = true;
      try {
        take(sessionStorage.getItem(KEY));
      } catch {} // a sandboxed frame has no storage
    }
    if (href === null || rules.list.length === 0 || Date.now() > rules.until) return null;
    let hit = null;
    for (const r of rules.list) if (r.re.test(href) && (hit === null || r.action !== 'mock')) hit = r;
    return hit;
  };

  const nativeFetch = window.fetch;
  if (typeof nativeFetch === 'function') {
    window.fetch = {
      fetch(input) {
        let id = null;
        let rule = null;
        try {
          const request = input instanceof Request ? input : null;
          const href = resolve(request ? request.url : input);
          rule = ruleFor(href);
          id = start(href, 'fetch', arguments[1]?.method ?? request?.method);
        } catch {}
        const answer = rule ? nativeFetch.call(this, rule.to) : nativeFetch.apply(this, arguments);
        // This runs before the page's own handler of the answer; the timer after it. (A data:
        // URL makes no timing entry: a mocked answer ends here.)
        if (id !== null) {
          answer.then(
            (res) => setTimeout(() => (res.bodyUsed && !rule) || ended(id, { status: res.status })),
            (e) => ended(id, { error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` }),
          );
        }
        return answer;
      },
    }.fetch;
  }

  const XHR = window.XMLHttpRequest?.prototype;
  if (XHR) {
    const { open, send } = XHR;
    const urls = new WeakMap();
    XHR.open = {
      open(method, url) {
        const href = resolve(url);
        urls.set(this, [method, href]);
        const rule = ruleFor(href);
        if (rule) arguments[1] = rule.to;
        return open.apply(this, arguments);
      },
    }.open;
    XHR.send = {
      send() {
        const [method, href] = urls.get(this) ?? ['GET', null];
        const id = start(href, 'xhr', method);
        if (id !== null) {
          let why = 'the request failed';
          this.addEventListener('abort', () => (why = 'the request was aborted'), { once: true });
          this.addEventListener('timeout', () => (why = 'the request timed out'), { once: true });
          this.addEventListener('loadend', () => ended(id, this.status ? { status: this.status } : { error: why }), { once: true });
        }
        return send.apply(this, arguments);
      },
    }.send;
  }
})();
