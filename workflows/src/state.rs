//! Where one session stands in its workflow — the record saved as
//! `<project>/.collab/<session>/collab-state.json` — and the facts the transitions read.
//!
//! Two kinds of fields. What the assistant records with `update_workflow` (items and their
//! types, the batches of the execution plan and each task's status, `hasSnapshot`), checked
//! here field by field. And what follows from them, recomputed after every change so that it
//! can never disagree: the counts of items, each batch's status (completed once every task
//! is), the lists of completed and pending tasks. The walk (`super::walk`) moves `state`,
//! `currentItem` and `currentBatch`.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::graph::{Facts, Graph, ItemType, State};
use super::limits::{MAX_BATCHES, MAX_DEPENDS_ON, MAX_ID, MAX_ITEMS, MAX_TASKS, MAX_TITLE};

/// One session's place in its workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The workflow's name (`list_workflows`).
    pub workflow: String,
    /// The id of the state the session is in.
    pub state: String,
    /// That state's phase (`brainstorming`, `rough-draft`, …), or empty.
    pub phase: String,
    /// When it last changed, in ms since the Unix epoch.
    pub last_activity: u64,
    /// When `start_workflow` began it (ms): with `revision`, what orders two versions.
    pub started_at: u64,
    /// 1 at the start, one more at every change, whichever bridge makes it.
    pub revision: u64,
    /// The number of the work item being worked on, if one is.
    pub current_item: Option<u32>,
    /// Whether the assistant saved a snapshot of its context (it records this itself).
    pub has_snapshot: bool,
    pub total_items: u32,
    /// Items gone through to the end of their design (brainstorm, then draft, plan or debug).
    pub documented_items: u32,
    /// The work items, by number.
    pub items: Vec<Item>,
    /// The execution plan: batches run in order; a batch is remaining while not completed.
    pub batches: Vec<Batch>,
    /// The index (0-based) of the batch being executed, if one is.
    pub current_batch: Option<u32>,
    /// Ids of the completed tasks, in plan order.
    pub completed_tasks: Vec<String>,
    /// Ids of the tasks not completed yet (pending, in progress or failed), in plan order.
    pub pending_tasks: Vec<String>,
}

/// A work item: one goal of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Item {
    pub number: u32,
    pub title: String,
    /// `code`, `task` or `bugfix`; `null` until recorded.
    #[serde(rename = "type")]
    pub kind: Option<ItemType>,
    pub status: ItemStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Not gone through yet (or being gone through now).
    Pending,
    /// Its design is done: the walk moved on to the next item.
    Documented,
}

/// A batch of the execution plan: tasks that may run together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Batch {
    pub id: String,
    /// `completed` once every task is, `in_progress` once any has started, else `pending`.
    pub status: BatchStatus,
    pub tasks: Vec<Task>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub status: TaskStatus,
    /// Tasks (of this batch or an earlier one) that must be completed first.
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl TaskStatus {
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
        }
    }
}

/// A work item as `start_workflow` and `update_workflow` take it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemInput {
    /// Which item: an existing number changes that item; a new number, or none (the next
    /// number), adds one.
    #[serde(default)]
    pub number: Option<u32>,
    /// A one-line title; required for a new item.
    #[serde(default)]
    pub title: Option<String>,
    /// `code` (designed, then drafted), `task` (planned) or `bugfix` (debugged).
    #[serde(default, rename = "type")]
    pub kind: Option<ItemType>,
    /// `pending` to go through it again, or `documented` to skip it.
    #[serde(default)]
    pub status: Option<ItemStatus>,
}

/// A batch of the execution plan, as `update_workflow` takes it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchInput {
    pub id: String,
    /// At least one task.
    pub tasks: Vec<TaskInput>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    pub id: String,
    /// Tasks of this batch or an earlier one that must be completed first.
    #[serde(default, rename = "dependsOn", alias = "depends_on")]
    pub depends_on: Vec<String>,
    /// Default: what the task with this id had in the plan before, else `pending`.
    #[serde(default)]
    pub status: Option<TaskStatus>,
}

/// A task's new status.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdate {
    pub id: String,
    /// `pending`, `in_progress`, `completed` or `failed`.
    pub status: TaskStatus,
}

/// What `update_workflow` records: the facts the transitions read. Every field is optional;
/// give at least one.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Changes {
    /// The type of the item being worked on now: `code`, `task` or `bugfix`.
    #[serde(default)]
    pub item_type: Option<ItemType>,
    /// Items to add or change, matched by `number`.
    #[serde(default)]
    pub items: Option<Vec<ItemInput>>,
    /// The whole execution plan, replacing the one recorded (tasks keep their status by id).
    #[serde(default)]
    pub batches: Option<Vec<BatchInput>>,
    /// New statuses of tasks of the plan, by id.
    #[serde(default)]
    pub tasks: Option<Vec<TaskUpdate>>,
    /// Whether the assistant saved a snapshot of its context.
    #[serde(default)]
    pub has_snapshot: Option<bool>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.item_type.is_none()
            && self.items.is_none()
            && self.batches.is_none()
            && self.tasks.is_none()
            && self.has_snapshot.is_none()
    }
}

impl SessionState {
    /// A session at the start of `graph`, before its first state is entered.
    pub fn new(graph: &Graph, now: u64) -> SessionState {
        SessionState {
            workflow: graph.name().to_owned(),
            state: String::new(),
            phase: String::new(),
            last_activity: now,
            started_at: now,
            revision: 0,
            current_item: None,
            has_snapshot: false,
            total_items: 0,
            documented_items: 0,
            items: Vec::new(),
            batches: Vec::new(),
            current_batch: None,
            completed_tasks: Vec::new(),
            pending_tasks: Vec::new(),
        }
    }

    /// What the transitions read now.
    pub fn facts(&self) -> Facts {
        Facts {
            item_type: self.current().and_then(|i| i.kind),
            items_remaining: self.items.iter().any(|i| i.status == ItemStatus::Pending),
            batches_remaining: self.batches.iter().any(|b| b.status != BatchStatus::Completed),
        }
    }

    /// The item being worked on.
    pub fn current(&self) -> Option<&Item> {
        let n = self.current_item?;
        self.items.iter().find(|i| i.number == n)
    }

    /// The batch being executed.
    pub fn batch(&self) -> Option<&Batch> {
        self.batches.get(self.current_batch? as usize)
    }

    /// Now in `state`.
    pub fn enter(&mut self, state: &State) {
        self.state = state.id.clone();
        self.phase = state.phase.clone().unwrap_or_default();
    }

    /// The item being worked on is done with: documented.
    pub fn close_item(&mut self) {
        if let Some(n) = self.current_item.take()
            && let Some(item) = self.items.iter_mut().find(|i| i.number == n)
        {
            item.status = ItemStatus::Documented;
        }
        self.settle();
    }

    /// Work on the first pending item (by number).
    pub fn open_next_item(&mut self) {
        self.current_item =
            self.items.iter().find(|i| i.status == ItemStatus::Pending).map(|i| i.number);
    }

    /// Execute the first batch not completed.
    pub fn open_next_batch(&mut self) {
        self.current_batch =
            self.batches.iter().position(|b| b.status != BatchStatus::Completed).map(|i| i as u32);
    }

    /// Tasks of the current batch that can run now (every `dependsOn` completed) and are not
    /// completed, and those still waiting for another, with what they wait for.
    pub fn readiness(&self) -> (Vec<&Task>, Vec<(&Task, Vec<&str>)>) {
        let done: HashSet<&str> = self.completed_tasks.iter().map(String::as_str).collect();
        let mut ready = Vec::new();
        let mut waiting = Vec::new();
        for task in self.batch().map_or(&[][..], |b| &b.tasks) {
            if task.status == TaskStatus::Completed {
                continue;
            }
            let on: Vec<&str> =
                task.depends_on.iter().map(String::as_str).filter(|d| !done.contains(d)).collect();
            if on.is_empty() { ready.push(task) } else { waiting.push((task, on)) }
        }
        (ready, waiting)
    }

    /// Record `changes`, all or nothing: each is checked first, and a refusal names the field
    /// and says what to give instead. Returns what changed, in words.
    pub fn apply(&mut self, changes: &Changes) -> Result<Vec<String>, String> {
        let mut next = self.clone();
        let mut said = Vec::new();
        if let Some(items) = &changes.items {
            next.put_items(items)?;
            said.push(format!("{} item{}", items.len(), if items.len() == 1 { "" } else { "s" }));
        }
        if let Some(kind) = changes.item_type {
            let state = &next.state;
            let n = next.current_item.ok_or_else(|| {
                format!(
                    "`item_type`: no item is being worked on (the session is in state {state:?}); \
                     give the item's number instead: items: [{{number, type}}]"
                )
            })?;
            if let Some(item) = next.items.iter_mut().find(|i| i.number == n) {
                item.kind = Some(kind);
            }
            said.push(format!("item {n} is {kind}"));
        }
        if let Some(batches) = &changes.batches {
            next.put_plan(batches)?;
            said.push(format!(
                "a plan of {} batch{}",
                batches.len(),
                if batches.len() == 1 { "" } else { "es" }
            ));
        }
        if let Some(tasks) = &changes.tasks {
            next.put_task_statuses(tasks)?;
            let list: Vec<String> =
                tasks.iter().map(|t| format!("{} {}", t.id, t.status.name())).collect();
            said.push(list.join(", "));
        }
        if let Some(snapshot) = changes.has_snapshot {
            next.has_snapshot = snapshot;
            said.push(format!("hasSnapshot {snapshot}"));
        }
        next.settle();
        *self = next;
        Ok(said)
    }

    fn put_items(&mut self, items: &[ItemInput]) -> Result<(), String> {
        let mut seen = HashSet::new();
        for (i, input) in items.iter().enumerate() {
            let field = |f: &str| format!("`items[{i}].{f}`");
            let number = match input.number {
                Some(0) => return Err(format!("{}: items are numbered from 1", field("number"))),
                Some(n) => n,
                None => self.items.iter().map(|it| it.number).max().unwrap_or(0) + 1,
            };
            if !seen.insert(number) {
                return Err(format!(
                    "{}: item {number} is named twice in this call",
                    field("number")
                ));
            }
            if let Some(title) = &input.title
                && (title.trim().is_empty() || title.chars().count() > MAX_TITLE)
            {
                return Err(format!(
                    "{}: a title is one line of 1 to {MAX_TITLE} characters",
                    field("title")
                ));
            }
            match self.items.iter_mut().find(|it| it.number == number) {
                Some(item) => {
                    if let Some(title) = &input.title {
                        item.title = title.trim().to_owned();
                    }
                    item.kind = input.kind.or(item.kind);
                    item.status = input.status.unwrap_or(item.status);
                }
                None => {
                    let Some(title) = &input.title else {
                        return Err(format!(
                            "{}: item {number} is new and needs a title",
                            field("title")
                        ));
                    };
                    if self.items.len() >= MAX_ITEMS {
                        return Err(format!(
                            "`items`: a session holds at most {MAX_ITEMS} items; fold small goals together"
                        ));
                    }
                    self.items.push(Item {
                        number,
                        title: title.trim().to_owned(),
                        kind: input.kind,
                        status: input.status.unwrap_or(ItemStatus::Pending),
                    });
                }
            }
        }
        self.items.sort_by_key(|i| i.number);
        Ok(())
    }

    /// Replace the execution plan, after checking ids, dependencies and sizes.
    fn put_plan(&mut self, batches: &[BatchInput]) -> Result<(), String> {
        if batches.len() > MAX_BATCHES {
            return Err(format!(
                "`batches`: {} batches, over the limit of {MAX_BATCHES}",
                batches.len()
            ));
        }
        let total: usize = batches.iter().map(|b| b.tasks.len()).sum();
        if total > MAX_TASKS {
            return Err(format!("`batches`: {total} tasks in all, over the limit of {MAX_TASKS}"));
        }
        let before: HashMap<&str, TaskStatus> =
            self.batches.iter().flat_map(|b| &b.tasks).map(|t| (t.id.as_str(), t.status)).collect();
        // Where each task is: (batch, position), for the dependency checks.
        let mut place: HashMap<&str, (usize, usize)> = HashMap::new();
        let mut batch_ids = HashSet::new();
        for (b, batch) in batches.iter().enumerate() {
            check_id(&batch.id, &format!("`batches[{b}].id`"))?;
            if !batch_ids.insert(batch.id.as_str()) {
                return Err(format!("`batches[{b}].id`: batch {:?} is named twice", batch.id));
            }
            if batch.tasks.is_empty() {
                return Err(format!(
                    "`batches[{b}].tasks`: batch {:?} has no tasks; give at least one",
                    batch.id
                ));
            }
            for (t, task) in batch.tasks.iter().enumerate() {
                check_id(&task.id, &format!("`batches[{b}].tasks[{t}].id`"))?;
                if let Some((ob, _)) = place.insert(task.id.as_str(), (b, t)) {
                    return Err(format!(
                        "`batches[{b}].tasks[{t}].id`: task {:?} is also in batch {:?}; task ids are unique in a plan",
                        task.id, batches[ob].id
                    ));
                }
            }
        }
        for (b, batch) in batches.iter().enumerate() {
            for (t, task) in batch.tasks.iter().enumerate() {
                let field = format!("`batches[{b}].tasks[{t}].dependsOn`");
                if task.depends_on.len() > MAX_DEPENDS_ON {
                    return Err(format!(
                        "{field}: {} tasks, over the limit of {MAX_DEPENDS_ON}",
                        task.depends_on.len()
                    ));
                }
                for dep in &task.depends_on {
                    match place.get(dep.as_str()) {
                        None => return Err(format!("{field}: {dep:?} is not a task of this plan")),
                        Some(_) if dep == &task.id => {
                            return Err(format!("{field}: task {dep:?} cannot depend on itself"));
                        }
                        Some(&(db, _)) if db > b => {
                            return Err(format!(
                                "{field}: {dep:?} is in a later batch ({:?}), so task {:?} could never start; \
                                 move one of them",
                                batches[db].id, task.id
                            ));
                        }
                        Some(_) => {}
                    }
                }
            }
            if let Some(cycle) = cycle_in(batch) {
                return Err(format!(
                    "`batches[{b}].tasks`: the tasks {} depend on one another in a circle; none could start",
                    cycle.join(" → ")
                ));
            }
        }
        self.batches = batches
            .iter()
            .map(|b| Batch {
                id: b.id.clone(),
                status: BatchStatus::Pending,
                tasks: b
                    .tasks
                    .iter()
                    .map(|t| Task {
                        id: t.id.clone(),
                        status: t
                            .status
                            .or_else(|| before.get(t.id.as_str()).copied())
                            .unwrap_or(TaskStatus::Pending),
                        depends_on: t.depends_on.clone(),
                    })
                    .collect(),
            })
            .collect();
        self.settle();
        if self.current_batch.is_some() {
            self.open_next_batch(); // the old index means nothing in the new plan
        }
        Ok(())
    }

    fn put_task_statuses(&mut self, tasks: &[TaskUpdate]) -> Result<(), String> {
        for (i, update) in tasks.iter().enumerate() {
            let mut all = self.batches.iter_mut().flat_map(|b| b.tasks.iter_mut());
            if let Some(task) = all.find(|t| t.id == update.id) {
                task.status = update.status;
                continue;
            }
            if self.batches.is_empty() {
                return Err(format!(
                    "`tasks[{i}].id`: there is no plan yet; record it first with batches: [{{id, tasks}}]"
                ));
            }
            let ids: Vec<&str> =
                self.batches.iter().flat_map(|b| &b.tasks).map(|t| t.id.as_str()).collect();
            let more = if ids.len() > 12 { ", …" } else { "" };
            return Err(format!(
                "`tasks[{i}].id`: {:?} is not a task of the plan (it has {}{more})",
                update.id,
                ids[..ids.len().min(12)].join(", ")
            ));
        }
        Ok(())
    }

    /// Recompute what follows from the rest: counts, batch statuses, task lists.
    pub fn settle(&mut self) {
        self.total_items = self.items.len() as u32;
        self.documented_items =
            self.items.iter().filter(|i| i.status == ItemStatus::Documented).count() as u32;
        self.completed_tasks.clear();
        self.pending_tasks.clear();
        for batch in &mut self.batches {
            let all = batch.tasks.iter().all(|t| t.status == TaskStatus::Completed);
            let none = batch.tasks.iter().all(|t| t.status == TaskStatus::Pending);
            batch.status = match (all, none) {
                (true, _) => BatchStatus::Completed,
                (false, true) => BatchStatus::Pending,
                (false, false) => BatchStatus::InProgress,
            };
            for task in &batch.tasks {
                let list = if task.status == TaskStatus::Completed {
                    &mut self.completed_tasks
                } else {
                    &mut self.pending_tasks
                };
                list.push(task.id.clone());
            }
        }
    }
}

fn check_id(id: &str, field: &str) -> Result<(), String> {
    if id.trim().is_empty() || id.chars().count() > MAX_ID || id.chars().any(char::is_control) {
        return Err(format!("{field}: an id is 1 to {MAX_ID} characters on one line, got {id:?}"));
    }
    Ok(())
}

/// Tasks of one batch that depend on one another in a circle, if any: their ids in order.
fn cycle_in(batch: &BatchInput) -> Option<Vec<String>> {
    let index: HashMap<&str, usize> =
        batch.tasks.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    let n = batch.tasks.len();
    // Kahn's algorithm: what cannot be ordered lies on (or behind) a circle.
    let mut waiting = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, task) in batch.tasks.iter().enumerate() {
        for &d in task.depends_on.iter().filter_map(|d| index.get(d.as_str())) {
            waiting[i] += 1;
            dependents[d].push(i);
        }
    }
    let mut free: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    while let Some(i) = free.pop() {
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                free.push(j);
            }
        }
    }
    let stuck: Vec<String> =
        (0..n).filter(|&i| waiting[i] > 0).map(|i| batch.tasks[i].id.clone()).collect();
    if stuck.is_empty() { None } else { Some(stuck) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn session() -> SessionState {
        let graph = super::super::catalog::built_in("collab").unwrap();
        SessionState::new(&graph, 1)
    }

    fn changes(value: serde_json::Value) -> Changes {
        serde_json::from_value(value).unwrap()
    }

    fn plan(s: &mut SessionState) {
        s.apply(&changes(json!({ "batches": [
            { "id": "b1", "tasks": [{ "id": "t1" }, { "id": "t2", "dependsOn": ["t1"] }] },
            { "id": "b2", "tasks": [{ "id": "t3", "dependsOn": ["t2"] }] }
        ] })))
        .unwrap();
    }

    #[test]
    fn items_are_added_numbered_and_changed_by_number() {
        let mut s = session();
        s.apply(&changes(
            json!({ "items": [{ "title": "Login" }, { "title": "Crash", "type": "bugfix" }] }),
        ))
        .unwrap();
        assert_eq!(
            (s.total_items, s.items[1].number, s.items[1].kind),
            (2, 2, Some(ItemType::Bugfix))
        );
        s.apply(&changes(
            json!({ "items": [{ "number": 1, "type": "code" }, { "title": "Docs" }] }),
        ))
        .unwrap();
        assert_eq!(
            s.items.iter().map(|i| (i.number, i.kind)).collect::<Vec<_>>(),
            [(1, Some(ItemType::Code)), (2, Some(ItemType::Bugfix)), (3, None)]
        );
        assert!(s.facts().items_remaining);
    }

    #[test]
    fn bad_items_are_refused_naming_the_field_and_nothing_changes() {
        let mut s = session();
        let before = s.clone();
        let err = s
            .apply(&changes(json!({ "items": [{ "title": "ok" }, { "number": 7 }] })))
            .unwrap_err();
        assert_eq!(err, "`items[1].title`: item 7 is new and needs a title");
        assert_eq!(s, before, "all or nothing");
        let err = s.apply(&changes(json!({ "items": [{ "title": "" }] }))).unwrap_err();
        assert!(err.starts_with("`items[0].title`: a title is one line"), "{err}");
        let err = s.apply(&changes(json!({ "item_type": "code" }))).unwrap_err();
        assert!(err.starts_with("`item_type`: no item is being worked on"), "{err}");
        let many: Vec<_> = (0..=MAX_ITEMS).map(|i| json!({ "title": format!("i{i}") })).collect();
        let err = s.apply(&changes(json!({ "items": many }))).unwrap_err();
        assert!(err.contains("at most 200 items"), "{err}");
    }

    #[test]
    fn a_batch_completes_when_all_its_tasks_do_and_readiness_follows_dependencies() {
        let mut s = session();
        plan(&mut s);
        assert!(s.facts().batches_remaining);
        s.open_next_batch();
        let (ready, waiting) = s.readiness();
        assert_eq!(ready.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t1"]);
        assert_eq!(waiting[0].1, ["t1"]);
        s.apply(&changes(json!({ "tasks": [{ "id": "t1", "status": "completed" }] }))).unwrap();
        assert_eq!(s.batches[0].status, BatchStatus::InProgress);
        assert_eq!(s.readiness().0[0].id, "t2");
        s.apply(&changes(json!({ "tasks": [{ "id": "t2", "status": "completed" }] }))).unwrap();
        assert_eq!(s.batches[0].status, BatchStatus::Completed);
        assert_eq!(
            (s.completed_tasks.clone(), s.pending_tasks.clone()),
            (vec!["t1".into(), "t2".into()], vec!["t3".to_string()])
        );
        s.apply(&changes(json!({ "tasks": [{ "id": "t3", "status": "completed" }] }))).unwrap();
        assert!(!s.facts().batches_remaining);
    }

    #[test]
    fn a_new_plan_keeps_task_statuses_by_id() {
        let mut s = session();
        plan(&mut s);
        s.apply(&changes(json!({ "tasks": [{ "id": "t1", "status": "completed" }] }))).unwrap();
        s.apply(&changes(
            json!({ "batches": [{ "id": "only", "tasks": [{ "id": "t1" }, { "id": "t9" }] }] }),
        ))
        .unwrap();
        assert_eq!(s.batches[0].tasks[0].status, TaskStatus::Completed);
        assert_eq!(s.pending_tasks, ["t9"]);
    }

    #[test]
    fn bad_plans_are_refused_naming_the_field() {
        let cases = [
            (json!([{ "id": "b", "tasks": [] }]), "`batches[0].tasks`: batch \"b\" has no tasks"),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t" }] }, { "id": "b", "tasks": [{ "id": "u" }] }]),
                "`batches[1].id`: batch \"b\" is named twice",
            ),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t" }] }, { "id": "c", "tasks": [{ "id": "t" }] }]),
                "`batches[1].tasks[0].id`: task \"t\" is also in batch \"b\"",
            ),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t", "dependsOn": ["x"] }] }]),
                "`batches[0].tasks[0].dependsOn`: \"x\" is not a task of this plan",
            ),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t", "dependsOn": ["u"] }] }, { "id": "c", "tasks": [{ "id": "u" }] }]),
                "`batches[0].tasks[0].dependsOn`: \"u\" is in a later batch (\"c\")",
            ),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t", "dependsOn": ["u"] }, { "id": "u", "dependsOn": ["t"] }] }]),
                "`batches[0].tasks`: the tasks t → u depend on one another in a circle",
            ),
            (
                json!([{ "id": "b", "tasks": [{ "id": "t", "dependsOn": ["t"] }] }]),
                "cannot depend on itself",
            ),
            (
                json!([{ "id": "", "tasks": [{ "id": "t" }] }]),
                "`batches[0].id`: an id is 1 to 64 characters",
            ),
        ];
        for (batches, expected) in cases {
            let mut s = session();
            let err = s.apply(&changes(json!({ "batches": batches }))).unwrap_err();
            assert!(err.contains(expected), "{batches}: {err}");
            assert!(s.batches.is_empty());
        }
        let mut s = session();
        let err = s
            .apply(&changes(json!({ "tasks": [{ "id": "t1", "status": "completed" }] })))
            .unwrap_err();
        assert!(err.contains("there is no plan yet"), "{err}");
        plan(&mut s);
        let err = s
            .apply(&changes(json!({ "tasks": [{ "id": "t7", "status": "completed" }] })))
            .unwrap_err();
        assert_eq!(err, "`tasks[0].id`: \"t7\" is not a task of the plan (it has t1, t2, t3)");
        let tasks: Vec<_> = (0..=MAX_TASKS).map(|i| json!({ "id": format!("t{i}") })).collect();
        let err =
            s.apply(&changes(json!({ "batches": [{ "id": "b", "tasks": tasks }] }))).unwrap_err();
        assert!(err.contains("over the limit of 500"), "{err}");
    }

    #[test]
    fn the_record_is_saved_with_the_field_names_of_the_design() {
        let mut s = session();
        plan(&mut s);
        let saved = serde_json::to_value(&s).unwrap();
        for key in [
            "workflow",
            "state",
            "phase",
            "lastActivity",
            "currentItem",
            "hasSnapshot",
            "totalItems",
            "documentedItems",
            "batches",
            "currentBatch",
            "completedTasks",
            "pendingTasks",
        ] {
            assert!(saved.get(key).is_some(), "{key} in {saved}");
        }
        assert_eq!(saved["batches"][0]["tasks"][1]["dependsOn"], json!(["t1"]));
    }
}
