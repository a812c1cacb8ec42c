// Service worker, read through `guarded` by the guards background.js puts around every method
// (activity.js, groups.js, pause.js, handover.js): what each method the worker answers is, said
// where its handler is written, `'tabs.list': method({ pageless: true, listsTabs: true }, …)`.
// No guard keeps a list of names, so a new method says what it is in one place.
//
// | trait       | the method …                                        | so                                                      |
// |-------------|-----------------------------------------------------|---------------------------------------------------------|
// | bookkeeping | is the bridges' own upkeep (a page's queue drained, | not logged (activity), not checked for its session      |
// |             | a chat polled), not an action of the assistant      | (groups), still answered while stopped, no mark (pause) |
// | pageless    | reaches no page (the tab list, the site list, a     | still answered while stopped (pause) or for a tab       |
// |             | workflow's progress, a ping)                        | handed over (handover); not checked (groups)            |
// | stops       | only stops something in a page (a chat's answer)    | still answered while stopped (pause); not checked       |
// | declared    | reads what a page declares (state, commands): no    | no acting mark (pause): it is the hottest call          |
// |             | person sees it                                      |                                                         |
// | capture     | takes the tab's pixels, or hands it to the user     | the acting mark is held off during it (pause)           |
// | regroups    | moves the tab into another session's group (given   | no acting mark (pause): it would name the group the tab |
// |             | to a worker); its page is not touched               | just left                                               |
// | opens       | opens a tab, named by its result                    | logged (activity); the tab joins the caller's group     |
// | answersTab  | answers with a tab (tabs.js's describe)             | told whose tab it is (groups)                           |
// | listsTabs   | lists every tab                                     | another live session's are left out (groups)            |
// | listsPages  | lists every page's commands when no tab is named    | another live session's pages are left out (groups)      |
//
// A method with none of them acts in the tab its `tab_id` names: logged, checked, marked,
// refused while stopped or while the tab is handed over.

const NONE = Object.freeze({});

// `fn` with its traits.
export const method = (traits, fn) => Object.assign(fn, { traits: Object.freeze(traits) });

// The traits of a handler (none for one that said nothing).
export const traitsOf = (fn) => fn.traits ?? NONE;

// `table` with each handler passed through `guard(name, fn, traits)`; what it returns keeps
// the traits, for the next guard.
export function guarded(table, guard) {
  return Object.fromEntries(Object.entries(table).map(([name, fn]) => {
    const traits = traitsOf(fn);
    return [name, method(traits, guard(name, fn, traits))];
  }));
}
