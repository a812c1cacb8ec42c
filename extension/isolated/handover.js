// ISOLATED world, injected into the top frame by worker/handover.js while a tab is handed over
// to the user (ask_user): a bar with the assistant's message that points to tabwire's toolbar
// popup, where the user answers Done or Cancel.
//
// The bar has no button: whatever is drawn in a page, the page can draw over it, hide it while
// it still takes clicks, or copy it with its buttons moved (bridge/tests/browser/ask_user.rs,
// `a_page_that_hides_the_bar_and_draws_its_own_cannot_make_cancel_done`). So the answer comes
// only from the popup (ui/popup.js), which no page can reach or draw on, and this bar only
// tells the user where it is. It lives in a closed shadow root on a host element of
// documentElement, so the page's scripts get no `shadowRoot` to read the message, and
// tabwire's page reader (isolated/snapshot.js) does not enter closed roots either.
(() => {
  if (globalThis.tabwireHandover) return;
  let host = null;
  let watch = null;

  function draw(message) {
    host = document.createElement('tabwire-handover');
    host.style.cssText = 'all: initial; position: fixed; z-index: 2147483647; left: 0; right: 0; top: 0; display: block;';
    const root = host.attachShadow({ mode: 'closed' });
    root.innerHTML = `<style>
      div { font: 14px system-ui, sans-serif; background: #fff4c2; color: #222; border-bottom: 2px solid #c90;
            padding: 10px 14px; display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; }
      p { margin: 0; flex: 1; white-space: pre-wrap; }
      small { flex-basis: 100%; font-size: 13px; }
    </style><div role="status" aria-label="tabwire"><b>Your assistant asks you:</b><p></p>
      <small>Answer Done or Cancel in tabwire's menu: click tabwire's icon in the toolbar (under
      the puzzle piece if it is not pinned). Buttons on the page are not tabwire's.</small></div>`;
    root.querySelector('p').textContent = message;
    document.documentElement.append(host);
  }

  globalThis.tabwireHandover = {
    show({ message }) {
      this.hide();
      draw(message);
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
