//! The commands a worker may run: `$TABWIRE_CONFIG_DIR/workers.json`, a JSON object of named
//! argv templates, e.g. `{"default": ["claude", "-p", "{prompt}"], "shell": ["sh", "-c",
//! "…", "sh", "{prompt}"]}`. A template may also be written `{"argv": [...], "allow_env":
//! ["TASK_COLOR"]}`: the environment variables `spawn_worker` may set for it (none otherwise).
//!
//! The user writes this file; the assistant only picks a template by name and fills in the
//! placeholders. So what a worker may run is the user's choice, and the assistant's words reach
//! the worker only as whole arguments (`{prompt}` becomes one argv entry, whatever it holds),
//! never through a shell, and as the values of variables the user allowed (`env.rs`). A
//! placeholder inside a longer argument (`--task={prompt}`) would blur that line, so such a file
//! is refused with a message saying how to write it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tabwire_proto::wire::code;

use super::env;
use tabwire_link::error::CallError;

/// The file, in the configuration directory.
pub const FILE: &str = "workers.json";
/// The template used when `spawn_worker` names none.
pub const DEFAULT: &str = "default";
/// What `default` is when the file does not say: Claude Code's non-interactive mode (the same
/// template `tabwire install --claude` writes).
pub const BUILT_IN_DEFAULT: [&str; 3] = tabwire_install::DEFAULT_WORKER;
/// The placeholders, each replaced by a whole argument.
pub const PLACEHOLDERS: [&str; 4] = ["{prompt}", "{name}", "{worker_id}", "{cwd}"];

/// The templates, as read now from the file (so an edit applies to the next worker).
#[derive(Debug, Clone)]
pub struct Templates {
    pub path: PathBuf,
    templates: BTreeMap<String, Template>,
}

/// One template of the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    argv: Vec<String>,
    /// The environment variables `spawn_worker` may set for it.
    #[serde(default)]
    allow_env: Vec<String>,
}

/// What the placeholders stand for in one worker.
pub struct Values<'a> {
    pub prompt: &'a str,
    pub name: &'a str,
    pub worker_id: &'a str,
    pub cwd: &'a str,
}

impl Templates {
    /// The templates in `config_dir`: the file's, plus the built-in `default` unless the file
    /// has its own. No file: the built-in `default` alone.
    pub fn load(config_dir: &Path) -> Result<Templates, CallError> {
        let path = config_dir.join(FILE);
        let mut templates = match std::fs::read(&path) {
            Ok(bytes) => parse(&path, &bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                return Err(CallError::new(
                    code::INTERNAL,
                    format!("cannot read the worker templates {} ({e})", path.display()),
                ));
            }
        };
        templates.entry(DEFAULT.to_owned()).or_insert_with(|| Template {
            argv: BUILT_IN_DEFAULT.map(str::to_owned).to_vec(),
            allow_env: Vec::new(),
        });
        Ok(Templates { path, templates })
    }

    pub fn names(&self) -> Vec<&str> {
        self.templates.keys().map(String::as_str).collect()
    }

    /// Template `name` with its placeholders replaced.
    pub fn argv(&self, name: &str, values: &Values) -> Result<Vec<String>, CallError> {
        Ok(self
            .get(name)?
            .argv
            .iter()
            .map(|arg| match arg.as_str() {
                "{prompt}" => values.prompt.to_owned(),
                "{name}" => values.name.to_owned(),
                "{worker_id}" => values.worker_id.to_owned(),
                "{cwd}" => values.cwd.to_owned(),
                _ => arg.clone(),
            })
            .collect())
    }

    /// The environment a worker of template `name` adds to this server's: tabwire's `own`
    /// variables and those `asked` for, if the template allows each ([`env::worker_env`]).
    pub fn env(
        &self,
        name: &str,
        own: Vec<(String, String)>,
        asked: &BTreeMap<String, String>,
    ) -> Result<Vec<(String, String)>, CallError> {
        let allowed = &self.get(name)?.allow_env;
        env::worker_env(own, allowed, asked).map_err(|refused| {
            let var = &refused.name;
            let file = self.path.display();
            let how = match refused.never {
                Some(why) => format!(
                    "and no template can: {why}, so setting it would run code of the caller's \
                     choice. Leave it out of env (the worker inherits this server's {var}); the \
                     variables the user allows are each template's \"allow_env\" in {file}"
                ),
                None => format!(
                    "(it allows: {}). Only the user can allow it, in {file}: write the template \
                     as {{\"argv\": [...], \"allow_env\": [\"{var}\"]}}",
                    if allowed.is_empty() { "none".to_owned() } else { allowed.join(", ") }
                ),
            };
            CallError::new(
                code::BAD_REQUEST,
                format!(
                    "spawn_worker may not set {var}: template {name:?} does not allow it {how}"
                ),
            )
        })
    }

    fn get(&self, name: &str) -> Result<&Template, CallError> {
        self.templates.get(name).ok_or_else(|| {
            CallError::new(
                code::BAD_REQUEST,
                format!(
                    "no worker template is named {name:?}; the templates are: {} (from {}, \
                     where the user adds others)",
                    self.names().join(", "),
                    self.path.display()
                ),
            )
        })
    }
}

fn parse(path: &Path, bytes: &[u8]) -> Result<BTreeMap<String, Template>, CallError> {
    let bad = |what: String| {
        CallError::new(
            code::BAD_REQUEST,
            format!(
                "the worker templates in {} are not usable: {what}. The file is a JSON object of \
                 templates, each an argv array, e.g. {{\"default\": [\"claude\", \"-p\", \
                 \"{{prompt}}\"]}}, or {{\"argv\": [...], \"allow_env\": [\"VAR\", ...]}} to \
                 let spawn_worker set those variables; placeholders ({}) are whole arguments",
                path.display(),
                PLACEHOLDERS.join(", ")
            ),
        )
    };
    let written: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    let mut templates = BTreeMap::new();
    for (name, value) in written {
        let template = match value {
            serde_json::Value::Array(_) => {
                serde_json::from_value(value).map(|argv| Template { argv, allow_env: Vec::new() })
            }
            serde_json::Value::Object(_) => serde_json::from_value(value),
            other => {
                return Err(bad(format!(
                    "template {name:?} is {other}, neither an argv array nor an object"
                )));
            }
        };
        let template = template.map_err(|e| bad(format!("template {name:?}: {e}")))?;
        templates.insert(name, template);
    }
    for (name, Template { argv, allow_env }) in &templates {
        let Some(program) = argv.first() else {
            return Err(bad(format!("template {name:?} is empty")));
        };
        if program.is_empty() || PLACEHOLDERS.contains(&program.as_str()) {
            return Err(bad(format!(
                "template {name:?} must start with the program to run, not {program:?}"
            )));
        }
        for arg in argv {
            if PLACEHOLDERS.contains(&arg.as_str()) {
                continue;
            }
            if let Some(inside) = PLACEHOLDERS.iter().find(|p| arg.contains(*p)) {
                return Err(bad(format!(
                    "template {name:?} has {inside} inside the argument {arg:?}; make it an \
                     argument of its own (for a flag, put the flag and {inside} side by side)"
                )));
            }
            if is_placeholder_shaped(arg) {
                return Err(bad(format!("template {name:?} has an unknown placeholder {arg}")));
            }
        }
        for var in allow_env {
            env::allowable(var)
                .map_err(|why| bad(format!("template {name:?} allows {var}, but {why}")))?;
        }
    }
    Ok(templates)
}

/// `{word}`: meant as a placeholder.
fn is_placeholder_shaped(arg: &str) -> bool {
    arg.strip_prefix('{').and_then(|a| a.strip_suffix('}')).is_some_and(|word| {
        !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(text: Option<&str>) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabwire-tpl-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(text) = text {
            std::fs::write(dir.join(FILE), text).unwrap();
        }
        dir
    }

    const VALUES: Values =
        Values { prompt: "say \"hi\"; rm -rf / $(x)", name: "n", worker_id: "n-1", cwd: "/tmp/w" };

    #[test]
    fn placeholders_become_whole_arguments_however_the_prompt_looks() {
        let dir = dir_with(Some(r#"{"echo": ["echo", "{name}", "--in", "{cwd}", "{prompt}"]}"#));
        let templates = Templates::load(&dir).unwrap();
        assert_eq!(templates.names(), ["default", "echo"], "the built-in default is added");
        let argv = templates.argv("echo", &VALUES).unwrap();
        assert_eq!(argv, ["echo", "n", "--in", "/tmp/w", "say \"hi\"; rm -rf / $(x)"]);
        let default = templates.argv(DEFAULT, &VALUES).unwrap();
        assert_eq!(default, ["claude", "-p", VALUES.prompt]);
        let err = templates.argv("nope", &VALUES).unwrap_err().to_string();
        assert!(err.contains("default, echo") && err.contains(FILE), "{err}");
        let none = Templates::load(&dir_with(None)).unwrap();
        assert_eq!(none.names(), ["default"]);
    }

    #[test]
    fn a_file_that_would_blur_arguments_is_refused_saying_how_to_fix_it() {
        for (text, says) in [
            (r#"{"a": ["sh", "-c", "echo {prompt}"]}"#, "inside the argument"),
            (r#"{"a": ["x", "{promt}"]}"#, "unknown placeholder {promt}"),
            (r#"{"a": []}"#, "is empty"),
            (r#"{"a": ["{prompt}"]}"#, "must start with the program"),
            (r#"{"a": "claude -p"}"#, "template \"a\" is \"claude -p\", neither an argv array"),
            (r#"{"a": ["x", 1]}"#, "template \"a\": invalid type: integer"),
            (r#"{"a": {"argv": ["x"], "env": ["X"]}}"#, "unknown field `env`"),
            (r#"{"a": {"allow_env": ["X"]}}"#, "missing field `argv`"),
            (r#"{"a": {"argv": ["x"], "allow_env": ["LD_PRELOAD"]}}"#, "allows LD_PRELOAD, but"),
            (r#"{"a": {"argv": ["x"], "allow_env": ["A-B"]}}"#, "not an environment variable"),
            (r#"not json"#, "expected"),
        ] {
            let err = Templates::load(&dir_with(Some(text))).unwrap_err().to_string();
            assert!(err.starts_with("bad_request") && err.contains(says), "{text}: {err}");
        }
        let ok =
            Templates::load(&dir_with(Some(r#"{"a": ["find", ".", "-exec", "x", "{}", ";"]}"#)));
        assert!(ok.is_ok(), "{{}} is not a placeholder");
    }

    #[test]
    fn the_caller_sets_only_what_the_template_allows_and_hears_how_the_user_allows_more() {
        let file = r#"{"open": {"argv": ["x", "{prompt}"], "allow_env": ["TASK_COLOR"]}}"#;
        let templates = Templates::load(&dir_with(Some(file))).unwrap();
        assert_eq!(templates.argv("open", &VALUES).unwrap(), ["x", VALUES.prompt]);
        let asked = |k: &str| BTreeMap::from([(k.to_owned(), "v".to_owned())]);
        let own = vec![("TABWIRE_WORKER_ID".to_owned(), "n-1".to_owned())];
        let env = templates.env("open", own.clone(), &asked("TASK_COLOR")).unwrap();
        assert_eq!(env, [own[0].clone(), ("TASK_COLOR".into(), "v".into())]);

        let err = templates.env("open", own.clone(), &asked("OTHER")).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "bad_request: spawn_worker may not set OTHER: template \"open\" does not allow \
                 it (it allows: TASK_COLOR). Only the user can allow it, in "
            ) && err.ends_with(r#"write the template as {"argv": [...], "allow_env": ["OTHER"]}"#),
            "{err}"
        );
        let err = templates.env(DEFAULT, own, &asked("PATH")).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "bad_request: spawn_worker may not set PATH: template \"default\" does not allow \
                 it and no template can: it chooses which programs run"
            ) && err.contains("allow_env"),
            "{err}"
        );
    }
}
