// Service worker, called by the bridges (workflow.update) and followed on ports named "workflow":
// live workflows (specs/workflows.md, "The browser shows it"). Each bridge sends every change
// it makes with `workflow.update {project, session, state, graph}`; this worker keeps the
// latest of each (project, session) in memory and passes it on, on ports of their own
// ("workflow"), to:
// - the extension's own ui/workflow.html, which follows every workflow;
// - pages that follow one with tabwire.onWorkflow (through isolated/relay.js) — only while
//   their site is allowed, checked at every push, so a revoked site hears nothing more.
// A page only names what it follows; nothing it says goes further than this worker, and
// nothing is read from it.
//
// After a worker restart the map is empty: the bridges re-send their latest states to the new
// host within a quarter of a second (workflows/src/push.rs).

import { fail } from '../lib/errors.js';
import { allows, sitesReady } from '../lib/sites-store.js';
import { acceptPorts } from './router.js';
import { method } from './traits.js';

const MAX_LIVE = 32; // workflows kept (workflows/src/limits.rs, MAX_LIVE)
const MAX_UPDATE = 2 * 1024 * 1024; // JSON characters of one update (limits.rs, MAX_UPDATE)
const MAX_FOLLOWED = 16; // workflows one page may follow
const MAX_NAME = 4096; // characters of a project path or a session name, as a page names them

const live = new Map(); // key → { project, session, json, order }, least recently changed first
const followers = new Map(); // port → { everything, keys: Set, origin }

const keyOf = (project, session) => JSON.stringify([project, session]);

// Whether [startedAt, revision] `a` is newer than `b`: a restarted workflow is newer than any
// revision of the run before.
const newer = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

export const workflowMethods = {
  'workflow.update': method({ pageless: true }, (params) => {
    const { project, session, state, graph } = params ?? {};
    if (typeof project !== 'string' || typeof session !== 'string' || typeof state !== 'object' || state === null || typeof graph !== 'object' || graph === null)
      fail('bad_request', 'workflow.update needs {project, session, state, graph} (specs/protocol.md)');
    const json = JSON.stringify({ project, session, state, graph });
    if (json.length > MAX_UPDATE)
      fail('too_large', `the workflow update is ${json.length} characters of JSON, over the ${MAX_UPDATE} the extension keeps`);
    const key = keyOf(project, session);
    const order = [Number(state.startedAt) || 0, Number(state.revision) || 0];
    const had = live.get(key);
    if (had && !newer(order, had.order)) return { kept: false, told: 0 }; // another bridge's newer one came first
    live.delete(key); // re-inserted last: the most recently changed
    live.set(key, { project, session, json, order });
    while (live.size > MAX_LIVE) live.delete(live.keys().next().value);
    let told = 0;
    for (const [port, f] of followers) if ((f.everything || f.keys.has(key)) && tell(port, f, live.get(key))) told++;
    return { kept: true, told };
  }),
};

export function listenForWorkflows() {
  // The extension's own page, or a page's relay (top frame only). Chrome sets the sender's
  // url and origin: a page cannot pass for workflow.html.
  acceptPorts('workflow', (port, { own, from }) => {
    const f = { own, everything: false, keys: new Set(), origin: from.origin };
    followers.set(port, f);
    port.onMessage.addListener((msg) => sitesReady.then(() => follow(port, f, msg)));
    port.onDisconnect.addListener(() => followers.delete(port));
  }, { ownPages: true });
}

// A follower names what it follows: workflow.html everything, a page one (project, session).
function follow(port, f, msg) {
  if (msg?.type === 'watch_all' && f.own) {
    f.everything = true;
    for (const w of live.values()) tell(port, f, w);
    return;
  }
  const { project, session, on } = msg ?? {};
  const named = (s) => typeof s === 'string' && s.length > 0 && s.length <= MAX_NAME;
  if (msg?.type !== 'watch' || !named(project) || !named(session) || typeof on !== 'boolean') {
    console.warn('tabwire: ignored a malformed message on a workflow port');
    return;
  }
  const key = keyOf(project, session);
  if (!on) {
    f.keys.delete(key);
    return;
  }
  if (!f.keys.has(key) && f.keys.size >= MAX_FOLLOWED) {
    console.warn(`tabwire: a page follows ${MAX_FOLLOWED} workflows already; ignored one more`);
    return;
  }
  f.keys.add(key);
  const w = live.get(key);
  if (w) tell(port, f, w);
}

// Send one workflow to one follower, if it may hear it now; whether it was sent.
function tell(port, f, w) {
  if (!f.own && !allows(f.origin)) return false;
  try {
    port.postMessage({ type: 'workflow', project: w.project, session: w.session, json: w.json });
    return true;
  } catch {
    followers.delete(port); // gone
    return false;
  }
}
