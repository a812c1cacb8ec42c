//! `tabwire call <tool> [--json ARGS | --key value …]`: any tool as a terminal command, for an
//! assistant that drives tools through a shell (and loads tabwire's skill only when a task needs
//! it: `tabwire install --claude --skill`). It prints what the model would read — the tool's text,
//! or with `--json` its structured result — and exits 0 (ok), 1 (failed) or 2 (refused: nothing
//! was done). The call goes through the same server an MCP client reaches (`mcp/shell.rs`).
//!
//! With `TABWIRE_SESSION_ID` set, the shell's commands are one session: the first starts it in
//! the background (`tabwire call --serve`, which ends after `TABWIRE_CALL_IDLE_SECS` without a
//! call, default 900, or at `tabwire call --end`), and every later one is served by it, so its
//! tab group and its tabs stay its own. If a `tabwire mcp` holds that id, it serves them.
//! Without it, each command is a call of the user's own, as the other commands are.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use base64::Engine as _;
use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::{Map, Value, json};
use tabwire_link::core::Core;
use tabwire_proto::{Shutdown, runtime_dir, socket};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::mcp::TabwireServer;
use crate::mcp::sets::ToolSet;
use crate::mcp::shell::{DoorAnswer, DoorRequest, door_path, in_process, open_door};

/// `tabwire call`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct CallArgs {
    /// The tool, then its arguments: `--key value` (a value that is not JSON is text), or
    /// `--json '{…}'`; `--help` describes the tool.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "TOOL [ARGS]")]
    pub words: Vec<String>,
}

/// The error codes that mean the call was refused and nothing was done (exit 2).
const REFUSED: [&str; 13] = [
    "bad_request",
    "invalid_params",
    "site_not_allowed",
    "scripts_not_allowed",
    "trusted_input_not_enabled",
    "cookies_not_allowed",
    "file_not_allowed",
    "declined_by_user",
    "paused_by_user",
    "waiting_for_user",
    "tab_owned_by_other_session",
    "origin_changed",
    "dialog_open",
];

pub async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let words = args.words;
    let tools = TabwireServer::tools(&ToolSet::all()).list_all();
    let Some(first) = words.first() else {
        print!("{}", usage(&tools));
        return Ok(ExitCode::SUCCESS);
    };
    match first.as_str() {
        "--help" | "-h" | "help" => {
            match words.get(1) {
                Some(name) => print!("{}", tool_help(&tools, name)?),
                None => print!("{}", usage(&tools)),
            }
            return Ok(ExitCode::SUCCESS);
        }
        "--serve" => return serve().await.map(|()| ExitCode::SUCCESS),
        "--end" => return end().await,
        _ => {}
    }
    let name = first.clone();
    let Some(tool) = tools.iter().find(|t| t.name == name.as_str()) else {
        eprintln!("tabwire call: no tool {name:?}; `tabwire call --help` lists them");
        return Ok(ExitCode::from(2));
    };
    if words[1..].iter().any(|w| w == "--help" || w == "-h") {
        print!("{}", tool_help(&tools, &name)?);
        return Ok(ExitCode::SUCCESS);
    }
    let (arguments, as_json) = match parse(tool, &words[1..]) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("tabwire call {name}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if name == "export_test" && session_id().is_none() {
        // A one-shot call is a session that has done nothing: say so rather than export nothing.
        eprintln!(
            "tabwire call export_test: exports what this session did, and without {env} each \
             command is a session of its own that has done nothing yet. Set {env} (any name, \
             e.g. `export {env}=$(uuidgen)`) before the commands to export, then call it again",
            env = tabwire_session::SESSION_ENV
        );
        return Ok(ExitCode::from(2));
    }
    let request = DoorRequest::Call { tool: name, arguments: Some(arguments) };
    let answer = match session_id() {
        Some(id) => through_door(&id, &request).await?,
        None => one_shot(request).await?,
    };
    Ok(print_answer(answer, as_json))
}

fn session_id() -> Option<String> {
    std::env::var(tabwire_session::SESSION_ENV).ok().filter(|s| !s.trim().is_empty())
}

/// The arguments from `--key value …` and `--json ARGS`; and whether the output is JSON.
fn parse(tool: &Tool, words: &[String]) -> anyhow::Result<(Map<String, Value>, bool)> {
    let props = tool.input_schema.get("properties").and_then(Value::as_object);
    let mut args = Map::new();
    let mut as_json = false;
    let mut i = 0;
    while i < words.len() {
        let Some(key) = words[i].strip_prefix("--") else {
            bail!("{:?} is not an option: give arguments as --key value", words[i]);
        };
        let value = words.get(i + 1).filter(|v| !v.starts_with("--"));
        i += 1 + usize::from(value.is_some());
        if key == "json" {
            as_json = true;
            if let Some(v) = value {
                let given: Value = serde_json::from_str(v).context("--json takes a JSON object")?;
                let Value::Object(given) = given else { bail!("--json takes a JSON object") };
                args.extend(given);
            }
            continue;
        }
        let key = key.replace('-', "_");
        let is_text = props
            .and_then(|p| p.get(&key))
            .is_some_and(|p| p["type"] == "string" || p["type"] == json!(["string", "null"]));
        let value = match value {
            None => Value::Bool(true),
            Some(v) if is_text => Value::String(v.clone()),
            Some(v) => serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.clone())),
        };
        args.insert(key, value);
    }
    Ok((args, as_json))
}

/// One call for no session, in this process.
async fn one_shot(request: DoorRequest) -> anyhow::Result<DoorAnswer> {
    let DoorRequest::Call { tool, arguments } = request else { unreachable!() };
    let core = Core::start(std::env::var("TABWIRE_BROWSER").ok())?;
    let client = in_process(TabwireServer::new(core, ToolSet::all())).await?;
    let mut params = CallToolRequestParams::new(tool);
    if let Some(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    let answer = match client.call_tool(params).await {
        Ok(result) => DoorAnswer::Result(serde_json::to_value(result)?),
        Err(rmcp::ServiceError::McpError(e)) => {
            DoorAnswer::Error { code: e.code.0, message: e.message.to_string() }
        }
        Err(e) => DoorAnswer::Error { code: -32603, message: e.to_string() },
    };
    let _ = client.cancel().await;
    Ok(answer)
}

/// The call, by the door of the shell's session; the session started first if none holds it.
async fn through_door(id: &str, request: &DoorRequest) -> anyhow::Result<DoorAnswer> {
    let runtime_dir = runtime_dir::resolve();
    let open = async || socket::open(&door_path(&runtime_dir, id)?).await.ok();
    let stream = match open().await {
        Some(stream) => stream,
        None => {
            start_background()?;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(stream) = open().await {
                    break stream;
                }
                if Instant::now() > deadline {
                    bail!(
                        "the session {id} did not start within 10 s; run `tabwire call --serve` \
                         with TABWIRE_LOG=info to see why"
                    );
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    Ok(serde_json::from_slice(&ask(stream, request).await?)?)
}

/// One request through the door, and its answer (the session's side ends it).
/// Each ends at a newline (`mcp/shell.rs`): a named pipe has no half-close.
async fn ask(stream: socket::Stream, request: &DoorRequest) -> anyhow::Result<Vec<u8>> {
    let (reading, mut writing) = tokio::io::split(stream);
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    writing.write_all(&line).await?;
    let mut answer = Vec::new();
    tokio::io::BufReader::new(reading).read_until(b'\n', &mut answer).await?;
    if answer.is_empty() {
        bail!("the session closed the call without an answer");
    }
    Ok(answer)
}

/// Start `tabwire call --serve` for this shell's session, detached from the shell.
fn start_background() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["call", "--serve"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0); // the shell's ^C is not its
    cmd.spawn().context("starting the shell's tabwire session")?;
    Ok(())
}

/// `tabwire call --serve`: the session of a shell's commands, until idle, `--end`, or a signal.
async fn serve() -> anyhow::Result<()> {
    let Some(wanted) = session_id() else { bail!("--serve needs TABWIRE_SESSION_ID") };
    let shutdown = Shutdown::on_signals()?;
    let core = Core::start(std::env::var("TABWIRE_BROWSER").ok())?;
    let session = tabwire_session::Session::start(&core).await?;
    if session.record().session_id != wanted {
        bail!("session {wanted} is running already (pid in its record) and takes no shell calls");
    }
    let server = TabwireServer::new(core.clone(), ToolSet::all());
    let idle = std::env::var("TABWIRE_CALL_IDLE_SECS").ok().and_then(|s| s.parse().ok());
    let idle = Duration::from_secs(idle.unwrap_or(900));
    let ended = CancellationToken::new();
    let last = Arc::new(AtomicU64::new(0));
    let path = session.record().door.clone().expect("a new session's record names its door");
    let door = open_door(server.clone(), path, ended.clone(), last.clone());
    let opened = Instant::now();
    let watch = async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let quiet = opened.elapsed().as_millis() as u64 - last.load(Ordering::Relaxed);
            if quiet > idle.as_millis() as u64 {
                ended.cancel();
            }
        }
    };
    tokio::select! {
        done = door => done?,
        () = watch => {}
        _ = shutdown.requested() => {}
    }
    server.stop_workers().await;
    drop(session); // its group is left to the user (specs/tools.md)
    server.flush_operations().await;
    Ok(())
}

/// `tabwire call --end`: end the shell's session.
async fn end() -> anyhow::Result<ExitCode> {
    let Some(id) = session_id() else {
        eprintln!("tabwire call --end: TABWIRE_SESSION_ID is not set: no session to end");
        return Ok(ExitCode::from(2));
    };
    let runtime_dir = runtime_dir::resolve();
    let door = door_path(&runtime_dir, &id);
    let stream = match door {
        Some(path) => socket::open(&path).await.ok(),
        None => None,
    };
    let Some(stream) = stream else {
        println!("session {id} was not running");
        return Ok(ExitCode::SUCCESS);
    };
    let _ = ask(stream, &DoorRequest::End).await;
    // Gone once its record is: the session's group goes with the process.
    let deadline = Instant::now() + Duration::from_secs(5);
    while door_path(&runtime_dir, &id).is_some() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("session {id} ended; its tabs are yours");
    Ok(ExitCode::SUCCESS)
}

/// What is printed, each line through the rule for a page's words (`reply::one_line`: every
/// control but tab, and U+2028/U+2029, written as its escape; the tool's text has had it applied
/// to the page's words already, JSON only to C0): whatever a page's words hold, printed to a
/// terminal they move no cursor, retitle no window and set no clipboard. JSON stays the same
/// JSON to a parser: those characters only stand inside its strings, and the escapes are JSON's.
fn inert(said: &str) -> String {
    said.split('\n').map(crate::mcp::reply::one_line).collect::<Vec<_>>().join("\n")
}

/// Print what the model would read; the exit code.
fn print_answer(answer: DoorAnswer, as_json: bool) -> ExitCode {
    let result = match answer {
        DoorAnswer::Result(result) => result,
        DoorAnswer::Error { code, message } => {
            // An MCP error: arguments the tool does not take, a tool not offered.
            if as_json {
                let said = json!({ "error": { "code": code, "message": message } }).to_string();
                println!("{}", inert(&said));
            } else {
                eprintln!("refused: {}", inert(&message));
            }
            return ExitCode::from(2);
        }
        DoorAnswer::Ended => return ExitCode::SUCCESS,
    };
    let mut out = std::io::stdout().lock();
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    let text = text.join("\n");
    let failed = result["isError"] == true;
    if as_json {
        let shown = match (&result["structuredContent"], failed) {
            (_, true) => json!({ "error": text }),
            (Value::Null, false) => json!({ "text": text }),
            (data, false) => data.clone(),
        };
        let _ =
            writeln!(out, "{}", inert(&serde_json::to_string_pretty(&shown).unwrap_or_default()));
    } else if !text.is_empty() {
        let _ = writeln!(out, "{}", inert(&text));
    }
    // Images (a screenshot) go to a file the assistant can open.
    for block in blocks.iter().filter(|b| b["type"] == "image") {
        let ext = block["mimeType"].as_str().unwrap_or("image/png").trim_start_matches("image/");
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(block["data"].as_str().unwrap_or(""));
        let path = std::env::temp_dir().join(format!("tabwire-{}.{ext}", uuid::Uuid::new_v4()));
        if let Ok(bytes) = bytes
            && std::fs::write(&path, bytes).is_ok()
        {
            let _ = writeln!(out, "image: {}", path.display());
        }
    }
    if !failed {
        return ExitCode::SUCCESS;
    }
    // tabwire's errors are `code: message`; an error without a code is rmcp's refusal of the
    // arguments (of a type the tool does not take), before the tool ran.
    let code = text.split(':').next().unwrap_or_default();
    let coded = !code.is_empty() && code.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    if REFUSED.contains(&code) || !coded { ExitCode::from(2) } else { ExitCode::FAILURE }
}

fn usage(tools: &[Tool]) -> String {
    let mut t = String::from(
        "tabwire call <tool> [--key value …] [--json ['{…}']]\n\
         Runs one tool in your browser and prints what the model would read (--json: the \
         structured result). Exit 0 ok, 1 failed, 2 refused (nothing was done).\n\
         With TABWIRE_SESSION_ID set, a shell's calls are one session with its own tab group; \
         `tabwire call --end` ends it.\n\ntools (tabwire call --help <tool> for one):\n",
    );
    for tool in tools {
        let about = tool.description.as_deref().unwrap_or_default();
        let first = about.split(". ").next().unwrap_or(about).trim_end_matches('.');
        t.push_str(&format!("  {:<22} {first}\n", tool.name));
    }
    t
}

fn tool_help(tools: &[Tool], name: &str) -> anyhow::Result<String> {
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        bail!("no tool {name:?}; `tabwire call --help` lists them")
    };
    let mut t = format!(
        "tabwire call {name} [--key value …]\n{}\n",
        tool.description.as_deref().unwrap_or_default()
    );
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = tool.input_schema.get("properties").and_then(Value::as_object) {
        for (key, p) in props {
            let kind = match &p["type"] {
                Value::String(s) => s.clone(),
                Value::Null => "json".into(),
                other => other.to_string(),
            };
            let need = if required.contains(&key.as_str()) { ", required" } else { "" };
            let about = p["description"].as_str().unwrap_or_default();
            let flag = key.replace('_', "-");
            t.push_str(&format!("  --{flag} <{kind}{need}>  {about}\n"));
        }
    }
    Ok(t)
}
