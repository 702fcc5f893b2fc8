"""conventional-commits: a wasm-hooks plugin in Python. Before Bash runs a
`git commit` with a message (`-m`, `--message`), it checks the subject line
against Conventional Commits (`type(scope)!: subject`) and denies the commit
with what is wrong and how to fix it, so the agent rewrites the message
instead of leaving a history the project's release tooling cannot read.

Config (all optional): `types` (the allowed types), `max_subject` (the
longest subject line, default 72), `require_scope` (default false).
"""

import re
import shlex

from wasm_hooks import Event, Hook, HookError, Outcome, config

DEFAULT_TYPES = [
    "feat", "fix", "docs", "style", "refactor", "perf", "test", "build", "ci", "chore", "revert",
]
KNOWN_KEYS = {"types", "max_subject", "require_scope"}
SUBJECT = re.compile(r"^(?P<type>[a-z]+)(\((?P<scope>[^()\s]+)\))?(?P<bang>!)?: (?P<text>\S.*)$")
# `-m "$(cat <<'EOF' … EOF )"`: how Claude Code writes every commit
# message; the shell gives git the here-document's lines.
HEREDOC = re.compile(r"^\$\(cat <<-?\s*(['\"]?)(?P<end>\w+)\1[ \t]*\n(?P<body>.*?)\n[ \t]*(?P=end)[ \t]*\n?\s*\)$", re.S)


def shell_value(arg: str) -> str:
    """What the shell passes for `arg`: a here-document's text for a
    `$(cat <<'EOF' … EOF)` substitution; else `arg` itself."""
    heredoc = HEREDOC.match(arg)
    return heredoc["body"] if heredoc else arg


def commit_messages(command: str):
    """The messages of every `git commit` in a shell command line: each
    `-m`/`--message` value, joined as git joins them (a blank line apart)."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        return []
    found = []
    for start, word in enumerate(words):
        if word != "git" or "commit" not in words[start + 1:start + 3]:
            continue
        parts = []
        rest = iter(words[words.index("commit", start) + 1:])
        for arg in rest:
            if arg in ("&&", "||", ";", "|"):
                break
            if arg in ("-m", "--message") or (arg.startswith("-") and not arg.startswith("--") and arg.endswith("m")):
                parts.append(next(rest, ""))
            elif arg.startswith("--message="):
                parts.append(arg.split("=", 1)[1])
            elif arg.startswith("-m") and len(arg) > 2:
                parts.append(arg[2:])
        if parts:
            found.append("\n\n".join(shell_value(part) for part in parts))
    return found


def problem(message: str, settings: dict):
    """What is wrong with `message`'s subject line, or None."""
    subject = message.strip().splitlines()[0].strip() if message.strip() else ""
    types = settings.get("types", DEFAULT_TYPES)
    limit = settings.get("max_subject", 72)
    shape = SUBJECT.match(subject)
    if not shape:
        return (f"the subject `{subject}` is not `type(scope): subject` "
                f"(e.g. `fix(parser): handle empty input`)")
    if shape["type"] not in types:
        return f"`{shape['type']}` is not an allowed type: use one of {', '.join(types)}"
    if settings.get("require_scope", False) and not shape["scope"]:
        return "the subject needs a scope: `type(scope): subject`"
    if len(subject) > limit:
        return f"the subject is {len(subject)} characters long; keep it to {limit}"
    if shape["text"].endswith("."):
        return "the subject ends with a period; leave it out"
    return None


class Handler(Hook):
    """The hook componentize-py exports."""

    def pre_tool_use(self, event: Event) -> Outcome:
        if event.tool_name != "Bash":
            return Outcome.proceed()
        settings = config()
        unknown = set(settings) - KNOWN_KEYS
        if unknown:
            raise HookError(f"unknown config keys {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}")
        for message in commit_messages(event.tool_input.get("command", "")):
            wrong = problem(message, settings)
            if wrong:
                return Outcome.deny(f"commit message: {wrong} (Conventional Commits)")
        return Outcome.proceed()
