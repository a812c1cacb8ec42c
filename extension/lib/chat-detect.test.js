// The chat detector's judgement (node --test extension/lib/*.test.js), on descriptions shaped
// as isolated/chat-detect.js makes them from a page.

import assert from 'node:assert/strict';
import test from 'node:test';

import './chat-detect.js';

const { propose } = globalThis.tabwireChatDetect;

const viewport = { w: 1280, h: 720 };
const box = (id, kind, label, y = 600) => ({ id, kind, label, rect: { x: 100, y, w: 600, h: 40 }, viewport });
const control = (id, name, hint = '', more = {}) => ({ id, name, hint, kind: 'button', visible: true, rect: { x: 710, y: 600, w: 40, h: 40 }, ...more });

test('a labelled box, a named send button and a hidden stop button: clear', () => {
  const got = propose({
    boxes: [box('b1', 'textarea', 'Message the assistant'), box('b2', 'input', 'Search chats', 20)],
    controls: [control('c1', 'Send'), control('c2', 'Stop generating', '', { visible: false }), control('c3', 'New chat', '', { rect: { x: 0, y: 0, w: 80, h: 30 } })],
  });
  assert.deepEqual(got, { input: 'b1', submit: 'c1', stop: 'c2', clear: true, notes: [] });
});

test('an unlabelled textarea is the composer when a send button stands beside it (the fixture chat)', () => {
  const got = propose({
    boxes: [box('b1', 'textarea', '', 30)],
    controls: [control('c1', 'Send', '', { rect: { x: 300, y: 30, w: 50, h: 20 } }), control('c2', 'Stop', '', { visible: false, rect: { x: 360, y: 30, w: 50, h: 20 } })],
  });
  assert.deepEqual(got, { input: 'b1', submit: 'c1', stop: 'c2', clear: true, notes: [] });
});

test('an icon-only send control is known by its icon (Deep Chat: no name, a submit-icon)', () => {
  const got = propose({
    boxes: [box('b1', 'editable', 'Ask a question')],
    controls: [control('c1', '', 'input-button inside-end input-button-svg submit-icon')],
  });
  assert.deepEqual(got, { input: 'b1', submit: 'c1', stop: null, clear: true, notes: [] });
});

test('two boxes alike: proposed, not clear', () => {
  const got = propose({ boxes: [box('b1', 'textarea', 'Message'), box('b2', 'textarea', 'Message')], controls: [] });
  assert.equal(got.clear, false);
  assert.equal(got.input, 'b1');
  assert.equal(got.submit, 'enter');
  assert.match(got.notes.join('; '), /two text boxes look equally like the chat's \(b1, b2\)/);
  assert.match(got.notes.join('; '), /Enter would be pressed/);
});

test('a search box is not a chat; a page with no box proposes nothing', () => {
  const search = propose({ boxes: [box('b1', 'input', 'Search', 20)], controls: [control('c1', 'Search', '', { rect: { x: 710, y: 20, w: 40, h: 40 } })] });
  assert.equal(search.clear, false);
  assert.match(search.notes.join('; '), /does not look like a chat's/);
  assert.deepEqual(propose({ boxes: [], controls: [control('c1', 'Send')] }), {
    input: null, submit: null, stop: null, clear: false, notes: ['no visible text box that takes text'],
  });
});

test('a send control far from the box, or two alike, is not clear', () => {
  const far = propose({ boxes: [box('b1', 'textarea', 'Message')], controls: [control('c1', '', 'send-icon', { rect: { x: 0, y: 0, w: 20, h: 20 } })] });
  assert.equal(far.submit, 'enter', 'a send icon across the page is not this box\'s');
  assert.equal(far.clear, false);
  const two = propose({ boxes: [box('b1', 'textarea', 'Message')], controls: [control('c1', 'Send'), control('c2', 'Send')] });
  assert.equal(two.clear, false);
  assert.match(two.notes.join('; '), /two controls look equally like the send button/);
});

test("a recorder's Stop Recording button is no answer's stop (Gradio's footer)", () => {
  const { isStop } = globalThis.tabwireChatDetect;
  assert.equal(isStop({ name: 'Stop Recording', hint: 'record svelte-zxu34v hidden' }), false);
  assert.equal(isStop({ name: 'Stop', hint: 'stop-button' }), true);
  assert.equal(isStop({ name: '', hint: 'stop-button svelte-1hguek3' }), true);
  const got = propose({
    boxes: [box('b1', 'textarea', 'Type a message...')],
    controls: [control('c1', '', 'submit-button svelte-1hguek3'), control('c2', 'Stop Recording', 'record svelte-zxu34v hidden', { visible: false })],
  });
  assert.deepEqual(got, { input: 'b1', submit: 'c1', stop: null, clear: true, notes: [] });
});

test("a build's hashed class names no element lastingly (Svelte, Emotion as Streamlit has it)", () => {
  const { lastingClass } = globalThis.tabwireChatDetect;
  for (const c of ['svelte-1hguek3', 'svelte-zxu34v', 'st-emotion-cache-xb4rrp', 'st-emotion-cache-1j91oz1', 'e1w2rk939', 'e1aouyeq14', 'disabled-button', 'css-1x2y3z'])
    assert.equal(lastingClass(c), false, c);
  for (const c of ['submit-button', 'no-label', 'input-button', 'input-button-svg', 'submit-icon', 'ai-message-text', 'col-12', 'h2'])
    assert.equal(lastingClass(c), true, c);
});

test("an answer bubble shares half the user bubble's lasting classes; a row of buttons beside it does not (Gradio)", () => {
  const { likeBubble } = globalThis.tabwireChatDetect;
  const user = ['message-row', 'bubble', 'user-row', 'svelte-1nr59td'];
  assert.equal(likeBubble(user, ['message-row', 'bubble', 'bot-row', 'svelte-1nr59td']), true);
  assert.equal(likeBubble(user, ['message-buttons-right', 'bubble', 'message-buttons', 'false', 'svelte-704d7y']), false);
  assert.equal(likeBubble(['message-bubble', 'user-message-text'], ['message-bubble', 'ai-message-text']), true);
  assert.equal(likeBubble(['stChatMessage', 'st-emotion-cache-1fee4w7', 'exttvjz0'], ['stChatMessage', 'st-emotion-cache-1iitq1e', 'exttvjz0']), true);
  assert.equal(likeBubble([], []), true);
  assert.equal(likeBubble([], ['typing']), false);
  assert.equal(likeBubble(['svelte-1abcde2'], ['svelte-1abcde2']), true);
});

test('a stop control that shows only while the app answers says stop by the same rule (Deep Chat, Gradio, Streamlit)', () => {
  const { isStop } = globalThis.tabwireChatDetect;
  // Deep Chat's send button holds its submit icon, then a loading one, then a stop icon.
  assert.equal(isStop({ name: '', hint: 'input-button inside-end input-button-svg submit-icon' }), false);
  assert.equal(isStop({ name: '', hint: 'input-button inside-end input-button-svg loading-submit-button' }), false);
  assert.equal(isStop({ name: '', hint: 'input-button inside-end input-button-svg stop-icon' }), true);
  assert.equal(isStop({ name: 'Stop', hint: 'lg secondary stop-button svelte-1ixn6qd' }), true);
  assert.equal(isStop({ name: 'Stop', hint: 'stBaseButton-header' }), true);
});

test("a detected adapter's quiet time: stable_ms until its stop control showed, two frames (at most 50 ms) once it went", () => {
  const { quietFor } = globalThis.tabwireChatDetect;
  const detected = { detected: true, stable_ms: 1000 };
  assert.deepEqual(quietFor(detected, false), { ms: 1000, frames: 0 }, 'no sign of writing: only the text tells, so the whole quiet time');
  assert.deepEqual(quietFor(detected, true), { ms: 50, frames: 2 }, 'the app took its stop control away: the answer is written');
  assert.deepEqual(quietFor({ detected: true, stable_ms: 20 }, true), { ms: 20, frames: 2 }, 'a shorter stable_ms given is kept');
  // A hand-written adapter's stable_ms is what its writer chose, sign or not.
  assert.deepEqual(quietFor({ stable_ms: 1000 }, true), { ms: 1000, frames: 0 });
  assert.deepEqual(quietFor({ detected: false, stable_ms: 800 }, true), { ms: 800, frames: 0 });
});
