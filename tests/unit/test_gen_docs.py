#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for tools/gen_docs.py on a small synthetic ABI description.

Three releases of one interface: SE2 inserts a callback in the middle of a
struct (breaking), SE3 appends a flag into what was tail padding (compatible).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
SCRIPT = os.path.join(TOOLS, "gen_docs.py")
sys.path.insert(0, TOOLS)
import gen_docs  # noqa: E402

CB = "void (*)(const SP_Device *, TF_Status *)"


def field(name, since, releases, type_, required=None):
    f = {"name": name, "since": since, "releases": releases, "type": type_}
    if "(*)" in type_:
        f["callback"] = True
        f["params"] = ["device", "status"]
    if required:
        f["required_by_tf"] = [{"when": "always", "releases": required}]
    return f


def layout(releases, size, macro, value, fields):
    return {"releases": releases, "size": size, "align": 8, "size_macro": macro,
            "size_macro_value": value, "fields": fields}


def description():
    checked = {"SP_Thing": "SP_THING_STRUCT_SIZE", "SP_Flags": "SP_FLAGS_STRUCT_SIZE"}
    revs = {"2.1": "SE1", "2.2": "SE2", "2.3": "SE3"}
    return {
        "schema_version": 1,
        "target": "x86_64-linux-gnu",
        "releases": [{"release": r, "version": r + ".0",
                      "wheel": f"tensorflow_cpu-{r}.0-cp311-cp311-manylinux_x86_64.whl",
                      "revisions": {"stream_executor": rev}, "headers": ["se.h"],
                      "struct_size_checked_by_tf": checked, "name_pattern": None}
                     for r, rev in revs.items()],
        "unavailable_releases": {},
        "families": {"stream_executor": {
            "title": "Device API", "entry_point": "SE_InitPlugin",
            "revisions": [
                {"id": "SE1", "releases": ["2.1"], "changes": []},
                {"id": "SE2", "releases": ["2.2"], "changes": [
                    {"struct": "SP_Thing", "change": "field inserted", "field": "beta",
                     "breaks": True},
                    {"struct": "SP_Thing", "change": "fields moved", "fields": ["omega"],
                     "breaks": True},
                    {"struct": "SP_Thing", "change": "size changed", "from": 32, "to": 40,
                     "breaks": False}]},
                {"id": "SE3", "releases": ["2.3"], "changes": [
                    {"struct": "SP_Flags", "change": "field appended", "field": "extra",
                     "breaks": False}]},
            ]}},
        "structs": {
            "SP_Thing": {
                "header": "se.h", "family": "stream_executor", "releases": "2.1-2.3",
                "struct_size_checked_by_tf": "2.1-2.3",
                "fields": [field("struct_size", "2.1", "2.1-2.3", "size_t"),
                           field("ext", "2.1", "2.1-2.3", "void *"),
                           field("alpha", "2.1", "2.1-2.3", CB, "2.1-2.3"),
                           field("omega", "2.1", "2.1-2.3", CB, "2.1-2.3"),
                           field("beta", "2.2", "2.2-2.3", CB, "2.2-2.3")],
                "layouts": [
                    layout("2.1", 32, "SP_THING_STRUCT_SIZE", 32,
                           {"struct_size": [0, 8], "ext": [8, 8], "alpha": [16, 8],
                            "omega": [24, 8]}),
                    layout("2.2-2.3", 40, "SP_THING_STRUCT_SIZE", 40,
                           {"struct_size": [0, 8], "ext": [8, 8], "alpha": [16, 8],
                            "beta": [24, 8], "omega": [32, 8]})]},
            "SP_Flags": {
                "header": "se.h", "family": "stream_executor", "releases": "2.1-2.3",
                "struct_size_checked_by_tf": "2.1-2.3",
                "fields": [field("struct_size", "2.1", "2.1-2.3", "size_t"),
                           field("name", "2.1", "2.1-2.3", "const char *", "2.1-2.3"),
                           field("on", "2.1", "2.1-2.3", "unsigned char"),
                           field("extra", "2.3", "2.3", "unsigned char")],
                "layouts": [
                    layout("2.1-2.2", 24, "SP_FLAGS_STRUCT_SIZE", 17,
                           {"struct_size": [0, 8], "name": [8, 8], "on": [16, 1]}),
                    layout("2.3", 24, "SP_FLAGS_STRUCT_SIZE", 18,
                           {"struct_size": [0, 8], "name": [8, 8], "on": [16, 1],
                            "extra": [17, 1]})]},
        },
        "functions": {
            "SE_InitPlugin": {"header": "se.h", "role": "entry_point",
                              "signature": "void SE_InitPlugin(void *, TF_Status *)",
                              "declared": "2.1-2.3", "exported": None},
        },
        "enums": {},
    }


def directions(D, idx):
    """{"old->new": text, "new->old": text} of the what-breaks bullets."""
    (_, a), (_, b) = gen_docs.breaks_sections(D, "stream_executor", idx)
    return {"old->new": "\n".join(a), "new->old": "\n".join(b)}


class InsertedField(unittest.TestCase):
    def setUp(self):
        self.D = gen_docs.Desc(description())

    def test_what_changed(self):
        (s,) = gen_docs.changed_sentences(self.D, "stream_executor", 1)
        self.assertEqual(
            s, "`SP_Thing`: `beta` inserted before `omega` (offsets 24-31); `omega` moves from "
               "offset 24 to 32; size 32 → 40 bytes; `SP_THING_STRUCT_SIZE` 32 → 40.")

    def test_old_plugin_on_new_tf(self):
        text = directions(self.D, 1)["old->new"]
        self.assertIn("TF looks for `beta` at offset 24, where the plugin has `omega`: TF would "
                      "call the plugin's `omega` in place of `beta`.", text)
        self.assertIn("TF looks for `omega` (offset 32) past the end of the plugin's struct "
                      "(struct_size 32, sizeof 32). TF 2.2 requires `omega`", text)

    def test_new_plugin_on_old_tf(self):
        text = directions(self.D, 1)["new->old"]
        self.assertIn("TF looks for `omega` at offset 24, where the plugin has `beta`: TF would "
                      "call the plugin's `beta` in place of `omega`.", text)
        self.assertIn("The plugin's `omega` (offset 32) lies past the end of TF's layout "
                      "(struct_size 32, sizeof 32): TF never sees it", text)

    def test_verdict(self):
        self.assertTrue(gen_docs.revision_breaks(self.D, "stream_executor", 1))
        self.assertEqual(gen_docs.pair_status(self.D, "stream_executor", 0, 1), "breaks")
        self.assertEqual(gen_docs.pair_status(self.D, "stream_executor", 1, 0), "breaks")
        self.assertEqual(gen_docs.pair_status(self.D, "stream_executor", 0, 2), "breaks")


class AppendedField(unittest.TestCase):
    def setUp(self):
        self.D = gen_docs.Desc(description())

    def test_what_changed(self):
        (s,) = gen_docs.changed_sentences(self.D, "stream_executor", 2)
        self.assertEqual(
            s, "`SP_Flags`: `extra` (`unsigned char`) appended at offset 17; sizeof stays 24 "
               "bytes (the new field fits in what was tail padding); `SP_FLAGS_STRUCT_SIZE` "
               "17 → 18.")

    def test_old_plugin_on_new_tf(self):
        text = directions(self.D, 2)["old->new"]
        self.assertIn("TF looks for `extra` (offset 17) past the plugin's struct_size (17) but "
                      "inside its 24-byte sizeof, i.e. in its tail padding", text)
        self.assertIn("TF_OFFSET_OF_END(SP_Flags, extra) = 18", text)
        # Nothing the plugin filled is misread.
        self.assertNotIn("where the plugin has", text)

    def test_new_plugin_on_old_tf(self):
        text = directions(self.D, 2)["new->old"]
        self.assertIn("The plugin's `extra` (offset 17) lies in the tail padding of TF's layout "
                      "(past its struct_size 17, inside its 24-byte sizeof): TF ignores it; the "
                      "plugin reports struct_size 18, larger than the 17 TF was built with.", text)

    def test_verdict(self):
        self.assertFalse(gen_docs.revision_breaks(self.D, "stream_executor", 2))
        self.assertEqual(gen_docs.pair_status(self.D, "stream_executor", 1, 2), "appended")


CONTRACT = {"summary": "Does *alpha* things.", "sync": "async", "threads": "Any thread.",
            "status": "Arrives TF_OK.", "ownership": "TF owns *out.", "errors": "NULL: invalid."}


def with_contracts():
    d = description()
    for f in d["structs"]["SP_Thing"]["fields"]:
        if f["name"] == "alpha":
            f["contract"] = dict(CONTRACT)
    d["functions"]["SE_InitPlugin"]["contract"] = dict(CONTRACT, sync="sync")
    return d


class Contracts(unittest.TestCase):
    def test_reference_renders_contract_under_struct(self):
        reference = gen_docs.render_all(with_contracts())[gen_docs.REFERENCE_MD]
        block = reference[reference.index("##### SP_Thing.alpha"):]
        self.assertLess(reference.index("#### SP_Thing"), reference.index("##### SP_Thing.alpha"))
        self.assertIn("Does \\*alpha\\* things.", block)
        self.assertIn("- **Sync:** `async` (enqueues on its `SP_Stream` argument", block)
        self.assertIn("- **Ownership:** TF owns \\*out.", block)
        self.assertIn("- **Releases:** 2.1-2.3; required by TF: 2.1-2.3.", block)
        self.assertIn("#### SE_InitPlugin", reference)
        self.assertNotIn("##### SP_Thing.omega", reference)  # no contract, no block

    def test_no_contracts_no_blocks(self):
        docs = gen_docs.render_all(description())
        self.assertNotIn("#####", docs[gen_docs.REFERENCE_MD])
        self.assertIn("carries no callback contracts", docs[gen_docs.CONTRACTS_MD])

    def test_index_links_to_reference_anchors(self):
        head = "# Mine\n\nHand-written.\n" + gen_docs.GENERATED_MARKER + "\n"
        docs = gen_docs.render_all(with_contracts(), contracts_head_text=head)
        index = docs[gen_docs.CONTRACTS_MD]
        self.assertTrue(index.startswith(head))
        self.assertIn("[`alpha`](abi-reference.md#sp_thingalpha) | async | "
                      "Does \\*alpha\\* things. | 2.1-2.3 |", index)
        self.assertIn("[`SE_InitPlugin`](abi-reference.md#se_initplugin) | sync |", index)

    def test_hand_written_head_survives_regeneration(self):
        with tempfile.TemporaryDirectory() as tmp:
            desc = os.path.join(tmp, "abi.json")
            with open(desc, "w") as f:
                json.dump(with_contracts(), f)
            base = [sys.executable, SCRIPT, "--description", desc, "--out-dir", tmp,
                    "--facts-dir", os.path.join(tmp, "no-facts")]
            run = lambda *a: subprocess.run(base + list(a), capture_output=True, text=True)
            path = os.path.join(tmp, gen_docs.CONTRACTS_MD)
            with open(path, "w") as f:
                f.write("# Rules\n\nOurs.\n" + gen_docs.GENERATED_MARKER + "\nstale\n")
            self.assertEqual(run("--check").returncode, 1)
            self.assertEqual(run().returncode, 0)
            self.assertEqual(run("--check").returncode, 0)
            text = open(path).read()
            self.assertTrue(text.startswith("# Rules\n\nOurs.\n" + gen_docs.GENERATED_MARKER))
            self.assertNotIn("stale", text)
            with open(path, "w") as f:
                f.write("# Rules without the marker\n")
            proc = run()
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("marker", proc.stderr)
            self.assertEqual(open(path).read(), "# Rules without the marker\n")


class Rendering(unittest.TestCase):
    def test_pages_render_and_mention_the_sentences(self):
        docs = gen_docs.render_all(description())
        versions = docs[gen_docs.VERSIONS_MD]
        self.assertIn("| **2.2** | 2.2.0 | SE2 | `tfplugin-tf2.2` |", versions)
        self.assertIn("`beta` inserted before `omega`", versions)
        self.assertIn("**Verdict: not interchangeable.**", versions)
        self.assertIn("**Verdict: layout-compatible.**", versions)
        reference = docs[gen_docs.REFERENCE_MD]
        self.assertIn("#### SP_Thing", reference)
        self.assertIn("| `beta` *callback* | `void (*)(const SP_Device *device, "
                      "TF_Status *status)` | 2.2 | — | 24 (8) | 2.2-2.3 |", reference)

    def test_check_mode(self):
        with tempfile.TemporaryDirectory() as tmp:
            desc = os.path.join(tmp, "abi.json")
            with open(desc, "w") as f:
                json.dump(description(), f)
            base = [sys.executable, SCRIPT, "--description", desc, "--out-dir", tmp,
                    "--facts-dir", os.path.join(tmp, "no-facts")]
            run = lambda *a: subprocess.run(base + list(a), capture_output=True, text=True)
            self.assertEqual(run("--check").returncode, 1)  # nothing written yet
            self.assertEqual(run().returncode, 0)
            self.assertEqual(run("--check").returncode, 0)
            with open(os.path.join(tmp, gen_docs.VERSIONS_MD), "a") as f:
                f.write("edited\n")
            proc = run("--check")
            self.assertEqual(proc.returncode, 1)
            self.assertIn("is stale", proc.stderr)


if __name__ == "__main__":
    unittest.main()
