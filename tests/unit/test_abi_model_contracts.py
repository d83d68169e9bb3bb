#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for the callback-contract drift check in tools/abi_model.py.

Runs on the real facts and abi/contracts.toml: the committed contracts must
pass, and each kind of drift (a callback without a contract, a contract for a
field that does not exist or is no callback, a malformed contract) must stop
the description with a message naming the callback.
"""

import copy
import os
import sys
import unittest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import abi_model  # noqa: E402


class CallbackContracts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = abi_model.Model()

    def model(self):
        m = copy.copy(self.base)
        m.contracts = copy.deepcopy(self.base.contracts)
        return m

    def drift(self, m):
        with self.assertRaises(abi_model.ContractError) as cm:
            m.callback_contracts()
        return str(cm.exception)

    def test_committed_contracts_cover_every_callback(self):
        contracts = self.base.callback_contracts()
        fields = self.base.callback_fields()
        se = {k for k, v in fields.items() if v["family"] == "stream_executor"}
        self.assertTrue(se)
        self.assertLessEqual(se | {"SE_InitPlugin"}, set(contracts))
        for k in ("SP_StreamExecutor.mem_zero", "SP_StreamExecutor.memset32",
                  "SP_TimerFns.nanoseconds", "SE_PlatformRegistrationParams.destroy_platform"):
            self.assertIn(k, contracts)
        self.assertEqual(contracts["SP_StreamExecutor.host_callback"]["sync"], "async")
        self.assertEqual(list(contracts["SE_InitPlugin"]), list(abi_model.CONTRACT_KEYS))

    def test_description_carries_contracts(self):
        desc = self.base.describe()
        hc = next(f for f in desc["structs"]["SP_StreamExecutor"]["fields"]
                  if f["name"] == "host_callback")
        self.assertEqual(hc["contract"]["sync"], "async")
        self.assertIn("contract", desc["functions"]["SE_InitPlugin"])
        ss = next(f for f in desc["structs"]["SP_StreamExecutor"]["fields"]
                  if f["name"] == "struct_size")
        self.assertNotIn("contract", ss)

    def test_missing_contract_is_named(self):
        m = self.model()
        del m.contracts["callbacks"]["SP_StreamExecutor.memset32"]
        del m.contracts["callbacks"]["SE_InitPlugin"]
        msg = self.drift(m)
        self.assertIn('no contract for "SP_StreamExecutor.memset32"', msg)
        self.assertIn("2.7-2.21", msg)  # the releases that have the field
        self.assertIn('no contract for "SE_InitPlugin"', msg)
        with self.assertRaises(abi_model.ContractError):
            m.describe()

    def test_unknown_field_struct_or_non_callback(self):
        m = self.model()
        c = m.contracts["callbacks"]["SP_StreamExecutor.memset"]
        m.contracts["callbacks"]["SP_StreamExecutor.memset64"] = c
        m.contracts["callbacks"]["SP_Platform.name"] = c
        m.contracts["callbacks"]["SP_Gadget.run"] = c
        m.contracts["callbacks"]["SE_NoSuchEntry"] = c
        msg = self.drift(m)
        self.assertIn('[callbacks."SP_StreamExecutor.memset64"]', msg)
        self.assertIn("SP_Platform has no callback field name", msg)
        self.assertIn("struct SP_Gadget", msg)
        self.assertIn('[callbacks."SE_NoSuchEntry"]', msg)

    def test_malformed_contract(self):
        m = self.model()
        cbs = m.contracts["callbacks"]
        cbs["SP_StreamExecutor.allocate"] = dict(cbs["SP_StreamExecutor.allocate"], sync="async")
        cbs["SP_StreamExecutor.memcpy_dtoh"] = dict(cbs["SP_StreamExecutor.memcpy_dtoh"],
                                                   sync="later", note="x")
        del cbs["SP_TimerFns.nanoseconds"]["errors"]
        msg = self.drift(m)
        self.assertIn('SP_StreamExecutor.allocate"]: sync = "async" but it takes no SP_Stream', msg)
        self.assertIn('sync = "later"', msg)
        self.assertIn("unknown keys note", msg)
        self.assertIn('[callbacks."SP_TimerFns.nanoseconds"] lacks errors', msg)

    def test_profiler_family_needs_contracts_too(self):
        m = self.model()
        del m.contracts["callbacks"]["TP_ProfilerFns.collect_data_xspace"]
        del m.contracts["callbacks"]["TF_InitProfiler"]
        msg = self.drift(m)
        self.assertIn('no contract for "TP_ProfilerFns.collect_data_xspace"', msg)
        self.assertIn('no contract for "TF_InitProfiler"', msg)

    def test_family_without_flag_needs_no_contracts(self):
        m = self.model()
        for family in m.contracts["families"].values():  # stream_executor, profiler
            family["callback_contracts"] = False
        m.contracts["callbacks"] = {}
        self.assertEqual(m.callback_contracts(), {})


if __name__ == "__main__":
    unittest.main()
