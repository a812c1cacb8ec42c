//! `tabwire install`: register the host with the browsers, record it, say what is left to do.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::claude::{self, Server};
use crate::env::{Env, is_volatile, shell_quote};
use crate::error::Error;
use crate::extension::{self, Build};
use crate::keep::{self, Kept};
use crate::locate::{HostChoice, HostSource, find_extension_dir, locate_host};
use crate::manifest::Change;
use crate::manifest::HostManifest;
use crate::record::{Record, create_dirs};
use crate::registry;
use crate::targets::{Selection, Target, resolve};
use crate::wsl::Wsl;

/// `tabwire install`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct InstallArgs {
    #[command(flatten)]
    pub selection: Selection,

    /// The tabwire-host executable to register; default: the one next to this program, else
    /// the one on PATH
    #[arg(long, value_name = "PATH")]
    pub host_path: Option<PathBuf>,

    /// Print every file and registry key it would write, and change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Also add tabwire to Claude Code (runs `claude mcp add tabwire -- … mcp`; from npx,
    /// `npx -y tabwire mcp`)
    #[arg(long)]
    pub claude: bool,

    /// With --claude: write Claude Code's skill instead (`~/.claude/skills/tabwire/SKILL.md`),
    /// which teaches `tabwire call` from the shell and costs the conversation nothing until a
    /// task needs it
    #[arg(long, requires = "claude")]
    pub skill: bool,

    /// Inside WSL: the Windows tabwire.exe to register for the browsers on Windows (with
    /// tabwire-host.exe beside it); default: the one next to this program
    #[arg(long, value_name = "PATH")]
    pub windows_exe: Option<PathBuf>,
}

/// What install did to the extension folder it writes (`<data>/extension/current`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtensionChange {
    /// There was none.
    Created,
    /// The same build was there: written again, and a browser running it needs nothing.
    Unchanged,
    /// Another build was there (`build.json`'s, when it had one): the browsers that loaded the
    /// folder run the old one until the user presses Reload.
    Replaced { from: Option<Build> },
}

/// The outcome of an install.
#[derive(Debug, Clone)]
pub struct InstallReport {
    pub dry_run: bool,
    pub host: HostChoice,
    /// Programs copied out of a folder npm may clear ([`keep`]).
    pub kept: Vec<Kept>,
    /// How Claude Code starts the MCP server.
    pub server: Server,
    /// What happened to the extension install writes; `None` for a checkout's.
    pub extension_change: Option<ExtensionChange>,
    pub extension_ids: Vec<String>,
    pub changes: Vec<(Target, Change)>,
    /// Browsers left out, and why.
    pub notes: Vec<String>,
    /// The record file (`installed.json`).
    pub record: PathBuf,
    /// The extension folder to load unpacked, when found.
    pub extension_dir: Option<PathBuf>,
}

/// Write the manifests (unless `args.dry_run`) and record them.
pub fn install(args: &InstallArgs, env: &Env) -> Result<InstallReport, Error> {
    let extension_ids = args.selection.extension_ids()?;
    let mut host = locate_host(args.host_path.as_deref(), env)?;
    let resolved = resolve(&args.selection, env)?;
    let record_path = env.record_path();
    let mut record = Record::load(&record_path)?;

    // A program npm may remove (npx's cache, a node_modules) is copied to a folder of our own:
    // the host, which browsers start from the manifest long after this, and tabwire itself when
    // Claude Code is to start it by its path.
    let mut to_keep = Vec::new();
    if host.source != HostSource::Flag && is_volatile(&host.path) {
        to_keep.push(host.path.clone());
    }
    let mut server = Server::of(env);
    if let Server::Program(exe) = &server
        && is_volatile(exe)
    {
        to_keep.push(exe.clone());
    }
    let mut kept = Vec::new();
    if !to_keep.is_empty() && !args.dry_run {
        record.created_dirs.extend(create_dirs(&keep::bin_dir(env))?);
    }
    for from in to_keep {
        let copy = keep::copy(&from, env, args.dry_run)?;
        if from == host.path {
            host = HostChoice { path: copy.to.clone(), source: HostSource::Kept(from.clone()) };
        } else {
            server = Server::Program(copy.to.clone());
        }
        if !args.dry_run && !record.kept_programs.contains(&copy.to) {
            record.kept_programs.push(copy.to.clone());
        }
        kept.push(copy);
    }

    let text = HostManifest::new(&host.path, &extension_ids).render();
    let mut changes = Vec::new();
    for target in resolved.targets {
        let change = match fs::read_to_string(&target.manifest) {
            Ok(old) if old == text => Change::Unchanged,
            Ok(_) => Change::Updated,
            Err(_) => Change::Created,
        };
        if !args.dry_run {
            let mut created = Vec::new();
            if change != Change::Unchanged {
                let dir = target.manifest.parent().expect("a manifest path has a folder");
                created = create_dirs(dir)?;
                write_file(&target.manifest, &text)?;
            }
            if let Some(key) = &target.registry_key {
                registry::set(key, &target.manifest).map_err(|source| Error::Registry {
                    what: "set",
                    key: key.clone(),
                    source,
                })?;
            }
            record.add(target.clone(), created);
        }
        changes.push((target, change));
    }
    // A checkout (or TABWIRE_EXTENSION_DIR) is used as it is; else the extension this binary
    // carries is written where the user loads it from, replacing an older one in place.
    let (extension_dir, extension_change) = match find_extension_dir(env) {
        Some(dir) => (Some(dir), None),
        None => {
            let dir = extension::installed_dir(env);
            let change = if !dir.exists() {
                ExtensionChange::Created
            } else {
                match extension::build_of(&dir) {
                    Some(b)
                        if b.version == extension::VERSION && b.build_id == extension::BUILD_ID =>
                    {
                        ExtensionChange::Unchanged
                    }
                    from => ExtensionChange::Replaced { from },
                }
            };
            if !args.dry_run {
                let root = extension::installed_root(env);
                record.created_dirs.extend(create_dirs(&root)?);
                extension::install(env)?;
                record.extension_root = Some(root);
            }
            (Some(dir), Some(change))
        }
    };
    if !args.dry_run {
        record.host_path = Some(host.path.clone());
        record.extension_ids = extension_ids.clone();
        record.save(&record_path)?;
    }
    Ok(InstallReport {
        dry_run: args.dry_run,
        host,
        kept,
        server,
        extension_change,
        extension_ids,
        changes,
        notes: resolved.notes,
        record: record_path,
        extension_dir,
    })
}

/// `tabwire install`: install, then print what was done and the steps left to the user.
pub fn run_install(args: &InstallArgs, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    let record = Record::load(&env.record_path())?;
    if let Some(wsl) = crate::record::wsl_mode(env, &args.selection, &record) {
        return run_wsl_install(args, wsl, record, env, out);
    }
    let report = install(args, env)?;
    print_report(&report, env, out).map_err(Error::io("print to", "stdout"))?;
    if args.claude && args.skill {
        crate::skill::write_skill(&report.server, env, args.dry_run, out)?;
    } else if args.claude {
        if args.dry_run {
            let line = claude::mcp_add_line(&report.server);
            writeln!(out, "would run: {line}").map_err(Error::io("print to", "stdout"))?;
            let templates = claude::workers_file(env);
            writeln!(out, "would write {} unless it exists", templates.display())
                .map_err(Error::io("print to", "stdout"))?;
        } else {
            claude::run_mcp_add(&report.server, env, out)?;
        }
    }
    Ok(())
}

/// `tabwire install` inside WSL (`wsl_install.rs`): the Windows programs register the Windows
/// browsers; the record keeps what was copied, and Claude Code gets the Windows program.
fn run_wsl_install(
    args: &InstallArgs,
    wsl: &Wsl,
    mut record: Record,
    env: &Env,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let ids = args.selection.extension_ids()?;
    // Only ids the user named are passed on: the Windows program has the same default.
    let named = if args.selection.extension_ids.is_empty() { &[][..] } else { &ids[..] };
    let plan = crate::wsl_install::install(
        wsl,
        args.windows_exe.as_deref(),
        named,
        args.dry_run,
        env,
        out,
    )?;
    let line = claude::mcp_add_line_for(&plan.windows_exe);
    if args.dry_run {
        writeln!(out, "would record them in {}", env.record_path().display())
            .map_err(Error::io("print to", "stdout"))?;
        if args.claude {
            writeln!(out, "would run: {line}").map_err(Error::io("print to", "stdout"))?;
        }
        return Ok(());
    }
    record.windows_exe = Some(plan.windows_exe.clone());
    for (_, copy) in &plan.copies {
        if !record.windows_copies.contains(copy) {
            record.windows_copies.push(copy.clone());
        }
    }
    record.extension_ids = ids;
    record.save(&env.record_path())?;
    let p = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(Error::io("print to", "stdout"))
    };
    p(out, format!("recorded in {}", env.record_path().display()))?;
    if args.claude {
        claude::run_mcp_add_for(&plan.windows_exe, env, out)?;
    } else {
        p(out, "\nLast, add tabwire to Claude Code in WSL (or run install with --claude):".into())?;
        p(out, format!("       {line}"))?;
    }
    Ok(())
}

fn print_report(r: &InstallReport, env: &Env, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "host: {}", r.host)?;
    for kept in &r.kept {
        let verb = verb(r.dry_run, kept.change, "would copy", "copied");
        writeln!(
            out,
            "{verb:<12}  {}  (from {}: npm may clear or replace that folder, so {})",
            kept.to.display(),
            kept.from.display(),
            if r.host.path == kept.to {
                "the browsers start this copy"
            } else {
                "Claude Code starts this copy"
            }
        )?;
    }
    for (target, change) in &r.changes {
        let verb = verb(r.dry_run, *change, "would create", "created");
        writeln!(out, "{verb:<12}  {}  ({})", target.manifest.display(), target.label)?;
        if let Some(key) = &target.registry_key {
            let verb = if r.dry_run { "would set" } else { "set" };
            writeln!(out, "{verb:<12}  HKCU\\{key} = {}", target.manifest.display())?;
        }
    }
    let this = format!("{} build {}", extension::VERSION, extension::BUILD_ID);
    if let (Some(change), Some(dir)) = (&r.extension_change, &r.extension_dir) {
        let (verb, what) = match (change, r.dry_run) {
            (ExtensionChange::Created, true) => ("would write", this),
            (ExtensionChange::Created, false) => ("wrote", this),
            (ExtensionChange::Unchanged, _) => ("up to date", this),
            (ExtensionChange::Replaced { from }, dry) => {
                let verb = if dry { "would replace" } else { "replaced" };
                (verb, format!("{} → {this}", old_build(from)))
            }
        };
        writeln!(out, "{verb:<12}  {}  (extension {what})", dir.display())?;
    }
    for note in &r.notes {
        writeln!(out, "note: {note}")?;
    }
    if r.dry_run {
        writeln!(out, "would record them in {}", r.record.display())?;
        writeln!(out, "dry run: nothing was changed")?;
        return Ok(());
    }
    writeln!(
        out,
        "recorded in {} (`{} uninstall` removes all of it)",
        r.record.display(),
        env.self_command()
    )?;

    writeln!(out, "\nNext:")?;
    let own_id = tabwire_proto::extension_id::EXTENSION_ID;
    if r.extension_ids.iter().any(|id| id == own_id) {
        let folder = match &r.extension_dir {
            Some(dir) => shell_quote(dir),
            None => format!(
                "<the extension/ folder of the tabwire checkout> (not found near {}; set \
                 TABWIRE_EXTENSION_DIR to say where it is)",
                env.current_exe.display()
            ),
        };
        if let Some(ExtensionChange::Replaced { from }) = &r.extension_change {
            writeln!(
                out,
                "  1. Reload the extension: the files changed ({} → {}), and a browser runs the \
                 old ones until you open chrome://extensions and press Reload on tabwire (↻). \
                 Not loaded there yet? Turn on Developer mode, click Load unpacked and choose \
                 {folder}",
                old_build(from),
                extension::VERSION
            )?;
        } else {
            writeln!(
                out,
                "  1. Load the extension: open chrome://extensions, turn on Developer mode, click \
                 Load unpacked and choose {folder}"
            )?;
        }
    } else {
        writeln!(
            out,
            "  1. Install the extension with id {} in the browser",
            r.extension_ids.join(" or ")
        )?;
    }
    writeln!(out, "  2. Add tabwire to Claude Code (or run install with --claude):")?;
    writeln!(out, "       {}", claude::mcp_add_line(&r.server))?;
    Ok(())
}

/// `created`/`updated`/`up to date`, or in a dry run what would be.
fn verb(
    dry_run: bool,
    change: Change,
    would_create: &'static str,
    created: &'static str,
) -> &'static str {
    match (dry_run, change) {
        (true, Change::Created) => would_create,
        (true, Change::Updated) => "would update",
        (false, Change::Created) => created,
        (false, Change::Updated) => "updated",
        (_, Change::Unchanged) => "up to date",
    }
}

/// The extension install replaced, as `build.json` named it.
fn old_build(from: &Option<Build>) -> String {
    match from {
        Some(b) => format!("{} build {}", b.version, b.build_id),
        None => "an older one, without build.json".to_owned(),
    }
}

/// Write `text` to `path` through a temporary file and a rename, so the browser never reads
/// half a manifest and a symlink left there by another installer is replaced, not followed.
fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    fs::write(&tmp, text).map_err(Error::io("write", &tmp))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("write", path)(e)
    })
}
