// Service worker, asked by isolated/clock.js over ports named "clock" (keepTime, in background.js):
// timers for the content scripts of background tabs, since Chrome throttles the timers of a hidden
// tab to once a second or slower, not the worker's. A tab's top frame asks with `{id, ms}`; `ms`
// later the worker answers `{id}`. A port holds at most MAX_PENDING timers of at most MAX_MS each;
// they end with the port.

import { acceptPorts } from './router.js';

const MAX_PENDING = 1000;
const MAX_MS = 600_000;

export function keepTime() {
  acceptPorts('clock', (port) => {
    const timers = new Set();
    port.onMessage.addListener((msg) => {
      const { id, ms } = msg ?? {};
      if (!Number.isSafeInteger(id) || !(ms >= 0) || timers.size >= MAX_PENDING) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        try {
          port.postMessage({ id });
        } catch {
          // the document went meanwhile
        }
      }, Math.min(ms, MAX_MS));
      timers.add(timer);
    });
    port.onDisconnect.addListener(() => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    });
  });
}
