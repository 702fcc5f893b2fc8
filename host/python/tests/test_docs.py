"""Every Python snippet of docs/embedding.md, run in order in a reader's
folder, as a reader would paste them."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

PAGE = ROOT / "docs" / "embedding.md"


def python_blocks():
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


def test_every_python_snippet_of_the_embedding_page_runs(tmp_path, cache_dir):
    blocks = python_blocks()
    assert len(blocks) >= 3, "the page's Python snippets were found"
    env = {"WASM_HOOKS_CACHE_DIR": str(cache_dir), "HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    for number, block in enumerate(blocks, 1):
        ran = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"snippet {number} of {PAGE}:\n{block}\n{ran.stderr}"
