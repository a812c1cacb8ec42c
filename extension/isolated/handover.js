// ISOLATED world, injected into the top frame by worker/handover.js while a tab is handed over
// to the user (ask_user): the bar with the assistant's message and Done / Cancel.
//
// The bar lives in a closed shadow root on a host element of documentElement: the page's
// scripts get no `shadowRoot` to read its text or reach its buttons, and tabwire's page reader
// (isolated/snapshot.js) does not enter closed roots either, so no ref names the buttons. A
// button answers only a trusted click (`event.isTrusted`): a script's `.click()` or dispatched
// event does nothing, and the worker drops the answer while tabwire's own debugger input is
// attached to the tab. What a page can still do: remove or cover the host element (it is put
// back on top at once), and show its own look-alike bar, whose buttons reach nothing.
(() => {
  if (globalThis.tabwireHandover) return;
  let host = null;
  let watch = null;

  function draw(message, token) {
    host = document.createElement('tabwire-handover');
    host.style.cssText = 'all: initial; position: fixed; z-index: 2147483647; left: 0; right: 0; top: 0; display: block;';
    const root = host.attachShadow({ mode: 'closed' });
    root.innerHTML = `<style>
      div { font: 14px system-ui, sans-serif; background: #fff4c2; color: #222; border-bottom: 2px solid #c90;
            padding: 10px 14px; display: flex; gap: 12px; align-items: center; }
      p { margin: 0; flex: 1; white-space: pre-wrap; }
      button { font: inherit; padding: 6px 14px; cursor: pointer; }
    </style><div role="dialog" aria-label="tabwire"><b>Your assistant asks you:</b><p></p>
      <button id="done">Done</button><button id="cancel">Cancel</button></div>`;
    root.querySelector('p').textContent = message;
    for (const answer of ['done', 'cancel']) {
      root.getElementById(answer).addEventListener('click', (e) => {
        if (!e.isTrusted) return;
        chrome.runtime.sendMessage({ type: 'handover.answer', answer, token }).catch(() => {});
      });
    }
    document.documentElement.append(host);
  }

  globalThis.tabwireHandover = {
    show({ message, token }) {
      this.hide();
      draw(message, token);
      // The page took it away or put something after it: back on top.
      watch = new MutationObserver(() => {
        if (host.parentNode !== document.documentElement || host.nextSibling) document.documentElement.append(host);
      });
      watch.observe(document.documentElement, { childList: true });
    },
    hide() {
      watch?.disconnect();
      host?.remove();
      host = watch = null;
    },
  };
})();
