// MAIN world, every frame of an allowed site, document_start: tells the ISOLATED world's agent
// (isolated/agent.js) when the page starts a fetch or an XHR and when it ends, so that an
// action waits for the requests it started. An XHR ends at `loadend`. A fetch ends when it
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
  const tell = (detail) => window.dispatchEvent(new CustomEvent('tabwire:request', { detail: JSON.stringify(detail) }));
  const start = (url, kind) => {
    let href;
    try {
      href = new URL(url, document.baseURI).href.split('#')[0]; // as its resource timing entry names it
    } catch {
      return null;
    }
    if (!/^https?:/.test(href)) return null;
    const id = ++next;
    tell({ kind: 'start', id, url: href, by: kind });
    return id;
  };
  const ended = (id) => tell({ kind: 'end', id });

  const nativeFetch = window.fetch;
  if (typeof nativeFetch === 'function') {
    window.fetch = {
      fetch(input) {
        let id = null;
        try {
          id = start(input instanceof Request ? input.url : input, 'fetch');
        } catch {}
        const answer = nativeFetch.apply(this, arguments);
        // This runs before the page's own handler of the answer; the timer after it.
        if (id !== null) answer.then((res) => setTimeout(() => res.bodyUsed || ended(id)), () => ended(id));
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
        urls.set(this, url);
        return open.apply(this, arguments);
      },
    }.open;
    XHR.send = {
      send() {
        const id = start(urls.get(this) ?? '', 'xhr');
        if (id !== null) this.addEventListener('loadend', () => ended(id), { once: true });
        return send.apply(this, arguments);
      },
    }.send;
  }
})();
