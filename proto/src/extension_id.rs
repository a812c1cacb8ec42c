//! The extension id tabwire ships with. It is fixed by the `key` in extension/manifest.json
//! (id = first 32 hex digits of sha256 of the DER public key, each digit 0-f written a-p), so
//! it is the same on every machine. Also in manifests/extension-id and specs/protocol.md.

/// The tabwire extension's id.
pub const EXTENSION_ID: &str = "cmbolhpnohkddmklmlbjnpdpmgmdgkfi";
