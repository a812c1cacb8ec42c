//! Which environment variables the caller of `spawn_worker` may set for a worker: only those the
//! template it runs allows (`allow_env` in the user's workers.json; none by default), and never
//! one that chooses what code runs.
//!
//! The caller is the assistant, which a page it read may have talked into anything. The worker
//! runs only programs the user named, but many variables change what such a program does
//! before it reads its arguments: `PATH` picks the interpreter of a script (`#!/usr/bin/env
//! node`) and every command the worker starts, `NODE_OPTIONS=--require=…` makes Node.js (Claude
//! Code's runtime) load a file first, `BASH_ENV` makes every bash source one, `LD_PRELOAD` loads
//! a library into every program. Setting one would be running code of the caller's choice, so
//! the caller may set nothing the user did not allow, and the user cannot allow [`never`]'s.
//!
//! Pure and the same on every OS: variables are compared as written, except that [`never`]
//! ignores ASCII case (Windows names are case-insensitive: `Path` is `PATH` there).

use std::collections::BTreeMap;

/// Names tabwire sets in every worker's environment; a caller may not set them and a template
/// may not allow them.
pub const RESERVED: [&str; 4] = [
    tabwire_proto::sessions::SESSION_ENV,
    tabwire_proto::sessions::WORKER_ENV,
    super::PARENT_PID_ENV,
    "TABWIRE_RUNTIME_DIR",
];

/// Variables no template may allow, each with why: they choose the code that runs.
const NEVER: [(&str, &str); 6] = [
    (
        "PATH",
        "it chooses which programs run (a script's interpreter, each command the worker starts)",
    ),
    ("PATHEXT", "it chooses which programs run on Windows"),
    ("SHELL", "programs (Claude Code among them) run their commands with the shell it names"),
    ("BASH_ENV", "every non-interactive bash first runs the file it names"),
    ("ENV", "sh first runs the file it names"),
    ("JAVA_TOOL_OPTIONS", "Java loads the agents it names"),
];

/// Prefixes of variables no template may allow, each with why.
const NEVER_PREFIXES: [(&str, &str); 7] = [
    ("LD_", "the dynamic loader loads the libraries they name into every program"),
    ("DYLD_", "the macOS dynamic loader loads the libraries they name into every program"),
    (
        "NODE_",
        "Node.js (Claude Code's runtime) loads the code they name (NODE_OPTIONS=--require=…)",
    ),
    ("PYTHON", "Python runs or imports code from where they say"),
    ("PERL5", "Perl loads the code they name"),
    ("RUBY", "Ruby loads the code they name"),
    ("GIT_", "git runs hooks, commands and configuration from what they name"),
];

/// Why no template may allow `name`, if it is one of those.
pub fn never(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    NEVER
        .iter()
        .find(|(n, _)| upper == *n)
        .or_else(|| NEVER_PREFIXES.iter().find(|(prefix, _)| upper.starts_with(prefix)))
        .map(|(_, why)| *why)
}

/// An environment variable's name: letters, digits and '_', not starting with a digit.
pub fn is_name(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Whether a template may allow `name`; why not.
pub fn allowable(name: &str) -> Result<(), String> {
    if !is_name(name) {
        return Err(format!(
            "{name:?} is not an environment variable name (letters, digits and '_', not \
             starting with a digit)"
        ));
    }
    if RESERVED.contains(&name) {
        return Err(format!("tabwire sets {name} itself"));
    }
    match never(name) {
        Some(why) => Err(format!("{name} is never allowed: {why}")),
        None => Ok(()),
    }
}

/// A variable the caller asked for that the template does not allow.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub name: String,
    /// Why no template may allow it, if that is so.
    pub never: Option<&'static str>,
}

/// What a worker's environment adds to this server's: tabwire's own variables, then those the
/// caller `asked` for, which `allowed` (the template's `allow_env`) must each name. The server's
/// `PATH` still finds the program: nothing here is looked at for that.
pub fn worker_env(
    own: Vec<(String, String)>,
    allowed: &[String],
    asked: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, Refused> {
    if let Some(name) = asked.keys().find(|name| !allowed.contains(name)) {
        return Err(Refused { name: name.clone(), never: never(name) });
    }
    Ok(own.into_iter().chain(asked.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(vars: &[(&str, &str)]) -> BTreeMap<String, String> {
        vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn only_the_variables_the_template_allows_pass() {
        let own = vec![("TABWIRE_WORKER_ID".to_owned(), "w-1".to_owned())];
        let allowed = ["TASK_COLOR".to_owned()];
        let env = worker_env(own.clone(), &allowed, &asked(&[("TASK_COLOR", "blue")])).unwrap();
        assert_eq!(
            env,
            [("TABWIRE_WORKER_ID", "w-1"), ("TASK_COLOR", "blue")]
                .map(|(k, v)| (k.into(), v.into()))
        );
        assert_eq!(worker_env(own.clone(), &[], &BTreeMap::new()).unwrap(), own, "nothing asked");

        let refused =
            worker_env(own.clone(), &allowed, &asked(&[("TASK_COLOR", "x"), ("OTHER", "y")]));
        assert_eq!(refused, Err(Refused { name: "OTHER".into(), never: None }));
        let refused = worker_env(own.clone(), &[], &asked(&[("NODE_OPTIONS", "--require=x")]));
        assert!(refused.unwrap_err().never.unwrap().contains("Node.js"));
        let refused = worker_env(own, &allowed, &asked(&[("task_color", "x")]));
        assert_eq!(refused.unwrap_err().name, "task_color", "names are compared as written");
    }

    #[test]
    fn variables_that_choose_the_code_that_runs_are_never_allowable() {
        for name in [
            "PATH",
            "Path",
            "PATHEXT",
            "SHELL",
            "BASH_ENV",
            "ENV",
            "LD_PRELOAD",
            "ld_library_path",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "NODE_PATH",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "RUBYOPT",
            "GIT_SSH_COMMAND",
            "GIT_CONFIG_COUNT",
            "JAVA_TOOL_OPTIONS",
        ] {
            let why = allowable(name).unwrap_err();
            assert!(why.starts_with(&format!("{name} is never allowed: ")), "{why}");
        }
        for name in ["TASK_COLOR", "ANTHROPIC_MODEL", "ENVIRONMENT", "PATHS", "MY_PATH"] {
            assert_eq!(allowable(name), Ok(()), "{name}");
        }
        assert_eq!(
            allowable("TABWIRE_SESSION_ID").unwrap_err(),
            "tabwire sets TABWIRE_SESSION_ID itself"
        );
        assert!(allowable("1X").unwrap_err().contains("not an environment variable name"));
        assert!(allowable("A=B").is_err() && allowable("").is_err());
    }
}
