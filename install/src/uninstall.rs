//! `tabwire uninstall`: remove what the record says install wrote, and Claude Code's skill when
//! it is tabwire's; nothing else.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use crate::browsers::{Browser, HOST_NAME};
use crate::claude;
use crate::env::Env;
use crate::error::Error;
use crate::extension;
use crate::record::{Record, remove_empty_dirs};
use crate::registry;

/// `tabwire uninstall`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UninstallArgs {
    /// Print every file and registry key it would remove, and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// What happened to one recorded item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    Removed(String),
    /// Already gone.
    Missing(String),
    /// Left in place: the file there is no longer a tabwire manifest.
    Kept(String, String),
}

/// The outcome of an uninstall.
#[derive(Debug, Clone)]
pub struct UninstallReport {
    pub dry_run: bool,
    pub record: PathBuf,
    /// Whether there was a record at all.
    pub had_record: bool,
    pub removals: Vec<Removal>,
}

/// Remove every manifest and registry key in the record, the folders install created for
/// them when empty, and the record.
pub fn uninstall(args: &UninstallArgs, env: &Env) -> Result<UninstallReport, Error> {
    let record_path = env.record_path();
    let had_record = record_path.exists();
    let record = Record::load(&record_path)?;
    let mut removals = Vec::new();
    for entry in &record.entries {
        let path = &entry.target.manifest;
        let shown = path.display().to_string();
        match fs::read(path) {
            Err(_) if !path.exists() => removals.push(Removal::Missing(shown)),
            Ok(bytes) if !is_tabwire_manifest(&bytes) => removals.push(Removal::Kept(
                shown,
                "it is no longer a tabwire manifest, so it was left alone".into(),
            )),
            _ => {
                if !args.dry_run {
                    fs::remove_file(path).map_err(Error::io("remove", path))?;
                }
                removals.push(Removal::Removed(shown));
            }
        }
        if let Some(key) = &entry.target.registry_key {
            // Only a key install writes: a record edited to name another key is not followed.
            if !Browser::all().any(|b| b.registry_keys().contains(key)) {
                let why = "it is not a key tabwire install writes (…\\NativeMessagingHosts\\\
                           dev.tabwire.host of a known browser), so it was left alone";
                removals.push(Removal::Kept(format!("HKCU\\{key}"), why.into()));
                continue;
            }
            if !args.dry_run {
                registry::delete(key).map_err(|source| Error::Registry {
                    what: "delete",
                    key: key.clone(),
                    source,
                })?;
            }
            removals.push(Removal::Removed(format!("HKCU\\{key}")));
        }
    }
    if let Some(root) = &record.extension_root {
        let shown = root.display().to_string();
        // Only the folder install writes: a record edited to name another is not followed.
        if *root != extension::installed_root(env) {
            let why = format!(
                "the record names it, but install writes the extension only to {}",
                extension::installed_root(env).display()
            );
            removals.push(Removal::Kept(shown, why));
        } else if !root.exists() {
            removals.push(Removal::Missing(shown));
        } else {
            if !args.dry_run {
                fs::remove_dir_all(root).map_err(Error::io("remove", root))?;
            }
            removals.push(Removal::Removed(shown));
        }
    }
    // The programs install copied out of npm's folders: only copies in `<data>/bin`.
    for copy in &record.kept_programs {
        let shown = copy.display().to_string();
        if !crate::keep::is_kept_copy(copy, env) {
            let why = format!(
                "install copies only tabwire and tabwire-host, to {}",
                crate::keep::bin_dir(env).display()
            );
            removals.push(Removal::Kept(shown, why));
        } else if !copy.exists() {
            removals.push(Removal::Missing(shown));
        } else {
            if !args.dry_run {
                fs::remove_file(copy).map_err(Error::io("remove", copy))?;
            }
            removals.push(Removal::Removed(shown));
        }
    }
    removals.extend(uninstall_windows_side(&record, args.dry_run));
    // The worker templates: install's own file goes; one the user edited stays.
    let templates = claude::workers_file(env);
    match fs::read_to_string(&templates) {
        Ok(text) if text == claude::default_worker_templates() => {
            if !args.dry_run {
                fs::remove_file(&templates).map_err(Error::io("remove", &templates))?;
            }
            removals.push(Removal::Removed(templates.display().to_string()));
        }
        Ok(_) => removals.push(Removal::Kept(
            templates.display().to_string(),
            "you changed it since install wrote it".into(),
        )),
        Err(_) => {}
    }
    removals.extend(uninstall_skill(env, args.dry_run)?);
    if had_record && !args.dry_run {
        fs::remove_file(&record_path).map_err(Error::io("remove", &record_path))?;
        // Last, and all together: a folder install created for one manifest may also hold
        // another's, or the record.
        let created = record.entries.iter().flat_map(|e| &e.created_dirs);
        remove_empty_dirs(created.chain(&record.created_dirs));
    }
    Ok(UninstallReport { dry_run: args.dry_run, record: record_path, had_record, removals })
}

/// Claude Code's skill that `install --claude --skill` wrote (`skill.rs`): removed, with its
/// folder when nothing else is in it, only when its front matter still names it tabwire's. The
/// skill is not in the record: an uninstall after one that left it behind still finds it.
fn uninstall_skill(env: &Env, dry_run: bool) -> Result<Option<Removal>, Error> {
    let path = crate::skill::skill_path(env);
    let Ok(text) = fs::read_to_string(&path) else { return Ok(None) };
    let shown = format!("{} (Claude Code's skill)", path.display());
    if !crate::skill::is_tabwire_skill(&text) {
        let why = "its front matter does not name it `tabwire`, so it is not tabwire's skill and \
                   was left alone";
        return Ok(Some(Removal::Kept(shown, why.into())));
    }
    if !dry_run {
        fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        let _ = path.parent().map(fs::remove_dir); // only when empty
    }
    Ok(Some(Removal::Removed(shown)))
}

/// Inside WSL: `tabwire.exe uninstall` removes what it wrote on Windows, then the programs
/// install copied there go — only files named as install names them, in a `tabwire/bin` folder,
/// so a record edited to name another file is not followed.
fn uninstall_windows_side(record: &Record, dry_run: bool) -> Vec<Removal> {
    let mut out = Vec::new();
    if let Some(exe) = record.windows_exe.as_ref().filter(|exe| exe.is_file()) {
        let shown = format!("the Windows side (`{} uninstall`)", exe.display());
        if dry_run {
            out.push(Removal::Removed(shown));
        } else {
            let run = std::process::Command::new(exe)
                .arg("uninstall")
                .current_dir(exe.parent().unwrap_or(std::path::Path::new("/")))
                .output();
            match run {
                Ok(o) if o.status.success() => out.push(Removal::Removed(shown)),
                Ok(o) => out.push(Removal::Kept(
                    shown,
                    format!(
                        "it failed ({}): {}",
                        o.status,
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                )),
                Err(e) => out.push(Removal::Kept(shown, format!("it did not run: {e}"))),
            }
        }
    }
    for copy in &record.windows_copies {
        let shown = copy.display().to_string();
        let named = copy.file_name().is_some_and(|n| n == "tabwire.exe" || n == "tabwire-host.exe");
        let bin = copy.parent().filter(|d| d.ends_with("tabwire/bin"));
        let Some(bin) = bin.filter(|_| named) else {
            let why =
                "install copies only tabwire.exe and tabwire-host.exe to a tabwire/bin folder";
            out.push(Removal::Kept(shown, why.into()));
            continue;
        };
        if !copy.exists() {
            out.push(Removal::Missing(shown));
            continue;
        }
        if !dry_run {
            if let Err(e) = fs::remove_file(copy) {
                out.push(Removal::Kept(shown, format!("cannot remove it: {e}")));
                continue;
            }
            let _ = fs::remove_dir(bin);
            let _ = bin.parent().map(fs::remove_dir);
        }
        out.push(Removal::Removed(shown));
    }
    out
}

/// `tabwire uninstall`: uninstall and print what was removed.
pub fn run_uninstall(args: &UninstallArgs, env: &Env, out: &mut dyn Write) -> Result<(), Error> {
    let report = uninstall(args, env)?;
    print_report(&report, out).map_err(Error::io("print to", "stdout"))
}

fn print_report(r: &UninstallReport, out: &mut dyn Write) -> std::io::Result<()> {
    if !r.had_record && r.removals.is_empty() {
        return writeln!(
            out,
            "nothing to uninstall: there is no record of an install at {} (`tabwire install` \
             writes it)",
            r.record.display()
        );
    }
    for removal in &r.removals {
        match removal {
            Removal::Removed(what) if r.dry_run => writeln!(out, "would remove  {what}")?,
            Removal::Removed(what) => writeln!(out, "removed       {what}")?,
            Removal::Missing(what) => writeln!(out, "already gone  {what}")?,
            Removal::Kept(what, why) => writeln!(out, "kept          {what}: {why}")?,
        }
    }
    if !r.had_record {
        writeln!(out, "no record of an install at {}", r.record.display())?;
    }
    if r.dry_run {
        if r.had_record {
            writeln!(out, "would remove  {}", r.record.display())?;
        }
        writeln!(out, "dry run: nothing was changed")
    } else if !r.had_record {
        Ok(())
    } else {
        writeln!(out, "removed       {}", r.record.display())
    }
}

/// Whether `bytes` are a manifest for our host, so uninstall never deletes a stranger's file.
fn is_tabwire_manifest(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .is_ok_and(|v| v.get("name").and_then(|n| n.as_str()) == Some(HOST_NAME))
}
