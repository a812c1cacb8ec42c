// When a page has settled after tabwire acted on it, and what the action is said to have done.
// Pure: worker/dom.js waits and asks the agent; these are its rules.

// The DOM must be quiet this long after the action (and after the page saw the answers of the
// action's fetch/XHR), never longer than the cap (then `pending` lists what still runs).
// The action's own handlers, and what React 18 and Vue render for an input or click, change
// the DOM before the agent answers; the window is for what comes a moment later (a short
// timer, the next animation frame at 60 Hz): 25 ms, the floor of every action. It was 40 ms,
// which cost every click and fill 15 ms more and caught nothing the fixtures do.
export const QUIET_MS = 25;
// In a hidden document Chrome runs the page's timers only on a wake-up once a second
// (docs/performance.md, "Pages the user is not looking at"): what a page does 100 ms after a
// click comes up to a second later there (Swagger UI draws an operation's body so). The quiet
// window spans one such wake-up, and a little more for what it renders.
export const HIDDEN_QUIET_MS = 1100;
export const DEFAULT_CAP_MS = 5000;
export const NAV_CAP_MS = 10_000; // more, for a navigation the action started

// How long an action may wait to settle: `settle_ms` (default DEFAULT_CAP_MS), and never so
// long that the call's own timeout (`timeoutMs`) ends first; at least 100 ms.
export const capOf = (settleMs, timeoutMs) => Math.min(settleMs ?? DEFAULT_CAP_MS, Math.max(100, timeoutMs - 500));

// How long the page has been quiet at `now`: the agent said `idle` ms at `measured` (since the
// last DOM change or answer of the action's requests; 0 while one runs). Times in ms of one clock.
export const quietFor = ({ idle, measured, now }) => idle + (now - measured);

// What the action did, as the report says it: "changed" when lines came or went (or rows of a
// grid or list, summed up: lib/change-report.js), it navigated, opened a tab or a dialog,
// started a download, made a request, or (keys) moved the caret or the selection — which a
// person sees, and where the next key acts, though no line of the page changes; else "none". DOM mutations alone do not count: a page that re-renders
// on a timer mutates all the time.
export function effectOf({ added, removed, rows = 0, navigated, newTab, dialog, requests, download = null, selection = false }) {
  return added > 0 || removed > 0 || rows > 0 || navigated || newTab !== null || dialog !== null || download !== null || requests > 0 || selection ? 'changed' : 'none';
}
