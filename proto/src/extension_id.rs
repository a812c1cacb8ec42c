//! The extension ids tabwire ships with.
//!
//! The development build's id is fixed by the `key` in extension/manifest.json (id = first 32
//! hex digits of sha256 of the DER public key, each digit 0-f written a-p), so it is the same
//! on every machine that loads the folder unpacked. Also in manifests/extension-id and
//! specs/protocol.md.
//!
//! The Chrome Web Store assigns its own id at the first upload (the store refuses a `key`, so
//! `tabwire extension pack` leaves it out): [`STORE_EXTENSION_ID`] is `None` until then, and
//! specs/install.md ("The Chrome Web Store") says how to fill it in.

/// The development build's id (the unpacked extension/ folder, signed by the manifest's `key`).
pub const EXTENSION_ID: &str = "cmbolhpnohkddmklmlbjnpdpmgmdgkfi";

/// The id the Chrome Web Store gave the published extension; `None` until the first upload.
pub const STORE_EXTENSION_ID: Option<&str> = None;

/// The ids of tabwire's own builds, given the store's id (pass [`STORE_EXTENSION_ID`]; tests
/// pass their own): the development id, then the store's when there is one. The host manifest's
/// `allowed_origins` lists these, and the host accepts them without an allow list.
pub fn own_ids(store: Option<&'static str>) -> Vec<&'static str> {
    std::iter::once(EXTENSION_ID).chain(store).collect()
}

/// Which build of tabwire's extension runs under `id`, given the store's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The unpacked extension/ folder, id fixed by the manifest's `key`.
    Development,
    /// The one installed from the Chrome Web Store.
    Store,
    /// Another id the user allowed (`tabwire install --extension-id`).
    Other,
}

impl Build {
    pub fn of(id: &str, store: Option<&str>) -> Build {
        if id == EXTENSION_ID {
            Build::Development
        } else if store == Some(id) {
            Build::Store
        } else {
            Build::Other
        }
    }

    /// How `doctor` names the build running under `id`.
    pub fn describe(self, id: &str) -> String {
        match self {
            Build::Development => format!("development build (unpacked, id {id})"),
            Build::Store => format!("Chrome Web Store build (id {id})"),
            Build::Other => format!("an extension id you allowed (id {id}), not a tabwire build"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORE: &str = "abcdefghijklmnopabcdefghijklmnop";

    #[test]
    fn own_ids_add_the_store_id_once_it_is_known() {
        assert_eq!(own_ids(None), [EXTENSION_ID]);
        assert_eq!(own_ids(Some(STORE)), [EXTENSION_ID, STORE]);
    }

    #[test]
    fn each_id_names_its_build() {
        assert_eq!(Build::of(EXTENSION_ID, Some(STORE)), Build::Development);
        assert_eq!(Build::of(STORE, Some(STORE)), Build::Store);
        assert_eq!(Build::of(STORE, None), Build::Other, "no store id yet: not the store's");
        let text = Build::of(STORE, Some(STORE)).describe(STORE);
        assert_eq!(text, format!("Chrome Web Store build (id {STORE})"));
        let text = Build::Development.describe(EXTENSION_ID);
        assert_eq!(text, format!("development build (unpacked, id {EXTENSION_ID})"));
    }
}
