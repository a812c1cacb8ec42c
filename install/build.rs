//! Embeds the extension (every file under `../extension/`) into the crate, so that an installed
//! `tabwire` can write the very extension it was built with: `extension_files.rs` in `OUT_DIR`
//! lists each file with `include_bytes!`, and `BUILD_ID` names this set of files (a hash of
//! their paths and contents), which `tabwire install` writes beside them and the extension
//! reports in its hello.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    // `install/extension` is a link to `../extension`, so that the published crate carries the
    // extension (cargo packages what a link points to, and a crate cannot reach outside its
    // folder); a checkout without symlinks (Windows) has a plain file there, so fall back.
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = Some(here.join("extension")).filter(|p| p.is_dir());
    let root = root.unwrap_or_else(|| here.join("../extension"));
    let root = root.canonicalize().expect("the extension/ folder beside install/");
    // A directory: cargo rebuilds when anything under it changes.
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut hasher = DefaultHasher::new();
    let mut out =
        String::from("/// Every file of the extension: its path (with `/`) and contents.\n");
    out.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        let bytes = std::fs::read(path).unwrap();
        hasher.write(rel.as_bytes());
        hasher.write_usize(bytes.len());
        hasher.write(&bytes);
        out.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    out.push_str(&format!(
        "/// Names this set of files: `build.json` carries it, the extension's hello reports it.\n\
         pub const BUILD_ID: &str = \"{:016x}\";\n",
        hasher.finish()
    ));
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("extension_files.rs");
    std::fs::write(dest, out).unwrap();
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "build.json" || name.ends_with(".test.js") {
            // Editor files; a build.json left by an unpack into the checkout; the unit tests of
            // lib/, which Node runs and the browser never loads.
            continue;
        }
        if path.is_dir() {
            walk(root, &path, files);
        } else {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            files.push((rel, path));
        }
    }
}
