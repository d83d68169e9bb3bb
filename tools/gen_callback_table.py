#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The validation layer's signature table, from tfplugin's ABI description.

Every callback field of every plugin struct in abi/tfplugin-abi.json becomes
one row of a C++ table (src/validate/callback_table.h declares the types):
the libffi type of its return value and of each parameter, each parameter's
role, and what the callback does to a handle's life. Roles come from the C
types (measured in abi/facts: `SP_Stream` is a stream handle, `SP_Stream *`
an out parameter for one, `TF_Status *` the status, `SP_DeviceMemoryBase *`
device memory, a `uint64_t` named size or bytes a byte count); only what the
types cannot tell comes from abi/contracts.toml (`lifecycle`: which callback
starts or ends which handle kind's life; `sync`: whether it enqueues on its
stream). An unknown C type stops the generator: the interposer must never
call through a guessed signature.

    gen_callback_table.py --outdir DIR     writes DIR/callback_table.inc
    gen_callback_table.py --print          the table as text, for reading
"""
import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import abi_model  # noqa: E402

DESCRIPTION = abi_model.DESCRIPTION
MAX_PARAMS = 8

# C scalar types by their libffi type; pointers and enums are found from the
# measured typedefs.
SCALARS = {
    "void": "kVoid",
    "unsigned char": "kUInt8", "uint8_t": "kUInt8", "TF_Bool": "kUInt8",
    "uint32_t": "kUInt32", "uint64_t": "kUInt64", "size_t": "kUInt64",
    "int": "kSInt32", "int32_t": "kSInt32", "int64_t": "kSInt64",
    "double": "kDouble", "float": "kFloat",
}
SIZE_NAMES = ("size", "bytes", "size_in_bytes")


class TableError(ValueError):
    pass


def strip_type(t):
    """'const SP_Device *const' -> 'SP_Device *' (qualifiers do not change the ABI)."""
    t = re.sub(r"\bconst\b", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t.replace(" *", "*").replace("*", " *").replace("  ", " ").strip()


def split_signature(c_type):
    """'void *(*)(const SP_Device *, uint64_t)' -> ('void *', ['const SP_Device *', 'uint64_t'])."""
    m = re.fullmatch(r"(.*?)\(\*\)\((.*)\)", c_type.strip())
    if not m:
        raise TableError(f"not a function pointer type: {c_type!r}")
    ret, params = m.group(1).strip(), m.group(2).strip()
    parts = [p.strip() for p in params.split(",")] if params and params != "void" else []
    return ret, parts


class Typedefs:
    """The newest measured release's typedefs: what a named type is."""

    def __init__(self, model):
        newest = model.releases[-1]
        self.typedefs = model.facts[newest]["typedefs"]

    def resolve(self, name, depth=0):
        t = self.typedefs.get(name)
        if t is None or depth > 8:
            return name
        return self.resolve(t["type"], depth + 1) if t["type"] in self.typedefs else t["type"]

    def ffi(self, c_type):
        t = strip_type(c_type)
        if t.endswith("*"):
            return "kPointer"
        if t in SCALARS:
            return SCALARS[t]
        real = self.resolve(t)
        if real.endswith("*") or "(*)" in real:
            return "kPointer"
        if real.startswith("enum "):
            return "kSInt32"
        if real in SCALARS:
            return SCALARS[real]
        raise TableError(f"no libffi type for C type {c_type!r} (resolves to {real!r})")

    def handle_kind(self, c_type):
        """'SP_Stream' -> 'stream' when SP_Stream is a pointer typedef to an opaque struct."""
        t = strip_type(c_type)
        real = self.resolve(t)
        if t.startswith("SP_") and re.fullmatch(r"struct \w+_st \*", real):
            kind = t[3:].lower()
            if kind in abi_model.HANDLE_KINDS:
                return kind
        return None

    def is_callback_fn(self, c_type):
        return "(*)" in self.resolve(strip_type(c_type))


def role_of(td, c_type, name, prev_role):
    t = strip_type(c_type)
    kind = td.handle_kind(t)
    if kind:
        return "k" + kind.capitalize()
    if t.endswith(" *"):
        kind = td.handle_kind(t[:-2])
        if kind:
            return "k" + kind.capitalize() + "Out"
    if t == "TF_Status *":
        return "kStatus"
    if t == "SP_DeviceMemoryBase *":
        return "kDeviceMemoryConst" if "const" in c_type else "kDeviceMemory"
    if t == "SP_Device *":
        return "kDevice"
    if t == "SP_Platform *":
        return "kPlatform"
    if td.is_callback_fn(t):
        return "kHostCallbackFn"
    if t == "void *" and prev_role == "kHostCallbackFn":
        return "kHostCallbackArg"
    if t == "void *":
        return "kHostPointer"
    if td.ffi(t) == "kUInt64" and name in SIZE_NAMES:
        return "kSize"
    return "kOther"


def rows(description, model):
    td = Typedefs(model)
    out = []
    for sname in sorted(description["structs"]):
        st = description["structs"][sname]
        for fd in st["fields"]:
            if not fd.get("callback"):
                continue
            ret, params = split_signature(fd["type"])
            if len(params) > MAX_PARAMS:
                raise TableError(f"{sname}.{fd['name']}: {len(params)} parameters, "
                                 f"more than {MAX_PARAMS}")
            names = [n or f"arg{i}" for i, n in enumerate(fd.get("params") or [])]
            names += [f"arg{i}" for i in range(len(names), len(params))]
            roles, prev = [], None
            for p, n in zip(params, names):
                prev = role_of(td, p, n, prev)
                roles.append(prev)
            contract = fd.get("contract") or {}
            verb, _, kind = contract.get("lifecycle", "").partition(" ")
            out.append({
                "struct": sname, "field": fd["name"], "type": fd["type"],
                "family": st.get("family") or "",
                "async": contract.get("sync") == "async",
                "ret": td.ffi(ret), "params": [td.ffi(p) for p in params],
                "roles": roles, "names": names,
                "effect": {"creates": "kCreates", "destroys": "kDestroys"}.get(verb, "kNone"),
                "kind": "k" + "".join(w.capitalize() for w in kind.split("_")) if kind else "kNone",
            })
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(table):
    L = ["// Generated by tools/gen_callback_table.py from abi/tfplugin-abi.json. Do not edit.",
         "// One row per callback field: struct, field, C type, family, async, return type,",
         "// parameter count, parameter libffi types, roles and names, lifecycle effect, kind."]
    for r in table:
        pad = MAX_PARAMS - len(r["params"])
        ffi = ", ".join(["FfiKind::" + p for p in r["params"]] + ["FfiKind::kVoid"] * pad)
        roles = ", ".join(["Role::" + p for p in r["roles"]] + ["Role::kOther"] * pad)
        names = ", ".join([c_string(n) for n in r["names"]] + ["nullptr"] * pad)
        L.append(f"{{{c_string(r['struct'])}, {c_string(r['field'])}, {c_string(r['type'])}, "
                 f"{c_string(r['family'])}, {'true' if r['async'] else 'false'}, "
                 f"FfiKind::{r['ret']}, {len(r['params'])},\n"
                 f"  {{{ffi}}},\n  {{{roles}}},\n  {{{names}}},\n"
                 f"  Effect::{r['effect']}, HandleKind::{r['kind']}}},")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir")
    ap.add_argument("--print", action="store_true")
    args = ap.parse_args()
    with open(DESCRIPTION) as f:
        description = json.load(f)
    model = abi_model.Model()
    try:
        table = rows(description, model)
    except TableError as e:
        sys.exit(f"gen_callback_table.py: {e}")
    if args.print:
        for r in table:
            print(f"{r['struct']}.{r['field']}: {r['ret']} <- "
                  + ", ".join(f"{n}:{p}/{role}" for n, p, role in
                              zip(r["names"], r["params"], r["roles"]))
                  + (f"  [{r['effect']} {r['kind']}]" if r["effect"] != "kNone" else "")
                  + ("  async" if r["async"] else ""))
    if args.outdir:
        with open(os.path.join(args.outdir, "callback_table.inc"), "w") as f:
            f.write(render(table))
    if not args.print and not args.outdir:
        ap.error("give --outdir or --print")


if __name__ == "__main__":
    main()
