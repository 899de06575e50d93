"""Real Kilo CLI 7.7.9 (an OpenCode fork) in a real zellij, offline against
the loopback fake of the Chat Completions API (`fake_chat.py`): the
OpenCode scenarios, run against Kilo, with turnstile's plugin installed by
`turnstile install-hooks --agent kilo`. Kilo is a kind of its own (`kl`),
read through the same family of formats as OpenCode."""
import os, sys, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import kilo_argv, kilo_ready, prepare_kilo_home
from agent_case import segment
from harness import wait_for
from test_real_claude import is_confirmed_done
import test_real_opencode  # the module, not its class: unittest would run OpenCode's cases here too


class RealKilo(test_real_opencode.RealOpenCode):
    argv = staticmethod(kilo_argv)
    prepare_agent_home = staticmethod(prepare_kilo_home)
    agent_ready = staticmethod(kilo_ready)

    # OpenCode's subagent, retried-500 and two-pane scenarios run the same
    # code on the same rows; Kilo runs the others, its flows included.
    test_a_subagents_turn_end_is_never_the_panes_done = None
    test_http_500_is_working_while_retried_then_escape_is_interrupted = None
    test_two_opencode_panes_in_one_folder_keep_their_own_state = None
    test_a_flow_claude_to_opencode = None

    def test_the_bar_names_the_kind_and_the_plugin_is_kilos(self):
        """Beside Claude Code the segment carries Kilo's tag; the plugin file
        is in Kilo's config folder, never in OpenCode's."""
        from agents import claude_argv
        from agent_case import claude_ready
        panes = [("k1", self.argv()), ("cc", claude_argv(self.claude_api))]
        with self.zellij(panes) as z:
            self.ready(z, "k1")
            wait_for("claude ready", lambda: claude_ready(z.screen()), timeout=60)
            config = z.env["XDG_CONFIG_HOME"]
            self.assertTrue(os.path.isfile(os.path.join(config, "kilo", "plugins", "turnstile.js")))
            self.assertFalse(os.path.exists(os.path.join(config, "opencode", "plugins", "turnstile.js")))
            self.submit(z, "k1", "echo:tagged")
            wait_for("confirmed done", lambda: is_confirmed_done(segment(z, "k1")), timeout=30)
            self.assertIn(" kl ", segment(z, "k1"), "kinds mix: the bar names Kilo's")


if __name__ == "__main__":
    unittest.main()
