//! The operation state machine, as one declared table.
//!
//! Nothing else moves an operation: [`step`] looks the (state, milestone) pair up in [`TABLE`],
//! checks the row's guard, and answers the next state, or a [`Refusal`] that says why not. A
//! milestone the table does not allow — a late `response_started` after `completed`, a second
//! `message_sent` — is refused (and the caller logs it), never applied. `specs/operations.md`
//! draws this table; a unit test below keeps the two from drifting apart.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationStatus {
    /// Created; the text is being typed and submitted.
    Pending,
    /// The user's message appeared in the conversation.
    Sent,
    /// The answer has started (an assistant bubble or the generating indicator appeared).
    Streaming,
    /// The answer is finished; `response_text` holds it.
    Completed,
    /// It went wrong (input not found, tab closed, navigated away…); `error` says why.
    Failed,
    /// The answer was stopped before it finished — by the user with the app's stop control, or
    /// by `cancel_operation` through the adapter's `stop` — `response_text` holds what it said.
    Stopped,
    /// Stopped by `cancel_operation`.
    Cancelled,
    /// Not finished before its deadline.
    TimedOut,
}

impl OperationStatus {
    pub const ALL: [OperationStatus; 8] = [
        OperationStatus::Pending,
        OperationStatus::Sent,
        OperationStatus::Streaming,
        OperationStatus::Completed,
        OperationStatus::Stopped,
        OperationStatus::Failed,
        OperationStatus::Cancelled,
        OperationStatus::TimedOut,
    ];

    /// A final state: no row of the table leaves it.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            OperationStatus::Completed
                | OperationStatus::Stopped
                | OperationStatus::Failed
                | OperationStatus::Cancelled
                | OperationStatus::TimedOut
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            OperationStatus::Pending => "pending",
            OperationStatus::Sent => "sent",
            OperationStatus::Streaming => "streaming",
            OperationStatus::Completed => "completed",
            OperationStatus::Stopped => "stopped",
            OperationStatus::Failed => "failed",
            OperationStatus::Cancelled => "cancelled",
            OperationStatus::TimedOut => "timed_out",
        }
    }
}

impl fmt::Display for OperationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What can happen to an operation: the milestones the page reports, plus the bridge's own
/// `cancelled` (cancel_operation) and `timed_out` (the deadline passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MilestoneKind {
    MessageSent,
    ResponseStarted,
    ResponseProgress,
    ResponseCompleted,
    ResponseStopped,
    Failed,
    Cancelled,
    TimedOut,
}

impl MilestoneKind {
    pub const ALL: [MilestoneKind; 8] = [
        MilestoneKind::MessageSent,
        MilestoneKind::ResponseStarted,
        MilestoneKind::ResponseProgress,
        MilestoneKind::ResponseCompleted,
        MilestoneKind::ResponseStopped,
        MilestoneKind::Failed,
        MilestoneKind::Cancelled,
        MilestoneKind::TimedOut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MilestoneKind::MessageSent => "message_sent",
            MilestoneKind::ResponseStarted => "response_started",
            MilestoneKind::ResponseProgress => "response_progress",
            MilestoneKind::ResponseCompleted => "response_completed",
            MilestoneKind::ResponseStopped => "response_stopped",
            MilestoneKind::Failed => "failed",
            MilestoneKind::Cancelled => "cancelled",
            MilestoneKind::TimedOut => "timed_out",
        }
    }

    /// The milestone named `name` (as the extension sends it), if there is one.
    pub fn parse(name: &str) -> Option<MilestoneKind> {
        MilestoneKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for MilestoneKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a guard may look at besides the milestone's data.
#[derive(Debug, Clone, Copy, Default)]
pub struct Facts {
    /// Characters of the answer seen so far.
    pub chars: u64,
    /// When the operation times out (ms since the epoch).
    pub deadline_at: u64,
    /// Now (ms since the epoch).
    pub now: u64,
}

/// The condition a row adds to its (state, milestone) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Always,
    /// `data.chars` is larger than the answer seen so far: a progress report that does not say
    /// more than the last one is noise (and may be a stale, reordered one).
    TextGrew,
    /// `data.text` is a string: a completion without the answer is not a completion.
    CarriesText,
    /// `data.reason` is a string: every failure says why.
    CarriesReason,
    /// The deadline has passed (a timer left over from before a restart may fire early).
    DeadlinePassed,
}

impl Guard {
    pub fn holds(self, facts: &Facts, data: &Value) -> bool {
        match self {
            Guard::Always => true,
            Guard::TextGrew => data["chars"].as_u64().is_some_and(|c| c > facts.chars),
            Guard::CarriesText => data["text"].is_string(),
            Guard::CarriesReason => data["reason"].is_string(),
            Guard::DeadlinePassed => facts.now >= facts.deadline_at,
        }
    }

    /// The guard in words, as `specs/operations.md` lists it.
    pub fn describe(self) -> &'static str {
        match self {
            Guard::Always => "—",
            Guard::TextGrew => "`data.chars` > characters seen so far",
            Guard::CarriesText => "`data.text` is a string",
            Guard::CarriesReason => "`data.reason` is a string",
            Guard::DeadlinePassed => "now ≥ the operation's deadline",
        }
    }
}

/// One row: in state `from`, milestone `on`, if `guard` holds, go to `to`.
#[derive(Debug, Clone, Copy)]
pub struct Transition {
    pub from: OperationStatus,
    pub on: MilestoneKind,
    pub guard: Guard,
    pub to: OperationStatus,
}

const fn row(
    from: OperationStatus,
    on: MilestoneKind,
    guard: Guard,
    to: OperationStatus,
) -> Transition {
    Transition { from, on, guard, to }
}

use Guard::*;
use OperationStatus::{Cancelled, Completed, Failed, Pending, Sent, Stopped, Streaming, TimedOut};

/// Every allowed transition. A pair that is not here is refused.
pub const TABLE: &[Transition] = &[
    row(Pending, MilestoneKind::MessageSent, Always, Sent),
    row(Sent, MilestoneKind::ResponseStarted, Always, Streaming),
    row(Streaming, MilestoneKind::ResponseProgress, TextGrew, Streaming),
    row(Streaming, MilestoneKind::ResponseCompleted, CarriesText, Completed),
    row(Streaming, MilestoneKind::ResponseStopped, CarriesText, Stopped),
    row(Pending, MilestoneKind::Failed, CarriesReason, Failed),
    row(Sent, MilestoneKind::Failed, CarriesReason, Failed),
    row(Streaming, MilestoneKind::Failed, CarriesReason, Failed),
    row(Pending, MilestoneKind::Cancelled, Always, Cancelled),
    row(Sent, MilestoneKind::Cancelled, Always, Cancelled),
    row(Streaming, MilestoneKind::Cancelled, Always, Cancelled),
    row(Pending, MilestoneKind::TimedOut, DeadlinePassed, TimedOut),
    row(Sent, MilestoneKind::TimedOut, DeadlinePassed, TimedOut),
    row(Streaming, MilestoneKind::TimedOut, DeadlinePassed, TimedOut),
];

/// Why a milestone was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The table has no row for this pair.
    NoTransition { from: OperationStatus, on: MilestoneKind },
    /// There is a row, but its guard does not hold.
    GuardFailed { from: OperationStatus, on: MilestoneKind, guard: Guard },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoTransition { from, on } => {
                write!(f, "{on} is not allowed in state {from}")
            }
            Refusal::GuardFailed { from, on, guard } => {
                write!(f, "{on} in state {from} needs {}", guard.describe())
            }
        }
    }
}

/// The state after milestone `on` with `data`, or why it is refused.
pub fn step(
    from: OperationStatus,
    on: MilestoneKind,
    facts: &Facts,
    data: &Value,
) -> Result<OperationStatus, Refusal> {
    let row = TABLE
        .iter()
        .find(|t| t.from == from && t.on == on)
        .ok_or(Refusal::NoTransition { from, on })?;
    if row.guard.holds(facts, data) {
        Ok(row.to)
    } else {
        Err(Refusal::GuardFailed { from, on, guard: row.guard })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Data that satisfies every guard, so only the table decides.
    fn good(on: MilestoneKind) -> Value {
        match on {
            MilestoneKind::ResponseProgress => json!({ "chars": 10 }),
            MilestoneKind::ResponseCompleted | MilestoneKind::ResponseStopped => {
                json!({ "text": "done", "total_messages": 2 })
            }
            MilestoneKind::Failed => json!({ "reason": "tab_closed", "message": "closed" }),
            _ => json!({}),
        }
    }

    fn facts() -> Facts {
        Facts { chars: 5, deadline_at: 100, now: 200 }
    }

    #[test]
    fn the_happy_path_ends_completed() {
        let mut s = Pending;
        for on in [
            MilestoneKind::MessageSent,
            MilestoneKind::ResponseStarted,
            MilestoneKind::ResponseProgress,
            MilestoneKind::ResponseCompleted,
        ] {
            s = step(s, on, &facts(), &good(on)).unwrap();
        }
        assert_eq!(s, Completed);
    }

    #[test]
    fn every_pair_without_a_row_is_refused() {
        let mut refused = 0;
        for from in OperationStatus::ALL {
            for on in MilestoneKind::ALL {
                let has_row = TABLE.iter().any(|t| t.from == from && t.on == on);
                let got = step(from, on, &facts(), &good(on));
                if has_row {
                    assert!(got.is_ok(), "{from} --{on}--> should be allowed: {got:?}");
                } else {
                    assert_eq!(got, Err(Refusal::NoTransition { from, on }));
                    refused += 1;
                }
            }
        }
        // 8 states × 8 milestones = 64 pairs, 14 rows.
        assert_eq!(refused, 64 - TABLE.len());
    }

    #[test]
    fn final_states_accept_nothing() {
        for from in OperationStatus::ALL.into_iter().filter(|s| s.is_final()) {
            for on in MilestoneKind::ALL {
                assert!(step(from, on, &facts(), &good(on)).is_err(), "{from} + {on}");
            }
        }
    }

    #[test]
    fn the_named_illegal_transitions_are_refused() {
        let late_start = step(Completed, MilestoneKind::ResponseStarted, &facts(), &json!({}));
        assert_eq!(
            late_start,
            Err(Refusal::NoTransition { from: Completed, on: MilestoneKind::ResponseStarted })
        );
        let second_sent = step(Sent, MilestoneKind::MessageSent, &facts(), &json!({}));
        assert_eq!(
            second_sent,
            Err(Refusal::NoTransition { from: Sent, on: MilestoneKind::MessageSent })
        );
        let skipped = step(
            Pending,
            MilestoneKind::ResponseCompleted,
            &facts(),
            &good(MilestoneKind::ResponseCompleted),
        );
        assert!(skipped.is_err(), "cannot complete before it was sent");
    }

    #[test]
    fn guards_refuse_what_they_must() {
        let f = facts();
        let stale = step(Streaming, MilestoneKind::ResponseProgress, &f, &json!({ "chars": 5 }));
        assert!(matches!(stale, Err(Refusal::GuardFailed { guard: TextGrew, .. })));
        let no_text = step(Streaming, MilestoneKind::ResponseCompleted, &f, &json!({}));
        assert!(matches!(no_text, Err(Refusal::GuardFailed { guard: CarriesText, .. })));
        let no_reason = step(Sent, MilestoneKind::Failed, &f, &json!({ "message": "x" }));
        assert!(matches!(no_reason, Err(Refusal::GuardFailed { guard: CarriesReason, .. })));
        let early = Facts { now: 99, ..f };
        let not_yet = step(Streaming, MilestoneKind::TimedOut, &early, &json!({}));
        assert!(matches!(not_yet, Err(Refusal::GuardFailed { guard: DeadlinePassed, .. })));
    }

    #[test]
    fn names_round_trip() {
        for on in MilestoneKind::ALL {
            assert_eq!(MilestoneKind::parse(on.name()), Some(on));
            assert_eq!(serde_json::to_value(on).unwrap(), on.name());
        }
        for s in OperationStatus::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(MilestoneKind::parse("response_begun"), None);
    }

    /// specs/operations.md lists every row of the table with its guard.
    #[test]
    fn the_spec_lists_every_row() {
        let spec = include_str!("../../specs/operations.md");
        for t in TABLE {
            let line = format!(
                "| `{}` | `{}` | {} | `{}` |",
                t.from.name(),
                t.on.name(),
                t.guard.describe(),
                t.to.name()
            );
            assert!(spec.contains(&line), "specs/operations.md lacks the row\n{line}");
        }
    }
}
