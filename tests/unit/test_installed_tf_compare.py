#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for the comparison in tests/tensorflow/installed_tf_abi.py.

That test needs a pip-installed TensorFlow; these feed its comparison synthetic
facts, so we know it reports what it is meant to (and not only ever passes).
"""

import copy
import importlib.util
import os
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensorflow",
                      "installed_tf_abi.py")
_spec = importlib.util.spec_from_file_location("installed_tf_abi", SCRIPT)
abi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(abi)


def field(name, type_, offset, size, **extra):
    return {"name": name, "type": type_, "offset": offset, "size": size, **extra}


FACTS = {
    "records": {
        "SP_Device": {"size": 24, "align": 8, "tag": "SP_Device", "fields": [
            field("struct_size", "size_t", 0, 8),
            field("ext", "void *", 8, 8),
            field("ordinal", "int32_t", 16, 4),
        ]},
        "TF_Variant": {"size": 16, "align": 8, "tag": None, "fields": [
            field("kind", "int", 0, 4),
            field("", "union (anonymous union)", 8, 8, record={
                "kind": "union", "size": 8, "align": 8,
                "fields": [field("i", "int64_t", 0, 8), field("p", "void *", 0, 8)]}),
        ]},
    },
    "enums": {
        "TF_Code": {"underlying": "unsigned int", "constants": {"TF_OK": 0, "TF_CANCELLED": 1}},
    },
    "functions": {
        "TF_NewStatus": {"header": "tensorflow/c/tf_status.h", "return": "TF_Status *",
                         "inline": False, "params": [], "variadic": False, "prototype": True},
        "TF_GetCode": {"header": "tensorflow/c/tf_status.h", "return": "TF_Code",
                       "inline": False, "params": [{"name": "s", "type": "const TF_Status *"}],
                       "variadic": False, "prototype": True},
    },
    "macros": {
        "SP_DEVICE_STRUCT_SIZE": {"header": "h", "function_like": False,
                                  "tokens": "TF_OFFSET_OF_END ( SP_Device , ordinal )",
                                  "value": 20},
        "TF_CAPI_EXPORT": {"header": "h", "function_like": False,
                           "tokens": "__attribute__ ( ( visibility ( \"default\" ) ) )"},
    },
    "variables": {},
    "exports": {
        "TF_NewStatus": {"kind": "function", "libs": ["libtensorflow_framework.so.2"]},
        "TF_GetCode": {"kind": "function", "libs": ["libtensorflow_framework.so.2"]},
    },
    "tf_checks": {
        "required_fields": {"SP_Device": ["ordinal"]},
        "struct_size_checked": {"SP_Device": "SP_DEVICE_STRUCT_SIZE"},
        "name_pattern": "[A-Z][A-Z_]*",
    },
    "plugin_headers": ["tensorflow/c/tf_status.h"],
}


class CompareFacts(unittest.TestCase):
    def compare(self, mutate):
        installed = copy.deepcopy(FACTS)
        mutate(installed)
        return abi.compare_facts(FACTS, installed).mismatches

    def test_identical_facts_match(self):
        report = abi.compare_facts(FACTS, copy.deepcopy(FACTS))
        self.assertEqual(report.mismatches, [])
        self.assertEqual(report.counts["structs"], 2)
        self.assertEqual(report.counts["fields"], 3 + 2 + 2)  # 2 of them union members
        self.assertEqual(report.counts["exports"], 2)

    def test_field_offset_mismatch(self):
        def move(f):
            f["records"]["SP_Device"]["fields"][2]["offset"] = 20
        self.assertEqual(self.compare(move),
                         ["MISMATCH struct SP_Device.ordinal offset: expected 16, installed 20"])

    def test_struct_size_and_field_type(self):
        def change(f):
            rec = f["records"]["SP_Device"]
            rec["size"] = 32
            rec["fields"][2]["type"] = "int64_t"
        out = self.compare(change)
        self.assertIn("MISMATCH struct SP_Device size: expected 24, installed 32", out)
        self.assertIn('MISMATCH struct SP_Device.ordinal type: expected "int32_t", '
                      'installed "int64_t"', out)

    def test_unnamed_union_member(self):
        def change(f):
            f["records"]["TF_Variant"]["fields"][1]["record"]["fields"][1]["size"] = 4
        out = self.compare(change)
        self.assertEqual(len(out), 1)
        self.assertIn("TF_Variant.<unnamed> (union).p size: expected 8, installed 4", out[0])

    def test_field_missing_and_reordered(self):
        def drop(f):
            del f["records"]["SP_Device"]["fields"][1]
        out = self.compare(drop)
        self.assertIn("MISMATCH struct SP_Device field ext: expected present, installed absent",
                      out)
        self.assertTrue(any(m.startswith("MISMATCH struct SP_Device field order") for m in out))

        def swap(f):
            fields = f["records"]["SP_Device"]["fields"]
            fields[1], fields[2] = fields[2], fields[1]
        out = self.compare(swap)
        self.assertTrue(any(m.startswith("MISMATCH struct SP_Device field order") for m in out))

    def test_missing_struct(self):
        out = self.compare(lambda f: f["records"].pop("TF_Variant"))
        self.assertEqual(out, ["MISMATCH struct TF_Variant: expected present, installed absent"])

    def test_enum_value_change(self):
        def change(f):
            f["enums"]["TF_Code"]["constants"]["TF_CANCELLED"] = 2
        self.assertEqual(self.compare(change),
                         ["MISMATCH enum TF_Code constant TF_CANCELLED: expected 1, installed 2"])

    def test_enum_constant_added(self):
        def add(f):
            f["enums"]["TF_Code"]["constants"]["TF_UNKNOWN"] = 2
        self.assertEqual(self.compare(add), ["MISMATCH enum TF_Code constant TF_UNKNOWN: "
                                             "expected absent, installed present"])

    def test_missing_export(self):
        out = self.compare(lambda f: f["exports"].pop("TF_GetCode"))
        self.assertEqual(out, ["MISMATCH export TF_GetCode: expected present, installed absent"])

    def test_extra_export(self):
        def add(f):
            f["exports"]["TF_Extra"] = {"kind": "function", "libs": ["x.so"]}
        self.assertEqual(self.compare(add),
                         ["MISMATCH export TF_Extra: expected absent, installed present"])

    def test_export_libs_do_not_matter(self):
        def move(f):
            f["exports"]["TF_GetCode"]["libs"] = ["libtensorflow_cc.so.2"]
        self.assertEqual(self.compare(move), [])

    def test_function_signature(self):
        def change(f):
            f["functions"]["TF_GetCode"]["params"][0]["type"] = "TF_Status *"
        out = self.compare(change)
        self.assertEqual(len(out), 1)
        self.assertIn("function TF_GetCode parameter types", out[0])

    def test_macro_value(self):
        def change(f):
            f["macros"]["SP_DEVICE_STRUCT_SIZE"]["value"] = 24
        self.assertEqual(self.compare(change), ["MISMATCH macro SP_DEVICE_STRUCT_SIZE value: "
                                                "expected 20, installed 24"])

    def test_macro_only_one_side_is_not_compared(self):
        self.assertEqual(self.compare(lambda f: f["macros"].pop("TF_CAPI_EXPORT")), [])

    def test_tf_checks(self):
        def change(f):
            f["tf_checks"]["required_fields"]["SP_Device"] = ["ext", "ordinal"]
            f["tf_checks"]["struct_size_checked"] = {}
        out = self.compare(change)
        self.assertIn("MISMATCH tf_checks required field SP_Device.ext: expected \"not required\", "
                      "installed \"required\"", out)
        self.assertIn("MISMATCH tf_checks struct_size check of SP_Device: expected present, "
                      "installed absent", out)


class CheckImports(unittest.TestCase):
    ROLES = {"TF_NewStatus": "import", "TF_GetCode": "import", "TF_Gone": "import",
             "SE_InitPlugin": "entry_point", "TF_Inline": "inline"}

    def test_all_exported(self):
        report = abi.check_imports(self.ROLES, {"TF_Gone"}, FACTS["exports"])
        self.assertEqual(report.mismatches, [])
        self.assertEqual(report.counts, {"imports": 2, "imports marked unavailable": 1})

    def test_missing_export_named(self):
        exports = {k: v for k, v in FACTS["exports"].items() if k != "TF_GetCode"}
        report = abi.check_imports(self.ROLES, {"TF_Gone"}, exports, version="2.99.0")
        self.assertEqual(report.mismatches, [
            'MISMATCH import TF_GetCode (declared by our root): expected \"exported\", '
            'installed "not exported by TensorFlow 2.99.0"'])

    def test_unmarked_unavailable_function_fails(self):
        report = abi.check_imports(self.ROLES, set(), FACTS["exports"])
        self.assertEqual(len(report.mismatches), 1)
        self.assertIn("TF_Gone", report.mismatches[0])

    def test_marked_unavailable_but_exported(self):
        report = abi.check_imports(self.ROLES, {"TF_Gone"}, FACTS["exports"],
                                   dynamic_symbols={"TF_Gone": ["libtensorflow_framework.so.2"]})
        self.assertEqual(len(report.mismatches), 1)
        self.assertIn("TF_Gone (marked unavailable by our root)", report.mismatches[0])
        self.assertIn("libtensorflow_framework.so.2", report.mismatches[0])


class RootScan(unittest.TestCase):
    def test_unavailable_in_root(self):
        import tempfile
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "tensorflow", "c"))
            with open(os.path.join(root, "tensorflow", "c", "kernels.h"), "w") as f:
                f.write('TF_CAPI_EXPORT extern void TF_Fine(int x);\n'
                        'TF_CAPI_EXPORT extern TFPLUGIN_UNAVAILABLE("TF_Gone is not exported '
                        'by TensorFlow 2.99; exported by 2.5-2.6") void TF_Gone(TF_Status *s);\n'
                        'TF_CAPI_EXPORT extern TFPLUGIN_UNAVAILABLE("x (\\"quoted\\")") '
                        'const char * TF_Also(void);\n')
            self.assertEqual(abi.unavailable_in_root(root), {"TF_Gone", "TF_Also"})


if __name__ == "__main__":
    unittest.main()
