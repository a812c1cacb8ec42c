// MAIN world, every frame of an allowed site, document_start: alert, confirm and prompt that
// do not freeze the page while tabwire acts on it. A native dialog blocks the page's thread —
// and with it every content script, so a call that opened one could never return. While an
// action runs (and for a moment after), the ISOLATED world's agent (isolated/agent.js) answers the
// dialog at once: as handle_dialog said beforehand, else alert OK, confirm Cancel, prompt
// Cancel; and the action reports it. At any other time the page gets the browser's own dialog,
// so the user's browsing is unchanged; the agent tells the worker, so that calls to the tab
// fail at once with `dialog_open` rather than wait on a page that cannot answer.
(() => {
  const native = { alert: window.alert, confirm: window.confirm, prompt: window.prompt };
  const ask = (type, message, value) => {
    let answer = null;
    const take = (e) => {
      answer = typeof e.detail === 'string' ? e.detail : null;
    };
    window.addEventListener('tabwire:dialog-answer', take, { once: true });
    window.dispatchEvent(new CustomEvent('tabwire:dialog', { detail: JSON.stringify({ type, message: String(message ?? ''), value: value === undefined ? null : String(value) }) }));
    window.removeEventListener('tabwire:dialog-answer', take);
    try {
      return answer === null ? null : JSON.parse(answer);
    } catch {
      return null;
    }
  };
  // The browser's own dialog; the agent hears when it closed (it told the worker it opened).
  const shown = (kind, ...args) => {
    try {
      return native[kind].apply(window, args);
    } finally {
      window.dispatchEvent(new CustomEvent('tabwire:dialog-closed'));
    }
  };
  window.alert = function alert(message) {
    if (ask('alert', message) === null) shown('alert', message);
  };
  window.confirm = function confirm(message) {
    const a = ask('confirm', message);
    return a === null ? shown('confirm', message) : a.accept === true;
  };
  window.prompt = function prompt(message, value = '') {
    const a = ask('prompt', message, value);
    if (a === null) return shown('prompt', message, value);
    return a.accept ? String(a.text ?? value) : null;
  };
})();
