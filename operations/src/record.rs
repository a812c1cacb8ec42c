//! One operation as it is kept, stored and shown: where it is, what happened to it, and the
//! answer. [`Operation::apply`] is the only way its status changes, and it asks the table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::{self, Facts, MilestoneKind, OperationStatus, Refusal};

/// Characters of the sent text kept in the record (enough to recognise it in a list).
const TEXT_KEPT: usize = 200;

/// A milestone as it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Milestone {
    /// `message_sent`, `response_started`, `response_progress`, `response_completed`,
    /// `failed`, `cancelled` or `timed_out`.
    pub name: MilestoneKind,
    /// When it was seen, in ms since the Unix epoch (in the page for the page's milestones).
    pub at: u64,
    /// What the page reported with it, e.g. `{chars, excerpt}` for progress and
    /// `{text, total_messages}` for completion; `{reason, message}` for a failure.
    pub data: Value,
}

/// Why an operation failed, was cancelled or timed out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// A short machine word: `input_not_found`, `tab_closed`, `navigated_away`,
    /// `tab_gone_while_bridge_down`, `cancelled`, `timed_out`, …
    pub reason: String,
    /// What happened and what to do, for the person.
    pub message: String,
}

/// An operation: one message sent to a chat web app, followed to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub operation_id: String,
    pub status: OperationStatus,
    pub tab_id: i64,
    /// Profile id of the browser the tab is in (tab ids are per browser).
    pub browser: String,
    /// Name of the site adapter used.
    pub adapter: String,
    /// The start of the text that was sent.
    pub text: String,
    /// In order. Progress reports are folded into one entry (the latest), so the list stays
    /// short however long the answer streams.
    pub milestones: Vec<Milestone>,
    pub response_text: Option<String>,
    pub error: Option<Failure>,
    pub created_at: u64,
    pub updated_at: u64,
    pub deadline_at: u64,
    /// The highest milestone number (`n`) from the page seen so far: a milestone with a number
    /// at or below it is a repeat (the host's replay, or a status query after a restart).
    #[serde(default)]
    pub page_seq: u64,
    /// Characters of the answer seen so far.
    #[serde(default)]
    pub chars: u64,
    /// Pid of the `tabwire mcp` that follows it; another live bridge leaves it alone.
    #[serde(default)]
    pub owner_pid: u32,
    /// The session that follows it: one process may hold several (`tabwire serve --http`),
    /// and another session of the same process leaves it alone while this one is live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_session: Option<String>,
    /// The origin of the chat site the answer comes from (what it says is that site's data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Operation {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        operation_id: String,
        tab_id: i64,
        browser: String,
        adapter: String,
        text: &str,
        now: u64,
        deadline_at: u64,
    ) -> Operation {
        Operation {
            operation_id,
            status: OperationStatus::Pending,
            tab_id,
            browser,
            adapter,
            text: text.chars().take(TEXT_KEPT).collect(),
            milestones: Vec::new(),
            response_text: None,
            error: None,
            created_at: now,
            updated_at: now,
            deadline_at,
            page_seq: 0,
            chars: 0,
            owner_pid: std::process::id(),
            owner_session: None,
            origin: None,
        }
    }

    /// Apply a milestone if the table allows it; otherwise leave the operation as it was.
    pub fn apply(
        &mut self,
        on: MilestoneKind,
        at: u64,
        data: Value,
        now: u64,
    ) -> Result<OperationStatus, Refusal> {
        let facts = Facts { chars: self.chars, deadline_at: self.deadline_at, now };
        let next = machine::step(self.status, on, &facts, &data)?;
        match on {
            MilestoneKind::ResponseProgress => {
                self.chars = data["chars"].as_u64().unwrap_or(self.chars);
                if self.milestones.last().is_some_and(|m| m.name == MilestoneKind::ResponseProgress)
                {
                    self.milestones.pop();
                }
            }
            MilestoneKind::ResponseCompleted | MilestoneKind::ResponseStopped => {
                let text = data["text"].as_str().unwrap_or_default().to_owned();
                self.chars = text.chars().count() as u64;
                self.response_text = Some(text);
            }
            MilestoneKind::Failed | MilestoneKind::Cancelled | MilestoneKind::TimedOut => {
                let word = |k: &str| data[k].as_str().map(str::to_owned);
                self.error = Some(Failure {
                    reason: word("reason").unwrap_or_else(|| on.name().to_owned()),
                    message: word("message").unwrap_or_default(),
                });
            }
            MilestoneKind::MessageSent | MilestoneKind::ResponseStarted => {}
        }
        self.status = next;
        self.updated_at = now;
        self.milestones.push(Milestone { name: on, at, data });
        Ok(next)
    }

    /// Taken over from the store with the wall clock behind the time the record was last
    /// written: the clock was set back while no bridge ran. The record's times are moved back by
    /// the same amount, so it keeps the time it had left then; otherwise its deadline would lie
    /// as far ahead as the clock went back (a day, for a clock set back a day). A clock set
    /// forward cannot be told from time that passed: such a deadline has passed.
    pub fn rebase_clock(&mut self, now: u64) {
        let back = self.updated_at.saturating_sub(now);
        if back > 0 {
            self.created_at = self.created_at.saturating_sub(back);
            self.updated_at = now;
            self.deadline_at = self.deadline_at.saturating_sub(back);
        }
    }

    /// The newest milestone.
    pub fn last(&self) -> Option<&Milestone> {
        self.milestones.last()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn op() -> Operation {
        Operation::new("op_1".into(), 5, "prof".into(), "fixture".into(), "hi", 1, 1_000)
    }

    #[test]
    fn progress_is_folded_and_the_answer_kept() {
        let mut op = op();
        op.apply(MilestoneKind::MessageSent, 2, json!({}), 2).unwrap();
        op.apply(MilestoneKind::ResponseStarted, 3, json!({}), 3).unwrap();
        op.apply(MilestoneKind::ResponseProgress, 4, json!({ "chars": 3 }), 4).unwrap();
        op.apply(MilestoneKind::ResponseProgress, 5, json!({ "chars": 8 }), 5).unwrap();
        let stale = op.apply(MilestoneKind::ResponseProgress, 6, json!({ "chars": 7 }), 6);
        assert!(stale.is_err());
        op.apply(
            MilestoneKind::ResponseCompleted,
            7,
            json!({ "text": "four", "total_messages": 2 }),
            7,
        )
        .unwrap();
        let names: Vec<_> = op.milestones.iter().map(|m| m.name.name()).collect();
        assert_eq!(
            names,
            ["message_sent", "response_started", "response_progress", "response_completed"]
        );
        assert_eq!(op.milestones[2].data["chars"], 8);
        assert_eq!(op.response_text.as_deref(), Some("four"));
        assert_eq!(op.status, OperationStatus::Completed);
    }

    #[test]
    fn a_refused_milestone_changes_nothing() {
        let mut op = op();
        let before = op.clone();
        assert!(op.apply(MilestoneKind::ResponseStarted, 2, json!({}), 2).is_err());
        assert_eq!(op, before);
    }

    #[test]
    fn a_clock_set_back_keeps_the_time_left() {
        let (day, t) = (86_400_000, 100 * 86_400_000);
        let mut op = Operation::new("op_1".into(), 5, "p".into(), "a".into(), "hi", t, t + 60_000);
        op.updated_at = t + 10_000; // 50 s left when last written
        let mut set_back = op.clone();
        set_back.rebase_clock(t + 15_000 - day); // 5 s later, with the clock a day behind
        assert_eq!(set_back.deadline_at - set_back.updated_at, 50_000, "the 50 s it had left");
        assert!(set_back.created_at < set_back.updated_at);
        let mut ahead = op.clone();
        ahead.rebase_clock(t + 20_000);
        assert_eq!(ahead, op, "a clock that went on changes nothing");
    }

    #[test]
    fn failure_keeps_its_reason() {
        let mut op = op();
        let data = json!({ "reason": "tab_closed", "message": "tab 5 was closed" });
        op.apply(MilestoneKind::Failed, 2, data, 2).unwrap();
        let error = op.error.unwrap();
        assert_eq!(
            (error.reason.as_str(), error.message.as_str()),
            ("tab_closed", "tab 5 was closed")
        );
    }
}
