//! Moving a session through its graph: `start_workflow` enters the first state,
//! `complete_skill` leaves the current one. Both walk on through routing nodes (skill `null`)
//! at once, to the next state with a skill — what the assistant runs next — or to the end.
//!
//! The walk also keeps the session's place among its work items and batches, so that the
//! assistant never has to say "next item" itself:
//! - arriving at a state that routes on items (has an `items_remaining`/`no_items_remaining`
//!   transition) closes the item being worked on: it is documented;
//! - taking an `items_remaining` transition opens the first pending item (`currentItem`);
//! - taking `batches_remaining` makes the first batch not completed the current one
//!   (`currentBatch`); taking `no_batches_remaining` clears it.
//!
//! A call that cannot go on — the wrong skill, no transition holding — changes nothing: the
//! walk runs on a copy, and only what it returns is saved.

use schemars::JsonSchema;
use serde::Serialize;

use super::graph::{Condition, Graph};
use super::state::SessionState;

/// What the assistant does next.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Next {
    /// The skill to run next; `null` when the workflow is done.
    pub next_skill: Option<String>,
    /// The item and batch that skill works on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Params>,
    /// `clear`: clear your context before running the skill; `none`: go on.
    pub action: Action,
    /// The id of the state the session is now in.
    pub state: String,
    pub workflow: String,
    pub phase: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Params {
    /// The number of the work item being worked on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_number: Option<u32>,
    /// The index (0-based) of the batch being executed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_index: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Clear,
    None,
}

/// Why a walk did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `skill` is not the current state's skill (`expected`; `None` when the workflow is done).
    WrongSkill { state: String, expected: Option<String>, got: String },
    /// At `state`, no transition holds; `missing` says which fact to record.
    Stuck { state: String, missing: String },
    /// The saved state names a state the workflow does not have (its file changed).
    UnknownState { state: String },
}

/// Begin `graph` in a new session record (its items already recorded): enter the start state,
/// and walk on if it is a routing node.
pub fn start(graph: &Graph, session: &mut SessionState) -> Result<(), Refusal> {
    let at = arrive(graph, session, graph.start());
    let at = if graph.state(at).skill.is_none() { advance(graph, session, at)? } else { at };
    session.enter(graph.state(at));
    Ok(())
}

/// The assistant finished `skill`: check it is the current state's, then walk on.
pub fn complete(graph: &Graph, session: &mut SessionState, skill: &str) -> Result<(), Refusal> {
    let at = graph
        .find(&session.state)
        .ok_or_else(|| Refusal::UnknownState { state: session.state.clone() })?;
    let here = graph.state(at);
    if here.skill.as_deref() != Some(skill) || here.is_terminal() {
        return Err(Refusal::WrongSkill {
            state: here.id.clone(),
            expected: here.skill.clone().filter(|_| !here.is_terminal()),
            got: skill.to_owned(),
        });
    }
    let to = advance(graph, session, at)?;
    session.enter(graph.state(to));
    Ok(())
}

/// Where the session stands: the skill it waits for, and what that skill works on.
pub fn next(graph: &Graph, session: &SessionState) -> Next {
    let state = graph.find(&session.state).map(|at| graph.state(at));
    let params = Params { item_number: session.current_item, batch_index: session.current_batch };
    let has_params = params.item_number.is_some() || params.batch_index.is_some();
    Next {
        next_skill: state.and_then(|s| s.skill.clone()),
        params: has_params.then_some(params),
        action: if state.is_some_and(|s| s.clears()) { Action::Clear } else { Action::None },
        state: session.state.clone(),
        workflow: session.workflow.clone(),
        phase: session.phase.clone(),
    }
}

/// Leave state `at` by its first transition that holds, and go on through routing nodes, to
/// the next state with a skill or to the end. Returns where it stopped.
fn advance(graph: &Graph, session: &mut SessionState, mut at: usize) -> Result<usize, Refusal> {
    // Validation refuses routing cycles, so this many steps always suffice.
    for _ in 0..=graph.states().len() {
        let Some((j, to)) = graph.step(at, &session.facts()) else {
            return Err(Refusal::Stuck {
                state: graph.state(at).id.clone(),
                missing: missing(graph, session, at),
            });
        };
        match graph.state(at).transitions[j].condition() {
            Condition::ItemsRemaining => session.open_next_item(),
            Condition::BatchesRemaining => session.open_next_batch(),
            Condition::NoBatchesRemaining => session.current_batch = None,
            _ => {}
        }
        at = arrive(graph, session, to);
        let state = graph.state(at);
        if state.skill.is_some() || state.is_terminal() {
            return Ok(at);
        }
    }
    Err(Refusal::Stuck {
        state: graph.state(at).id.clone(),
        missing: "the routing nodes lead in a circle (the workflow file changed?)".into(),
    })
}

fn arrive(graph: &Graph, session: &mut SessionState, at: usize) -> usize {
    if graph.state(at).routes_on_items() {
        session.close_item();
    }
    at
}

/// Which fact to record so that a transition out of `at` holds.
fn missing(graph: &Graph, session: &SessionState, at: usize) -> String {
    let reads_type = graph
        .state(at)
        .transitions
        .iter()
        .any(|t| matches!(t.condition(), Condition::ItemType { .. }));
    match session.current() {
        Some(item) if reads_type && item.kind.is_none() => format!(
            "item {} ({:?}) has no type; record it with update_workflow {{item_type: \"code\" | \
             \"task\" | \"bugfix\"}}",
            item.number, item.title
        ),
        None if reads_type => {
            "no work item is being worked on, so there is no item type to route by; \
                               record the items with update_workflow {items}"
                .into()
        }
        _ => {
            let facts = session.facts();
            format!(
                "none of its transitions holds (items remaining: {}, batches remaining: {})",
                facts.items_remaining, facts.batches_remaining
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::built_in;
    use crate::graph::ItemType;
    use crate::state::{Changes, ItemStatus};

    fn collab() -> Graph {
        built_in("collab").unwrap()
    }

    fn begin(graph: &Graph, items: serde_json::Value) -> SessionState {
        let mut s = SessionState::new(graph, 1);
        let changes: Changes = serde_json::from_value(json!({ "items": items })).unwrap();
        s.apply(&changes).unwrap();
        start(graph, &mut s).unwrap();
        s
    }

    fn record(s: &mut SessionState, changes: serde_json::Value) {
        s.apply(&serde_json::from_value(changes).unwrap()).unwrap();
    }

    /// Complete whatever skill the session waits for, `n` times; the states passed, in order.
    fn run(graph: &Graph, s: &mut SessionState, n: usize) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..n {
            let skill = next(graph, s).next_skill.expect("a skill to complete");
            complete(graph, s, &skill).unwrap_or_else(|e| panic!("at {}: {e:?}", s.state));
            seen.push(s.state.clone());
        }
        seen
    }

    const BRAINSTORM: [&str; 7] = [
        "brainstorm-exploring",
        "clear-bs1",
        "brainstorm-clarifying",
        "clear-bs2",
        "brainstorm-designing",
        "clear-bs3",
        "brainstorm-validating",
    ];
    const ROUGH_DRAFT: [&str; 10] = [
        "clear-pre-rough",
        "rough-draft-interface",
        "clear-rd1",
        "rough-draft-pseudocode",
        "clear-rd2",
        "rough-draft-skeleton",
        "clear-rd3",
        "build-task-graph",
        "clear-rd4",
        "rough-draft-handoff",
    ];

    #[test]
    fn one_code_item_walks_through_brainstorm_and_rough_draft_then_ends() {
        let g = collab();
        let mut s = begin(&g, json!([{ "title": "Login page", "type": "code" }]));
        assert_eq!(s.state, "collab-start");
        let mut expected = vec!["gather-goals", "clear-pre-item"];
        expected.extend(BRAINSTORM);
        expected.extend(ROUGH_DRAFT);
        expected.extend([
            "clear-post-item",
            "ready-to-implement",
            "clear-pre-execute",
            "workflow-complete",
            "cleanup",
            "done",
        ]);
        assert_eq!(run(&g, &mut s, expected.len()), expected);
        assert_eq!(next(&g, &s).next_skill, None, "done");
        assert_eq!((s.documented_items, s.total_items, s.current_item), (1, 1, None));
    }

    #[test]
    fn each_item_type_takes_its_own_path_and_items_follow_one_another() {
        let g = collab();
        let mut s = begin(
            &g,
            json!([
                { "title": "A task", "type": "task" },
                { "title": "A bug", "type": "bugfix" },
                { "title": "Code", "type": "code" }
            ]),
        );
        let mut expected = vec!["gather-goals", "clear-pre-item"];
        expected.extend(BRAINSTORM);
        expected.extend(["task-planning", "clear-post-item"]);
        expected.extend(BRAINSTORM);
        expected.extend(["systematic-debugging", "clear-post-item"]);
        expected.extend(BRAINSTORM);
        expected.extend(ROUGH_DRAFT);
        expected.extend(["clear-post-item", "ready-to-implement"]);
        let seen = run(&g, &mut s, expected.len());
        assert_eq!(seen, expected);
        assert!(s.items.iter().all(|i| i.status == ItemStatus::Documented));
    }

    #[test]
    fn the_item_number_follows_the_walk() {
        let g = collab();
        let mut s = begin(
            &g,
            json!([{ "title": "one", "type": "task" }, { "title": "two", "type": "task" }]),
        );
        run(&g, &mut s, 2);
        assert_eq!(next(&g, &s).params, None, "no item before the router");
        run(&g, &mut s, 1); // clear-pre-item → brainstorm-exploring
        assert_eq!(next(&g, &s).params.unwrap().item_number, Some(1));
        run(&g, &mut s, 8); // … task-planning → clear-post-item
        assert_eq!(s.state, "clear-post-item");
        assert_eq!(next(&g, &s).action, Action::Clear);
        run(&g, &mut s, 1);
        assert_eq!(
            (s.state.as_str(), s.current_item, s.documented_items),
            ("brainstorm-exploring", Some(2), 1)
        );
    }

    #[test]
    fn batches_are_executed_one_by_one_until_none_remains() {
        let g = collab();
        let mut s = begin(&g, json!([]));
        assert_eq!(
            run(&g, &mut s, 4),
            ["gather-goals", "clear-pre-item", "ready-to-implement", "clear-pre-execute"]
        );
        record(
            &mut s,
            json!({ "batches": [
            { "id": "b1", "tasks": [{ "id": "t1" }] },
            { "id": "b2", "tasks": [{ "id": "t2", "dependsOn": ["t1"] }] }
        ] }),
        );
        assert_eq!(run(&g, &mut s, 1), ["execute-batch"]);
        assert_eq!(next(&g, &s).params.unwrap().batch_index, Some(0));
        record(&mut s, json!({ "tasks": [{ "id": "t1", "status": "completed" }] }));
        assert_eq!(run(&g, &mut s, 3), ["log-batch-complete", "clear-post-batch", "execute-batch"]);
        assert_eq!(next(&g, &s).params.unwrap().batch_index, Some(1));
        // The batch is not done yet: it is executed again.
        assert_eq!(run(&g, &mut s, 3), ["log-batch-complete", "clear-post-batch", "execute-batch"]);
        assert_eq!(s.current_batch, Some(1));
        record(&mut s, json!({ "tasks": [{ "id": "t2", "status": "completed" }] }));
        assert_eq!(
            run(&g, &mut s, 3),
            ["log-batch-complete", "clear-post-batch", "workflow-complete"]
        );
        assert_eq!(s.current_batch, None);
    }

    #[test]
    fn a_wrong_skill_is_refused_everywhere_and_changes_nothing() {
        let g = collab();
        let mut s = begin(&g, json!([{ "title": "t", "type": "task" }]));
        let mut states = 0;
        while let Some(expected) = next(&g, &s).next_skill {
            let before = s.clone();
            let err = complete(&g, &mut s, "not-this-one").unwrap_err();
            assert_eq!(
                err,
                Refusal::WrongSkill {
                    state: s.state.clone(),
                    expected: Some(expected.clone()),
                    got: "not-this-one".into()
                }
            );
            assert_eq!(s, before);
            complete(&g, &mut s, &expected).unwrap();
            states += 1;
        }
        assert_eq!(states, 16);
        let err = complete(&g, &mut s, "cleanup").unwrap_err();
        assert_eq!(
            err,
            Refusal::WrongSkill { state: "done".into(), expected: None, got: "cleanup".into() }
        );
    }

    #[test]
    fn an_item_without_a_type_stops_the_walk_with_what_to_record() {
        let g = collab();
        let mut s = begin(&g, json!([{ "title": "Untyped" }]));
        run(&g, &mut s, 9);
        assert_eq!(s.state, "brainstorm-validating");
        let before = s.clone();
        let err = complete(&g, &mut s, "brainstorm-validating").unwrap_err();
        let Refusal::Stuck { state, missing } = err else { panic!("{err:?}") };
        assert_eq!(state, "item-type-router");
        assert!(
            missing.starts_with("item 1 (\"Untyped\") has no type; record it with update_workflow"),
            "{missing}"
        );
        assert_eq!(s, before);
        record(&mut s, json!({ "item_type": "bugfix" }));
        assert_eq!(s.current().unwrap().kind, Some(ItemType::Bugfix));
        assert_eq!(run(&g, &mut s, 1), ["systematic-debugging"]);
    }

    #[test]
    fn a_state_the_workflow_no_longer_has_is_reported() {
        let g = collab();
        let mut s = begin(&g, json!([]));
        s.state = "gone".into();
        assert_eq!(complete(&g, &mut s, "x"), Err(Refusal::UnknownState { state: "gone".into() }));
    }
}
