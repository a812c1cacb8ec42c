// What one value from a page may be: how large one event, how deep any value. Pure: the worker
// checks every value against these (worker/page.js), the page SDK checks them first with the same
// numbers (page-world/page-sdk.js; proto/tests/extension_constants.rs holds both to the Rust
// side's).

export const MAX_EVENT = 1024 * 1024; // JSON text of one event (UTF-16 units, as the SDK measures)
// Arrays/objects inside one another (the top value is level 1): deeper values only cost the
// host, the bridges and the assistant recursion; no app state needs them.
export const MAX_DEPTH = 64;

// Whether JSON text nests arrays and objects more than `max` levels deep (the top value is
// level 1). Counts "[" and "{" outside strings — no parse; strings are skipped with indexOf.
export function deeperThan(json, max) {
  if (json.length <= 2 * max) return false; // too short to hold max + 1 levels
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) { // '"': jump to the closing quote (one not escaped by an odd run of "\")
      let j = i;
      for (;;) {
        j = json.indexOf('"', j + 1);
        if (j < 0) return false; // not JSON: the parse refuses it
        let k = j - 1;
        while (json.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}
