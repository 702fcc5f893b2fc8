//! `wasm-hooks publish` pushes a built plugin to a registry in the CNCF
//! Wasm OCI layout, signed cosign's way when given a key; `wasm-hooks
//! keygen` makes such a key pair.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::oci::{PluginRef, SigningKey, publish};

use super::Exit;
use super::hook_files::CacheArgs;

/// Arguments of `wasm-hooks publish`.
#[derive(Debug, Args)]
pub(crate) struct PublishArgs {
    /// A built component (`.wasm`), or a plugin folder to build first.
    #[arg(value_name = "DIR|WASM")]
    plugin: PathBuf,

    /// Where to push it: `oci://HOST[:PORT]/REPOSITORY:TAG`.
    #[arg(value_name = "REF")]
    reference: String,

    /// Sign it with this private key (PKCS#8 PEM, ECDSA P-256: what
    /// `wasm-hooks keygen` or `openssl genpkey -algorithm EC -pkeyopt
    /// ec_paramgen_curve:P-256` writes).
    #[arg(long, value_name = "KEY")]
    key: Option<PathBuf>,

    /// The most each registry call may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    timeout: u64,

    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: PublishArgs) -> anyhow::Result<Exit> {
    let reference = PluginRef::parse(&args.reference).map_err(anyhow::Error::msg)?;
    let key = match &args.key {
        Some(path) => {
            let pem = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            Some(
                SigningKey::from_pem(&pem)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            )
        }
        None => None,
    };
    let wasm = if args.plugin.is_dir() {
        let mut built = super::build::components(&args.plugin, true, &args.cache, false)?;
        if built.len() != 1 {
            bail!(
                "{} builds {} components: publish one of them by its path",
                args.plugin.display(),
                built.len()
            );
        }
        built.remove(0)
    } else {
        args.plugin.clone()
    };
    let published = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(publish(
            &wasm,
            &reference,
            key.as_ref(),
            Duration::from_secs(args.timeout),
        ))
        .map_err(anyhow::Error::msg)?;
    println!("{reference}");
    println!("  digest:    {}", published.digest);
    println!("  component: {}", published.component);
    match &published.signer {
        Some(signer) => println!("  signed by: {signer}"),
        None => println!("  unsigned (give --key to sign it)"),
    }
    Ok(Exit::GoOn)
}

/// Arguments of `wasm-hooks keygen`.
#[derive(Debug, Args)]
pub(crate) struct KeygenArgs {
    /// Write `PREFIX.key` (private: keep it secret) and `PREFIX.pub`
    /// (public: name it in `plugin_signers`).
    #[arg(value_name = "PREFIX")]
    prefix: PathBuf,
}

pub(crate) fn keygen(args: KeygenArgs) -> anyhow::Result<Exit> {
    let with = |extension: &str| {
        let mut path = args.prefix.clone().into_os_string();
        path.push(extension);
        PathBuf::from(path)
    };
    let (private, public) = (with(".key"), with(".pub"));
    for path in [&private, &public] {
        if path.exists() {
            bail!("{} exists: not overwritten", path.display());
        }
    }
    let (pem, key) = SigningKey::generate().map_err(anyhow::Error::msg)?;
    write_private(&private, pem.as_bytes())?;
    std::fs::write(&public, key.public_key().to_pem())
        .with_context(|| format!("writing {}", public.display()))?;
    println!("{} (private, mode 600)", private.display());
    println!("{} ({})", public.display(), key.public_key().fingerprint());
    Ok(Exit::GoOn)
}

/// Write a private key readable by its owner only, never through an
/// existing file.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
}
