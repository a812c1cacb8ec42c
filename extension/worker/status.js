// Service worker, told by native.js: the connection status, for people — kept in
// chrome.storage.session (the popup reads it) and shown on the toolbar badge (green "on" / red
// "off").

const status = {
  connected: false,
  host_pid: null,
  bridges: 0,
  last_error: null,
  carrier: null, // what carries messages to the host now (native.js)
  since: Date.now(),
  extension_id: chrome.runtime.id,
};

// What carries messages to the host now, as the popup says it (`ping` tells doctor).
export const carrier = () => status.carrier;

export function setStatus(change) {
  const was = status.connected;
  Object.assign(status, change);
  if (status.connected !== was) status.since = Date.now();
  chrome.storage.session.set({ status }).catch((e) => console.error('tabwire: cannot save status:', e));
  chrome.action.setBadgeText({ text: status.connected ? 'on' : 'off' });
  chrome.action.setBadgeBackgroundColor({ color: status.connected ? '#1a7f37' : '#cf222e' });
  chrome.action.setTitle({
    title: status.connected
      ? `tabwire: connected to host ${status.host_pid ?? ''}, ${status.bridges} assistant session(s)`
      : `tabwire: not connected${status.last_error ? ` — ${status.last_error}` : ''}`,
  });
}
