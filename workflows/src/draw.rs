//! A workflow and a session's place in it, in words: the spec's table and diagram (a test
//! keeps `specs/workflows.md` equal to what these draw from `collab.json`), and the lines
//! `tabwire workflow show` prints and the tools' texts use.

use super::graph::{Graph, State};
use super::state::{BatchStatus, ItemStatus, SessionState};
use super::walk::{self, Action};

/// Where `state` leads: `` `b` `` or `` `b` if items remain; `c` if no items remain ``.
fn leads(state: &State, code: bool) -> String {
    if state.is_terminal() {
        return "—".into();
    }
    let name = |id: &str| if code { format!("`{id}`") } else { id.to_owned() };
    let ways: Vec<String> = state
        .transitions
        .iter()
        .map(|t| match t.condition {
            None => name(&t.to),
            Some(c) => format!("{} if {}", name(&t.to), c.describe()),
        })
        .collect();
    ways.join("; ")
}

/// The rows of the spec's table of states, in the workflow's order.
#[cfg(test)]
pub fn spec_rows(graph: &Graph) -> Vec<String> {
    graph
        .states()
        .iter()
        .map(|s| {
            let skill = match (&s.skill, s.is_terminal()) {
                (Some(k), _) => format!("`{k}`"),
                (None, false) => "— (routing)".to_owned(),
                (None, true) => "— (end)".to_owned(),
            };
            let phase = s.phase.as_deref().unwrap_or("");
            format!("| `{}` | {skill} | {phase} | {} |", s.id, leads(s, true))
        })
        .collect()
}

/// The graph as a Mermaid flowchart: routing nodes as diamonds, the end as a stadium.
#[cfg(test)]
pub fn mermaid(graph: &Graph) -> String {
    let node = |id: &str| id.replace(['-', '.'], "_");
    let mut out = vec!["flowchart TD".to_owned()];
    for s in graph.states() {
        let shape = match (&s.skill, s.is_terminal()) {
            (None, true) => format!("([\"{}\"])", s.id),
            (None, false) => format!("{{\"{}\"}}", s.id),
            (Some(_), _) => format!("[\"{}\"]", s.id),
        };
        out.push(format!("    {}{shape}", node(&s.id)));
    }
    for s in graph.states() {
        for t in &s.transitions {
            let label = t.condition.map(|c| format!("|{}|", c.describe())).unwrap_or_default();
            out.push(format!("    {} -->{label} {}", node(&s.id), node(&t.to)));
        }
    }
    out.join("\n")
}

/// Where a session stands, in a few lines: the state, what to run next, the item, the plan;
/// with `detail`, every item and batch too.
pub fn where_it_stands(graph: &Graph, s: &SessionState, detail: bool) -> Vec<String> {
    let next = walk::next(graph, s);
    let mut lines = Vec::new();
    let phase = if s.phase.is_empty() { String::new() } else { format!(", phase {}", s.phase) };
    lines.push(format!(
        "workflow {}: state {}{phase}, revision {}",
        s.workflow, s.state, s.revision
    ));
    lines.push(match (&next.next_skill, next.action) {
        (None, _) => "done: no skill is expected".into(),
        (Some(skill), Action::Clear) => format!("next: clear your context, then run {skill}"),
        (Some(skill), Action::None) => format!("next: run {skill}"),
    });
    if let Some(item) = s.current() {
        let kind = item.kind.map_or("type not recorded".into(), |k| k.to_string());
        lines.push(format!("item {} of {}: {:?} ({kind})", item.number, s.total_items, item.title));
    }
    lines.push(format!("items: {} of {} documented", s.documented_items, s.total_items));
    for item in s.items.iter().filter(|_| detail) {
        let mark = if Some(item.number) == s.current_item { "▶" } else { " " };
        let kind = item.kind.map_or("type not recorded".into(), |k| k.to_string());
        let status = match item.status {
            ItemStatus::Pending => "pending",
            ItemStatus::Documented => "documented",
        };
        lines.push(format!("  {mark} {}. {} — {kind}, {status}", item.number, item.title));
    }
    let completed = s.batches.iter().filter(|b| b.status == BatchStatus::Completed).count();
    lines.push(match s.batches.len() {
        0 => "batches: none recorded".into(),
        n => format!("batches: {completed} of {n} completed"),
    });
    for (i, batch) in s.batches.iter().enumerate().filter(|_| detail) {
        let mark = if Some(i as u32) == s.current_batch { "▶" } else { " " };
        let status = match batch.status {
            BatchStatus::Pending => "pending",
            BatchStatus::InProgress => "in progress",
            BatchStatus::Completed => "completed",
        };
        let tasks: Vec<String> = batch
            .tasks
            .iter()
            .map(|t| {
                let after = if t.depends_on.is_empty() {
                    String::new()
                } else {
                    format!(" (after {})", t.depends_on.join(", "))
                };
                format!("{} {}{after}", t.id, t.status.name())
            })
            .collect();
        lines.push(format!("  {mark} batch {i} {:?}, {status}: {}", batch.id, tasks.join(", ")));
    }
    if let Some(batch) = s.batch() {
        let (ready, waiting) = s.readiness();
        let ready: Vec<&str> = ready.iter().map(|t| t.id.as_str()).collect();
        let waiting: Vec<String> =
            waiting.iter().map(|(t, on)| format!("{} (on {})", t.id, on.join(", "))).collect();
        lines.push(format!(
            "batch {} {:?}: ready now: {}; waiting: {}",
            s.current_batch.unwrap_or(0),
            batch.id,
            if ready.is_empty() { "none".into() } else { ready.join(", ") },
            if waiting.is_empty() { "none".into() } else { waiting.join(", ") }
        ));
    }
    lines
}

/// The graph, one state a line, the session's state marked.
pub fn graph_lines(graph: &Graph, current: &str) -> Vec<String> {
    let width = graph.states().iter().map(|s| s.id.len()).max().unwrap_or(0);
    let skill_width =
        graph.states().iter().map(|s| s.skill.as_deref().map_or(9, str::len)).max().unwrap_or(0);
    graph
        .states()
        .iter()
        .map(|s| {
            let mark = if s.id == current { "▶" } else { " " };
            let skill = s.skill.as_deref().unwrap_or("(routing)");
            format!("  {mark} {:<width$}  {skill:<skill_width$}  → {}", s.id, leads(s, false))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::built_in;

    const SPEC: &str = include_str!("../../specs/workflows.md");

    /// specs/workflows.md's table of `collab` is exactly the built-in graph, row by row.
    #[test]
    fn the_spec_table_is_the_built_in_graph() {
        let graph = built_in("collab").unwrap();
        let in_spec: Vec<&str> = SPEC
            .split("<!-- collab table -->")
            .nth(1)
            .expect("specs/workflows.md has a <!-- collab table --> section")
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .filter(|l| l.starts_with("| `"))
            .collect();
        assert_eq!(
            in_spec,
            spec_rows(&graph),
            "specs/workflows.md's table and collab.json disagree"
        );
    }

    #[test]
    fn the_spec_diagram_is_the_built_in_graph() {
        let graph = built_in("collab").unwrap();
        let block = format!("```mermaid\n{}\n```", mermaid(&graph));
        assert!(SPEC.contains(&block), "specs/workflows.md lacks the diagram:\n{block}");
    }

    #[test]
    fn the_collab_states_are_all_there_in_their_order() {
        // The states of `collab` as specs/workflows.md lists them, in that order.
        const STATES: &str = "collab-start gather-goals clear-pre-item work-item-router \
            brainstorm-exploring clear-bs1 brainstorm-clarifying clear-bs2 brainstorm-designing \
            clear-bs3 brainstorm-validating item-type-router clear-pre-rough rough-draft-interface \
            clear-rd1 rough-draft-pseudocode clear-rd2 rough-draft-skeleton clear-rd3 \
            build-task-graph clear-rd4 rough-draft-handoff task-planning systematic-debugging \
            ready-to-implement clear-pre-execute batch-router execute-batch log-batch-complete \
            clear-post-batch clear-post-item workflow-complete cleanup done";
        let graph = built_in("collab").unwrap();
        let ids: Vec<&str> = graph.states().iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, STATES.split_whitespace().collect::<Vec<_>>());
    }
}
