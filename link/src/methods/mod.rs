//! The extension's methods (`specs/protocol.md`, "Methods the extension answers"), one type
//! each: its name, what it takes, what it answers and how long it may take by default. Every
//! call into a browser goes through [`Core::invoke`](crate::core::Core::invoke) with one of
//! these, so a method's name and its answer's shape are written once, here, and a test keeps
//! the set equal to the spec's table. One file per family (`tabs.*`, `page.*`, …), as
//! mini-redis keeps one file per command.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tabwire_proto::wire::{self, code};

use crate::browser::Connection;
use crate::error::CallError;

pub mod adapter;
mod audit;
mod chat;
mod dom;
mod downloads;
mod handover;
mod page;
mod sites;
mod tabs;
mod webdev;
mod worker;
mod workflow;

pub use audit::*;
pub use chat::*;
pub use dom::*;
pub use downloads::*;
pub use handover::*;
pub use page::*;
pub use sites::*;
pub use tabs::*;
pub use webdev::*;
pub use worker::*;
pub use workflow::*;

/// One method the extension answers. The type is only a name: it is never built.
pub trait Method {
    /// The method's name on the wire, as `specs/protocol.md` lists it.
    const NAME: &'static str;
    /// What the call sends as `params`.
    type Params: Serialize + ?Sized;
    /// What the answer's `result` is read into (`IgnoredAny` where nothing is needed of it).
    type Output: DeserializeOwned;
    /// How long the browser gets unless the caller says otherwise
    /// ([`Core::invoke_within`](crate::core::Core::invoke_within)).
    const TIMEOUT: Duration;
}

/// `methods! { /// doc \n Name = "wire.name": Params => Output, TIMEOUT; … }`: the method types
/// of one family.
macro_rules! methods {
    ($($(#[$doc:meta])* $name:ident = $wire:literal: $params:ty => $output:ty, $timeout:expr;)+) => {$(
        $(#[$doc])*
        pub enum $name {}

        impl $crate::methods::Method for $name {
            const NAME: &'static str = $wire;
            type Params = $params;
            type Output = $output;
            const TIMEOUT: std::time::Duration = $timeout;
        }
    )+};
}
pub(crate) use methods;

/// Every method the bridge can call, by name: the table in `specs/protocol.md`.
pub const ALL: &[&str] = &[
    Ping::NAME,
    Echo::NAME,
    TabsList::NAME,
    TabsOpen::NAME,
    TabsClose::NAME,
    TabsActivate::NAME,
    TabsNavigate::NAME,
    TabsGive::NAME,
    PageGetState::NAME,
    PageCommand::NAME,
    PageDrained::NAME,
    PageCommandList::NAME,
    PageEcho::NAME,
    ChatSend::NAME,
    ChatStatus::NAME,
    ChatCancel::NAME,
    adapter::ChatDetect::NAME,
    SitesList::NAME,
    SitesAllow::NAME,
    SitesRevoke::NAME,
    DomScreenshot::NAME,
    DomConsole::NAME,
    DomNetwork::NAME,
    DomEvaluate::NAME,
    DomTrustedInput::NAME,
    WorkflowUpdate::NAME,
    DomRead::NAME,
    DomFind::NAME,
    DomClick::NAME,
    DomFill::NAME,
    DomType::NAME,
    DomPressKey::NAME,
    DomPointer::NAME,
    DomUpload::NAME,
    DomWaitFor::NAME,
    DomHandleDialog::NAME,
    DomAudit::NAME,
    DownloadsList::NAME,
    HandoverAsk::NAME,
    WebdevCookies::NAME,
    WebdevStorage::NAME,
    WebdevStateSave::NAME,
    WebdevStateRestore::NAME,
    WebdevNetwork::NAME,
    WebdevNetworkHold::NAME,
    WebdevViewport::NAME,
    WebdevTiming::NAME,
    WebdevPdf::NAME,
];

/// Call `M` on one connection and read its answer; also the answer's arrival number (see
/// [`Connection::call_stamped`]), which the state cache orders by.
pub async fn invoke_on<M: Method>(
    conn: &Connection,
    params: &M::Params,
    timeout: Duration,
) -> (Result<M::Output, CallError>, u64) {
    let (reply, arrival) = conn.call_stamped(M::NAME, wire::raw(params), timeout).await;
    let answer = reply.and_then(|raw| {
        serde_json::from_str(raw.get()).map_err(|e| {
            CallError::new(
                code::INTERNAL,
                format!(
                    "the extension answered {} with something this tabwire does not understand \
                     ({e}); are the extension and tabwire the same version? `tabwire doctor` \
                     checks",
                    M::NAME
                ),
            )
        })
    });
    (answer, arrival)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::ALL;

    /// The method names in the first column of `specs/protocol.md`'s "Methods the extension
    /// answers" table (a row may name several: `dom.click`, `dom.fill`, …).
    fn spec_methods() -> BTreeSet<String> {
        let spec = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/protocol.md"),
        )
        .expect("specs/protocol.md");
        let table = spec
            .split("## Methods the extension answers")
            .nth(1)
            .expect("the section")
            .split("\n## ")
            .next()
            .unwrap_or_default();
        let rows = table.lines().filter(|l| l.starts_with("| `"));
        let first_cells = rows.filter_map(|l| l.split('|').nth(1));
        first_cells
            .flat_map(|cell| {
                cell.split('`').skip(1).step_by(2).map(str::to_owned).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn the_method_types_are_the_methods_the_spec_lists() {
        let ours: BTreeSet<String> = ALL.iter().map(|s| s.to_string()).collect();
        assert_eq!(ours.len(), ALL.len(), "a method name is listed twice in methods::ALL");
        let spec = spec_methods();
        assert!(spec.len() > 30, "the spec's table was not found: {spec:?}");
        let missing: Vec<_> = spec.difference(&ours).collect();
        let unlisted: Vec<_> = ours.difference(&spec).collect();
        assert!(
            missing.is_empty() && unlisted.is_empty(),
            "methods in specs/protocol.md without a type: {missing:?}; types the spec does not \
             list: {unlisted:?}"
        );
    }
}
