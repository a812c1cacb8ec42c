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
  // A stop that is not an answer's: recording sound or video (Gradio's footer has a hidden
  // "Stop Recording" button of its API recorder).
  const NOT_STOP = /record|dictat|listen|\bmic|voice|audio|video|camera|webcam/i;
  // Class names that say how an element is now, not what it is; and generated ones.
  const STATE = /disabled|active|focus|hover|selected|open|hidden|visible|show|enabled|loading|^css-|^sc-|\d{3,}|^_|[^\w-]/i;
  // A build's hash, as a whole class or its last part: Svelte's `svelte-1hguek3`, Emotion's
  // `st-emotion-cache-xb4rrp` and `e1w2rk939` (Streamlit), CSS modules' `_a1b2c`. Letters and
  // digits mixed, five or more: no word a person names a class with. Such a class changes with
  // the build, and with the state (Emotion gives an enabled button another one), so a selector
  // on it stops finding the element.
  const HASH = /(^|-)(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{5,}$/i;
  const GENERATED = /^(svelte|emotion|st-emotion-cache|jsx)-/i;

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
  const isStop = (c) => (STOP.test(c.name ?? '') || STOP.test(c.hint ?? '')) && !NOT_STOP.test(`${c.name ?? ''} ${c.hint ?? ''}`);

  // How long a detected adapter's answer must stay unchanged to count as finished
  // (isolated/chat-observer.js): `{ms, frames}`. While the page showed no sign of writing it,
  // `stable_ms` (1000 unless the user changed it): only a pause tells, and a model may pause.
  // Once the app's stop control showed and went, the app has said the answer is written: the
  // quiet time is left only for the render that goes with it, so it ends after the page's next
  // two rendered frames, or after 50 ms (or `stable_ms`, if shorter) where no frame comes (a
  // hidden tab renders none). Gradio, Streamlit and Deep Chat show their last words before or
  // with it (bridge/tests/apps/chat_frameworks.rs). A change to the text still restarts it.
  const SIGN_GONE_MS = 50;
  const SIGN_GONE_FRAMES = 2;
  const quietFor = (adapter, sawSign) =>
    adapter.detected === true && sawSign
      ? { ms: Math.min(adapter.stable_ms, SIGN_GONE_MS), frames: SIGN_GONE_FRAMES }
      : { ms: adapter.stable_ms, frames: 0 };

  // Whether the class `c` names what an element is, lastingly: not a state, not generated.
  const lastingClass = (c) => !STATE.test(c) && !HASH.test(c) && !GENERATED.test(c);

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

  // Whether an element of classes `other` is a bubble like the user's, of classes `user`, in a
  // detected chat's list (isolated/chat-observer.js): at least half of the user bubble's
  // lasting classes in common (Gradio's `message-row bubble user-row` and `message-row bubble
  // bot-row`; not the row of Copy buttons beside each, `message-buttons-right bubble`), or any
  // class when it has no lasting one; no class either side when it has none.
  function likeBubble(user, other) {
    if (user.length === 0) return other.length === 0;
    const lasting = user.filter(lastingClass);
    const mine = lasting.length ? lasting : user;
    const common = mine.filter((c) => other.includes(c)).length;
    return common > 0 && common * 2 >= mine.length;
  }

  globalThis.tabwireChatDetect = { propose, scoreBox, scoreSend, isStop, quietFor, lastingClass, likeBubble, distance };
})();
