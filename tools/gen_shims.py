#!/usr/bin/env python3
"""Generate the parts of libtfplugin_shims that follow from the ABI description.

libtfplugin_shims.so stands in for the TensorFlow C API a plugin imports, so a
plugin can be dlopen'ed (RTLD_NOW) without TensorFlow. Every function whose
role is "import" in abi/tfplugin-abi.json must be defined by the library; the
ones with real semantics are written by hand in src/shims/*.cc, the rest come
from here as "unimplemented" definitions.

Hand-written definitions are found by their marker: each is preceded by
`TFP_SHIM_IMPLEMENTED(<name>)` in a src/shims/*.cc file given on the command
line. Both ways of getting this wrong are loud: a marker without a definition
leaves the symbol missing (tests/shims export test fails naming it), a
definition without a marker collides with the generated one at link time.

Outputs (into --outdir):
  shim_unimplemented.cc   a definition per import function not marked above:
                          sets TF_UNIMPLEMENTED "<name> is not implemented by
                          the tfplugin shims" on its TF_Status* (if any),
                          counts the call, returns a zero value
  shim_releases.h         the releases the shims can emulate (TF_Version)
  shims.map               linker version script: exports exactly the import
                          functions and tfp_* (shims control, host), nothing else
  legacy_declarations.h   every plugin header, plus declarations of the
                          import functions the newest include root no longer
                          declares (included by shim_unimplemented.cc and by
                          hand-written shims of such functions)
  plugin_layouts.h        per release, the layout of every plugin-filled struct
                          (SE_*, SP_*, TP_*, TF_Profiler*): size, field offsets,
                          the *_STRUCT_SIZE macro, whether TF checks
                          struct_size, the interface's ABI revision, the fields
                          TF requires and its platform name pattern, so a host
                          emulating release R reads a plugin's structs as TF R
                          does

Signatures come from the newest release declaring each function; C symbols
carry no signature, so one definition per name serves every release. A
function the newest include root no longer declares is declared in
legacy_declarations.h, which the generated definitions include.

  tools/gen_shims.py --outdir DIR src/shims/*.cc
  tools/gen_shims.py --list-imports     every import function, one per line
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from abi_model import DESCRIPTION, REPO, Model  # noqa: E402

MARKER = re.compile(r"^\s*TFP_SHIM_IMPLEMENTED\(\s*([A-Za-z_]\w*)\s*\)", re.M)
STATUS_TYPES = ("TF_Status *", "TSL_Status *")


def import_functions(description_path=DESCRIPTION):
    with open(description_path) as f:
        desc = json.load(f)
    return sorted(n for n, fn in desc["functions"].items() if fn["role"] == "import")


def newest_facts(model, name):
    """(release, facts) of the newest release declaring `name`."""
    for rel in reversed(model.releases):
        fn = model.facts[rel]["functions"].get(name)
        if fn is not None:
            return rel, fn
    raise SystemExit(f"gen_shims: {name} is in the description but in no release's facts")


def cxx_type(t):
    """Facts spell types as C does; the shims are C++."""
    return re.sub(r"\b_Bool\b", "bool", t)


def param_decl(t, name):
    """A parameter declaration; `name` may be None (unused)."""
    t = cxx_type(t)
    if name is None:
        return t
    if "(*)" in t:  # function pointer: the name goes inside the (*)
        return t.replace("(*)", f"(*{name})", 1)
    sep = "" if t.endswith("*") else " "
    return f"{t}{sep}{name}"


def hand_implemented(sources):
    names = set()
    for path in sources:
        with open(path) as f:
            names.update(MARKER.findall(f.read()))
    return names


def root_dir(model):
    return os.path.join(REPO, "include", "tfplugin", f"tf{model.newest}")


def headers_for(model, names):
    """The newest root's headers declaring any of `names`."""
    newest = model.facts[model.newest]
    hdrs = {newest["functions"][n]["header"] for n in names if n in newest["functions"]}
    return sorted(h for h in hdrs if os.path.exists(os.path.join(root_dir(model), h)))


def root_text(model, headers):
    text = []
    for h in headers:
        with open(os.path.join(root_dir(model), h)) as f:
            text.append(f.read())
    return "\n".join(text)


TYPE_WORD = re.compile(r"\b((?:TF|TSL|TP|SE|SP|TFE)_\w+)\b")


def missing_type_decls(model, old, text):
    """Declarations for types only an old release's header had: an enum as
    its underlying integer (same ABI), anything else as an opaque struct
    (such functions only take pointers to them)."""
    out, seen = [], set()
    for n in old:
        rel, fn = newest_facts(model, n)
        for t in [fn["return"]] + [p["type"] for p in fn["params"]]:
            for word in TYPE_WORD.findall(t):
                if word in seen or re.search(rf"\b{word}\b", text):
                    continue
                seen.add(word)
                enum = model.facts[rel]["enums"].get(word)
                if enum:
                    out.append(f"typedef {enum['underlying']} {word};  // enum in TF {rel}")
                else:
                    out.append(f"typedef struct {word} {word};  // opaque in TF {rel}")
    return out


def legacy_decls(model, old, text):
    """Declarations of `old` functions (which `text`, the newest root, lacks)
    with the signature of the newest release that had them."""
    out = missing_type_decls(model, old, text)
    for n in old:
        rel, fn = newest_facts(model, n)
        params = ", ".join([param_decl(p["type"], None) for p in fn["params"]]
                           + (["..."] if fn.get("variadic") else [])) or "void"
        out.append(f"// Last declared by TensorFlow {rel}.")
        out.append(f"TF_CAPI_EXPORT {cxx_type(fn['return'])} {n}({params});")
    return out


def gen_unimplemented(model, imports, implemented):
    todo = [n for n in imports if n not in implemented]
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// Generated by tools/gen_shims.py from abi/tfplugin-abi.json. Do not edit.",
        "// Every import function without a hand-written shim: records the call,",
        "// reports TF_UNIMPLEMENTED through its TF_Status* if it has one, and",
        "// returns a zero value. Never crashes, so a plugin that merely links a",
        "// function still loads and runs as far as it can.",
        '#include "shim_internal.h"',
        "",
        "// Every plugin header, and the functions only older releases declare.",
        '#include "legacy_declarations.h"',
        "",
    ]
    out.append('extern "C" {')
    out.append("")
    for n in todo:
        rel, fn = newest_facts(model, n)
        status = None
        decls = []
        for i, p in enumerate(fn["params"]):
            if status is None and p["type"] in STATUS_TYPES:
                status = f"p{i}"
                decls.append(param_decl(p["type"], status))
            else:
                decls.append(param_decl(p["type"], None))
        if fn.get("variadic"):  # arguments are never read, so no va_list
            decls.append("...")
        ret = cxx_type(fn["return"])
        out.append(f"TF_CAPI_EXPORT {ret} {n}({', '.join(decls) or 'void'}) {{")
        status_arg = status if status else "nullptr"
        out.append(f'  tfp_shims::Unimplemented("{n}", {status_arg});')
        if ret != "void":
            out.append("  return {};")
        out.append("}")
        out.append("")
    out.append('}  // extern "C"')
    return "\n".join(out) + "\n"


def gen_legacy(model, imports):
    """Every plugin header of the newest root, plus declarations of the import
    functions it lacks: what any translation unit defining shims needs."""
    headers = headers_for(model, imports)
    text = root_text(model, headers)
    old = [n for n in imports if not re.search(rf"\b{n}\s*\(", text)]
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// Generated by tools/gen_shims.py from abi/tfplugin-abi.json. Do not edit.",
        "// Import functions only older releases declare, with the signature of",
        "// the newest release that had them.",
        "#ifndef TFPLUGIN_SHIMS_LEGACY_DECLARATIONS_H_",
        "#define TFPLUGIN_SHIMS_LEGACY_DECLARATIONS_H_",
        '#include "shim_internal.h"',
    ]
    out += [f'#include "{h}"' for h in headers]
    out += ['extern "C" {'] + legacy_decls(model, old, text) + ['}  // extern "C"', "#endif", ""]
    return "\n".join(out)


def gen_releases(model, imports):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// Generated by tools/gen_shims.py from abi/facts. Do not edit.",
        "// The releases the shims emulate (oldest first): the TensorFlow version",
        "// TF_Version reports for each (the measured wheel's), and the import",
        "// functions the shims define that the release does not export (what",
        "// tfp_shims_exports answers for TFPLUGIN_BIND_IMPORT), sorted.",
        "#ifndef TFPLUGIN_SHIMS_RELEASES_H_",
        "#define TFPLUGIN_SHIMS_RELEASES_H_",
        "namespace tfp_shims {",
        "// Every import function the shims define (sorted: binary search).",
        "inline constexpr const char* kImports[] = {",
    ]
    out += [f'    "{n}",' for n in sorted(imports)]
    out += [
        "};",
        "struct ReleaseInfo {",
        "  const char* release;",
        "  const char* version;",
        "  const char* const* unexported;  // NULL-terminated",
        "};",
    ]
    for rel in model.releases:
        exported = model.facts[rel]["exports"]
        names = [n for n in imports if n not in exported]
        ident = rel.replace(".", "_")
        out.append(f"inline constexpr const char* kUnexported_{ident}[] = {{")
        out += [f'    "{n}",' for n in names]
        out.append("    nullptr};")
    out.append("inline constexpr ReleaseInfo kReleases[] = {")
    for rel in model.releases:
        ident = rel.replace(".", "_")
        out.append(f'    {{"{rel}", "{model.facts[rel]["version"]}", kUnexported_{ident}}},')
    out += ["};", "}  // namespace tfp_shims", "#endif", ""]
    return "\n".join(out)


LAYOUT_PREFIXES = ("SE_", "SP_", "TP_", "TF_Profiler")


def gen_layouts(model):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// Generated by tools/gen_shims.py from abi/facts. Do not edit.",
        "// Per release: each plugin-facing struct's size and field offsets as",
        "// that release's headers lay them out, and the fields TF requires.",
        "#ifndef TFPLUGIN_SHIMS_PLUGIN_LAYOUTS_H_",
        "#define TFPLUGIN_SHIMS_PLUGIN_LAYOUTS_H_",
        "#include <cstdint>",
        "namespace tfp_shims {",
        "struct FieldLayout { const char* name; uint32_t offset, size; bool is_function; };",
        "struct RequiredField { const char* name; const char* condition; };  // condition: \"Struct.field\" or NULL",
        "struct StructLayout {",
        "  const char* name; uint32_t size;",
        "  // The *_STRUCT_SIZE macro and its value (TF_OFFSET_OF_END of the last",
        "  // field: what TF pre-fills, often less than sizeof); 0 if none.",
        "  const char* size_macro; uint32_t struct_size;",
        "  // TF rejects the struct when the plugin leaves its struct_size 0.",
        "  bool size_checked;",
        "  // The ABI revision of the struct's interface in this release (\"SE3\").",
        "  const char* revision;",
        "  const FieldLayout* fields; uint32_t num_fields;",
        "  const RequiredField* required; uint32_t num_required;",
        "};",
        "struct ReleaseLayouts {",
        "  const char* release; const StructLayout* structs; uint32_t num_structs;",
        "  // What TF matches SP_Platform.name and .type against (RE2 FullMatch).",
        "  const char* name_pattern;",
        "};",
    ]
    revisions = model.revisions()
    table = []
    for rel in model.releases:
        recs = model.facts[rel]["records"]
        checks = model.facts[rel].get("tf_checks", {})
        size_checked = checks.get("struct_size_checked", {})
        names = sorted(n for n in recs if n.startswith(LAYOUT_PREFIXES))
        key = rel.replace(".", "_")
        structs = []
        for n in names:
            rec = recs[n]
            fid = f"k{key}_{n}_fields"
            fields = ", ".join(
                f'{{"{f["name"]}", {f["offset"]}, {f["size"]}, {"true" if "params" in f else "false"}}}'
                for f in rec["fields"])
            out.append(f"inline constexpr FieldLayout {fid}[] = {{{fields}}};")
            req = model.required_fields(rel, n)
            rid = "nullptr"
            if req:
                rid = f"k{key}_{n}_required"
                items = ", ".join(f'{{"{f}", {json.dumps(c) if c else "nullptr"}}}' for f, c in req)
                out.append(f"inline constexpr RequiredField {rid}[] = {{{items}}};")
            macro = model.size_macro(rel, n)
            mname, mval = (json.dumps(macro[0]), macro[1]) if macro[0] else ("nullptr", 0)
            checked = "true" if n in size_checked else "false"
            header = model.struct_header(rel, n)
            family = model.family_of_header(header) if header else None
            rev = model.revision_of(revisions, family, rel) if family else None
            rev = json.dumps(rev) if rev else "nullptr"
            structs.append(f'{{"{n}", {rec["size"]}, {mname}, {mval}, {checked}, {rev}, '
                           f'{fid}, {len(rec["fields"])}, {rid}, {len(req)}}}')
        out.append(f"inline constexpr StructLayout k{key}_structs[] = {{")
        out += [f"    {x}," for x in structs]
        out.append("};")
        pattern = json.dumps(checks.get("name_pattern") or "[A-Z][A-Z_]*")
        table.append(f'{{"{rel}", k{key}_structs, {len(structs)}, {pattern}}}')
    out.append("inline constexpr ReleaseLayouts kReleaseLayouts[] = {")
    out += [f"    {x}," for x in table]
    out += ["};", "}  // namespace tfp_shims", "#endif", ""]
    return "\n".join(out)


def gen_map(imports):
    out = ["/* Generated by tools/gen_shims.py. Do not edit.",
           " * Export exactly the TensorFlow C API imports and tfp_* (shims control, host). */",
           "{", "  global:"]
    out += [f"    {n};" for n in imports]
    out += ["    tfp_*;", "  local:", "    *;", "};", ""]
    return "\n".join(out)


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir")
    ap.add_argument("--list-imports", action="store_true")
    ap.add_argument("sources", nargs="*", help="hand-written src/shims/*.cc")
    args = ap.parse_args(argv)
    imports = import_functions()
    if args.list_imports:
        print("\n".join(imports))
        return 0
    if not args.outdir:
        ap.error("--outdir is required")
    model = Model()
    implemented = hand_implemented(args.sources)
    unknown = sorted(implemented - set(imports))
    if unknown:
        raise SystemExit("gen_shims: TFP_SHIM_IMPLEMENTED names no import function: "
                         + ", ".join(unknown))
    os.makedirs(args.outdir, exist_ok=True)
    write_if_changed(os.path.join(args.outdir, "shim_unimplemented.cc"),
                     gen_unimplemented(model, imports, implemented))
    write_if_changed(os.path.join(args.outdir, "shim_releases.h"), gen_releases(model, imports))
    write_if_changed(os.path.join(args.outdir, "shims.map"), gen_map(imports))
    write_if_changed(os.path.join(args.outdir, "plugin_layouts.h"), gen_layouts(model))
    write_if_changed(os.path.join(args.outdir, "legacy_declarations.h"), gen_legacy(model, imports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
