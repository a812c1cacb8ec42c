//! Session tools: one assistant waits for others. get_session (who am I, how do workers reach
//! me), notify_completion, post_message, ask_question (deliver an event into another session's
//! queue, where its wait_for_event picks it up).

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tabwire_host::wire::code;

use super::reply::Reply;
use super::server::TabwireServer;
use crate::error::CallError;
use crate::events::{SessionEvent, kind};
use crate::session::SESSION_ENV;
use crate::session::messages::Status;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetSessionParams {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NotifyCompletionParams {
    /// The session to tell, as its get_session shows. Default: the session that started this
    /// one (its id was in TABWIRE_SESSION_ID when this one started).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Who you are: the name the other session gave you as a worker.
    pub worker_id: String,
    /// `success` or `error`.
    pub status: Status,
    /// The files you changed. Default: none.
    #[serde(default)]
    pub changes: Vec<String>,
    /// What you did, or what went wrong, in a few sentences.
    pub message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PostMessageParams {
    /// The session to tell, as its get_session shows.
    pub session_id: String,
    /// The message.
    pub body: String,
}

/// This session, and how others reach it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: String,
    /// The session this one reports to by default, if it was started by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// Its unix socket.
    pub socket: String,
    /// `GET` this with `Authorization: Bearer <token>` (token in `record`) to wait for page
    /// events from a script.
    pub wait_url: String,
    /// Its record (pid, socket, HTTP port and token), readable only by the user.
    pub record: String,
    /// How a worker or a hook reports back to this session.
    pub how_to_report: String,
}

/// An event delivered to another session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Delivered {
    /// The session that has it now.
    pub session_id: String,
    /// What was delivered: worker_complete, message or question.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its id in that session's queue.
    pub event_id: u64,
    /// For ask_question: the id the answer should refer to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question_id: Option<String>,
}

#[tool_router(router = session_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Who this session is and how other assistants (workers), hooks and scripts reach it:
    /// give the session_id to a worker so it can report with notify_completion, then wait with
    /// wait_for_event {types: ["worker_complete"]}.
    #[tool(
        output_schema = schema_for_output::<SessionInfo>(),
        annotations(
            title = "This session",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_session(
        &self,
        Parameters(_): Parameters<GetSessionParams>,
    ) -> Result<Reply<SessionInfo>, CallError> {
        let Some(record) = self.core.session() else {
            return Err(CallError::new(
                code::INTERNAL,
                "this server was started without a session",
            ));
        };
        let id = &record.session_id;
        let how_to_report = format!(
            "A worker assistant whose MCP server is tabwire calls notify_completion with \
             session_id \"{id}\" (or none, if it was started with {SESSION_ENV}={id} in its \
             environment). A hook or script runs `tabwire notify --session {id} --worker NAME \
             --status success --message TEXT --changes-from-git`. Wait for them here with \
             wait_for_event {{\"types\": [\"worker_complete\"]}}. Scripts follow this session's \
             page events with `tabwire wait --session {id}`."
        );
        let record_path = record.socket.with_extension("json");
        let text = format!("session {id}\n{how_to_report}");
        Ok(Reply::new(
            text,
            SessionInfo {
                session_id: id.clone(),
                parent_session_id: record.parent.clone(),
                socket: record.socket.display().to_string(),
                wait_url: record.wait_url(),
                record: record_path.display().to_string(),
                how_to_report,
            },
        ))
    }

    /// Tell another session (the one that gave you this work) that you finished: it receives a
    /// worker_complete event with your worker_id, status, changed files and message.
    #[tool(
        output_schema = schema_for_output::<Delivered>(),
        annotations(
            title = "Report completion",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn notify_completion(
        &self,
        Parameters(p): Parameters<NotifyCompletionParams>,
    ) -> Result<Reply<Delivered>, CallError> {
        let target = match p.session_id.filter(|s| !s.trim().is_empty()) {
            Some(id) => id,
            None => self.core.session().and_then(|s| s.parent.clone()).ok_or_else(|| {
                CallError::new(
                    code::BAD_REQUEST,
                    "no session_id given, and this session was not started by another one; \
                     pass the session_id the other assistant's get_session shows",
                )
            })?,
        };
        let data = json!({
            "from": self.own_id(),
            "worker_id": p.worker_id,
            "status": p.status,
            "changes": p.changes,
            "message": p.message,
        });
        self.deliver(&target, kind::WORKER_COMPLETE, data, None).await
    }

    /// Send a message to another session; it receives a `message` event.
    #[tool(
        output_schema = schema_for_output::<Delivered>(),
        annotations(
            title = "Message a session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn post_message(
        &self,
        Parameters(p): Parameters<PostMessageParams>,
    ) -> Result<Reply<Delivered>, CallError> {
        let data = json!({ "from": self.own_id(), "body": p.body });
        self.deliver(&p.session_id, kind::MESSAGE, data, None).await
    }

    /// Ask another session a question; it receives a `question` event carrying a question_id,
    /// which its answer (a post_message back to you) should mention.
    #[tool(
        output_schema = schema_for_output::<Delivered>(),
        annotations(
            title = "Ask a session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn ask_question(
        &self,
        Parameters(p): Parameters<PostMessageParams>,
    ) -> Result<Reply<Delivered>, CallError> {
        let question_id = uuid::Uuid::new_v4().to_string();
        let data = json!({ "from": self.own_id(), "question_id": question_id, "body": p.body });
        self.deliver(&p.session_id, kind::QUESTION, data, Some(question_id)).await
    }
}

impl TabwireServer {
    fn own_id(&self) -> Option<String> {
        self.core.session().map(|s| s.session_id.clone())
    }

    /// Put an event into session `target`'s queue: our own directly, another over its socket.
    async fn deliver(
        &self,
        target: &str,
        kind: &str,
        data: Value,
        question_id: Option<String>,
    ) -> Result<Reply<Delivered>, CallError> {
        let event_id = if self.own_id().as_deref() == Some(target) {
            self.core.queue().push(SessionEvent::new(kind, None, &data))
        } else {
            self.core.peers().push(self.core.runtime_dir(), target, kind, data).await?
        };
        let text = format!("delivered {kind} to session {target}");
        Ok(Reply::new(
            text,
            Delivered {
                session_id: target.to_owned(),
                kind: kind.to_owned(),
                event_id,
                question_id,
            },
        ))
    }
}
