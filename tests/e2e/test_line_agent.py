"""Routing with an agent of the user's own (issue 42), in a real zellij:
`line_agent.py`, a line-based program that reads its terminal line by line
(no bracketed paste, every line break submits) and may ask `(y/n)`, taught
by a rules file with `paste "line"`; as target of real Claude Code and as
its source. Each answer arrives once; no stray Enter lands in its question;
a source that quits right after its done sends its answer once, Claude
Code's as well as the line agent's."""
import json, os, shlex, sys, time, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import claude_argv, prepare_home
from fake_api import FakeApi
from harness import Zellij, wait_for
from test_bar import demo, user_prompts
import test_real_claude  # not its TestCase by name: the loader would run its tests here too
from test_real_claude import confirmed_done, ready, segment, type_prompt

HERE = os.path.dirname(os.path.abspath(__file__))
LINE_AGENT = os.path.join(HERE, "line_agent.py")
SHELL = ["/bin/bash", "--norc", "--noprofile", "-i"]

# Written from docs/rules.md: working before waiting (an answered question
# stays in the rows), its prompt row as the input box, one line per paste.
RULES = r'''agent "mine" {
    tag "mn"
    process "^line_agent\\.py$"
    input "^mine> ?(.*)$"
    paste "line"
    screen {
        working "^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working" rows=2
        waiting "\\(y/n\\)" rows=1
        done "^finished turn [0-9]+$" rows=3
    }
    log "~/.mine/logs/*.jsonl" {
        start "type" "^prompt$"
        answer "type" "^answer$" text="text"
    }
}
'''


def line_agent(*args):
    return ["python3", LINE_AGENT, "--log", "~/.mine/logs", *args]


def records(z):
    """Every record of the line agents' logs, oldest first."""
    folder = os.path.join(z.home, ".mine", "logs")
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name)) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def of_type(z, kind):
    return [r for r in records(z) if r["type"] == kind]


class LineAgentRouting(unittest.TestCase):
    def setUp(self):
        self.api = FakeApi(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fake-api-{os.getpid()}-{time.time()}.jsonl"))

    def tearDown(self):
        self.api.close()

    # The real-Claude helpers, on this case's fake API.
    submit = test_real_claude.RealClaude.submit
    attempt = staticmethod(test_real_claude.RealClaude.attempt)
    assert_routed_once = test_real_claude.RealClaude.assert_routed_once

    def zellij(self, panes, **kw):
        def prepare(z):
            prepare_home(z.home, z.work, True)
            folder = os.path.join(z.env["XDG_CONFIG_HOME"], "turnstile")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "agents.kdl"), "w") as f:
                f.write(RULES)
        return Zellij(panes, before_start=prepare, **kw)

    def claude(self, name):
        return (name, claude_argv(self.api))

    def test_a_claude_answer_reaches_it_once_as_one_line_and_no_enter_answers_its_question(self):
        panes = [self.claude("planner"), ("mine", line_agent("--ask", "--think", "2"))]
        with self.zellij(panes, plugin_config={"flows": "planner -> mine"}) as z:
            ready(z, "planner")
            wait_for("mine in the bar", lambda: "mn" in (segment(z, "mine") or ""), timeout=40)
            self.submit(z, "planner", "lines:PLAN-9 first|then the rest")
            wait_for("the answer read by mine", lambda: of_type(z, "prompt"), timeout=60)
            self.assertEqual([r["text"] for r in of_type(z, "prompt")], ["PLAN-9 first then the rest"],
                             "one line, its line breaks made spaces")
            # Its question stands; every retried Enter would be due by now.
            time.sleep(8)
            self.assertEqual(of_type(z, "empty") + of_type(z, "reply"), [], "no key answered its question")
            type_prompt(z, "mine", "y")
            wait_for("mine answered", lambda: of_type(z, "answer"), timeout=30)
            wait_for("mine confirmed done", lambda: confirmed_done(z, "mine"), timeout=30)
            time.sleep(3)
            self.assertEqual(len(of_type(z, "prompt")), 1, records(z))
            self.assertEqual(of_type(z, "empty"), [], records(z))

    def test_its_answer_reaches_a_claude_target_once(self):
        panes = [("mine", line_agent("--think", "2")), self.claude("coder")]
        with self.zellij(panes, plugin_config={"flows": "mine -> coder"}) as z:
            ready(z, "coder")
            wait_for("mine in the bar", lambda: "mn" in (segment(z, "mine") or ""), timeout=40)
            type_prompt(z, "mine", "build the parser")
            wait_for("mine confirmed done", lambda: confirmed_done(z, "mine"), timeout=40)
            self.assert_routed_once(z, "LINE-1 answered: build the parser")

    def test_it_quits_right_after_its_done_and_its_answer_is_sent_once(self):
        panes = [("mine", SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "mine -> dst"}) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=40)
            command = " ".join(shlex.quote(a) for a in line_agent("--think", "2", "--quit-after", "1"))
            type_prompt(z, "mine", command)
            wait_for("mine in the bar", lambda: "mn" in (segment(z, "mine") or ""), timeout=40)
            type_prompt(z, "mine", "write the notes")
            routed = lambda: [t for _, t in user_prompts(z) if "LINE-1 answered: write the notes" in t]
            wait_for("the answer routed to dst", routed, timeout=40)
            wait_for("mine gone from the bar", lambda: "mn" not in (segment(z, "mine") or ""), timeout=30)
            time.sleep(4)  # not a step: a second paste would come within the watcher's next reads
            self.assertEqual(len(routed()), 1, user_prompts(z))

    def test_a_claude_source_that_quits_right_after_its_done_sends_once(self):
        panes = [("planner", SHELL), ("dst", demo("dst", "", turns=0, listen=True))]
        with self.zellij(panes, plugin_config={"flows": "planner -> dst"}) as z:
            wait_for("the bar up", lambda: segment(z, "dst"), timeout=40)
            type_prompt(z, "planner", " ".join(shlex.quote(a) for a in claude_argv(self.api)))
            ready(z, "planner")
            self.submit(z, "planner", "echo:QUIT-42 the plan")
            wait_for("planner confirmed done", lambda: confirmed_done(z, "planner"), timeout=60)
            type_prompt(z, "planner", "/exit")
            routed = lambda: [t for _, t in user_prompts(z) if "QUIT-42 the plan" in t and not t.startswith("echo:")]
            wait_for("the answer routed to dst", routed, timeout=40)
            wait_for("planner gone from the bar", lambda: "done" not in (segment(z, "planner") or ""), timeout=30)
            time.sleep(4)  # not a step: a second paste would come within the watcher's next reads
            self.assertEqual(len(routed()), 1, user_prompts(z))


if __name__ == "__main__":
    unittest.main()
