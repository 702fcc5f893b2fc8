"""destructive-sql: a wasm-hooks plugin in Python that uses a package from
PyPI (`sqlparse`, named in pyproject.toml; `wasm-hooks build` bundles it).

Before an agent runs SQL (`psql -c`, `mysql -e`, `sqlite3 DB SQL` in Bash,
or the `sql`/`query` of a database MCP tool), it denies the statements
that destroy data: DROP, TRUNCATE, ALTER … DROP, and DELETE or UPDATE
without a WHERE. sqlparse reads the SQL as a database would, so
`SELECT 'DROP TABLE x'` is a string, `-- DROP TABLE x` a comment, and
`SELECT 1; DROP TABLE users` two statements, the second denied.

Config (optional): `scratch_tables`, glob patterns (`tmp_*`) of the tables
that may be dropped or emptied.
"""

import fnmatch
import shlex

import sqlparse
from sqlparse import sql

from wasm_hooks import Event, Hook, HookError, Outcome, config

KNOWN_KEYS = {"scratch_tables"}
# The SQL clients of the shell, and their options whose value is SQL.
SQL_OPTIONS = {
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    "sqlite3": ("-cmd", "-cmd"),
}
# An MCP tool's input fields that hold SQL.
MCP_FIELDS = ("sql", "query", "statement")


def shell_words(command: str) -> list[str]:
    """`command` split as the shell splits it, with `;`, `&&`, `|`… as
    words of their own (nothing when its quotes do not close)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return []


def sql_in_command(command: str) -> list[str]:
    """The SQL a shell command line gives a database client."""
    words = shell_words(command)
    found = []
    for start, word in enumerate(words):
        program = word.rsplit("/", 1)[-1]
        if program not in SQL_OPTIONS:
            continue
        args = []
        for arg in words[start + 1:]:
            if arg and set(arg) <= set(";&|()"):
                break
            args.append(arg)
        short, long = SQL_OPTIONS[program]
        rest = iter(args)
        for arg in rest:
            if arg in (short, long):
                found.append(next(rest, ""))
            elif arg.startswith(long + "="):
                found.append(arg.split("=", 1)[1])
            elif program != "sqlite3" and arg.startswith(short) and len(arg) > len(short):
                found.append(arg[len(short):])
        if program == "sqlite3":
            # `sqlite3 [options] DATABASE [SQL…]`
            found.extend([arg for arg in args if not arg.startswith("-")][1:])
    return found


def target(statement: sql.Statement) -> str:
    """The name of the first table (or other object) `statement` names."""
    for token in statement.tokens:
        if isinstance(token, sql.IdentifierList):
            token = next(iter(token.get_identifiers()), token)
        if isinstance(token, sql.Identifier):
            return token.get_real_name() or token.value
    return "?"


def shown(statement: sql.Statement) -> str:
    """The statement on one line, shortened."""
    text = " ".join(str(statement).split()).rstrip(";")
    return text if len(text) <= 80 else text[:77] + "..."


def harm(statement: sql.Statement, scratch: list[str]) -> str | None:
    """What `statement` would destroy, or None."""
    kind = statement.get_type()
    table = target(statement)
    has_where = any(isinstance(token, sql.Where) for token in statement.tokens)
    drops_part = kind == "ALTER" and any(
        token.is_keyword and token.normalized == "DROP" for token in statement.flatten()
    )
    if kind in ("DROP", "TRUNCATE", "DELETE", "UPDATE") or drops_part:
        if any(fnmatch.fnmatchcase(table, pattern) for pattern in scratch):
            return None
    if kind == "DROP":
        return f"`{shown(statement)}` would destroy `{table}` and everything in it"
    if kind == "TRUNCATE":
        return f"`{shown(statement)}` would delete every row of `{table}`"
    if kind == "DELETE" and not has_where:
        return f"`{shown(statement)}` has no WHERE: it would delete every row of `{table}`"
    if kind == "UPDATE" and not has_where:
        return f"`{shown(statement)}` has no WHERE: it would change every row of `{table}`"
    if drops_part:
        return f"`{shown(statement)}` would destroy part of `{table}` and its data"
    return None


def first_harm(text: str, scratch: list[str]) -> str | None:
    """What the first destructive statement of `text` would destroy."""
    for statement in sqlparse.parse(text):
        found = harm(statement, scratch)
        if found:
            return found
    return None


class Handler(Hook):
    """The hook componentize-py exports."""

    def pre_tool_use(self, event: Event) -> Outcome:
        settings = config()
        unknown = set(settings) - KNOWN_KEYS
        if unknown:
            raise HookError(f"unknown config keys {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}")
        scratch = settings.get("scratch_tables", [])
        if event.tool_name == "Bash":
            texts = sql_in_command(event.tool_input.get("command", ""))
        elif (event.tool_name or "").startswith("mcp__"):
            texts = [v for k, v in event.tool_input.items() if k in MCP_FIELDS and isinstance(v, str)]
        else:
            texts = []
        for text in texts:
            found = first_harm(text, scratch)
            if found:
                return Outcome.deny(
                    f"destructive SQL: {found}. If that is meant, the person runs it themselves"
                )
        return Outcome.proceed()
