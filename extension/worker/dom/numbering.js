// Service worker, for dom.js and dom/audit.js: each tab's numbering — the first free ref number of
// each of its frames, and how many snapshots it had — kept in chrome.storage.session as well as
// here, with the tab's last snapshots (here only: they are for `since`, and too large to write on
// every read).
//
// Numbers never repeat in a tab: the agent of a page the tab navigated to starts where the
// last one stopped, so a ref or snapshot id the assistant kept from before cannot name
// something on the page after (it fails with stale_ref, or "not among the last snapshots").
// Chrome stops this worker when it crashes or is updated while pages and their agents live on;
// storage keeps the numbering across that, which memory alone did not.

const KEY = 'numbering';

const tabs = new Map(); // tab id → { next: Map(frame id → first free ref number), seq, snapshots: [] }
let saving = null;

// Resolves once what an earlier worker kept is back; the dom.* methods wait for it.
export const numberingLoaded = chrome.storage.session.get(KEY).then(
  (got) => {
    for (const [id, kept] of Object.entries(got[KEY] ?? {})) {
      const t = tabState(Number(id));
      t.seq = Math.max(t.seq, kept.seq ?? 0);
      for (const [frame, n] of Object.entries(kept.next ?? {})) t.next.set(Number(frame), Math.max(t.next.get(Number(frame)) ?? 1, n));
    }
  },
  (e) => console.error('tabwire: cannot read the ref numbering of the tabs:', e),
);

export function tabState(id) {
  let t = tabs.get(id);
  if (!t) tabs.set(id, (t = { next: new Map(), snapshots: [], seq: 0 }));
  return t;
}

// The first free ref number of frame `frameId` of tab `id`, for its agent.
export const firstFreeRef = (id, frameId) => tabState(id).next.get(frameId) ?? 1;

export function setFirstFreeRef(id, frameId, next) {
  const t = tabState(id);
  if (t.next.get(frameId) === next) return;
  t.next.set(frameId, next);
  save();
}

// The id of the tab's next snapshot: s1, s2…
export function nextSnapshotId(id) {
  const t = tabState(id);
  save();
  return `s${++t.seq}`;
}

chrome.tabs.onRemoved.addListener((id) => {
  if (tabs.delete(id)) save();
});

function save() {
  saving ??= setTimeout(() => {
    saving = null;
    const kept = Object.fromEntries([...tabs].map(([id, t]) => [id, { seq: t.seq, next: Object.fromEntries(t.next) }]));
    chrome.storage.session.set({ [KEY]: kept }).catch((e) => console.error('tabwire: cannot save the ref numbering of the tabs:', e));
  }, 0); // the calls of one burst are written once, and at once: a worker may stop any time
}
