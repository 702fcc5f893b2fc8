"""Native tests of the plugin's logic: `PYTHONPATH=../../guest-sdk/python
python3 -m unittest` (CI runs them). The component's policy tests are in
fixtures/ (`wasm-hooks test`)."""

import unittest

from app import Handler, commit_messages
from wasm_hooks import HookError
from wasm_hooks.testing import MockHost, bash, event


def decide(command, **settings):
    with MockHost(config=settings):
        return Handler().dispatch(bash(command))


class MessagesTest(unittest.TestCase):
    def test_every_way_of_giving_a_message_is_read(self):
        self.assertEqual(commit_messages('git commit -m "fix: a"'), ["fix: a"])
        self.assertEqual(commit_messages("git commit -am 'feat: b'"), ["feat: b"])
        self.assertEqual(commit_messages("git commit --message='docs: c' -m body"), ["docs: c\n\nbody"])
        self.assertEqual(commit_messages('cd x && git commit -m"chore: d" && git push'), ["chore: d"])
        self.assertEqual(commit_messages("git commit"), [])
        self.assertEqual(commit_messages("echo 'git commit -m x"), [])

    def test_claude_codes_heredoc_message_is_the_heredocs_text(self):
        command = "git commit -m \"$(cat <<'EOF'\nfeat: add x\n\nWhy.\nEOF\n)\""
        self.assertEqual(commit_messages(command), ["feat: add x\n\nWhy."])
        indented = 'git commit -m "$(cat <<EOF\n   fix: y\n   EOF\n   )"'
        self.assertEqual(commit_messages(indented), ["   fix: y"])
        self.assertEqual(decide(indented).decision, "proceed")


class HandlerTest(unittest.TestCase):
    def test_a_conventional_commit_proceeds(self):
        self.assertEqual(decide('git commit -m "feat(cli): add --lang"').decision, "proceed")

    def test_a_free_form_subject_is_denied_with_the_fix(self):
        outcome = decide('git commit -m "Added stuff"')
        self.assertEqual(outcome.decision, "deny")
        self.assertIn("type(scope): subject", outcome.reason)

    def test_types_length_scope_and_period_follow_the_config(self):
        self.assertEqual(decide('git commit -m "wip: x"').decision, "deny")
        self.assertEqual(decide('git commit -m "wip: x"', types=["wip"]).decision, "proceed")
        self.assertIn("keep it to 20", decide('git commit -m "fix: ' + "x" * 30 + '"', max_subject=20).reason)
        self.assertIn("needs a scope", decide('git commit -m "fix: x"', require_scope=True).reason)
        self.assertIn("period", decide('git commit -m "fix: x."').reason)

    def test_other_tools_and_commands_are_not_looked_at(self):
        with MockHost():
            write = event("PreToolUse", tool_name="Write", tool_input={"content": "git commit -m x"})
            self.assertEqual(Handler().dispatch(write).decision, "proceed")
        self.assertEqual(decide("git status").decision, "proceed")

    def test_a_misspelt_config_key_is_a_failure_not_a_silent_pass(self):
        with MockHost(config={"type": ["feat"]}):
            with self.assertRaises(HookError):
                Handler().dispatch(bash('git commit -m "x"'))


if __name__ == "__main__":
    unittest.main()
