//! The `dom` family: any page of an allowed site, read and acted on as a user would (`refs.rs`,
//! with the files upload_file may give in `uploads.rs`), seen (`screenshot.rs`, `logs.rs`),
//! scripted where the user allows it (`evaluate.rs`), its downloads (`downloads.rs`), and handed
//! to the user (`handover.rs`). In the default set.

mod downloads;
mod evaluate;
mod handover;
mod logs;
mod refs;
mod screenshot;
mod uploads;

use crate::mcp::family::Family;
use crate::mcp::server::TabwireServer;

pub const FAMILY: Family = Family {
    name: "dom",
    instructions: "\
Any page of an allowed site: read_page gives its controls as lines with refs (e12; f3e7 inside \
a frame) and find searches them; click, fill, type, press_key, pointer and upload_file act on a \
ref (or a CSS selector) and report how the page settled (check `effect`: none means nothing \
changed; also `dialog`, `new_tab`); wait_for waits for text, a selector or a url; screenshot \
shows a page as an image, console_messages and network_requests what it logged and requested, \
and evaluate runs your function there only where the user turned on scripts for the site.",
    router: || {
        TabwireServer::dom_tools()
            + TabwireServer::screenshot_tools()
            + TabwireServer::log_tools()
            + TabwireServer::evaluate_tools()
            + TabwireServer::download_tools()
            + TabwireServer::handover_tools()
    },
};
