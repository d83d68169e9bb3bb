#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/tfplugin_wheel.py: the wheel it writes, and its refusals of bad input.

  test_tfplugin_wheel.py PLUGIN.so [VALIDATE_PLUGIN]

PLUGIN.so is a real plugin (meson passes the example's libvacc.so). Bundling
with auditwheel needs PyPI and is exercised by the `tensorflow` suite; here
the wheel is built with --bundle none, so no network is needed.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "tfplugin_wheel.py")
sys.path.insert(0, os.path.join(REPO, "tools"))
import tfplugin_wheel_info as info_mod  # noqa: E402
import tfplugin_wheel_link as link  # noqa: E402
import tfplugin_wheel_zip as wheel_zip  # noqa: E402

PLUGIN = VALIDATE = None
BASE = ["--version", "1.2.3", "--license", "Apache-2.0", "--built-for", "2.21"]


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


class WheelContents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        r = run_tool(PLUGIN, *BASE, "--name", "My-Accel", "--tf-min", "2.9", "--tf-max", "2.21",
                     "--bundle", "none", "--out-dir", cls.tmp.name)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.wheel = r.stdout.strip().splitlines()[-1]
        cls.zip = zipfile.ZipFile(cls.wheel)

    @classmethod
    def tearDownClass(cls):
        cls.zip.close()
        cls.tmp.cleanup()

    def test_name_and_layout(self):
        self.assertEqual(os.path.basename(self.wheel), "my_accel-1.2.3-py3-none-linux_x86_64.whl")
        names = set(self.zip.namelist())
        self.assertIn("tensorflow-plugins/libmy_accel.so", names)
        mode = self.zip.getinfo("tensorflow-plugins/libmy_accel.so").external_attr >> 16
        self.assertEqual(mode & 0o777, 0o755)
        self.assertEqual({n.split("/")[0] for n in names},
                         {"tensorflow-plugins", "my_accel-1.2.3.dist-info"})

    def test_plugin_linked_to_tensorflow_framework(self):
        # The plugin as built, plus a DT_NEEDED on the library that defines its
        # TF imports in 2.9-2.21 and a runpath to site-packages/tensorflow.
        with tempfile.TemporaryDirectory() as tmp:
            so = os.path.join(tmp, "lib.so")
            with open(so, "wb") as f:
                f.write(self.zip.read("tensorflow-plugins/libmy_accel.so"))
            dynamic = subprocess.run(["readelf", "-d", so], stdout=subprocess.PIPE,
                                     text=True).stdout
            self.assertIn("Shared library: [libtensorflow_framework.so.2]", dynamic)
            self.assertRegex(dynamic, r"R(UN)?PATH.*\$ORIGIN/\.\./tensorflow")

            def defined(path):
                out = subprocess.run(["nm", "-D", "--defined-only", path],
                                     stdout=subprocess.PIPE, text=True).stdout
                return sorted(line.split()[-1] for line in out.splitlines() if line.split())
            self.assertEqual(defined(so), defined(PLUGIN))

    def test_metadata_extras_not_a_hard_requirement(self):
        meta = self.zip.read("my_accel-1.2.3.dist-info/METADATA").decode()
        self.assertIn("Name: My-Accel\n", meta)
        self.assertIn("Version: 1.2.3\n", meta)
        self.assertIn("License: Apache-2.0\n", meta)
        requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
        self.assertEqual(requires, [
            'Requires-Dist: tensorflow>=2.9,<2.22; extra == "tensorflow"',
            'Requires-Dist: tensorflow-cpu>=2.9,<2.22; extra == "tensorflow-cpu"'])
        wheel = self.zip.read("my_accel-1.2.3.dist-info/WHEEL").decode()
        self.assertIn("Root-Is-Purelib: false", wheel)
        self.assertIn("Tag: py3-none-linux_x86_64", wheel)

    def test_tfplugin_json(self):
        info = info_mod.parse(self.zip.read("my_accel-1.2.3.dist-info/tfplugin.json").decode(),
                              "wheel")
        self.assertEqual(info, {"schema": 1, "plugin": "tensorflow-plugins/libmy_accel.so",
                                "built_for": "2.21", "tf_min": "2.9", "tf_max": "2.21",
                                "range_from": "given"})

    def test_record_is_sound_and_detects_tampering(self):
        self.assertEqual(wheel_zip.check_record(self.wheel), [])
        bad = os.path.join(self.tmp.name, "tampered.whl")
        with zipfile.ZipFile(bad, "w") as out:
            for item in self.zip.infolist():
                data = self.zip.read(item)
                if item.filename.endswith(".so"):
                    data = data[:-1] + bytes([data[-1] ^ 1])
                # A copy: writestr records the new archive's offsets in the
                # ZipInfo, which would corrupt self.zip's view of its own.
                out.writestr(copy.copy(item), data)
        self.assertEqual(wheel_zip.check_record(bad),
                         [f"{bad}: tensorflow-plugins/libmy_accel.so does not match its "
                          f"RECORD line"])

    def test_reproducible(self):
        with tempfile.TemporaryDirectory() as other:
            r = run_tool(PLUGIN, *BASE, "--name", "My-Accel", "--tf-min", "2.9",
                         "--tf-max", "2.21", "--bundle", "none", "--out-dir", other)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(self.wheel, "rb") as a, open(r.stdout.strip().splitlines()[-1], "rb") as b:
                self.assertEqual(a.read(), b.read())

    def test_pip_installs_into_tensorflow_plugins(self):
        r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
        if r.returncode != 0:
            self.skipTest("no pip for this python")
        with tempfile.TemporaryDirectory() as target:
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                                "--disable-pip-version-check", "--target", target, self.wheel],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertTrue(os.path.isfile(os.path.join(target, "tensorflow-plugins",
                                                        "libmy_accel.so")))
            self.assertTrue(os.path.isfile(os.path.join(target, "my_accel-1.2.3.dist-info",
                                                        "tfplugin.json")))


class DerivedRange(unittest.TestCase):
    def test_range_from_validate_plugin(self):
        if not VALIDATE:
            self.skipTest("no validate_plugin given")
        with tempfile.TemporaryDirectory() as tmp:
            r = run_tool(PLUGIN, *BASE, "--validate-plugin", VALIDATE, "--bundle", "none",
                         "--out-dir", tmp)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with zipfile.ZipFile(r.stdout.strip().splitlines()[-1]) as z:
                info = json.loads(z.read("vacc-1.2.3.dist-info/tfplugin.json"))
            matrix = os.path.join(tmp, "m.json")
            subprocess.run([VALIDATE, "--tf", "all", "--json", matrix, PLUGIN],
                           capture_output=True)
            with open(matrix) as f:
                works = [row["release"] for row in json.load(f) if row["works"]]
        self.assertEqual(info["range_from"], "validate_plugin --tf all")
        self.assertEqual((info["tf_min"], info["tf_max"]), (works[0], works[-1]))


class BadInput(unittest.TestCase):
    def check(self, code, needle, *args):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_tool(*args, "--out-dir", tmp)
            self.assertEqual(r.returncode, code, r.stdout + r.stderr)
            self.assertIn(needle, r.stderr)
            self.assertEqual([f for f in os.listdir(tmp) if f.endswith(".whl")], [])

    def test_missing_file(self):
        self.check(2, "/nonexistent/libx.so: no such file", "/nonexistent/libx.so", *BASE,
                   "--tf-min", "2.7", "--tf-max", "2.21")

    def test_not_elf(self):
        with tempfile.NamedTemporaryFile(prefix="libfake", suffix=".so") as f:
            f.write(b"not an elf")
            f.flush()
            self.check(2, f"{f.name}: not an ELF file", f.name, *BASE, "--tf-min", "2.7",
                       "--tf-max", "2.21")

    def test_only_one_bound(self):
        self.check(2, "--tf-min and --tf-max go together", PLUGIN, *BASE, "--tf-min", "2.7")

    def test_bad_release(self):
        self.check(2, "--tf-max: '2.x' is not a TensorFlow release", PLUGIN, *BASE,
                   "--tf-min", "2.7", "--tf-max", "2.x")

    def test_bad_version(self):
        self.check(2, "--version 'one': not a PEP 440 version", PLUGIN, "--version", "one",
                   "--license", "MIT", "--built-for", "2.21", "--tf-min", "2.7", "--tf-max", "2.21")

    def test_built_for_outside_range(self):
        self.check(1, "built for 2.21 but works with 2.7..2.16", PLUGIN, *BASE,
                   "--tf-min", "2.7", "--tf-max", "2.16", "--bundle", "none")


class LinkChoice(unittest.TestCase):
    """tfplugin_wheel_link.library_for on a made-up ABI description."""
    MODEL = {"functions": {
        "TF_A": {"role": "import", "exported_by": {
            "libtensorflow_framework.so.2": "2.5-2.21", "libtensorflow_cc.so.2": "2.12-2.18"}},
        "TF_B": {"role": "import", "exported_by": {
            "libtensorflow_framework.so.2": "2.11-2.21",
            "python/_pywrap_tensorflow_internal.so": "2.5-2.10"}},
        "TF_Entry": {"role": "entry_point"},
    }}

    def choose(self, imports, releases):
        return link.library_for(imports, releases, self.MODEL, info_mod.release_key)

    def test_prefers_the_framework_library(self):
        self.assertEqual(self.choose(["TF_A", "TF_B", "memcpy"], ["2.12", "2.18", "2.21"]),
                         ("libtensorflow_framework.so.2", ["TF_A", "TF_B"], []))

    def test_imports_only_in_a_python_module_are_reported(self):
        # TF_B lives in a Python extension module before 2.11: the framework
        # library is still linked (it has TF_A everywhere), TF_B is named.
        self.assertEqual(self.choose(["TF_A", "TF_B"], ["2.9", "2.10", "2.11"]),
                         ("libtensorflow_framework.so.2", ["TF_A", "TF_B"],
                          [("TF_B", ["2.9", "2.10"])]))

    def test_no_library_in_every_release(self):
        with self.assertRaisesRegex(link.LinkError, "every release 2.6..2.10"):
            self.choose(["TF_B"], ["2.6", "2.10"])

    def test_no_tf_imports_no_link(self):
        self.assertEqual(self.choose(["memcpy", "TF_Entry"], ["2.21"]), (None, [], []))


class InfoSchema(unittest.TestCase):
    GOOD = {"schema": 1, "plugin": "tensorflow-plugins/libx.so", "built_for": "2.16",
            "tf_min": "2.9", "tf_max": "2.21", "range_from": "given"}

    def test_errors_name_the_field(self):
        for field, value, needle in (
                ("tf_min", "two", "field 'tf_min': 'two' is not a TensorFlow release"),
                ("plugin", "libx.so", "field 'plugin' is 'libx.so'"),
                ("schema", 7, "field 'schema' is 7"),
                ("built_for", "2.5", "field 'built_for' (2.5) is outside"),
                ("tf_max", "2.8", "field 'tf_min' (2.9) is newer than 'tf_max' (2.8)")):
            bad = dict(self.GOOD, **{field: value})
            with self.assertRaises(info_mod.InfoError) as e:
                info_mod.parse(json.dumps(bad), "x/tfplugin.json")
            self.assertIn("x/tfplugin.json: " + needle, str(e.exception))
        with self.assertRaisesRegex(info_mod.InfoError, "x/tfplugin.json: not JSON"):
            info_mod.parse("{", "x/tfplugin.json")

    def test_fits(self):
        self.assertTrue(info_mod.fits("2.9", self.GOOD))
        self.assertTrue(info_mod.fits("2.21", self.GOOD))
        self.assertFalse(info_mod.fits("2.8", self.GOOD))
        self.assertFalse(info_mod.fits("2.22", self.GOOD))
        self.assertFalse(info_mod.fits("3.0", self.GOOD))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_tfplugin_wheel.py PLUGIN.so [VALIDATE_PLUGIN]")
    PLUGIN = sys.argv[1]
    VALIDATE = sys.argv[2] if len(sys.argv) > 2 else None
    unittest.main(argv=sys.argv[:1], verbosity=2)
