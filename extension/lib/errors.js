// Error codes of the protocol (specs/protocol.md, "Error codes") and the one error type the
// extension throws. A handler throws `new TabwireError(code, message)`; the dispatcher in
// worker/native.js turns it into `{"code", "message"}`. Messages say what happened and what to
// do. Pure: no chrome.*.

export class TabwireError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export const fail = (code, message) => {
  throw new TabwireError(code, message);
};

// The wire form of any thrown value. Anything that is not a TabwireError is a bug here: say where.
export function toWire(err, where) {
  if (err instanceof TabwireError) return { code: err.code, message: err.message };
  return { code: 'internal', message: `${where} failed in the extension: ${err?.message ?? err}` };
}
