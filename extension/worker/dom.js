// Service worker, called by the bridges: the dom.* methods that read and act on any page of an
// allowed site (specs/protocol.md, "dom.*"; the MCP tools in specs/tools.md, "Any page"). The work
// in the page is done by the content scripts in isolated/ (agent.js and the scripts before it), one
// agent per frame; this side picks the frame, checks its site, nests frames, keeps each tab's ref
// numbering and last snapshots, applies the token budget (lib/snapshot-text.js), and waits for the
// page to settle after an action (settle.js, by the rules of lib/settle.js).
//
// Every call checks, here and at the moment it runs, the origin of the document that will
// answer (sites.js), and sends to that document only (its documentId), so a tab that
// navigated meanwhile answers nothing it was not checked for.

import { TabwireError, fail } from '../lib/errors.js';
import { HIDDEN_QUIET_MS, NAV_CAP_MS, QUIET_MS, capOf, effectOf, quietFor } from '../lib/settle.js';
import { allows, sitesReady } from '../lib/sites-store.js';
import { originOf, withoutFragment } from '../lib/sites.js';
import { childFrames, diffLines, fit, inFrame, parseRef, tokens } from '../lib/snapshot-text.js';
import { firstFreeRef, nextSnapshotId, numberingLoaded, setFirstFreeRef, tabState } from './dom/numbering.js';
import { blockingDialog, checkNoDialog, dialogOpen, failOnDialog } from './dom/open-dialogs.js';
import { trustedInput } from './dom/trusted.js';
import { askTab } from './router.js';
import { Activity } from './settle.js';
import { checkSite, expectedOrigin, notAllowed, requireSwitch } from './sites.js';
import { getTab, reportedUrl, tabId } from './tabs.js';

const DEFAULT_BUDGET = 4000;
const MAX_BUDGET = 100_000;
const MAX_FRAME_DEPTH = 5; // iframes inside iframes read this deep
const MAX_TOTAL_LINES = 50_000; // no more frames are read once the snapshot has this many lines
const KEPT_SNAPSHOTS = 4; // per tab, for `since`
const TRUSTED_ACTIONS = new Set(['click', 'type', 'press']); // what `trusted: true` may do
const MAX_UPLOAD = 10 * 1024 * 1024; // bytes of all files of one upload_file

// ---------------------------------------------------------------------------------------------
// Frames

async function framesOf(id) {
  const frames = await chrome.webNavigation.getAllFrames({ tabId: id }).catch(() => null);
  if (!frames) await getTab(id); // throws no_such_tab
  return new Map((frames ?? []).map((f) => [f.frameId, f]));
}

// The top frame, checked: its document may answer (site allowed, expected origin).
async function topFrame(id, params) {
  await Promise.all([sitesReady, numberingLoaded]);
  const expected = expectedOrigin(params);
  const frames = await framesOf(id);
  const top = frames.get(0);
  if (!top) {
    const tab = await getTab(id);
    checkSite(id, originOf(tab.url), expected, tab.url);
    fail('not_scriptable', `tab ${id} has no page yet; wait for it to load`);
  }
  checkSite(id, originOf(top.url), expected, top.url);
  return { top, frames };
}

// The frame `frameId` of tab `id`, checked as the top frame is.
function frameFor(id, frames, frameId) {
  const f = frames.get(frameId);
  if (!f) fail('stale_ref', `frame f${frameId} is no longer in tab ${id} (it was removed or navigated); call read_page for fresh refs`);
  if (frameId !== 0 && !allows(originOf(f.url))) throw notAllowed(id, originOf(f.url) ?? f.url);
  return f;
}

// Ask the agent in one document (isolated/agent.js). Errors come back as TabwireErrors.
async function ask(id, frame, msg) {
  await checkNoDialog(id);
  let answer;
  // A dialog the page opens meanwhile stops it from answering until the user answers the
  // dialog: the call fails then with `dialog_open` rather than at its timeout.
  const dialog = failOnDialog(id);
  try {
    answer = await Promise.race([askTab(id, msg, { frameId: frame.frameId, documentId: frame.documentId }), dialog.promise]);
  } catch (e) {
    if (e instanceof TabwireError) throw e;
    const now = await chrome.webNavigation.getFrame({ tabId: id, frameId: frame.frameId }).catch(() => null);
    const replaced = frame.documentId && now && now.documentId !== frame.documentId;
    if (replaced || /closed before a response|back\/forward cache|moved into/i.test(e.message)) throw new TabwireError('page_error', `the page in tab ${id} went away (it navigated or reloaded) before answering; call read_page again`);
    throw new TabwireError('no_handler', `tabwire's page agent is not running in ${frame.frameId === 0 ? `tab ${id}` : `frame f${frame.frameId} of tab ${id}`} (${withoutFragment(frame.url)}): the page loaded before the extension was installed or reloaded or before its site was allowed; reload the tab (navigate to its url) and try again`);
  } finally {
    dialog.stop();
  }
  if (answer === undefined) throw new TabwireError('no_handler', `tabwire's page agent did not answer in tab ${id}; reload the tab and try again`);
  return answer;
}

// ---------------------------------------------------------------------------------------------
// Reading

// The lines of frame `frame` and, nested below each iframe line, of its frames.
async function readFrame(id, frames, frame, mode, root, depth, indent, out, skipped) {
  const got = await ask(id, frame, { type: 'dom.read', mode, ref: root, base: firstFreeRef(id, frame.frameId) });
  setFirstFreeRef(id, frame.frameId, got.next);
  const children = childFrames(frames, frame.frameId, got.lines);
  for (const l of got.lines) {
    out.push({ d: l.d + indent, t: inFrame(l.t, frame.frameId), v: l.v });
    if (l.f === undefined) continue;
    const child = children.get(l.f.n);
    const origin = child && originOf(child.url);
    if (!child || depth >= MAX_FRAME_DEPTH) continue;
    if (out.length >= MAX_TOTAL_LINES) {
      out.push({ d: l.d + indent + 1, t: `(frame not read: the page has more than ${MAX_TOTAL_LINES} lines already)`, v: l.v });
      continue;
    }
    if (!allows(origin)) {
      out.push({ d: l.d + indent + 1, t: `(a frame of ${origin ?? 'a page that is not a web site'}: not an allowed site, not read)`, v: l.v });
      skipped.push(origin ?? child.url);
      continue;
    }
    try {
      await readFrame(id, frames, child, mode, undefined, depth + 1, l.d + indent + 1, out, skipped);
    } catch (e) {
      out.push({ d: l.d + indent + 1, t: `(frame not read: ${e.message})`, v: l.v });
    }
  }
  return got;
}

async function read(params) {
  const id = tabId(params);
  const mode = params.mode ?? 'interactive';
  if (!['interactive', 'full', 'text'].includes(mode)) fail('bad_request', '`mode` must be "interactive", "full" or "text"');
  const budget = params.budget ?? DEFAULT_BUDGET;
  if (!Number.isInteger(budget) || budget < 100 || budget > MAX_BUDGET) fail('bad_request', `\`budget\` must be a number of tokens from 100 to ${MAX_BUDGET}`);
  const { top, frames } = await topFrame(id, params);
  let frame = top;
  let root;
  if (params.root) {
    const r = parseRef(params.root);
    frame = frameFor(id, frames, r.frameId);
    root = r.ref;
  }
  const from = { origin: originOf(top.url), url: withoutFragment(top.url) };
  const t = tabState(id);
  if (mode === 'text') {
    const got = await ask(id, frame, { type: 'dom.read', mode, ref: root, base: firstFreeRef(id, frame.frameId) });
    // Only the page's text: the bridge marks its lines and writes the cut line after them.
    const cutChars = Math.max(0, got.text.length - budget * 4);
    const text = got.text.slice(0, budget * 4);
    return { ...from, title: got.title, mode, snapshot_id: null, tokens: tokens(text), lines: got.text.split('\n').length, cut: { offscreen: 0, end: cutChars ? 1 : 0, chars: cutChars }, frames_not_read: [], text };
  }
  const raw = [];
  const skipped = [];
  const got = await readFrame(id, frames, frame, mode, root, 0, 0, raw, skipped);
  const all = raw.map((l) => `${'  '.repeat(l.d)}${l.t}`);
  const snapshotId = nextSnapshotId(id);
  t.snapshots.push({ id: snapshotId, lines: all, mode, root: params.root ?? null });
  if (t.snapshots.length > KEPT_SNAPSHOTS) t.snapshots.shift();
  let body;
  let cut = { offscreen: 0, end: 0 };
  let since = null;
  if (params.since) {
    const old = t.snapshots.find((s) => s.id === params.since);
    if (!old) fail('bad_request', `snapshot ${params.since} is not among the last ${KEPT_SNAPSHOTS} of tab ${id}; read_page without since`);
    if (old.mode !== mode || old.root !== (params.root ?? null)) fail('bad_request', `snapshot ${params.since} was read with another mode or root; pass the same ones`);
    const d = diffLines(old.lines, all);
    since = { added: d.added.length, removed: d.removed.length };
    const fitted = fit([...d.removed.map((l) => ({ d: 0, t: `- ${l}`, v: true })), ...d.added.map((l) => ({ d: 0, t: `+ ${l}`, v: true }))], budget);
    body = fitted.lines;
    cut = fitted.cut;
  } else {
    const fitted = fit(raw, budget);
    body = fitted.lines;
    cut = fitted.cut;
  }
  const text = body.join('\n');
  return { ...from, title: got.title, mode, page_ms: Math.round(got.took * 10) / 10, snapshot_id: snapshotId, since: params.since ?? null, changes: since, tokens: tokens(text), lines: all.length, cut: { ...cut, frame_lines: got.truncated ? 1 : 0 }, frames_not_read: skipped, scroll: got.scroll, text };
}

async function find(params) {
  const id = tabId(params);
  const { text, role, name, regex } = params;
  if (text == null && role == null && name == null && regex == null) fail('bad_request', 'give `text`, `role` (with or without `name`) or `regex`');
  let re = null;
  if (regex != null) {
    try {
      re = new RegExp(regex, 'i');
    } catch (e) {
      fail('bad_request', `\`regex\` is not a regular expression: ${e.message}`);
    }
  }
  const { top, frames } = await topFrame(id, params);
  const raw = [];
  await readFrame(id, frames, top, 'full', undefined, 0, 0, raw, []);
  const lower = (s) => String(s).toLowerCase();
  const quoted = (t) => {
    const m = /^[^ "]+ ("(?:[^"\\]|\\.)*")/.exec(t);
    return m ? JSON.parse(m[1]) : '';
  };
  const matches = [];
  const stack = [];
  let total = 0;
  for (const l of raw) {
    stack.length = l.d;
    stack[l.d] = l.t;
    const lineRole = l.t.split(' ')[0];
    const ok = (text == null || lower(l.t).includes(lower(text))) && (role == null || lineRole === role) &&
      (name == null || lower(quoted(l.t)).includes(lower(name))) && (re === null || re.test(l.t));
    if (!ok) continue;
    total += 1;
    if (matches.length < 50) matches.push({ line: l.t, ancestry: stack.slice(0, l.d).filter(Boolean).map((a) => a.replace(/ \[(?!ref=).*$/, '')) });
  }
  return { origin: originOf(top.url), url: withoutFragment(top.url), matches, total };
}

// ---------------------------------------------------------------------------------------------
// Acting

// Run `action` in the frame its target is in, then wait for the page to settle and report.
async function act(params, action, args, { signal, timeoutMs, session }) {
  const id = tabId(params);
  const { top, frames } = await topFrame(id, params);
  const refs = [args.ref, args.to?.ref, ...(args.fields ?? []).map((f) => f.ref)].filter(Boolean).map(parseRef);
  const frameId = refs[0]?.frameId ?? 0;
  if (refs.some((r) => r.frameId !== frameId)) fail('bad_request', 'all refs of one call must be in the same frame');
  const trusted = params.trusted === true;
  if (trusted) {
    if (!TRUSTED_ACTIONS.has(action)) fail('bad_request', '`trusted` is for click, type and press_key only');
    // Before anything is touched: the user's switch for this site (dom/trusted.js checks again).
    requireSwitch(id, originOf(top.url), 'trusted_input');
    if (frameId !== 0) fail('bad_request', 'trusted input reaches elements of the top frame only; act on this one without `trusted`');
  }
  const frame = frameFor(id, frames, frameId);
  const local = (t) => (t?.ref ? { ...t, ref: parseRef(t.ref).ref } : t);
  const message = { ...args, ...local(args), type: 'dom.act', action: trusted ? `trusted_${action}` : action, base: firstFreeRef(id, frameId) };
  if (args.to) message.to = local(args.to);
  if (args.fields) message.fields = args.fields.map(local);
  const cap = capOf(params.settle_ms, timeoutMs);
  const started = performance.now();
  if (frameId !== 0) await checkFramesAround(id, frames, frame, message);
  const activity = new Activity(id, session?.id ?? null);
  try {
    const done = await ask(id, frame, message);
    setFirstFreeRef(id, frameId, done.next); // the agent's snapshot before the action gave refs
    if (trusted) {
      await trustedAct(id, action, args, done);
      done.idle = 0; // the real input came after the agent's answer: quiet counts from it
    }
    const quiet = done.hidden ? HIDDEN_QUIET_MS : QUIET_MS;
    const report = await settle(id, frame, activity, cap, signal, done.idle ?? 0, done.selection_moved === true, quiet);
    const origin = originOf(top.url);
    const notes = done.notes ?? [];
    if (done.hidden) {
      // Nothing seen in a hidden page may still come when it is shown (a canvas, a video, what
      // waits for a ResizeObserver): not "none".
      if (report.effect === 'none') report.effect = 'unknown';
      notes.push(`tab ${id} was hidden (not its window's active tab, or its window covered or minimized): Chrome draws no frames there and wakes its timers once a second, so tabwire ran the page's animation frames, gave it the focus events Chrome does not, and waited ${quiet} ms of quiet for its timers; if the page must be seen to work, activate_tab {"tab_id": ${id}} shows it (it takes the user's screen)`);
    }
    return { origin, url: withoutFragment(top.url), ...report, ...(done.hidden ? { hidden: true, hidden_quiet_ms: quiet } : {}), ms: Math.round(performance.now() - started), result: { ...done, notes: undefined, idle: undefined, next: undefined, hidden: undefined }, notes };
  } finally {
    activity.stop();
  }
}

// The elements of an action that are hit-tested before it acts (isolated/act.js): those a
// user would click, hover, drag from or click into.
function hitTargets({ action, ref, selector, fields }) {
  const own = ref || selector ? [{ ref, selector }] : [];
  if (action === 'click' || action === 'hover' || action === 'drag' || action === 'type') return own;
  if (action === 'fill') return fields.map(({ ref, selector }) => ({ ref, selector }));
  return [];
}

// A frame's agent hit-tests its elements inside the frame; whether the frame itself is covered
// there is for the documents around it to say. Each ancestor in turn gets the targets' points,
// moved into its own viewport, and fails the call with `not_actionable` when one of its own
// elements is on top. An ancestor tabwire may not read (a site not allowed, or no agent) ends
// the check: it cannot be asked.
async function checkFramesAround(id, frames, frame, message) {
  const targets = hitTargets(message);
  if (targets.length === 0) return;
  let { points, index } = await ask(id, frame, { type: 'dom.points', targets });
  for (let f = frame; f.parentFrameId >= 0 && index >= 0 && points.some(Boolean); ) {
    const parent = frames.get(f.parentFrameId);
    if (!parent || !allows(originOf(parent.url))) return;
    try {
      ({ points, index } = await ask(id, parent, { type: 'dom.framePoint', index, points }));
    } catch (e) {
      if (e.code === 'no_handler') return;
      throw e;
    }
    f = parent;
  }
}

// The real input of a `trusted: true` action, once the agent made its element ready.
async function trustedAct(id, action, args, done) {
  if (action === 'click') {
    const { x, y } = done.point;
    return trustedInput(id, { action: 'click', x, y, button: args.button, count: args.count, modifiers: args.modifiers });
  }
  if (action === 'type') {
    await trustedInput(id, { action: 'type', text: args.text });
    if (args.submit) await trustedInput(id, { action: 'keys', keys: 'Enter' });
    return;
  }
  return trustedInput(id, { action: 'keys', keys: args.keys });
}

// Wait until the action's requests ended and the page itself saw their answers (the browser's
// network layer is done before the page runs its handler, later still on a loaded machine),
// the DOM has been quiet for QUIET_MS (`idle`: how long it had been when the agent answered)
// and a navigation loaded, then end the action's watch.
async function settle(id, frame, activity, cap, signal, idle, selection = false, quietMs = QUIET_MS) {
  const deadline = performance.now() + cap;
  const left = () => deadline - performance.now();
  let page = { mutations: 0, dialogs: [], added: [], removed: [], more: 0, rows: [], pending: [] };
  let requests = 0; // that the action started, as the page last said
  let navigated = false;
  let measured = performance.now(); // when `idle` was last learned
  for (;;) {
    if (signal.aborted) throw signal.reason;
    if (activity.navigation) {
      navigated = true;
      const navDeadline = performance.now() + NAV_CAP_MS;
      while (!activity.navigation.loaded && performance.now() < navDeadline && !signal.aborted) await activity.changed(navDeadline - performance.now());
      break;
    }
    const quiet = quietFor({ idle, measured, now: performance.now() });
    if (quiet < quietMs && left() > 0) {
      await activity.changed(Math.min(quietMs - quiet, left()));
      continue;
    }
    try {
      // At the cap, end whatever the page is doing.
      const q = await ask(id, frame, { type: 'dom.finish', quiet: left() > 0 ? quietMs : 0 });
      requests = q.requests ?? requests;
      if (q.added) {
        page = q;
        setFirstFreeRef(id, frame.frameId, q.next);
        break;
      }
      // The document started a navigation: wait for the browser to report it (or the cap).
      if (q.leaving) await activity.changed(Math.min(quietMs, left()));
      idle = q.idle; // the DOM changed meanwhile, or a request runs: wait again
      measured = performance.now();
    } catch (e) {
      if (activity.navigation) continue; // the page went away under us: a navigation
      throw e;
    }
  }
  // A navigation that turned into a download (a `Content-Disposition: attachment` answer) ends
  // without committing; Chrome names the download a moment later.
  // So does a download link the page followed (`downloading`), once the server answers.
  const DOWNLOAD_GRACE_MS = 1000;
  const graceEnd = performance.now() + (page.downloading ? Math.max(DOWNLOAD_GRACE_MS, left()) : DOWNLOAD_GRACE_MS);
  const awaited = navigated ? !activity.navigation.committed : page.downloading === true;
  while (awaited && activity.downloads.length === 0 && performance.now() < graceEnd) await activity.changed(graceEnd - performance.now());
  if (activity.downloads.length > 0 && !activity.navigation?.committed) navigated = false;
  if (!navigated) ask(id, frame, { type: 'dom.end' }).catch(() => {}); // not waited for
  // A tab opened by the action shows up a moment after it.
  if (activity.newTabs.length === 0 && requests === 0) await new Promise((r) => setTimeout(r, 0));
  const dialog = page.dialogs.at(-1) ?? null;
  const newTab = activity.newTabs[0] ?? null;
  const download = activity.downloads[0] ?? null;
  return {
    navigated,
    navigated_to: navigated ? reportedUrl(activity.navigation?.url ?? '') : null,
    new_tab: newTab,
    download,
    dialog,
    dialogs: page.dialogs,
    pending: page.pending, dbg: page.dbg,
    requests,
    mutations: page.mutations,
    effect: effectOf({ added: page.added.length, removed: page.removed.length, rows: page.rows?.length ?? 0, navigated, newTab, dialog, download, requests, selection }),
    added: page.added.map((l) => inFrame(l, frame.frameId)),
    removed: page.removed.map((l) => inFrame(l, frame.frameId)),
    rows: (page.rows ?? []).map((l) => inFrame(l, frame.frameId)),
    more_changes: page.more ?? 0,
  };
}

const target = (p) => ({ ref: p.ref ?? null, selector: p.selector ?? null });

async function waitFor(params, { signal, timeoutMs }) {
  const id = tabId(params);
  const { text = null, text_gone = null, selector = null, url = null } = params;
  if ([text, text_gone, selector, url].every((v) => v === null)) fail('bad_request', 'give at least one of `text`, `text_gone`, `selector`, `url`');
  const limit = params.timeout_ms ?? 10_000;
  const deadline = performance.now() + Math.min(limit, timeoutMs - 200);
  const started = performance.now();
  for (;;) {
    const top = await committedTop(id, params, deadline);
    const urlOk = url === null || top.url.includes(url);
    let pageOk = false;
    if (urlOk) {
      try {
        if (text === null && text_gone === null && selector === null) pageOk = true;
        else pageOk = (await ask(id, top, { type: 'dom.wait', text, text_gone, selector, timeout: Math.max(0, deadline - performance.now()) })).met;
      } catch (e) {
        if (e.code !== 'page_error' && e.code !== 'no_handler') throw e; // navigated: ask the next page
      }
    }
    if (urlOk && pageOk) return { met: true, ms: Math.round(performance.now() - started), origin: originOf(top.url), url: withoutFragment(top.url) };
    if (performance.now() >= deadline || signal.aborted) {
      const what = [text !== null && `text ${JSON.stringify(text)}`, text_gone !== null && `the text ${JSON.stringify(text_gone)} gone`, selector !== null && `an element matching ${JSON.stringify(selector)}`, url !== null && `a url containing ${JSON.stringify(url)}`].filter(Boolean).join(' and ');
      fail('timeout', `tab ${id} still did not show ${what} after ${Math.round(performance.now() - started)} ms (now at ${withoutFragment(top.url)}); read_page shows what it shows, or wait longer with timeout_ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The top frame of tab `id` for wait_for: a tab that has not committed its first page yet (one
// that click's `new_tab` just named) is waited for until `deadline`, not refused.
async function committedTop(id, params, deadline) {
  for (;;) {
    try {
      return (await topFrame(id, params)).top;
    } catch (e) {
      if (e.code !== 'not_scriptable' || performance.now() >= deadline) throw e;
      const tab = await getTab(id);
      if (tab.status !== 'loading' && !tab.pendingUrl) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

// The files of upload_file, read by the bridge: [{name, type, base64}], checked for size.
function uploadFiles(files) {
  if (!Array.isArray(files) || files.length === 0) fail('bad_request', '`files` must list at least one file');
  const bytes = files.reduce((n, f) => n + Math.floor((f?.base64?.length ?? 0) * 3 / 4), 0);
  if (bytes > MAX_UPLOAD) fail('too_large', `the files are ${(bytes / 1048576).toFixed(1)} MiB together, over the ${MAX_UPLOAD / 1048576} MiB upload_file takes`);
  return files.map((f) => ({ name: String(f.name), type: String(f.type ?? ''), base64: String(f.base64) }));
}

// The viewport rect of a ref of the top frame, scrolled into view (screenshot's `ref`;
// background.js hands this to dom/screenshot.js).
export async function refRect(doc, ref) {
  const { frameId, ref: local } = parseRef(ref);
  if (frameId !== 0) fail('bad_request', 'screenshot takes refs of the top frame only; take the whole visible area (no ref) to see a frame');
  const { frames } = await topFrame(doc.tab.id, {});
  return ask(doc.tab.id, frameFor(doc.tab.id, frames, 0), { type: 'dom.locate', ref: local });
}

export const domMethods = {
  'dom.read': (params) => read(params ?? {}),
  'dom.find': (params) => find(params ?? {}),
  'dom.click': (p, ctx) => act(p, 'click', { ...target(p), button: p.button ?? 'left', count: p.count ?? 1, modifiers: p.modifiers ?? [] }, ctx),
  'dom.fill': (p, ctx) => {
    if (!Array.isArray(p?.fields) || p.fields.length === 0) fail('bad_request', '`fields` must list at least one {ref, value}');
    if (p.fields.length > 200) fail('bad_request', '`fields` lists more than 200 fields; fill them in several calls');
    return act(p, 'fill', { fields: p.fields.map((f) => ({ ...target(f), value: f.value })) }, ctx);
  },
  'dom.type': (p, ctx) => {
    if (typeof p?.text !== 'string') fail('bad_request', '`text` must be the text to type');
    if (p.text.length > 100_000) fail('too_large', '`text` is over 100,000 characters; use fill for long values');
    return act(p, 'type', { ...target(p), text: p.text, submit: p.submit === true }, ctx);
  },
  'dom.press_key': (p, ctx) => act(p, 'press', { ...target(p), keys: p.keys }, ctx),
  'dom.pointer': (p, ctx) => {
    const action = p?.action;
    if (!['hover', 'scroll', 'drag'].includes(action)) fail('bad_request', '`action` must be hover, scroll or drag');
    if (action === 'drag' && !p.to) fail('bad_request', 'drag needs `to`: the ref of the element to drop on');
    if (action === 'hover' && !p.ref && !p.selector) fail('bad_request', 'hover needs the `ref` of the element to hover');
    return act(p, action, { ...target(p), to: p.to ? { ref: p.to } : undefined, dx: p.dx ?? 0, dy: p.dy ?? 0 }, ctx);
  },
  'dom.upload': (p, ctx) => act(p, 'upload', { ...target(p), files: uploadFiles(p?.files) }, ctx),
  'dom.wait_for': (p, ctx) => waitFor(p ?? {}, ctx),
  'dom.handle_dialog': async (p) => {
    const id = tabId(p);
    if (typeof p.accept !== 'boolean') fail('bad_request', '`accept` must be true (OK) or false (Cancel)');
    const { top, frames } = await topFrame(id, p);
    const from = { origin: originOf(top.url), url: withoutFragment(top.url) };
    // A dialog the browser shows already: Chrome gives extensions no way to answer it (its
    // debugger, too, sees only dialogs opened after it attached), so the user must.
    const open = await blockingDialog(id);
    if (open) throw dialogOpen(id, open, 'ask the user to answer it in the browser; then handle_dialog says how to answer the page\'s next dialog (tabwire answers those, as they open, only when told to beforehand or while it acts)');
    const late = [];
    for (const f of frames.values()) {
      if (!allows(originOf(f.url))) continue;
      try {
        late.push(...(await ask(id, f, { type: 'dom.arm', accept: p.accept, text: p.prompt_text ?? null })).late);
      } catch {} // a frame without the agent (about:blank) opens no dialog we could answer
    }
    return { ...from, armed: { accept: p.accept, prompt_text: p.prompt_text ?? null }, answered_since: late };
  },
};
