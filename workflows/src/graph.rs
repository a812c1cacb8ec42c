//! A workflow: a declared graph of states, each naming the skill the assistant runs there, with
//! guarded transitions. The server, not the assistant, decides what comes next: [`Graph::step`]
//! takes the first transition out of a state whose condition holds for the session's [`Facts`].
//!
//! A workflow is JSON (`specs/workflows.md`, "The model"): the built-in `collab.json` beside this
//! file, or a user's file. [`Graph::parse`] reads it field by field and [`Graph::new`] checks the
//! whole, so that a mistake is reported with the state and the field it is in — an unknown `to`,
//! a state no path reaches, a cycle of routing nodes with no skill on it (the walk would never
//! stop), a duplicate id, a state where in some situation no transition fires — before any
//! session can get stuck on it.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::limits::{MAX_NAME, MAX_SKILL, MAX_STATES, MAX_TRANSITIONS};

/// The kinds of work item the `item_type` condition tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemType {
    /// Code to write: designed, then drafted (interface, pseudocode, skeleton, task graph).
    Code,
    /// Work that is not code (a migration, a document): planned as tasks.
    Task,
    /// A bug: debugged systematically.
    Bugfix,
}

impl ItemType {
    pub const ALL: [ItemType; 3] = [ItemType::Code, ItemType::Task, ItemType::Bugfix];

    pub fn name(self) -> &'static str {
        match self {
            ItemType::Code => "code",
            ItemType::Task => "task",
            ItemType::Bugfix => "bugfix",
        }
    }
}

impl fmt::Display for ItemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a transition may be taken. A transition without one is taken always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// The current work item is of this type.
    ItemType {
        value: ItemType,
    },
    /// Some work item is not documented yet.
    ItemsRemaining,
    /// Every work item is documented (or there are none).
    NoItemsRemaining,
    /// Some batch of the execution plan is not completed.
    BatchesRemaining,
    /// Every batch is completed (or there are none).
    NoBatchesRemaining,
    Always,
}

impl Condition {
    pub fn holds(self, facts: &Facts) -> bool {
        match self {
            Condition::ItemType { value } => facts.item_type == Some(value),
            Condition::ItemsRemaining => facts.items_remaining,
            Condition::NoItemsRemaining => !facts.items_remaining,
            Condition::BatchesRemaining => facts.batches_remaining,
            Condition::NoBatchesRemaining => !facts.batches_remaining,
            Condition::Always => true,
        }
    }

    /// The condition in words, as `specs/workflows.md` and `tabwire workflow show` print it.
    pub fn describe(self) -> String {
        match self {
            Condition::ItemType { value } => format!("item type {value}"),
            Condition::ItemsRemaining => "items remain".into(),
            Condition::NoItemsRemaining => "no items remain".into(),
            Condition::BatchesRemaining => "batches remain".into(),
            Condition::NoBatchesRemaining => "no batches remain".into(),
            Condition::Always => "always".into(),
        }
    }

    /// Whether it reads whether items remain: a state with such a transition is where one work
    /// item ends and the next begins (`super::walk`).
    pub fn reads_items(self) -> bool {
        matches!(self, Condition::ItemsRemaining | Condition::NoItemsRemaining)
    }
}

/// What the conditions read, built from the session's state (`super::state`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// The type of the item being worked on; `None` while none is, or its type is not recorded.
    pub item_type: Option<ItemType>,
    pub items_remaining: bool,
    pub batches_remaining: bool,
}

/// A workflow as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Workflow {
    /// Its name, as `start_workflow {workflow}` takes it: letters, digits, `.`, `_`, `-`.
    pub name: String,
    /// What it is for, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The id of the first state.
    pub start: String,
    /// Every state, in the order a person reads them.
    pub states: Vec<State>,
}

/// One state of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct State {
    pub id: String,
    /// The skill the assistant runs in this state; `null` for a routing node, which the walk
    /// passes through at once. A state whose id begins with `clear-` tells the assistant to
    /// clear its context before running its skill.
    pub skill: Option<String>,
    /// A label grouping states (`brainstorming`, `rough-draft`, …), shown by the browser page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Where to go once its skill is done (or at once, for a routing node): the first whose
    /// condition holds. None: the workflow ends here.
    #[serde(default)]
    pub transitions: Vec<Transition>,
}

/// One way out of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Transition {
    /// The id of the state it leads to.
    pub to: String,
    /// When it may be taken; none means always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
}

impl Transition {
    pub fn condition(&self) -> Condition {
        self.condition.unwrap_or(Condition::Always)
    }
}

impl State {
    /// Where the workflow ends: no way out.
    pub fn is_terminal(&self) -> bool {
        self.transitions.is_empty()
    }

    /// Whether the assistant should clear its context before this state's skill.
    pub fn clears(&self) -> bool {
        self.id.starts_with("clear-")
    }

    /// Whether one work item ends here and the next begins (see `super::walk`).
    pub fn routes_on_items(&self) -> bool {
        self.transitions.iter().any(|t| t.condition().reads_items())
    }
}

/// One thing wrong with a workflow: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The state's id (or `states[i]` when it has none); `None` for the workflow's own fields.
    pub state: Option<String>,
    pub field: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            Some(state) => write!(f, "state {state:?}, field `{}`: {}", self.field, self.message),
            None => write!(f, "field `{}`: {}", self.field, self.message),
        }
    }
}

/// Why a workflow was refused: every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub workflow: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(f, "workflow {:?} is not valid ({n} problem{}): ", self.workflow, plural(n))?;
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

/// A checked workflow, indexed for the walk.
#[derive(Debug, Clone)]
pub struct Graph {
    workflow: Workflow,
    index: HashMap<String, usize>,
    /// For each state, the index of each transition's target.
    targets: Vec<Vec<usize>>,
    start: usize,
}

impl Graph {
    /// Read and check a workflow from JSON text.
    pub fn parse(text: &str) -> Result<Graph, Invalid> {
        let value: Value = serde_json::from_str(text).map_err(|e| Invalid {
            workflow: "?".into(),
            problems: vec![top("(file)", format!("not JSON: {e}"))],
        })?;
        Graph::new(read_workflow(&value)?)
    }

    /// Check a workflow: every problem is reported, not only the first.
    pub fn new(workflow: Workflow) -> Result<Graph, Invalid> {
        let mut problems = Vec::new();
        let index = check_names(&workflow, &mut problems);
        let mut targets = Vec::with_capacity(workflow.states.len());
        for state in &workflow.states {
            let mut out = Vec::with_capacity(state.transitions.len());
            for (j, t) in state.transitions.iter().enumerate() {
                match index.get(&t.to) {
                    Some(&to) => out.push(to),
                    None => problems.push(at(
                        state,
                        format!("transitions[{j}].to"),
                        format!(
                            "{:?} is not a state of this workflow ({})",
                            t.to,
                            some_ids(&workflow)
                        ),
                    )),
                }
            }
            targets.push(out);
        }
        let start = index.get(&workflow.start).copied();
        if start.is_none() {
            let message = format!(
                "{:?} is not a state of this workflow ({})",
                workflow.start,
                some_ids(&workflow)
            );
            problems.push(top("start", message));
        }
        let name = workflow.name.clone();
        let invalid = |problems| Invalid { workflow: name, problems };
        let Some(start) = start.filter(|_| problems.is_empty()) else {
            return Err(invalid(problems));
        };
        let graph = Graph { workflow, index, targets, start };
        graph.check_shape(&mut problems);
        if problems.is_empty() { Ok(graph) } else { Err(invalid(problems)) }
    }

    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    pub fn name(&self) -> &str {
        &self.workflow.name
    }

    pub fn states(&self) -> &[State] {
        &self.workflow.states
    }

    pub fn start(&self) -> usize {
        self.start
    }

    pub fn state(&self, at: usize) -> &State {
        &self.workflow.states[at]
    }

    pub fn find(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The first transition out of state `at` whose condition holds: its position among the
    /// state's transitions, and the index of the state it leads to. `None` when none holds.
    pub fn step(&self, at: usize, facts: &Facts) -> Option<(usize, usize)> {
        let state = self.state(at);
        let j = state.transitions.iter().position(|t| t.condition().holds(facts))?;
        Some((j, self.targets[at][j]))
    }

    /// States no path from the start reaches; a routing cycle; a terminal state with a skill;
    /// a state where, for some facts, no transition fires.
    fn check_shape(&self, problems: &mut Vec<Problem>) {
        let mut reached = vec![false; self.states().len()];
        let mut queue = VecDeque::from([self.start]);
        reached[self.start] = true;
        while let Some(i) = queue.pop_front() {
            for &to in &self.targets[i] {
                if !std::mem::replace(&mut reached[to], true) {
                    queue.push_back(to);
                }
            }
        }
        for (state, _) in self.states().iter().zip(&reached).filter(|(_, r)| !**r) {
            let message = format!("no path from the start ({:?}) reaches it", self.workflow.start);
            problems.push(at(state, "id".into(), message));
        }
        if let Some(cycle) = self.routing_cycle() {
            let names: Vec<&str> = cycle.iter().map(|&i| self.state(i).id.as_str()).collect();
            problems.push(at(
                self.state(cycle[0]),
                "skill".into(),
                format!(
                    "the routing nodes {} form a cycle with no skill on it: the walk would never \
                     stop; give one of them a skill, or route out of the cycle",
                    names.join(" → ")
                ),
            ));
        }
        for state in self.states() {
            if state.is_terminal() && state.skill.is_some() {
                problems.push(at(
                    state,
                    "transitions".into(),
                    "a state with a skill needs a way out (completing its skill must lead \
                     somewhere); end the workflow in a state with \"skill\": null, such as \"done\""
                        .into(),
                ));
            }
            if !state.is_terminal()
                && let Some(gap) = gap(state)
            {
                problems.push(at(
                    state,
                    "transitions".into(),
                    format!(
                        "no transition fires when {gap}, so a session there would be stuck; add \
                         one for that case, or a last transition without a condition"
                    ),
                ));
            }
        }
    }

    /// A cycle made only of routing nodes (skill `null`), if there is one: its states in order.
    fn routing_cycle(&self) -> Option<Vec<usize>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnPath,
            Done,
        }
        let routing = |i: usize| self.state(i).skill.is_none();
        let mut mark = vec![Mark::New; self.states().len()];
        for root in (0..self.states().len()).filter(|&i| routing(i)) {
            if mark[root] != Mark::New {
                continue;
            }
            // Depth-first, by hand: the path so far, and how far each of its nodes got.
            let mut path: Vec<(usize, usize)> = vec![(root, 0)];
            mark[root] = Mark::OnPath;
            while let Some(&(node, next)) = path.last() {
                let Some(&to) = self.targets[node].get(next) else {
                    mark[node] = Mark::Done;
                    path.pop();
                    continue;
                };
                if let Some(top) = path.last_mut() {
                    top.1 += 1;
                }
                if !routing(to) {
                    continue;
                }
                match mark[to] {
                    Mark::OnPath => {
                        let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut cycle: Vec<usize> = path[from..].iter().map(|&(n, _)| n).collect();
                        cycle.push(to);
                        return Some(cycle);
                    }
                    Mark::New => {
                        mark[to] = Mark::OnPath;
                        path.push((to, 0));
                    }
                    Mark::Done => {}
                }
            }
        }
        None
    }
}

/// Facts for which none of `state`'s transitions holds, in words; `None` when every case is
/// covered. Every combination of item type, items remaining and batches remaining is tried
/// (12 in all). "No item type" is not among them: it means the type was not recorded, which
/// the walk reports as the missing fact it is (`super::walk`).
fn gap(state: &State) -> Option<String> {
    let conditions: Vec<Condition> = state.transitions.iter().map(Transition::condition).collect();
    for item_type in ItemType::ALL {
        for items_remaining in [true, false] {
            for batches_remaining in [true, false] {
                let facts =
                    Facts { item_type: Some(item_type), items_remaining, batches_remaining };
                if !conditions.iter().any(|c| c.holds(&facts)) {
                    return Some(describe_case(&conditions, &facts));
                }
            }
        }
    }
    None
}

/// The facts of an uncovered case, naming only what the state's conditions read.
fn describe_case(conditions: &[Condition], facts: &Facts) -> String {
    let mut parts = Vec::new();
    if conditions.iter().any(|c| matches!(c, Condition::ItemType { .. })) {
        parts.push(format!(
            "the item type is {}",
            facts.item_type.map_or("unknown", ItemType::name)
        ));
    }
    if conditions.iter().any(|c| c.reads_items()) {
        parts.push(if facts.items_remaining { "items remain" } else { "no items remain" }.into());
    }
    if conditions
        .iter()
        .any(|c| matches!(c, Condition::BatchesRemaining | Condition::NoBatchesRemaining))
    {
        parts.push(
            if facts.batches_remaining { "batches remain" } else { "no batches remain" }.into(),
        );
    }
    parts.join(" and ")
}

/// Names, ids, skills and sizes: what needs no graph to check. Returns the index of the ids.
fn check_names(workflow: &Workflow, problems: &mut Vec<Problem>) -> HashMap<String, usize> {
    if let Err(why) = plain_name(&workflow.name) {
        problems.push(top("name", why));
    }
    match workflow.states.len() {
        0 => problems.push(top("states", "a workflow needs at least one state".into())),
        n if n > MAX_STATES => problems.push(top(
            "states",
            format!("{n} states, over the limit of {MAX_STATES}; split the workflow"),
        )),
        _ => {}
    }
    let mut index = HashMap::new();
    for (i, state) in workflow.states.iter().enumerate() {
        if let Err(why) = plain_name(&state.id) {
            problems.push(at(state, "id".into(), why));
        }
        if let Some(&first) = index.get(&state.id) {
            problems.push(at(
                state,
                "id".into(),
                format!("declared twice (states[{first}] and states[{i}]); ids must be unique"),
            ));
        } else {
            index.insert(state.id.clone(), i);
        }
        if let Some(skill) = &state.skill
            && (skill.trim().is_empty() || skill.chars().count() > MAX_SKILL)
        {
            let why = format!(
                "a skill is a name of 1 to {MAX_SKILL} characters, or null for a routing node"
            );
            problems.push(at(state, "skill".into(), why));
        }
        if state.transitions.len() > MAX_TRANSITIONS {
            let why = format!(
                "{} transitions, over the limit of {MAX_TRANSITIONS}",
                state.transitions.len()
            );
            problems.push(at(state, "transitions".into(), why));
        }
    }
    index
}

/// A name that can be a file name and a key: 1 to 64 letters, digits, `.`, `_` or `-`, not
/// beginning with `.` (so neither `.` nor `..`). Also what a session name must be.
pub fn plain_name(name: &str) -> Result<(), String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > MAX_NAME || name.starts_with('.') || !name.chars().all(ok) {
        return Err(format!(
            "{name:?} is not a plain name: use 1 to {MAX_NAME} letters, digits, '.', '_' or '-', \
             not beginning with '.'"
        ));
    }
    Ok(())
}

fn at(state: &State, field: String, message: String) -> Problem {
    Problem { state: Some(state.id.clone()), field, message }
}

fn top(field: &str, message: String) -> Problem {
    Problem { state: None, field: field.into(), message }
}

/// `it has 34 states: collab-start, gather-goals, …`, for messages.
fn some_ids(workflow: &Workflow) -> String {
    let ids: Vec<&str> = workflow.states.iter().take(8).map(|s| s.id.as_str()).collect();
    let more = if workflow.states.len() > 8 { ", …" } else { "" };
    format!(
        "it has {} state{}: {}{more}",
        workflow.states.len(),
        plural(workflow.states.len()),
        ids.join(", ")
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

// ---------------------------------------------------------------------------------------------
// Reading the JSON field by field, so that each mistake names its state and field.

const WORKFLOW_FIELDS: [&str; 4] = ["name", "description", "start", "states"];
const STATE_FIELDS: [&str; 4] = ["id", "skill", "phase", "transitions"];
const TRANSITION_FIELDS: [&str; 2] = ["to", "condition"];

fn read_workflow(value: &Value) -> Result<Workflow, Invalid> {
    let mut problems = Vec::new();
    let name = value.get("name").and_then(Value::as_str).unwrap_or("?").to_owned();
    let Some(obj) = value.as_object() else {
        problems.push(top("(file)", "a workflow is a JSON object {name, start, states}".into()));
        return Err(Invalid { workflow: name, problems });
    };
    unknown_fields(obj, &WORKFLOW_FIELDS, &mut |field, message| problems.push(top(field, message)));
    let text = |field: &str, problems: &mut Vec<Problem>| match obj.get(field) {
        Some(Value::String(s)) => s.clone(),
        _ => {
            problems.push(top(field, "missing, or not a string".into()));
            String::new()
        }
    };
    let start = text("start", &mut problems);
    let _ = text("name", &mut problems);
    let description = match obj.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            problems.push(top("description", "not a string".into()));
            None
        }
    };
    let states = match obj.get("states") {
        Some(Value::Array(states)) => {
            states.iter().enumerate().filter_map(|(i, s)| read_state(i, s, &mut problems)).collect()
        }
        _ => {
            problems.push(top("states", "missing, or not an array of states".into()));
            Vec::new()
        }
    };
    if problems.is_empty() {
        Ok(Workflow { name, description, start, states })
    } else {
        Err(Invalid { workflow: name, problems })
    }
}

fn read_state(i: usize, value: &Value, problems: &mut Vec<Problem>) -> Option<State> {
    let id = value.get("id").and_then(Value::as_str);
    let who = id.map_or_else(|| format!("states[{i}]"), str::to_owned);
    let mut bad = |field: &str, message: String| {
        problems.push(Problem { state: Some(who.clone()), field: field.into(), message })
    };
    let Some(obj) = value.as_object() else {
        bad("(state)", "a state is an object {id, skill, transitions}".into());
        return None;
    };
    unknown_fields(obj, &STATE_FIELDS, &mut bad);
    if id.is_none() {
        bad("id", "missing, or not a string".into());
    }
    let skill = match obj.get("skill") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) => None,
        Some(_) => {
            bad("skill", "must be the skill's name (a string), or null for a routing node".into());
            None
        }
        None => {
            bad("skill", "missing: give the skill's name, or null for a routing node".into());
            None
        }
    };
    let phase = match obj.get("phase") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            bad("phase", "must be a string".into());
            None
        }
    };
    let mut transitions = Vec::new();
    match obj.get("transitions") {
        None => {}
        Some(Value::Array(list)) => {
            for (j, t) in list.iter().enumerate() {
                transitions.extend(read_transition(j, t, &mut bad));
            }
        }
        Some(_) => bad("transitions", "must be an array of {to, condition?}".into()),
    }
    Some(State { id: id?.to_owned(), skill, phase, transitions })
}

fn read_transition(
    j: usize,
    value: &Value,
    bad: &mut impl FnMut(&str, String),
) -> Option<Transition> {
    let Some(obj) = value.as_object() else {
        bad(&format!("transitions[{j}]"), "a transition is an object {to, condition?}".into());
        return None;
    };
    unknown_fields(obj, &TRANSITION_FIELDS, &mut |field, m| {
        bad(&format!("transitions[{j}].{field}"), m)
    });
    let to = obj.get("to").and_then(Value::as_str);
    if to.is_none() {
        bad(&format!("transitions[{j}].to"), "missing, or not a string (a state's id)".into());
    }
    let condition = match obj.get("condition") {
        None | Some(Value::Null) => None,
        Some(c) => match serde_json::from_value::<Condition>(c.clone()) {
            Ok(c) => Some(c),
            Err(e) => {
                let why = format!(
                    "{e}; a condition is {{\"type\": \"item_type\", \"value\": \"code\"|\"task\"|\
                     \"bugfix\"}}, or {{\"type\": …}} with items_remaining, no_items_remaining, \
                     batches_remaining, no_batches_remaining or always"
                );
                bad(&format!("transitions[{j}].condition"), why);
                return None;
            }
        },
    };
    Some(Transition { to: to?.to_owned(), condition })
}

fn unknown_fields(obj: &Map<String, Value>, known: &[&str], bad: &mut impl FnMut(&str, String)) {
    for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
        bad(key, format!("unknown field; the fields here are {}", known.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(workflow: Value) -> Result<Graph, Invalid> {
        Graph::parse(&workflow.to_string())
    }

    /// The one problem a bad workflow has, as text.
    fn refused(workflow: Value) -> String {
        let invalid = check(workflow).expect_err("the workflow should be refused");
        assert_eq!(invalid.problems.len(), 1, "{invalid}");
        invalid.problems[0].to_string()
    }

    fn small() -> Value {
        json!({
            "name": "small",
            "start": "a",
            "states": [
                { "id": "a", "skill": "write", "transitions": [{ "to": "r" }] },
                { "id": "r", "skill": null, "transitions": [
                    { "to": "a", "condition": { "type": "items_remaining" } },
                    { "to": "done", "condition": { "type": "no_items_remaining" } }
                ] },
                { "id": "done", "skill": null, "transitions": [] }
            ]
        })
    }

    #[test]
    fn a_good_workflow_is_accepted_and_steps_by_its_first_holding_transition() {
        let graph = check(small()).unwrap();
        let r = graph.find("r").unwrap();
        let more = Facts { items_remaining: true, ..Facts::default() };
        assert_eq!(graph.step(r, &more), Some((0, graph.find("a").unwrap())));
        assert_eq!(graph.step(r, &Facts::default()), Some((1, graph.find("done").unwrap())));
        assert_eq!(graph.step(graph.find("done").unwrap(), &more), None, "terminal");
        assert!(graph.state(r).routes_on_items());
    }

    #[test]
    fn an_unknown_to_names_the_state_and_field() {
        let mut w = small();
        w["states"][0]["transitions"][0]["to"] = json!("nowhere");
        let said = refused(w);
        assert!(
            said.starts_with("state \"a\", field `transitions[0].to`: \"nowhere\" is not a state"),
            "{said}"
        );
    }

    #[test]
    fn an_unknown_start_is_refused() {
        let mut w = small();
        w["start"] = json!("b");
        assert!(refused(w).starts_with(
            "field `start`: \"b\" is not a state of this workflow (it has 3 states: a, r, done)"
        ));
    }

    #[test]
    fn a_state_no_path_reaches_is_refused() {
        let mut w = small();
        w["states"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "id": "island", "skill": "x", "transitions": [{ "to": "done" }] }));
        assert_eq!(
            refused(w),
            "state \"island\", field `id`: no path from the start (\"a\") reaches it"
        );
    }

    #[test]
    fn a_routing_cycle_without_a_skill_is_refused() {
        let w = json!({
            "name": "loop", "start": "a",
            "states": [
                { "id": "a", "skill": "s", "transitions": [{ "to": "r1" }] },
                { "id": "r1", "skill": null, "transitions": [
                    { "to": "r2", "condition": { "type": "items_remaining" } },
                    { "to": "end" }
                ] },
                { "id": "r2", "skill": null, "transitions": [{ "to": "r1" }] },
                { "id": "end", "skill": null, "transitions": [] }
            ]
        });
        let said = refused(w);
        assert!(
            said.contains("the routing nodes r1 → r2 → r1 form a cycle with no skill on it"),
            "{said}"
        );
    }

    #[test]
    fn a_cycle_through_a_skill_is_fine() {
        let w = json!({
            "name": "loop", "start": "a",
            "states": [
                { "id": "a", "skill": "s", "transitions": [{ "to": "b" }] },
                { "id": "b", "skill": "t", "transitions": [{ "to": "a" }] }
            ]
        });
        assert!(check(w).is_ok());
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let mut w = small();
        w["states"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "id": "a", "skill": "again", "transitions": [{ "to": "done" }] }));
        let said = refused(w);
        assert_eq!(
            said,
            "state \"a\", field `id`: declared twice (states[0] and states[3]); ids must be unique"
        );
    }

    #[test]
    fn a_state_where_no_transition_can_fire_is_refused() {
        let mut w = small();
        w["states"][1]["transitions"][1]["condition"] = json!({ "type": "items_remaining" });
        let said = refused(w);
        assert!(
            said.starts_with(
                "state \"r\", field `transitions`: no transition fires when no items remain"
            ),
            "{said}"
        );
        let types = json!({
            "name": "types", "start": "r",
            "states": [
                { "id": "r", "skill": null, "transitions": [
                    { "to": "end", "condition": { "type": "item_type", "value": "code" } },
                    { "to": "end", "condition": { "type": "item_type", "value": "task" } }
                ] },
                { "id": "end", "skill": null, "transitions": [] }
            ]
        });
        assert!(refused(types).contains("no transition fires when the item type is bugfix"));
    }

    #[test]
    fn a_terminal_state_with_a_skill_is_refused() {
        let mut w = small();
        w["states"][2]["skill"] = json!("finish");
        assert!(refused(w).starts_with(
            "state \"done\", field `transitions`: a state with a skill needs a way out"
        ));
    }

    #[test]
    fn a_missing_skill_and_a_bad_condition_name_their_field() {
        let mut w = small();
        w["states"][0].as_object_mut().unwrap().remove("skill");
        assert!(
            refused(w)
                .starts_with("state \"a\", field `skill`: missing: give the skill's name, or null")
        );
        let mut w = small();
        w["states"][1]["transitions"][0]["condition"] = json!({ "type": "items_left" });
        let said = refused(w);
        assert!(
            said.starts_with(
                "state \"r\", field `transitions[0].condition`: unknown variant `items_left`"
            ),
            "{said}"
        );
        let mut w = small();
        w["states"][1]["transitions"][0]["when"] = json!("now");
        assert!(refused(w).starts_with("state \"r\", field `transitions[0].when`: unknown field"));
    }

    #[test]
    fn names_and_sizes_are_bounded() {
        let mut w = small();
        w["name"] = json!("../etc");
        assert!(refused(w).starts_with("field `name`: \"../etc\" is not a plain name"));
        let states: Vec<Value> = (0..=MAX_STATES)
            .map(
                |i| json!({ "id": format!("s{i}"), "skill": "x", "transitions": [{ "to": "s0" }] }),
            )
            .collect();
        let big = json!({ "name": "big", "start": "s0", "states": states });
        let invalid = check(big).unwrap_err();
        assert!(
            invalid.problems.iter().any(|p| p.to_string().contains("over the limit of 500")),
            "{invalid}"
        );
        let empty = check(json!({ "name": "e", "start": "x", "states": [] })).unwrap_err();
        assert!(empty.to_string().contains("field `states`: a workflow needs at least one state"));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let w = json!({
            "name": "many", "start": "a",
            "states": [
                { "id": "a", "skill": "", "transitions": [{ "to": "b" }, { "to": "zz" }] },
                { "id": "a", "skill": null, "transitions": [] }
            ]
        });
        let invalid = check(w).unwrap_err();
        assert_eq!(invalid.problems.len(), 4, "{invalid}");
        assert!(invalid.to_string().starts_with("workflow \"many\" is not valid (4 problems): "));
    }
}
