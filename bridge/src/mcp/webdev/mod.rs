//! The `webdev` family: a web developer's tools for allowed sites: cookies, storage and a
//! signed-in state (`storage.rs`), a tab's requests blocked or mocked (`network.rs`), its page
//! as a whole (`page.rs`: viewport, timing, PDF), what the session did as a Playwright test
//! (`export.rs`), and an accessibility audit (`audit.rs`). Some need a switch the user turns on.

mod audit;
mod export;
mod network;
mod page;
mod storage;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "webdev",
    instructions: "\
Web development: cookies reads and sets a tab's cookies, web_storage names its storage, \
site_state saves, clears and restores a signed-in state, only where the user turned on the \
site's Cookies switch (a cookie is a credential). On any allowed site: network_rules blocks or mocks a tab's requests \
(until removed or this session ends), viewport resizes the page to a device's size, page_timing \
reads its timing, audit_accessibility lists what breaks accessibility rules with the refs to \
fix; print_pdf (\"Trusted input\" switch) prints it to a PDF file.",
    router: || {
        TabwireServer::webdev_tools()
            + TabwireServer::network_tools()
            + TabwireServer::webdev_page_tools()
            + TabwireServer::export_tools()
            + TabwireServer::audit_tools()
    },
};
