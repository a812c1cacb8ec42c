// Shows the connection status the worker keeps in chrome.storage.session (status.js).

const show = (status) => {
  const s = status ?? { connected: false, last_error: 'the extension has not started yet' };
  const el = (id) => document.getElementById(id);
  el('connected').textContent = s.connected ? 'connected' : 'not connected';
  el('connected').className = s.connected ? 'on' : 'off';
  el('host_pid').textContent = s.host_pid ?? '—';
  el('bridges').textContent = s.connected ? String(s.bridges ?? 0) : '—';
  el('since').textContent = s.since ? new Date(s.since).toLocaleTimeString() : '—';
  el('last_error').textContent = s.last_error ?? '—';
  el('extension_id').textContent = chrome.runtime.id;
};

chrome.storage.session.get('status').then(({ status }) => show(status));
chrome.storage.session.onChanged.addListener((changes) => {
  if (changes.status) show(changes.status.newValue);
});
