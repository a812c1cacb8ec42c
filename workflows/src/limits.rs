//! Every bound of the workflows family, in one place, with why it is what it is. Over a bound,
//! the call that would cross it is refused with `bad_request` naming the field, the bound and
//! what to do; nothing is cut silently.
//!
//! The sizes are chosen so that the largest session state the bridge accepts, with its graph,
//! stays under 1 MiB as JSON (measured: 200 items of 300 characters, 500 tasks of 64-character
//! ids each with 16 dependencies, and a 500-state graph come to ≈ 0.9 MiB): it then always fits
//! in one `workflow.update` to the extension, which refuses more than [`MAX_UPDATE`].

/// A workflow file (`$TABWIRE_CONFIG_DIR/workflows/*.json`): larger files are listed as
/// problems, unread. The built-in `collab` is 5 KiB.
pub const MAX_WORKFLOW_FILE: u64 = 256 * 1024;
/// States in one workflow: `collab` has 34; a graph a person can follow has far fewer than 500.
pub const MAX_STATES: usize = 500;
/// Transitions out of one state: `collab`'s busiest router has 3.
pub const MAX_TRANSITIONS: usize = 32;
/// Characters of a workflow name, a state id, an item title's neighbours…: names, not prose.
pub const MAX_NAME: usize = 64;
/// Characters of a skill name.
pub const MAX_SKILL: usize = 128;

/// Work items of one session (goals gathered at the start). A session works through them one
/// by one with the assistant: 200 is months of work.
pub const MAX_ITEMS: usize = 200;
/// Characters of an item's title: a line, not a document (the design lives in the project).
pub const MAX_TITLE: usize = 300;
/// Batches of one execution plan.
pub const MAX_BATCHES: usize = 100;
/// Tasks of one execution plan, over all its batches.
pub const MAX_TASKS: usize = 500;
/// Characters of a batch or task id.
pub const MAX_ID: usize = 64;
/// Tasks one task may depend on.
pub const MAX_DEPENDS_ON: usize = 16;

/// A session state file tabwire reads: anything larger is not one it wrote (it writes < 1 MiB)
/// and is moved aside as corrupt.
pub const MAX_STATE_FILE: u64 = 4 * 1024 * 1024;
/// One `workflow.update` as the extension accepts it (JSON characters);
/// `extension/worker/workflow.js` has the same number.
#[cfg(test)]
pub const MAX_UPDATE: usize = 2 * 1024 * 1024;
/// Workflows the bridge re-sends to a browser that attaches later (the most recent ones), and
/// the extension keeps live (it forgets the least recently changed beyond that).
pub const MAX_LIVE: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    /// `extension/worker/workflow.js` keeps the same bounds: what a bridge sends, the extension keeps.
    #[test]
    fn the_extension_keeps_the_same_bounds() {
        let js = include_str!("../../extension/worker/workflow.js");
        assert!(js.contains(&format!("const MAX_LIVE = {MAX_LIVE};")), "MAX_LIVE");
        assert_eq!(MAX_UPDATE, 2 * 1024 * 1024);
        assert!(js.contains("const MAX_UPDATE = 2 * 1024 * 1024;"), "MAX_UPDATE");
    }
}
