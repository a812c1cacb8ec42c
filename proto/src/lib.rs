//! The tabwire protocol: what the host (`tabwire-host`) and the bridges (`tabwire`) both speak,
//! so that neither depends on the other. How frames are cut (`codec`, bytes only), what the
//! messages and error codes are (`wire`, serde only), how a message too big for Chrome is split
//! (`chunk`), every size and time limit with why (`limits`), which extension may start the host
//! (`extension_id`), stdin and stdout as reactor pipes (`pipes`), the grammar of the sites the
//! user allows (`sites`), where the sockets and records live (`runtime_dir`), and how every
//! local socket is bound, checked and accepted on (`socket`). The contract in words is
//! `specs/protocol.md`.

pub mod chunk;
pub mod codec;
pub mod extension_id;
pub mod limits;
pub mod pipes;
pub mod runtime_dir;
pub mod sites;
pub mod socket;
pub mod wire;
