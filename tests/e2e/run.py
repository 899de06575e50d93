#!/usr/bin/env python3
"""Runs the end-to-end tests in a real zellij and prints `N passed, M failed`.

Needs: zellij 0.45.1 (scripts/ensure-zellij), dist/turnstile.wasm
(scripts/build-plugin) and target/release/turnstile; scripts/test builds them."""
import os, sys, unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import Stopped  # noqa: E402


def main():
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py")
    try:
        result = unittest.TextTestRunner(verbosity=2).run(suite)
    except Stopped as stopped:
        print(f"e2e: {stopped}", file=sys.stderr)
        sys.exit(stopped.code)
    failed = len(result.failures) + len(result.errors)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"e2e: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and result.testsRun > 0 else 1)


if __name__ == "__main__":
    main()
