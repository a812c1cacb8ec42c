//! `workflow.update`: a workflow session's state, for the pages that follow it
//! (`specs/workflows.md`).

use std::time::Duration;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::methods;

methods! {
    /// `{project, session, state, graph}`, sent as the JSON text the workflow keeps: a bridge
    /// sends one after each change it makes, and all of them to a browser that attaches later.
    /// Best effort, so short.
    WorkflowUpdate = "workflow.update": RawValue => IgnoredAny, Duration::from_secs(2);
}
