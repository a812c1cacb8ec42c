// ISOLATED world, every frame of an allowed site: network_rules' rules of this tab for this
// document (worker/network.js sends them at each change, and again while they hold, with a
// time they expire at). Kept in the document's sessionStorage — per tab and origin, so that the
// page's next load applies them before its first request (page-world/requests.js reads them at
// document_start) — and handed to this document at once. The page can read or change them:
// they act only on its own requests.
(() => {
  const KEY = 'tabwire:network-rules';
  globalThis.tabwireAnswer('netrules', (verb, { rules, expires }) => {
    if (verb !== 'set' || !Array.isArray(rules)) throw Object.assign(new Error(`network rules have no call netrules.${verb}`), { code: 'bad_request' });
    const json = JSON.stringify({ rules, expires });
    try {
      if (rules.length > 0) sessionStorage.setItem(KEY, json);
      else sessionStorage.removeItem(KEY);
    } catch {} // no storage (a sandboxed frame), or no room: this document only
    window.dispatchEvent(new CustomEvent('tabwire:network-rules', { detail: json }));
    return true;
  });
})();
