//! The `tabs` family: the user's tabs by id (`tab.rs`), the browsers attached (`browsers.rs`),
//! and `diagnose` for when none is (`diagnose.rs`). In the default set.

mod browsers;
mod diagnose;
mod tab;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "tabs",
    instructions: "\
Tabs: list_tabs, open_tab, navigate, activate_tab and close_tab act by tab id; the tabs are the \
user's, so do not close or navigate away from one you did not open unless asked. list_browsers \
names the attached browsers; if none is connected, run diagnose and tell the user to start \
Chrome with the tabwire extension.",
    router: || {
        TabwireServer::browser_tools()
            + TabwireServer::tab_tools()
            + TabwireServer::diagnose_tools()
    },
};
