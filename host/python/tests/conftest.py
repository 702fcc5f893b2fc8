"""What the package's tests share: the guest plugins built from the
checkout (as the Rust tests build them, into target/plugins), a compile
cache of the run's own, and engines that read only the files a test names
(no person's, no organisation's hook files)."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from wasm_hooks import Engine

ROOT = pathlib.Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "target" / "plugins" / "wasm32-wasip2" / "release"
CLI = ROOT / "target" / "debug" / "wasm-hooks"

HOOK_FILES = ROOT / "tests" / "fixtures" / "embedding"


def hooks_text(name: str) -> str:
    """A shared hook file of tests/fixtures/embedding (both packages' tests use them)."""
    return (HOOK_FILES / name).read_text()


def cargo_env() -> dict:
    """Cargo's environment for a build the tests start: without the
    clippy wrapper scripts/test lints the host with."""
    env = dict(os.environ)
    env.pop("RUSTC_WORKSPACE_WRAPPER", None)
    env.pop("CLIPPY_ARGS", None)
    env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "plugins")
    return env


@pytest.fixture(scope="session")
def plugins() -> pathlib.Path:
    """The guest plugins the tests use, built from source (cached)."""
    subprocess.run(
        ["cargo", "build", "--release", "--target", "wasm32-wasip2", "--quiet",
         "-p", "deny-dangerous-commands", "-p", "hostile-trap"],
        cwd=ROOT, env=cargo_env(), check=True,
    )
    return PLUGINS


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> pathlib.Path:
    return tmp_path_factory.mktemp("compile-cache")


@pytest.fixture
def hook_file(tmp_path, plugins):
    """Write a hook file (`{plugins}` is the plugins' folder)."""

    def write(text: str = "", name: str = "hooks.yaml") -> pathlib.Path:
        text = text or hooks_text("guards.yaml")
        path = tmp_path / name
        path.write_text(text.replace("{plugins}", str(plugins)))
        return path

    return write


@pytest.fixture
def engine_of(tmp_path, cache_dir):
    """An engine of exactly these hook files."""

    def make(*files: pathlib.Path, **options) -> Engine:
        return Engine(
            list(files),
            project_dir=tmp_path,
            user_config_dir=tmp_path / "user-config",
            managed_dir=tmp_path / "managed",
            cache_dir=cache_dir,
            **options,
        )

    return make


def bash(command: str) -> dict:
    """A canonical PreToolUse record of a shell command."""
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}
