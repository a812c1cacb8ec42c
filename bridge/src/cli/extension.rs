//! `tabwire extension path | unpack DIR`: where the extension to load is, and writing the one
//! this binary carries (`tabwire_install::extension`) wherever the user wants it.

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
    }
    Ok(())
}
