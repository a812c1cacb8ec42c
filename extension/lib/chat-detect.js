// The generic chat detector's judgement (specs/operations.md, "A detected adapter"): from a
// plain description of a page's text boxes and controls (isolated/chat-detect.js walks the
// page, open shadow roots included, and describes them), which box is the chat's, which
// control sends, which one stops an answer — and whether the choice is clear enough to be used
// without the user's say. Pure: `node --test extension/lib/chat-detect.test.js` runs it on plain
// objects. A classic script: it defines globalThis.tabwireChatDetect and nothing else.
//
// The message bubbles are not guessed here: an empty chat has none to see. A detected adapter
// finds them at its first send, by their place (isolated/chat-observer.js): the user's bubble is
// the element added that holds exactly the text sent, the answer the newest element like it
// added after it in the same list.
//
// A box:     {id, kind: 'textarea' | 'input' | 'editable', label, rect: {x, y, w, h}, viewport: {w, h}}
// A control: {id, name, hint, kind: 'button' | 'submit', visible, rect, form, sameForm}
//   name: its accessible name, as a person reads it; hint: its id, classes and those of what it
//   holds (an icon's `submit-icon`); sameForm: it submits the form the box is in.
(() => {
  const CHAT_WORDS = /message|ask|chat|prompt|question|reply|write|type here|talk|send|say/i;
  const NOT_CHAT = /search|filter|find|e-?mail|user ?name|password|url|address|phone|subject|title|code|coupon/i;
  const SEND = /^(send|submit|ask|go|send message)\b/i;
  const SEND_HINT = /send|submit/i;
  const NOT_SEND = /stop|cancel|attach|upload|file|voice|mic|record|emoji|clear|new chat|delete|copy|retry|regenerate|setting|menu|close|log ?in|sign|search|share|like|dislike|edit|more/i;
  const STOP = /\bstop\b|stop[-_ ]?(generat|respon|icon|button|stream)/i;

  // How much `b` looks like a chat's text box.
  function scoreBox(b) {
    let s = b.kind === 'input' ? 1 : 3;
    if (b.label && CHAT_WORDS.test(b.label)) s += 3;
    if (b.label && NOT_CHAT.test(b.label)) s -= 4;
    const { h } = b.viewport ?? {};
    if (h && b.rect && b.rect.y + b.rect.h / 2 > h / 2) s += 1; // a composer sits low
    if (b.rect && b.rect.w * b.rect.h >= 8000) s += 1;
    return s;
  }

  // How much `c` looks like the control that sends what is in `box`.
  function scoreSend(c, box) {
    if (!c.visible) return -Infinity; // a send control shows while the box is there
    const name = (c.name ?? '').trim();
    let s = 0;
    if (SEND.test(name)) s += 5;
    else if (SEND_HINT.test(c.hint ?? '')) s += 4;
    if (NOT_SEND.test(name) || (!name && STOP.test(c.hint ?? ''))) s -= 6;
    if (c.kind === 'submit' && c.sameForm) s += 3;
    const d = distance(c.rect, box.rect);
    s += d <= 80 ? 2 : d <= 200 ? 1 : -2;
    return s;
  }

  // Whether `c` is an app's stop-generating control (often present but hidden while idle).
  const isStop = (c) => STOP.test(c.name ?? '') || STOP.test(c.hint ?? '');

  // The gap, in pixels, between two rectangles (0 when they touch or overlap).
  function distance(a, b) {
    if (!a || !b) return Infinity;
    const dx = Math.max(0, a.x - (b.x + b.w), b.x - (a.x + a.w));
    const dy = Math.max(0, a.y - (b.y + b.h), b.y - (a.y + a.h));
    return Math.hypot(dx, dy);
  }

  // The best of `items` by `score`, and whether it is alone at the top with at least `min`.
  function best(items, score, min) {
    const ranked = items.map((item) => ({ item, s: score(item) })).filter((r) => r.s > -Infinity);
    ranked.sort((x, y) => y.s - x.s);
    const top = ranked[0];
    if (!top) return { item: null, clear: false, score: null };
    const clear = top.s >= min && (ranked.length === 1 || ranked[1].s < top.s);
    return { item: top.item, clear, score: top.s, tie: ranked.length > 1 && ranked[1].s === top.s ? ranked[1].item : null };
  }

  // The proposal: ids of the chosen box, send control (or 'enter') and stop control; `clear`
  // when each choice stands alone, and `notes` saying why not.
  function propose({ boxes = [], controls = [] }) {
    const notes = [];
    // A box with a send control beside it is a composer, labelled or not.
    const sendNear = (b) => controls.some((c) => c.visible && (SEND.test((c.name ?? '').trim()) || SEND_HINT.test(c.hint ?? '')) && distance(c.rect, b.rect) <= 200);
    const box = best(boxes, (b) => scoreBox(b) + (sendNear(b) ? 2 : 0), 4);
    if (!box.item) return { input: null, submit: null, stop: null, clear: false, notes: ['no visible text box that takes text'] };
    if (!box.clear)
      notes.push(box.tie ? `two text boxes look equally like the chat's (${box.item.id}, ${box.tie.id})` : `the text box does not look like a chat's (no label such as "Message" or "Ask", or one such as "Search")`);
    const send = best(controls, (c) => scoreSend(c, box.item), 5);
    let submit = null;
    if (send.item && send.score >= 3) {
      submit = send.item.id;
      if (!send.clear) notes.push(send.tie ? `two controls look equally like the send button (${send.item.id}, ${send.tie.id})` : 'the send control is a guess (no name or mark that says send)');
    } else {
      submit = 'enter';
      notes.push('no send control beside the text box: Enter would be pressed in it');
    }
    const stops = controls.filter(isStop);
    const stop = stops.length === 1 ? stops[0].id : null;
    if (stops.length > 1) notes.push('several controls say stop: none is used');
    return { input: box.item.id, submit, stop, clear: notes.length === 0, notes };
  }

  globalThis.tabwireChatDetect = { propose, scoreBox, scoreSend, isStop, distance };
})();
