//! Workflow tools: start_workflow, complete_skill, get_workflow_state, update_workflow,
//! list_workflows (`specs/workflows.md`). They call [`tabwire_workflows::Workflows`]; here the
//! answers are only put into words.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;
use tabwire_workflows::Seen;
use tabwire_workflows::catalog::Catalog;
use tabwire_workflows::draw;
use tabwire_workflows::state::{Changes, ItemInput, SessionState};
use tabwire_workflows::walk::{Action, Next};

/// Which session of which project.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Session {
    /// The project's root (an absolute path); state in <project>/.collab/<session>/.
    pub project: String,
    /// 1 to 64 letters, digits, '.', '_' or '-', not first '.'.
    pub session: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StartWorkflowParams {
    #[serde(flatten)]
    pub at: Session,
    /// From list_workflows; default "collab".
    #[serde(default)]
    pub workflow: Option<String>,
    /// The work items, if known (else update_workflow later), numbered 1, 2, … in order.
    #[serde(default)]
    pub items: Vec<ItemInput>,
    /// Start over in a session that already follows a workflow (its state is replaced).
    /// Default false: such a session is refused.
    #[serde(default)]
    pub restart: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompleteSkillParams {
    #[serde(flatten)]
    pub at: Session,
    /// The skill you just finished: the next_skill the last call returned.
    pub skill: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionParams {
    #[serde(flatten)]
    pub at: Session,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateWorkflowParams {
    #[serde(flatten)]
    pub at: Session,
    #[serde(flatten)]
    pub changes: Changes,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListWorkflowsParams {}

/// A session's state, with where it is saved and the skill it waits for.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkflowView {
    /// The project's directory (symlinks resolved).
    pub project: String,
    pub session: String,
    /// Where the state is saved.
    pub file: String,
    /// The skill the session waits for; null when the workflow is done.
    pub next_skill: Option<String>,
    /// `clear`: clear your context before running next_skill.
    pub action: Action,
    #[serde(flatten)]
    pub record: SessionState,
}

impl From<&Seen> for WorkflowView {
    fn from(seen: &Seen) -> Self {
        WorkflowView {
            project: seen.place.project.display().to_string(),
            session: seen.place.session.clone(),
            file: seen.place.file().display().to_string(),
            next_skill: seen.next.next_skill.clone(),
            action: seen.next.action,
            record: seen.state.clone(),
        }
    }
}

#[tool_router(router = workflow_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Start a workflow (default "collab") in a session of a project and get its first skill;
    /// report each finished skill with complete_skill, which says what to run next.
    #[tool(
        output_schema = schema_for_output::<Next>(),
        annotations(
            title = "Start a workflow",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn start_workflow(
        &self,
        Parameters(p): Parameters<StartWorkflowParams>,
    ) -> Result<Reply<Next>, ToolError> {
        let seen = self
            .workflows
            .begin(&p.at.project, &p.at.session, p.workflow, p.items, p.restart)
            .await?;
        let head =
            format!("started workflow {} in session {}", seen.state.workflow, seen.place.session);
        Ok(Reply::new(said(head, &seen), seen.next))
    }

    /// Report that you finished the skill the session waits for; the answer is the next skill (null
    /// when done), its params, and action "clear" when you should clear your context first.
    /// get_workflow_state reads where it stands without reporting.
    #[tool(
        output_schema = schema_for_output::<Next>(),
        annotations(
            title = "Complete a skill",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn complete_skill(
        &self,
        Parameters(p): Parameters<CompleteSkillParams>,
    ) -> Result<Reply<Next>, ToolError> {
        let seen = self.workflows.complete(&p.at.project, &p.at.session, &p.skill).await?;
        let head = format!("completed {}", p.skill);
        Ok(Reply::new(said(head, &seen), seen.next))
    }

    /// Where a session stands in its workflow: its state, the skill it waits for, its items,
    /// batches and tasks. It changes nothing: report a finished skill with complete_skill and
    /// record items or plans with update_workflow.
    #[tool(
        output_schema = schema_for_output::<WorkflowView>(),
        annotations(
            title = "Get a workflow's state",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_workflow_state(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<Reply<WorkflowView>, ToolError> {
        let seen = self.workflows.get(&p.at.project, &p.at.session).await?;
        let text = draw::where_it_stands(&seen.graph, &seen.state, true).join("\n");
        Ok(Reply::new(text, WorkflowView::from(&seen)))
    }

    /// Record the facts the workflow's transitions read: the current item's type (item_type),
    /// work items (items), the execution plan (batches, replacing the recorded one) and task
    /// statuses (tasks). All or nothing: a bad field is refused, named, and nothing changes.
    /// Report a finished skill with complete_skill, not here.
    #[tool(
        output_schema = schema_for_output::<WorkflowView>(),
        annotations(
            title = "Update a workflow's facts",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn update_workflow(
        &self,
        Parameters(p): Parameters<UpdateWorkflowParams>,
    ) -> Result<Reply<WorkflowView>, ToolError> {
        let (seen, changed) =
            self.workflows.update(&p.at.project, &p.at.session, p.changes).await?;
        let head = format!("recorded {}", changed.join("; "));
        Ok(Reply::new(said(head, &seen), WorkflowView::from(&seen)))
    }

    /// The workflows a session can follow (the built-in "collab" and the user's, from the
    /// config directory's workflows/), their skills, and files that could not be used. Start
    /// one with start_workflow; get_workflow_state shows a session already under way.
    #[tool(
        output_schema = schema_for_output::<Catalog>(),
        annotations(
            title = "List workflows",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_workflows(
        &self,
        Parameters(_): Parameters<ListWorkflowsParams>,
    ) -> Reply<Catalog> {
        let catalog = self.workflows.catalog();
        let listed = catalog.workflows.iter().map(|w| {
            let skills = w.skills.join(", ");
            format!(
                "{} — {} states from {} ({}); skills: {skills}",
                w.name, w.states, w.start, w.source
            )
        });
        let skipped = catalog.problems.iter().map(|p| format!("skipped {}: {}", p.path, p.error));
        let whence = format!("user workflows are read from {}", catalog.directory);
        let text: Vec<String> = listed.chain(skipped).chain([whence]).collect();
        Reply::new(text.join("\n"), (*catalog).clone())
    }
}

/// `head`, then where the session stands (without the list of every item and batch).
fn said(head: String, seen: &Seen) -> String {
    let mut lines = vec![head];
    lines.extend(draw::where_it_stands(&seen.graph, &seen.state, false));
    lines.join("\n")
}
