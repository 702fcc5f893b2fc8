//! The flags every command that reads hook files shares, turned into an
//! engine builder in one place.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use wasm_hooks::{HookEngineBuilder, UrlAllowlist, WasmRuntime, WasmRuntimeBuilder};

/// Which hook files to read.
#[derive(Debug, Clone, Args)]
pub(crate) struct HookFileArgs {
    /// Hook file to read (repeatable, highest layer first); replaces the
    /// default search list.
    #[arg(short, long = "config", value_name = "FILE")]
    configs: Vec<PathBuf>,

    /// Project whose `.wasm-hooks/` files are searched [default: the
    /// current directory; for `hook` and `explain`, $CLAUDE_PROJECT_DIR,
    /// else the event's `cwd`].
    #[arg(long, value_name = "DIR")]
    project_dir: Option<PathBuf>,

    /// Also read the hooks of the project's `.claude/settings.json` and
    /// `.claude/settings.local.json`.
    #[arg(long)]
    claude_settings: bool,

    /// Also let HTTP hooks call URLs matching this glob (repeatable; loopback
    /// addresses are always allowed), e.g. `https://hooks.example.com/*`.
    #[arg(long = "allow-url", value_name = "PATTERN")]
    allow_urls: Vec<String>,

    #[command(flatten)]
    cache: CacheArgs,
}

/// Where compiled plugins are kept: the flags every command that loads
/// plugins shares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Args)]
pub(crate) struct CacheArgs {
    /// Keep compiled plugins in this directory [default:
    /// $WASM_HOOKS_CACHE_DIR, else $XDG_CACHE_HOME/wasm-hooks, else
    /// ~/.cache/wasm-hooks].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,

    /// Compile every plugin at load: read and write no compile cache.
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache's directory: `--cache-dir`, else the default one (also
    /// where `build` installs toolchains).
    pub(crate) fn dir(&self) -> anyhow::Result<PathBuf> {
        self.cache_dir
            .clone()
            .or_else(wasm_hooks::CompileCache::default_dir)
            .context("no cache directory: give --cache-dir, or set WASM_HOOKS_CACHE_DIR or HOME")
    }

    /// How the wasm runtime is to be made: the cache flags applied, no
    /// pooling allocator (its set-up costs more than it saves in a process
    /// that handles a few events; `serve` turns it back on), and a plugin
    /// the cache does not hold run on Winch's code while a detached process
    /// compiles it with Cranelift (`background_compile::detached`; the daemon and
    /// `serve` compile on a thread of their own).
    pub(crate) fn runtime_options(&self) -> WasmRuntimeBuilder {
        let mut options = WasmRuntime::builder();
        options
            .pooling(false)
            .tiering(super::background_compile::detached());
        if self.no_cache {
            options.no_cache();
        } else if let Some(dir) = &self.cache_dir {
            options.cache_dir(dir);
        }
        options
    }
}

impl HookFileArgs {
    /// The hook files of `project` (its agent settings too when
    /// `claude_settings`), with the compile cache `cache`: the default
    /// search list, as `hook` reads it.
    pub(crate) fn for_project(project: PathBuf, claude_settings: bool, cache: CacheArgs) -> Self {
        Self {
            configs: Vec::new(),
            project_dir: Some(project),
            claude_settings,
            allow_urls: Vec::new(),
            cache,
        }
    }

    /// How the wasm runtime is to be made; see [`CacheArgs::runtime_options`].
    pub(crate) fn runtime_options(&self) -> WasmRuntimeBuilder {
        self.cache.runtime_options()
    }

    /// The compile cache flags.
    pub(crate) fn cache(&self) -> &CacheArgs {
        &self.cache
    }

    /// The `--project-dir` given.
    pub(crate) fn project_dir(&self) -> Option<&std::path::Path> {
        self.project_dir.as_deref()
    }

    /// The `--config` files given.
    pub(crate) fn configs(&self) -> &[PathBuf] {
        &self.configs
    }

    /// A builder reading only `files` (not the `--config` ones), with every
    /// other flag applied.
    pub(crate) fn builder_only(&self, files: &[PathBuf]) -> anyhow::Result<HookEngineBuilder> {
        let mut builder = self.builder_in(&[], None)?;
        builder.replace_hook_files(files.iter().cloned());
        Ok(builder)
    }

    /// A builder reading these files (extra ones, given as arguments,
    /// count as `--config`).
    pub(crate) fn builder(&self, extra: &[PathBuf]) -> anyhow::Result<HookEngineBuilder> {
        self.builder_in(extra, None)
    }

    /// Like [`HookFileArgs::builder`], with the project defaulting to
    /// `project` (then the current directory) when `--project-dir` is not
    /// given.
    pub(crate) fn builder_in(
        &self,
        extra: &[PathBuf],
        project: Option<PathBuf>,
    ) -> anyhow::Result<HookEngineBuilder> {
        let mut builder = HookEngineBuilder::new();
        for file in self.configs.iter().chain(extra) {
            builder.hook_file(file);
        }
        let project = match self.project_dir.clone().or(project) {
            Some(dir) => dir,
            None => std::env::current_dir().context("finding the current directory")?,
        };
        builder
            .project_dir(project)
            .claude_settings(self.claude_settings)
            .runtime_options(self.runtime_options());
        if !self.allow_urls.is_empty() {
            let allowlist = UrlAllowlist::default()
                .extended(self.allow_urls.iter().cloned())
                .map_err(anyhow::Error::msg)
                .context("--allow-url")?;
            builder.http_allowlist(allowlist);
        }
        Ok(builder)
    }
}
