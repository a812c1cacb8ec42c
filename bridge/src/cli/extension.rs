//! `tabwire extension path | unpack DIR | pack`: where the extension to load is, writing the one
//! this binary carries (`tabwire_install::extension`) wherever the user wants it, and packing it
//! for the Chrome Web Store.

use std::path::PathBuf;

use anyhow::{Result, bail};
use tabwire_install::Env;
use tabwire_install::extension;
use tabwire_install::find_extension_dir;

#[derive(Debug, clap::Args)]
pub struct ExtensionArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print the folder to load in chrome://extensions (Load unpacked): a checkout's
    /// extension/ when this tabwire runs from one, else the one `tabwire install` wrote.
    Path,
    /// Write the extension this binary carries into DIR (replacing what is there).
    Unpack { dir: PathBuf },
    /// Write the zip to upload to the Chrome Web Store: the extension this binary carries,
    /// without the manifest's `key` (the store refuses one and assigns its own id).
    Pack {
        /// Where to write the zip [default: tabwire-extension-VERSION.zip here].
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub fn run(args: &ExtensionArgs) -> Result<()> {
    let env = Env::from_process()?;
    match &args.action {
        Action::Path => {
            let installed = extension::installed_dir(&env);
            match find_extension_dir(&env) {
                Some(dir) => println!("{}", dir.display()),
                None if installed.join("manifest.json").is_file() => {
                    println!("{}", installed.display());
                }
                None => bail!(
                    "the extension is not unpacked yet: `tabwire install` writes it to {} (or \
                     `tabwire extension unpack DIR` anywhere)",
                    installed.display()
                ),
            }
        }
        Action::Unpack { dir } => {
            let dir = std::path::absolute(dir)?;
            extension::unpack(&dir)?;
            println!(
                "wrote the tabwire extension {} (build {}) to {}; load it in chrome://extensions \
                 (Developer mode, Load unpacked)",
                extension::VERSION,
                extension::BUILD_ID,
                dir.display()
            );
        }
        Action::Pack { out } => {
            let default = format!("tabwire-extension-{}.zip", extension::VERSION);
            let out = std::path::absolute(out.clone().unwrap_or_else(|| default.into()))?;
            if let Some(dir) = out.parent().filter(|d| !d.is_dir()) {
                bail!(
                    "cannot write {}: the folder {} does not exist (create it, or give --out a \
                     path in a folder that does)",
                    out.display(),
                    dir.display()
                );
            }
            extension::pack(&out)?;
            println!(
                "wrote the tabwire extension {} for the Chrome Web Store to {}; upload it in the \
                 developer dashboard, with the privacy note and the permission justifications \
                 of store/ in the tabwire repository",
                extension::VERSION,
                out.display()
            );
        }
    }
    Ok(())
}
