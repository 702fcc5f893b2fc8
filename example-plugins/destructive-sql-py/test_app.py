"""Native tests of the plugin's logic, with sqlparse from the venv
(README): `PYTHONPATH=../../guest-sdk/python .venv/bin/python -m
unittest`. The component's policy tests are in fixtures/ (`wasm-hooks
test`)."""

import unittest

from app import Handler, sql_in_command
from wasm_hooks import HookError
from wasm_hooks.testing import MockHost, bash, event


def decide(tool_event, **settings):
    with MockHost(config=settings):
        return Handler().dispatch(tool_event)


class CommandTest(unittest.TestCase):
    def test_every_client_and_spelling_gives_its_sql(self):
        self.assertEqual(sql_in_command("psql -d app -c 'DROP TABLE a'"), ["DROP TABLE a"])
        self.assertEqual(sql_in_command('psql --command="SELECT 1"'), ["SELECT 1"])
        self.assertEqual(sql_in_command("mysql -e'TRUNCATE t' db"), ["TRUNCATE t"])
        self.assertEqual(sql_in_command("sqlite3 -bail app.db 'DELETE FROM t' '.tables'"), ["DELETE FROM t", ".tables"])
        self.assertEqual(sql_in_command("cd db && /usr/bin/psql -c 'SELECT 1'; ls -c"), ["SELECT 1"])
        self.assertEqual(sql_in_command("echo 'psql -c DROP"), [])


class HandlerTest(unittest.TestCase):
    def test_statements_that_destroy_data_are_denied(self):
        for sql, said in [
            ("DROP TABLE users", "would destroy `users`"),
            ("truncate table logs", "would delete every row of `logs`"),
            ("DELETE FROM users", "has no WHERE: it would delete every row of `users`"),
            ("UPDATE users SET admin = true", "has no WHERE: it would change every row of `users`"),
            ("ALTER TABLE users DROP COLUMN email", "would destroy part of `users`"),
            ("SELECT 1; DROP TABLE public.users", "`DROP TABLE public.users` would destroy `users`"),
        ]:
            outcome = decide(bash(f"psql -c '{sql}'"))
            self.assertEqual(outcome.decision, "deny", sql)
            self.assertIn(said, outcome.reason)

    def test_what_only_reads_or_names_a_row_proceeds(self):
        for sql in [
            "SELECT 'DROP TABLE x'",
            "-- DROP TABLE users\nSELECT 1",
            "DELETE FROM users WHERE id = 7",
            "UPDATE users SET admin = false WHERE id = 7",
            "CREATE TABLE t (id int)",
        ]:
            self.assertEqual(decide(bash(f"psql -c \"{sql}\"")).decision, "proceed", sql)

    def test_scratch_tables_may_be_emptied(self):
        command = bash("psql -c 'DROP TABLE tmp_import; TRUNCATE tmp_rows'")
        self.assertEqual(decide(command, scratch_tables=["tmp_*"]).decision, "proceed")

    def test_a_database_mcp_tool_is_checked_too(self):
        query = event("PreToolUse", tool_name="mcp__postgres__query", tool_input={"sql": "DROP DATABASE prod"})
        self.assertEqual(decide(query).decision, "deny")
        other = event("PreToolUse", tool_name="mcp__github__search", tool_input={"q": "DROP TABLE"})
        self.assertEqual(decide(other).decision, "proceed")

    def test_an_unknown_config_key_is_an_error(self):
        with self.assertRaises(HookError):
            decide(bash("psql -c 'SELECT 1'"), scratch=["tmp_*"])


if __name__ == "__main__":
    unittest.main()
