// Service worker, called by the bridges for audit_accessibility (specs/tools.md): dom.audit,
// axe-core (extension/vendor/axe.min.js, refreshed from npm by scripts/vendor-axe.sh) over a page
// or one element. The engine is 650 KB: it is injected only for this call, into the isolated world
// of each frame of an allowed site (never the page's world, so the page can neither see nor steer
// it), and stays there for the next audit of that document; a page where no audit ran carries none
// of it. Each element a violation names gets a ref from the frame's own refs (isolated/refs.js), so
// click, fill and the rest act on it. Frames of sites not allowed are not audited, and the answer
// names them.

import { TabwireError, fail } from '../../lib/errors.js';
import { allows, sitesReady } from '../../lib/sites-store.js';
import { originOf, withoutFragment } from '../../lib/sites.js';
import { parseRef } from '../../lib/snapshot-text.js';
import { checkSite, expectedOrigin } from '../sites.js';
import { getTab, tabId } from '../tabs.js';
import { firstFreeRef, numberingLoaded, setFirstFreeRef } from './numbering.js';
import { checkNoDialog } from './open-dialogs.js';

const ENGINE = 'vendor/axe.min.js';
const MAX_NODES = 20; // elements named per violation; the count says how many more

// In one frame, the isolated world: run axe over the document (or the element `ref` names)
// and give each element it names a ref. Self-contained: Chrome serialises it.
async function inFrame(ref, base, maxNodes) {
  const ns = globalThis.tabwireDom;
  if (!ns?.refFor || !globalThis.axe) return { error: { code: 'no_handler', message: 'tabwire\'s page agent is not running in this frame: the page loaded before the extension was installed or reloaded or before its site was allowed; reload the tab and try again' } };
  ns.startRefsAt(base);
  let context = document;
  if (ref) {
    const got = ns.resolve(ref);
    if (got.error) return { error: got.error };
    context = got.el;
  }
  if (ns.auditing) return { error: { code: 'busy', message: 'an accessibility audit is already running in this page; wait for it to return' } };
  ns.auditing = true;
  let result;
  try {
    // Violations only (passes and the rest are counted, not listed); axe's own walk into
    // iframes is off: the worker audits each allowed frame itself.
    result = await globalThis.axe.run(context, { elementRef: true, iframes: false, resultTypes: ['violations'] });
  } catch (e) {
    return { error: { code: 'page_error', message: `axe-core could not audit this page: ${e?.message ?? e}` } };
  } finally {
    ns.auditing = false;
  }
  // The first thing to do, in one line: axe's "Fix any of the following:" and its first check.
  const fixOf = (n) => {
    const checks = [...(n.any ?? []), ...(n.all ?? []), ...(n.none ?? [])].map((c) => c.message).filter(Boolean);
    if (checks.length === 0) return '';
    const more = checks.length > 1 ? ` (and ${checks.length - 1} more)` : '';
    return `${checks[0]}${more}`.slice(0, 300);
  };
  const violations = result.violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? null,
    help: v.help,
    help_url: v.helpUrl,
    total: v.nodes.length,
    elements: v.nodes.slice(0, maxNodes).map((n) => {
      const el = n.element;
      const out = { fix: fixOf(n), html: String(n.html ?? '').slice(0, 200) };
      if (el?.nodeType === 1) {
        const role = ns.roleOf(el) ?? 'clickable';
        out.role = role;
        out.name = ns.lineName(el, role);
        out.ref = ns.refFor(el, role, out.name);
      }
      return out;
    }),
  }));
  return { violations, passed: result.passes.length, incomplete: result.incomplete.length, engine: `axe-core ${globalThis.axe.version}`, next: ns.nextRef() };
}

async function audit(params) {
  await Promise.all([sitesReady, numberingLoaded]);
  const id = tabId(params);
  const frames = await chrome.webNavigation.getAllFrames({ tabId: id }).catch(() => null);
  const tab = await getTab(id);
  const top = frames?.find((f) => f.frameId === 0);
  const topUrl = top?.url || tab.url || '';
  checkSite(id, originOf(topUrl), expectedOrigin(params), topUrl);
  if (!top) fail('not_scriptable', `tab ${id} has no page yet; wait for it to load`);
  await checkNoDialog(id);
  let only = null;
  if (params.ref) only = parseRef(params.ref);
  const audited = [];
  const notAudited = [];
  for (const f of frames) {
    if (only && f.frameId !== only.frameId) continue;
    if (f.frameId !== 0 && /^(about|data|blob|javascript):/.test(f.url)) continue; // its parent's content, or no site
    if (allows(originOf(f.url))) audited.push(f);
    else notAudited.push(originOf(f.url) ?? f.url);
  }
  if (only && audited.length === 0) {
    if (notAudited.length) fail('site_not_allowed', `ref ${params.ref} is in a frame of ${notAudited[0]}, which is not an allowed site; nothing was audited`);
    fail('stale_ref', `frame f${only.frameId} is no longer in tab ${id} (it was removed or navigated); call read_page for fresh refs`);
  }
  const documentIds = audited.map((f) => f.documentId).filter(Boolean);
  const target = { tabId: id, documentIds };
  try {
    // The engine once per document: a later audit of the same page finds it there.
    const has = await chrome.scripting.executeScript({ target, func: () => Boolean(globalThis.axe) });
    const lacking = has.filter((r) => !r.result).map((r) => r.documentId);
    if (lacking.length) await chrome.scripting.executeScript({ target: { tabId: id, documentIds: lacking }, files: [ENGINE] });
  } catch (e) {
    throw new TabwireError('not_scriptable', `Chrome would not load the audit engine in tab ${id} (${withoutFragment(topUrl)}): ${e.message}; if the page navigated meanwhile, call again`);
  }
  const runs = await Promise.all(audited.map(async (f) => {
    const [done] = await chrome.scripting.executeScript({ target: { tabId: id, documentIds: [f.documentId] }, func: inFrame, args: [only?.ref ?? null, firstFreeRef(id, f.frameId), MAX_NODES] }).catch((e) => [{ result: { error: { code: 'page_error', message: `the frame went away before it was audited (${e.message})` } } }]);
    return { frame: f, got: done?.result };
  }));
  const violations = [];
  let passed = 0;
  let incomplete = 0;
  let engine = null;
  for (const { frame, got } of runs) {
    if (!got || got.error) {
      // The frame asked about, or the top frame, must answer; another frame's failure is said.
      if (only || frame.frameId === 0) throw new TabwireError(got?.error?.code ?? 'page_error', got?.error?.message ?? `frame ${frame.frameId} of tab ${id} did not answer`);
      notAudited.push(`${originOf(frame.url)} (${got?.error?.message ?? 'no answer'})`);
      continue;
    }
    setFirstFreeRef(id, frame.frameId, got.next);
    passed += got.passed;
    incomplete += got.incomplete;
    engine = got.engine;
    const prefix = frame.frameId === 0 ? '' : `f${frame.frameId}`;
    for (const v of got.violations) {
      const same = violations.find((w) => w.rule === v.rule);
      const elements = v.elements.map((e) => (e.ref ? { ...e, ref: prefix + e.ref } : e));
      if (same) {
        same.elements.push(...elements);
        same.total += v.total;
      } else violations.push({ ...v, elements });
    }
  }
  const order = { critical: 0, serious: 1, moderate: 2, minor: 3 };
  violations.sort((a, b) => (order[a.impact] ?? 4) - (order[b.impact] ?? 4));
  return { origin: originOf(topUrl), url: withoutFragment(topUrl), ref: params.ref ?? null, engine, violations, passed, incomplete, frames_not_audited: notAudited };
}

export const auditMethods = {
  'dom.audit': (params) => audit(params ?? {}),
};
