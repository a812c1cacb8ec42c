//! `diagnose`: `tabwire doctor` as a tool, so the model can tell the user what is wrong and the
//! exact command or click that fixes it; with a tab, also where a page call's time goes.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tabwire_install::{DoctorArgs, Env};

use crate::doctor::Hop;
use crate::mcp::reply::Reply;
use crate::mcp::server::TabwireServer;

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct DiagnoseParams {
    /// A tab (from list_tabs) to time each hop to: the extension's worker, the tab's isolated
    /// world, the page's own world.
    #[serde(default)]
    pub tab_id: Option<i64>,
}

/// Every check of the chain from the browser to this server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Diagnosis {
    /// True when every check passed.
    pub healthy: bool,
    /// One entry per check, in order: manifests, runtime directory, hosts, pings (and the
    /// hops to the tab, when one was given).
    pub findings: Vec<DiagnosisFinding>,
    /// With a tab: each hop a page call takes, timed, up to the first that did not answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hops: Vec<Hop>,
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
    /// connected; list_browsers shows the attached ones. With tab_id, also time each hop to
    /// that tab, to tell where a slow page call spends its time.
    #[tool(
        output_schema = schema_for_output::<Diagnosis>(),
        annotations(
            title = "Diagnose the browser connection",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn diagnose(
        &self,
        Parameters(p): Parameters<DiagnoseParams>,
    ) -> Result<Reply<Diagnosis>, rmcp::ErrorData> {
        let fail = |e: &dyn std::fmt::Display| rmcp::ErrorData::internal_error(e.to_string(), None);
        let env = Env::from_process().map_err(|e| fail(&e))?;
        let mut findings = crate::doctor::findings(Some(&self.core), &DoctorArgs::default(), &env)
            .await
            .map_err(|e| fail(&e))?;
        let mut hops = Vec::new();
        if let Some(tab) = p.tab_id {
            let timed = crate::doctor::hops(&self.core, tab).await;
            findings.push(timed.finding(tab));
            hops = timed.timed;
        }
        let healthy = tabwire_install::all_ok(&findings);
        let mut text = Vec::new();
        tabwire_install::render(&findings, false, &mut text).map_err(|e| fail(&e))?;
        let findings = findings
            .into_iter()
            .map(|f| DiagnosisFinding { check: f.check, ok: f.ok, detail: f.detail, fix: f.fix })
            .collect();
        let diagnosis = Diagnosis { healthy, findings, hops };
        Ok(Reply::new(String::from_utf8_lossy(&text).into_owned(), diagnosis))
    }
}
