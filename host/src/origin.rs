//! Who started us: Chrome passes the calling extension's origin as the first argument.
//!
//! The host drives the user's logged-in browser on behalf of whoever holds its socket, so it
//! only runs for the tabwire extension (or ids the user allowed explicitly). Chrome enforces
//! `allowed_origins` from the host manifest too; this check also covers a manifest that was
//! edited or copied to another browser.

use crate::extension_id::{self, EXTENSION_ID, STORE_EXTENSION_ID};

/// Environment variable holding extra extension ids the host accepts, comma-separated.
pub const ALLOWED_ENV: &str = "TABWIRE_ALLOWED_EXTENSIONS";

/// Why the host refuses to run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum OriginError {
    #[error(
        "tabwire-host is started by the browser, not by hand: expected the caller's origin \
         `chrome-extension://<id>/` as the first argument (run `tabwire install` to register \
         the host with your browser)"
    )]
    Missing,
    #[error("the first argument {0:?} is not an extension origin `chrome-extension://<id>/`")]
    Malformed(String),
    #[error(
        "extension {0} may not use tabwire-host: only the tabwire extension ({EXTENSION_ID}) \
         and ids listed in {ALLOWED_ENV} (comma-separated) may"
    )]
    NotAllowed(String),
}

/// The extension id in `args` (the process arguments after the program name), if that
/// extension may use the host: tabwire's own builds (the development key's id and the Chrome
/// Web Store's), or one listed in `allowed`, the value of [`ALLOWED_ENV`] if set. Arguments
/// after the origin (Windows adds `--parent-window=<n>`) are ignored.
pub fn check(args: &[String], allowed: Option<&str>) -> Result<String, OriginError> {
    check_with_store(args, allowed, STORE_EXTENSION_ID)
}

/// [`check`] with the store's id given, so tests can set one before the store assigns it.
fn check_with_store(
    args: &[String],
    allowed: Option<&str>,
    store: Option<&'static str>,
) -> Result<String, OriginError> {
    let origin = args.iter().find(|a| !a.starts_with("--")).ok_or(OriginError::Missing)?;
    let id = origin
        .strip_prefix("chrome-extension://")
        .map(|rest| rest.trim_end_matches('/'))
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_lowercase()))
        .ok_or_else(|| OriginError::Malformed(origin.clone()))?;
    let listed = allowed.unwrap_or("").split(',').map(str::trim).any(|a| a == id);
    if extension_id::own_ids(store).contains(&id) || listed {
        Ok(id.to_owned())
    } else {
        Err(OriginError::NotAllowed(id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_tabwire_extension_is_allowed_with_or_without_windows_flags() {
        let origin = format!("chrome-extension://{EXTENSION_ID}/");
        assert_eq!(check(&args(&[&origin]), None).unwrap(), EXTENSION_ID);
        assert_eq!(check(&args(&[&origin, "--parent-window=0"]), None).unwrap(), EXTENSION_ID);
    }

    #[test]
    fn the_store_build_is_allowed_once_its_id_is_known() {
        let store = "abcdefghijklmnopabcdefghijklmnop";
        let a = args(&["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]);
        assert_eq!(check_with_store(&a, None, Some(store)).unwrap(), store);
        let dev = args(&[&format!("chrome-extension://{EXTENSION_ID}/")]);
        assert_eq!(check_with_store(&dev, None, Some(store)).unwrap(), EXTENSION_ID);
        let other = args(&["chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba/"]);
        let refused = check_with_store(&other, None, Some(store));
        assert!(matches!(refused, Err(OriginError::NotAllowed(_))), "{refused:?}");
    }

    #[test]
    fn other_extensions_need_the_allow_list() {
        let a = args(&["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"]);
        assert!(matches!(check(&a, None), Err(OriginError::NotAllowed(_))));
        assert!(matches!(check(&a, Some("x, y")), Err(OriginError::NotAllowed(_))));
        let ok = check(&a, Some("zzz, abcdefghijklmnopabcdefghijklmnop")).unwrap();
        assert_eq!(ok, "abcdefghijklmnopabcdefghijklmnop");
    }

    #[test]
    fn missing_or_malformed_origins_are_refused() {
        assert_eq!(check(&[], None), Err(OriginError::Missing));
        assert!(matches!(check(&args(&["https://x/"]), None), Err(OriginError::Malformed(_))));
        assert!(matches!(
            check(&args(&["chrome-extension://../"]), Some("..")),
            Err(OriginError::Malformed(_))
        ));
        assert!(check(&[], None).unwrap_err().to_string().contains("tabwire install"));
    }
}
