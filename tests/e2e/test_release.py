"""`scripts/release`: the archive holds the binary, README and LICENSE under
one folder named by version and target; the checksums verify; the plugin
file alone is the very plugin the binary carries (what `setup` writes); and
`cargo publish --dry-run` passed inside it (the crate packages with its
plugin and builds alone)."""

import glob
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest

from harness import ROOT, zellij_bin


class Release(unittest.TestCase):
    def test_release_archive_checksums_and_plugin_file(self):
        out = tempfile.mkdtemp(prefix="turnstile-release-")
        self.addCleanup(shutil.rmtree, out, True)
        made = subprocess.run([os.path.join(ROOT, "scripts", "release"), out], capture_output=True, text=True, timeout=1800)
        self.assertEqual(made.returncode, 0, made.stderr[-3000:])
        self.assertIn("aborting upload due to dry run", made.stderr)
        archive = made.stdout.strip()
        target = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout.split("host: ")[1].split()[0]
        match = re.fullmatch(rf"turnstile-(\d+\.\d+\.\d+)-{re.escape(target)}\.tar\.gz", os.path.basename(archive))
        self.assertIsNotNone(match, archive)
        version = match.group(1)
        name = f"turnstile-{version}-{target}"
        self.assertEqual(sorted(os.listdir(out)), sorted(
            [f"{name}.tar.gz", f"{name}.tar.gz.sha256", f"turnstile-{version}.wasm", f"turnstile-{version}.wasm.sha256"]))
        for sums in glob.glob(os.path.join(out, "*.sha256")):
            subprocess.run(["sha256sum", "--check", "--quiet", os.path.basename(sums)], cwd=out, check=True)

        with tarfile.open(archive) as tar:
            self.assertEqual(sorted(tar.getnames()), [name, *(f"{name}/{f}" for f in ("LICENSE", "README.md", "turnstile"))])
            tar.extractall(out, filter="data")
        binary = os.path.join(out, name, "turnstile")
        shown = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
        self.assertTrue(shown.startswith(f"turnstile {version}+"), shown)

        home = os.path.join(out, "home")
        os.makedirs(home)
        env = {"HOME": home, "PATH": f"{os.path.dirname(zellij_bin())}:/usr/bin:/bin"}
        subprocess.run([binary, "setup", "--yes"], env=env, capture_output=True, check=True, timeout=60)
        with open(os.path.join(home, ".local/share/turnstile/turnstile.wasm"), "rb") as written, \
                open(os.path.join(out, f"turnstile-{version}.wasm"), "rb") as alone:
            self.assertEqual(written.read(), alone.read(), "the plugin file alone is the one the binary carries")


if __name__ == "__main__":
    unittest.main()
