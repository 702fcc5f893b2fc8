//! `wasm-hooks add`, `pull` and `update`: pin `oci://` plugins in the lock
//! beside a hook file, fetch what locks pin into the person's store, and
//! move a pin on purpose. Each checks what it pulls (a wasm artifact, the
//! pinned digest, a signature by a trusted key when the settings ask) and
//! stores or writes nothing on a failure; and compiles what it stored
//! into the compile cache (`compile::ahead`), so that the plugin's first
//! event loads it from there.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::oci::{Fetcher, LOCK_FILE, Lock, LockEntry, PluginRef};

use super::hook_files::HookFileArgs;
use super::{Exit, compile};

/// Where the lock is: the flag every one of these commands shares.
#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// The lock file, or the directory of the hook file it sits beside
    /// [default: the project's `.wasm-hooks/`].
    #[arg(long, value_name = "PATH")]
    lock: Option<PathBuf>,

    #[command(flatten)]
    files: HookFileArgs,
}

impl LockArgs {
    /// The lock `add` and `update` write.
    fn lock_path(&self) -> anyhow::Result<PathBuf> {
        let path = match &self.lock {
            Some(path) if path.is_dir() => path.join(LOCK_FILE),
            Some(path) => path.clone(),
            None => {
                let project = match self.files.project_dir() {
                    Some(dir) => dir.to_owned(),
                    None => std::env::current_dir()?,
                };
                project.join(".wasm-hooks").join(LOCK_FILE)
            }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        Ok(path)
    }

    /// The locks `pull` reads: `--lock`, else the one beside every hook
    /// file of the search list (that exists).
    fn lock_paths(&self) -> anyhow::Result<Vec<PathBuf>> {
        if self.lock.is_some() {
            return Ok(vec![self.lock_path()?]);
        }
        let mut paths: Vec<PathBuf> = self
            .files
            .builder(&[])?
            .files()
            .iter()
            .filter_map(|file| file.parent().map(|dir| dir.join(LOCK_FILE)))
            .filter(|lock| lock.is_file())
            .collect();
        paths.dedup();
        Ok(paths)
    }

    /// Compile the components `entries` (by reference) pin, stored by
    /// now, ahead into the compile cache; false when one failed (said on
    /// stderr).
    fn compile_ahead<'a>(
        &self,
        fetcher: &Fetcher,
        entries: impl IntoIterator<Item = (&'a str, &'a LockEntry)>,
    ) -> anyhow::Result<bool> {
        let stored: Vec<(PathBuf, String, String)> = entries
            .into_iter()
            .filter_map(|(reference, entry)| {
                let path = fetcher.stored(entry)?;
                Some((path, entry.component_hex().to_owned(), reference.to_owned()))
            })
            .collect();
        let failures = compile::pulled_ahead(self.files.cache(), &stored)?;
        for failure in &failures {
            eprintln!("wasm-hooks: {failure}");
        }
        Ok(failures.is_empty())
    }

    /// What pulls, under the user's and organisation's signer settings.
    fn fetcher(&self) -> anyhow::Result<Fetcher> {
        self.fetcher_for(None)
    }

    /// What pulls what the lock at `lock` pins: the project's own under
    /// its settings too (their `require_signed_plugins`), so that a
    /// teammate missing the key is told at `pull`, not at every event.
    fn fetcher_for(&self, lock: Option<&Path>) -> anyhow::Result<Fetcher> {
        let builder = self.files.builder(&[])?;
        let project = match self.files.project_dir() {
            Some(dir) => dir.to_owned(),
            None => std::env::current_dir()?,
        };
        let projects = lock.is_some_and(|lock| lock.starts_with(&project));
        let fetcher = if projects {
            builder.project_plugin_fetcher()
        } else {
            builder.plugin_fetcher()
        };
        fetcher
            .map_err(|errors| {
                anyhow::anyhow!(
                    "{}",
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            })?
            .context("no plugin store: set HOME, XDG_CACHE_HOME or WASM_HOOKS_PLUGIN_STORE")
    }
}

/// Arguments of `wasm-hooks add`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The plugin: `oci://HOST[:PORT]/REPOSITORY:TAG` (or `@sha256:…`).
    #[arg(value_name = "REF")]
    reference: String,

    #[command(flatten)]
    lock: LockArgs,
}

/// Arguments of `wasm-hooks update`.
#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// The reference to move [default: every one the lock pins].
    #[arg(value_name = "REF")]
    reference: Option<String>,

    #[command(flatten)]
    lock: LockArgs,
}

/// Arguments of `wasm-hooks pull`.
#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    #[command(flatten)]
    lock: LockArgs,
}

/// A runtime for one command's registry calls.
fn block_on<T>(work: impl std::future::Future<Output = T>) -> anyhow::Result<T> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(work))
}

/// `entry` in a few words.
fn pinned(entry: &LockEntry) -> String {
    let signed = match &entry.signer {
        Some(key) => format!(", signed by {key}"),
        None => String::new(),
    };
    format!(
        "{} (component {}, {} bytes{signed})",
        entry.digest, entry.component, entry.size
    )
}

pub(crate) fn add(args: AddArgs) -> anyhow::Result<Exit> {
    let reference = PluginRef::parse(&args.reference).map_err(anyhow::Error::msg)?;
    let path = args.lock.lock_path()?;
    let mut lock = Lock::read(&path)?;
    let fetcher = args.lock.fetcher()?;
    let entry = block_on(fetcher.resolve(&reference))?.map_err(anyhow::Error::msg)?;
    println!("{reference}: pinned to {}", pinned(&entry));
    args.lock
        .compile_ahead(&fetcher, [(args.reference.as_str(), &entry)])?;
    lock.plugins.insert(reference.to_string(), entry);
    lock.write(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "wrote {}; commit it beside the hook file, which names the plugin as",
        path.display()
    );
    println!("  {{\"type\": \"wasm\", \"plugin\": \"{reference}\"}}");
    Ok(Exit::GoOn)
}

pub(crate) fn update(args: UpdateArgs) -> anyhow::Result<Exit> {
    let path = args.lock.lock_path()?;
    let mut lock = Lock::read(&path)?;
    let references: Vec<String> = match &args.reference {
        Some(one) if !lock.plugins.contains_key(one) => bail!(
            "{one} is not in {}: `wasm-hooks add {one}` pins it",
            path.display()
        ),
        Some(one) => vec![one.clone()],
        None => lock.plugins.keys().cloned().collect(),
    };
    let fetcher = args.lock.fetcher()?;
    let mut moved = Vec::new();
    for text in references {
        let reference = PluginRef::parse(&text).map_err(anyhow::Error::msg)?;
        let entry = block_on(fetcher.resolve(&reference))?.map_err(anyhow::Error::msg)?;
        match lock.plugins.get(&text) {
            Some(old) if old.digest == entry.digest => {
                println!("{text}: unchanged, {}", entry.digest);
            }
            Some(old) => println!("{text}: {} -> {}", old.digest, pinned(&entry)),
            None => println!("{text}: pinned to {}", pinned(&entry)),
        }
        moved.push((text.clone(), entry.clone()));
        lock.plugins.insert(text, entry);
    }
    lock.write(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    args.lock.compile_ahead(
        &fetcher,
        moved
            .iter()
            .map(|(reference, entry)| (reference.as_str(), entry)),
    )?;
    Ok(Exit::GoOn)
}

pub(crate) fn pull(args: PullArgs) -> anyhow::Result<Exit> {
    let locks = args.lock.lock_paths()?;
    if locks.is_empty() {
        println!("no {LOCK_FILE} beside any hook file: nothing to pull");
        return Ok(Exit::GoOn);
    }
    pull_locks(&args.lock, locks)
}

/// `pull` for the hook files `files` read (`trust` pulls what it
/// trusted): silent when no lock pins anything.
pub(crate) fn pull_for(files: HookFileArgs) -> anyhow::Result<Exit> {
    let lock = LockArgs { lock: None, files };
    let locks = lock.lock_paths()?;
    if locks.is_empty() {
        return Ok(Exit::GoOn);
    }
    pull_locks(&lock, locks)
}

/// Pull what `locks` pin, and compile it ahead.
fn pull_locks(args: &LockArgs, locks: Vec<PathBuf>) -> anyhow::Result<Exit> {
    let fetcher = args.fetcher()?;
    let mut failed = 0;
    let mut pulled = Vec::new();
    for path in locks {
        let fetcher = args.fetcher_for(Some(&path))?;
        failed += pull_lock(&fetcher, &path, &mut pulled)?;
    }
    if failed > 0 {
        eprintln!("wasm-hooks: {failed} plugin(s) could not be pulled; nothing of them was stored");
    }
    let compiled = args.compile_ahead(
        &fetcher,
        pulled
            .iter()
            .map(|(reference, entry)| (reference.as_str(), entry)),
    )?;
    Ok(if failed > 0 || !compiled {
        Exit::Failed
    } else {
        Exit::GoOn
    })
}

/// Pull what the lock at `path` pins, adding each entry stored to
/// `pulled`; the number that failed.
fn pull_lock(
    fetcher: &Fetcher,
    path: &Path,
    pulled: &mut Vec<(String, LockEntry)>,
) -> anyhow::Result<usize> {
    let lock = Lock::read(path)?;
    let mut failed = 0;
    for (text, entry) in &lock.plugins {
        let reference =
            PluginRef::parse(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let was_there = fetcher.stored(entry).is_some();
        // Only a signature verified here (recorded in the person's store)
        // is reported, never the lock's word for it.
        let verified = |entry: &LockEntry| {
            let mut entry = entry.clone();
            entry.signer = fetcher
                .store
                .verified_signers(&entry.digest, &entry.component)
                .into_iter()
                .find(|key| fetcher.signers.fingerprints().contains(key));
            pinned(&entry)
        };
        let result = block_on(fetcher.ensure(&reference, entry))?;
        if result.is_ok() {
            pulled.push((text.clone(), entry.clone()));
        }
        match result {
            Ok(_) if was_there => println!("{text}: {} already here", verified(entry)),
            Ok(_) => println!("{text}: pulled {}", verified(entry)),
            Err(e) => {
                eprintln!("wasm-hooks: {e}");
                failed += 1;
            }
        }
    }
    Ok(failed)
}
