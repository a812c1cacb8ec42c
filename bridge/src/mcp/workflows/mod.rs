//! The `workflows` family: a workflow's skills, walked in the order it says (`walk.rs`,
//! `specs/workflows.md`).

mod walk;

pub use walk::WorkflowView;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "workflows",
    instructions: "\
Workflows: start_workflow gives the first skill and complete_skill, called each time you finish \
one, says which to run next (and when to clear your context): follow it rather than choosing \
the order yourself; the user sees where you stand in the browser.",
    router: || TabwireServer::workflow_tools(),
};
