// ISOLATED world, loaded before every other script of this world (worker/content-scripts.js):
// the world's one chrome.runtime.onMessage listener. The worker asks `{type: "area.verb", …}`
// (worker/router.js, askTab); the script that registered `area` with tabwireAnswer answers with
// a value, or throws an Error with a `code`; the worker gets `{ok: value}` or
// `{error: {code, message}}`. A script of this world that registers no area hears nothing.
//
// Only the worker is heard: a message sent by a content script (of any tab) carries a tab
// sender and is ignored, and a page cannot send to this world at all.
(() => {
  if (globalThis.tabwireAnswer) return; // listed again for another script of the same document
  const areas = new Map(); // area → (verb, msg) → value | Promise

  // `answer(verb, msg)` answers the messages of `area` ("dom" for "dom.read"…).
  globalThis.tabwireAnswer = (area, answer) => areas.set(area, answer);

  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab || typeof msg?.type !== 'string') return;
    const dot = msg.type.indexOf('.');
    const answer = dot > 0 ? areas.get(msg.type.slice(0, dot)) : undefined;
    if (!answer) return; // not for this document's scripts: no answer, as if no one listened
    Promise.resolve()
      .then(() => answer(msg.type.slice(dot + 1), msg))
      .then(
        (ok) => sendResponse({ ok: ok ?? null }),
        (e) => sendResponse({ error: { code: e?.code ?? 'page_error', message: e?.code ? e.message : `tabwire's ${msg.type} failed in the page: ${e?.message ?? e}` } }),
      );
    return true; // answered asynchronously
  });
})();
