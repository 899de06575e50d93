"""Agents turnstile does not know, taught by a rules file (issue 25), in a
real zellij: a small scripted agent (`toy_agent.py`, its own spinner and
done line) recognised by its process and read by its screen rules, started
by the layout or typed into a shell after the bar is up; its hooks confirm
its done, which a flow then routes; a broken rules file is named in the bar
with its line while the built-in kinds keep working; a file written while
the bar runs takes effect without a reload; its own JSONL log, described by
log rules, confirms its done (the answer read from the log line, routed),
typed into a shell after the bar is up."""
import os, shlex, shutil, subprocess, sys, tempfile, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_case import segment
from harness import Zellij, turnstile_bin, wait_for
from test_bar import demo, user_prompts
from test_real_claude import is_confirmed_done, type_prompt

HERE = os.path.dirname(os.path.abspath(__file__))
TOY = os.path.join(HERE, "toy_agent.py")
SHELL = ["/bin/bash", "--norc", "--noprofile", "-i"]

RULES = r'''// The scripted agent of tests/e2e/toy_agent.py.
agent "toy" {
    tag "ty"
    process "^toy_agent\\.py$"
    screen {
        working "^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking" rows=3
        done "^Done in [0-9.]+s$" rows=3
    }
    hooks {
        start "working"
        end "done"
    }
}
'''

LOG_RULES = RULES.replace("// The scripted agent of tests/e2e/toy_agent.py.",
                          "// The scripted agent, known by its screen and its own JSONL log.").replace(
    """    hooks {
        start "working"
        end "done"
    }""", """    log "~/.toy/logs/*.jsonl" {
        start "type" "^prompt$"
        answer "type" "^answer$" text="message.content"
    }""")


def toy(*args):
    return ["python3", TOY, *args]


def write_default_rules(z, rules=RULES):
    """The rules at their default place: $XDG_CONFIG_HOME/turnstile/agents.kdl."""
    folder = os.path.join(z.env["XDG_CONFIG_HOME"], "turnstile")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "agents.kdl"), "w") as f:
        f.write(rules)


def state(z, title):
    return segment(z, title) or ""


class UserAgents(unittest.TestCase):
    def test_a_scripted_agent_is_known_by_its_rules_working_then_a_done_never_confirmed(self):
        panes = [("toy", toy("--turns", "1", "--think", "5")), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "toy -> dst"}, before_start=write_default_rules) as z:
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            self.assertIn("ty", state(z, "toy"), "its tag from the rules file")
            done = wait_for("toy done", lambda: "done" in state(z, "toy") and state(z, "toy"), timeout=30)
            self.assertFalse(is_confirmed_done(done), f"a screen rule's done stays a guess: {done!r}")
            time.sleep(3)
            self.assertFalse(is_confirmed_done(state(z, "toy")), state(z, "toy"))
            self.assertEqual(user_prompts(z), [], "a guess is never routed")

    def test_its_hooks_confirm_the_done_and_a_flow_routes_the_answer(self):
        hooks = toy("--turns", "1", "--think", "4", "--hooks", turnstile_bin())
        panes = [("toy", hooks), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "toy -> dst"}, before_start=write_default_rules) as z:
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            wait_for("toy confirmed done", lambda: is_confirmed_done(state(z, "toy")), timeout=30)
            wait_for("the answer routed to dst",
                     lambda: any("Answer 1: task 1 is done." in t for _, t in user_prompts(z)), timeout=30)

    def test_a_screen_answer_region_is_routed_when_its_hook_names_no_answer(self):
        rules = RULES.replace('    process "^toy_agent\\\\.py$"\n',
                              '    process "^toy_agent\\\\.py$"\n    input "^> ?(.*)$"\n').replace(
            'done "^Done in [0-9.]+s$" rows=3', 'done "^Done in [0-9.]+s$" rows=3 answer=10')
        self.assertIn("answer=10", rules)
        self.assertIn("input", rules)
        hooks = toy("--turns", "1", "--think", "4", "--hooks", turnstile_bin(), "--bare-hooks")
        panes = [("toy", hooks), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, plugin_config={"flows": "toy -> dst"}, before_start=lambda z: write_default_rules(z, rules)) as z:
            wait_for("toy confirmed done", lambda: is_confirmed_done(state(z, "toy")), timeout=60)
            wait_for("the screen's answer routed to dst",
                     lambda: any("Answer 1: task 1 is done." in t for _, t in user_prompts(z)), timeout=30)
            routed = [t for _, t in user_prompts(z) if "Answer 1" in t][0]
            self.assertNotIn("Done in", routed, "the region is above the done line")

    def test_a_pattern_at_the_nesting_limit_leaves_the_bar_working(self):
        # The plugin compiles the patterns itself, on its stack (128 KiB,
        # .cargo/config.toml): the deepest the host lets through is the
        # deepest path measured (23 KB).
        nested = "(" * 64 + "x" + ")" * 64
        rules = RULES.replace('done "^Done in [0-9.]+s$" rows=3',
                              'done "^Done in [0-9.]+s$" rows=3\n        failed "%s" rows=3' % nested)
        self.assertIn(nested, rules)
        panes = [("toy", toy("--turns", "1", "--think", "3"))]
        with Zellij(panes, before_start=lambda z: write_default_rules(z, rules)) as z:
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            wait_for("toy done", lambda: "done" in state(z, "toy"), timeout=30)

    def test_typed_into_a_shell_after_the_bar_is_up_it_is_found(self):
        panes = [("toy", SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes, before_start=write_default_rules) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=30)
            self.assertEqual(state(z, "toy"), "", "a plain shell is no agent pane")
            time.sleep(1)
            type_prompt(z, "toy", " ".join(shlex.quote(a) for a in toy("--turns", "1", "--think", "5")))
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            wait_for("toy done", lambda: "done" in state(z, "toy"), timeout=30)

    def test_its_own_log_confirms_the_done_and_a_flow_routes_the_logged_answer(self):
        panes = [("toy", SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        rules = lambda z: write_default_rules(z, LOG_RULES)
        with Zellij(panes, plugin_config={"flows": "toy -> dst"}, before_start=rules) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=30)
            command = toy("--turns", "2", "--think", "4", "--log", "~/.toy/logs")
            type_prompt(z, "toy", " ".join(shlex.quote(a) for a in command))
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            wait_for("toy confirmed done", lambda: is_confirmed_done(state(z, "toy")), timeout=30)
            for n in (1, 2):
                wait_for(f"answer {n} routed to dst",
                         lambda: any(f"Answer {n}: task {n} is done." in t for _, t in user_prompts(z)),
                         timeout=30)
            folder = os.path.join(z.home, ".toy", "logs")
            logs = os.listdir(folder)
            self.assertEqual(len(logs), 1, logs)
            explained = subprocess.run([turnstile_bin(), "explain", os.path.join(folder, logs[0])], env=z.env,
                                       capture_output=True, text=True, timeout=30)
            self.assertIn("state: done", explained.stdout, explained)
            self.assertIn("log rule on line 11", explained.stdout, explained)

    def test_a_rules_file_written_while_the_bar_runs_takes_effect(self):
        panes = [("toy", SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        with Zellij(panes) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=30)
            write_default_rules(z)
            time.sleep(11)  # the bar asks for the rules again every 10 s; the watcher looks each second
            type_prompt(z, "toy", " ".join(shlex.quote(a) for a in toy("--turns", "1", "--think", "5")))
            wait_for("toy working", lambda: "working" in state(z, "toy"), timeout=40)
            wait_for("toy done", lambda: "done" in state(z, "toy"), timeout=30)

    def test_a_broken_rules_file_is_named_in_the_bar_and_built_in_kinds_keep_working(self):
        folder = tempfile.mkdtemp(prefix="turnstile-rules-")
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        path = os.path.join(folder, "agents.kdl")
        with open(path, "w") as f:
            f.write('agent "toy" {\n    process "(toy"\n}\n')
        panes = [("cc", demo("cc", "done", turns=1))]
        with Zellij(panes, plugin_config={"rules": path}) as z:
            wait_for("the problem in the bar", lambda: "agents.kdl line 2" in z.bar(), timeout=40)
            self.assertIn("rules file", z.bar())
            wait_for("the built-in kind done", lambda: is_confirmed_done(state(z, "cc")), timeout=40)


if __name__ == "__main__":
    unittest.main()
