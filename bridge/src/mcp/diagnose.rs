//! `diagnose`: `tabwire doctor` as a tool, so the model can tell the user what is wrong and the
//! exact command or click that fixes it.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use tabwire_install::{DoctorArgs, Env};

use super::reply::Reply;
use super::server::TabwireServer;

/// Every check of the chain from the browser to this server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Diagnosis {
    /// True when every check passed.
    pub healthy: bool,
    /// One entry per check, in order: manifests, runtime directory, hosts, pings.
    pub findings: Vec<DiagnosisFinding>,
}

/// One check.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DiagnosisFinding {
    /// What was checked.
    pub check: String,
    /// Whether it is fine.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// When broken: the exact command or click that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

#[tool_router(router = diagnose_tools, vis = "pub(super)")]
impl TabwireServer {
    /// Check each link from the browser to tabwire (manifests, runtime directory, hosts, a ping
    /// through each browser) and say how to fix what is broken. Use it when no browser is
    /// connected; list_browsers shows the attached ones.
    #[tool(
        output_schema = schema_for_output::<Diagnosis>(),
        annotations(
            title = "Diagnose the browser connection",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn diagnose(&self) -> Result<Reply<Diagnosis>, rmcp::ErrorData> {
        let fail = |e: &dyn std::fmt::Display| rmcp::ErrorData::internal_error(e.to_string(), None);
        let env = Env::from_process().map_err(|e| fail(&e))?;
        let findings = crate::doctor::findings(Some(&self.core), &DoctorArgs::default(), &env)
            .await
            .map_err(|e| fail(&e))?;
        let healthy = tabwire_install::all_ok(&findings);
        let mut text = Vec::new();
        tabwire_install::render(&findings, false, &mut text).map_err(|e| fail(&e))?;
        let findings = findings
            .into_iter()
            .map(|f| DiagnosisFinding { check: f.check, ok: f.ok, detail: f.detail, fix: f.fix })
            .collect();
        Ok(Reply::new(String::from_utf8_lossy(&text).into_owned(), Diagnosis { healthy, findings }))
    }
}
