//! The workflows a session can follow: the built-in `collab` (`collab.json` beside this file,
//! its one place, embedded in the binary) and the user's, one per file in
//! `$TABWIRE_CONFIG_DIR/workflows/*.json`. A user workflow named like a built-in one replaces
//! it. A file that is not a valid workflow is skipped and listed, with every problem, by
//! `list_workflows` — and a session cannot start it.
//!
//! `complete_skill` needs its graph at every call, so the catalog is kept and read again only
//! when the directory's listing changes (a file added, removed, or written: its size or
//! modification time moved). Listing a small directory costs a few microseconds; parsing
//! every file at every call would cost more than the rest of the call.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Serialize;

use super::graph::Graph;
use super::limits::MAX_WORKFLOW_FILE;
use tabwire_link::error::Problem;

const BUILT_IN: [(&str, &str); 1] = [("collab.json", include_str!("collab.json"))];

/// The workflow used when `start_workflow` names none.
pub const DEFAULT: &str = "collab";

/// A built-in workflow, parsed afresh (for tests and the spec checks).
#[cfg(test)]
pub fn built_in(name: &str) -> Option<Graph> {
    BUILT_IN.iter().map(|(file, text)| parse_built_in(file, text)).find(|g| g.name() == name)
}

fn parse_built_in(file: &str, text: &str) -> Graph {
    Graph::parse(text).unwrap_or_else(|e| panic!("the built-in workflow {file} is not valid: {e}"))
}

fn built_ins() -> &'static [Arc<Graph>] {
    static PARSED: OnceLock<Vec<Arc<Graph>>> = OnceLock::new();
    PARSED.get_or_init(|| BUILT_IN.iter().map(|(f, t)| Arc::new(parse_built_in(f, t))).collect())
}

/// One workflow a session can start.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Listed {
    pub name: String,
    /// `built-in`, or the file it was read from.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The first state.
    pub start: String,
    /// How many states it has.
    pub states: usize,
    /// Its skills, each once, in the order of its states.
    pub skills: Vec<String>,
}

/// Every workflow that can be started, and the files that could not be used.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Catalog {
    pub workflows: Vec<Listed>,
    /// Files in the workflows directory that were skipped, and why.
    pub problems: Vec<Problem>,
    /// The directory user workflows are read from.
    pub directory: String,
    #[serde(skip)]
    graphs: Vec<Arc<Graph>>,
}

impl Catalog {
    pub fn graph(&self, name: &str) -> Option<Arc<Graph>> {
        self.graphs.iter().find(|g| g.name() == name).cloned()
    }

    pub fn names(&self) -> String {
        self.graphs.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ")
    }

    fn add(&mut self, graph: Arc<Graph>, source: String) {
        let mut skills: Vec<String> = Vec::new();
        for skill in graph.states().iter().filter_map(|s| s.skill.as_ref()) {
            if !skills.contains(skill) {
                skills.push(skill.clone());
            }
        }
        let w = graph.workflow();
        self.workflows.push(Listed {
            name: w.name.clone(),
            source,
            description: w.description.clone(),
            start: w.start.clone(),
            states: w.states.len(),
            skills,
        });
        self.graphs.push(graph);
    }
}

/// A file of the directory, as far as telling one version from another goes.
type Stamp = (PathBuf, u64, Option<SystemTime>);

/// Reads the catalog, again only when the directory changed.
pub struct Loader {
    dir: PathBuf,
    kept: Mutex<Option<(Vec<Stamp>, Arc<Catalog>)>>,
}

impl Loader {
    /// User workflows are read from `<config_dir>/workflows`.
    pub fn new(config_dir: &Path) -> Loader {
        Loader { dir: config_dir.join("workflows"), kept: Mutex::new(None) }
    }

    /// The catalog as the directory is now.
    pub fn load(&self) -> Arc<Catalog> {
        let stamps = listing(&self.dir);
        let mut kept = self.kept.lock().expect("workflow catalog poisoned");
        if let Some((at, catalog)) = kept.as_ref()
            && *at == stamps
        {
            return catalog.clone();
        }
        let catalog = Arc::new(read(&self.dir, &stamps));
        *kept = Some((stamps, catalog.clone()));
        catalog
    }
}

/// The `*.json` files of `dir`, sorted, with their size and modification time.
fn listing(dir: &Path) -> Vec<Stamp> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() }; // none: no user workflows
    let mut stamps: Vec<Stamp> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let meta = std::fs::metadata(&p).ok();
            let len = meta.as_ref().map_or(0, |m| m.len());
            let modified = meta.and_then(|m| m.modified().ok());
            (p, len, modified)
        })
        .collect();
    stamps.sort();
    stamps
}

fn read(dir: &Path, stamps: &[Stamp]) -> Catalog {
    let mut catalog = Catalog { directory: dir.display().to_string(), ..Catalog::default() };
    for (path, len, _) in stamps {
        let shown = path.display().to_string();
        let parsed = if *len > MAX_WORKFLOW_FILE {
            Err(format!("{len} bytes, over the limit of {MAX_WORKFLOW_FILE} for a workflow file"))
        } else {
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read it: {e}"))
                .and_then(|text| Graph::parse(&text).map_err(|e| e.to_string()))
        };
        match parsed {
            Ok(graph) if catalog.graph(graph.name()).is_some() => catalog.problems.push(Problem {
                path: shown,
                error: format!("another file already defines workflow {:?}", graph.name()),
            }),
            Ok(graph) => catalog.add(Arc::new(graph), shown),
            Err(error) => catalog.problems.push(Problem { path: shown, error }),
        }
    }
    for graph in built_ins() {
        if catalog.graph(graph.name()).is_none() {
            catalog.add(graph.clone(), "built-in".into());
        }
    }
    catalog
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabwire-workflows-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(dir.join("workflows")).unwrap();
        dir
    }

    #[test]
    fn the_built_in_collab_is_valid_and_listed() {
        let loader = Loader::new(&scratch());
        let catalog = loader.load();
        let collab = catalog.workflows.iter().find(|w| w.name == DEFAULT).unwrap();
        assert_eq!(
            (collab.source.as_str(), collab.states, collab.start.as_str()),
            ("built-in", 34, "collab-start")
        );
        assert!(collab.skills.contains(&"collab-clear".to_owned()));
        assert!(catalog.problems.is_empty());
    }

    #[test]
    fn user_files_are_read_again_when_they_change_and_bad_ones_are_listed() {
        let dir = scratch();
        let loader = Loader::new(&dir);
        let file = dir.join("workflows/mine.json");
        let good = r#"{"name":"mine","start":"a","states":[{"id":"a","skill":"s","transitions":[{"to":"z"}]},{"id":"z","skill":null}]}"#;
        std::fs::write(&file, good).unwrap();
        let catalog = loader.load();
        assert!(catalog.graph("mine").is_some());
        assert!(Arc::ptr_eq(&catalog, &loader.load()), "kept while nothing changed");
        std::fs::write(&file, good.replace("\"z\"}]", "\"nowhere\"}]")).unwrap();
        let catalog = loader.load();
        assert!(catalog.graph("mine").is_none());
        assert_eq!(catalog.problems.len(), 1);
        let error = &catalog.problems[0].error;
        assert!(
            error.contains("state \"a\", field `transitions[0].to`: \"nowhere\" is not a state"),
            "{error}"
        );
        std::fs::write(dir.join("workflows/collab.json"), good.replace("mine", "collab")).unwrap();
        let catalog = loader.load();
        let collab = catalog.workflows.iter().find(|w| w.name == "collab").unwrap();
        assert!(
            collab.source.ends_with("collab.json") && collab.states == 2,
            "a user file replaces the built-in"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
