//! Session tools: one assistant waits for others. get_session (who am I, how do workers reach
//! me), notify_completion, post_message, ask_question, answer_question (deliver an event into
//! another session's queue, where its wait_for_event picks it up).

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tabwire_proto::wire::code;

use super::events::MAX_EVENT_WAIT_SECS;
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::server::TabwireServer;
use crate::mcp::waiting::seconds;
use tabwire_link::error::CallError;
use tabwire_link::events::{Filter, kind};
use tabwire_session::SESSION_ENV;
use tabwire_session::WORKER_ENV;
use tabwire_session::messages::CompletionStatus;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetSessionParams {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NotifyCompletionParams {
    /// Default: the session that started this one (TABWIRE_SESSION_ID).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Default: your TABWIRE_WORKER_ID (spawn_worker sets it).
    #[serde(default)]
    pub worker_id: Option<String>,
    /// `success` or `error`.
    pub status: CompletionStatus,
    /// The files you changed.
    #[serde(default)]
    pub changes: Vec<String>,
    /// What you did, or what went wrong.
    pub message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PostMessageParams {
    /// The session to tell, as its get_session shows.
    pub session_id: String,
    /// The message.
    pub body: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskQuestionParams {
    /// The session to ask.
    pub session_id: String,
    /// The question.
    pub body: String,
    /// Return the answer with this call; else it comes as an `answer` event.
    #[serde(default)]
    pub wait: bool,
    /// With `wait`: seconds, at most 3600.
    #[serde(default = "five_minutes")]
    pub timeout_secs: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnswerQuestionParams {
    /// The question event's question_id.
    pub question_id: String,
    /// The answer.
    pub answer: String,
}

fn five_minutes() -> u64 {
    300
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
    /// For ask_question and answer_question: the question's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question_id: Option<String>,
    /// For ask_question with `wait`: the answer ({from, question_id, answer, at_ms}), when it
    /// came in time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// For ask_question with `wait`: true when no answer came within timeout_secs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

#[tool_router(router = session_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Who this session is and how workers, hooks and scripts reach it (session_id, socket, /wait
    /// endpoint); a worker reports to the session_id with notify_completion.
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
    ) -> Result<Reply<SessionInfo>, ToolError> {
        let Some(record) = self.core.session() else {
            return Err(CallError::new(
                code::INTERNAL,
                "this server was started without a session",
            )
            .into());
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
        // Beside the socket on Unix; on Windows the socket is a named pipe, so never from it.
        let (_, record_path) = tabwire_proto::sessions::paths(self.core.runtime_dir(), id);
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

    /// Tell the session that gave you this work that you finished: it gets a worker_complete event
    /// with your worker_id, status, changed files and message. post_message tells it anything else.
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
    ) -> Result<Reply<Delivered>, ToolError> {
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
        let Some(worker_id) = p.worker_id.or_else(|| std::env::var(WORKER_ENV).ok()) else {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "no worker_id given, and this session was not started by spawn_worker (no \
                     {WORKER_ENV}); pass the name the other session gave you"
                ),
            )
            .into());
        };
        let data = json!({
            "from": self.own_id(),
            "worker_id": worker_id,
            "status": p.status,
            "changes": p.changes,
            "message": p.message,
        });
        Ok(delivered(self.deliver(&target, kind::WORKER_COMPLETE, data, None).await?))
    }

    /// Send a message to another session; it gets a `message` event. Use ask_question when you
    /// need an answer, notify_completion to report finished work.
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
    ) -> Result<Reply<Delivered>, ToolError> {
        let data = json!({ "from": self.own_id(), "body": p.body });
        Ok(delivered(self.deliver(&p.session_id, kind::MESSAGE, data, None).await?))
    }

    /// Ask another session a question: it gets a `question` event with a question_id and
    /// answers with answer_question. With `wait: true` this returns the answer (or timed_out),
    /// else it comes later as an `answer` event for wait_for_event; use post_message when you
    /// need no answer.
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
        Parameters(p): Parameters<AskQuestionParams>,
    ) -> Result<Reply<Delivered>, ToolError> {
        let timeout = seconds(p.timeout_secs, MAX_EVENT_WAIT_SECS)?;
        // The asker's id rides in the question's: the answer finds its way back without the
        // answering session keeping a table of who asked what.
        let own = self.own_id().unwrap_or_default();
        let question_id = format!("{}@{own}", uuid::Uuid::new_v4());
        let data = json!({ "from": self.own_id(), "question_id": question_id, "body": p.body });
        let mut asked =
            self.deliver(&p.session_id, kind::QUESTION, data, Some(question_id.clone())).await?;
        if !p.wait {
            return Ok(delivered(asked));
        }
        let filter =
            Filter { field: Some(("question_id", question_id)), ..Filter::kinds(&[kind::ANSWER]) };
        let answer = self.core.queue().take_one(&filter, timeout).await;
        asked.timed_out = Some(answer.is_none());
        let text = match &answer {
            Some(answer) => {
                let said = answer.data_value();
                let mut value = json!({ "at_ms": answer.at_ms });
                if let (Value::Object(value), Value::Object(said)) = (&mut value, said) {
                    value.extend(said);
                }
                let text = format!(
                    "session {} answered: {}",
                    p.session_id,
                    value["answer"].as_str().unwrap_or_default()
                );
                asked.answer = Some(value);
                text
            }
            None => format!(
                "asked session {}; no answer within {} s (it may still come, as an `answer` event)",
                p.session_id, p.timeout_secs
            ),
        };
        Ok(Reply::new(text, asked))
    }

    /// Answer a question another session asked you (a `question` event): it gets an `answer`
    /// event with your answer and the question_id. To tell it something unasked use
    /// post_message; to report finished work, notify_completion.
    #[tool(
        output_schema = schema_for_output::<Delivered>(),
        annotations(
            title = "Answer a session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn answer_question(
        &self,
        Parameters(p): Parameters<AnswerQuestionParams>,
    ) -> Result<Reply<Delivered>, ToolError> {
        let asker = p.question_id.split_once('@').map(|(_, asker)| asker.to_owned());
        let Some(asker) = asker.filter(|a| !a.is_empty()) else {
            return Err(CallError::new(
                code::BAD_REQUEST,
                format!(
                    "{:?} is not a question id from ask_question (those look like \
                     <uuid>@<asking session id>); copy the question_id of the question event",
                    p.question_id
                ),
            )
            .into());
        };
        let data =
            json!({ "from": self.own_id(), "question_id": p.question_id, "answer": p.answer });
        Ok(delivered(self.deliver(&asker, kind::ANSWER, data, Some(p.question_id)).await?))
    }
}

/// The reply for an event delivered.
fn delivered(d: Delivered) -> Reply<Delivered> {
    Reply::new(format!("delivered {} to session {}", d.kind, d.session_id), d)
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
    ) -> Result<Delivered, CallError> {
        let event_id = if self.own_id().as_deref() == Some(target) {
            self.core.receive(kind, &data)
        } else {
            self.peers.push(self.core.runtime_dir(), target, kind, data).await?
        };
        Ok(Delivered {
            session_id: target.to_owned(),
            kind: kind.to_owned(),
            event_id,
            question_id,
            answer: None,
            timed_out: None,
        })
    }
}
