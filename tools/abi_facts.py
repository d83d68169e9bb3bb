#!/usr/bin/env python3
"""Measure the plugin-facing C ABI of real TensorFlow releases.

For each release this downloads the `tensorflow-cpu` wheel (or `tensorflow`
where no cpu wheel exists) with `pip download --no-deps`, reads the headers it
ships under tensorflow/include/, parses them with libclang for x86-64 Linux,
lists the TF_/SE_/TP_/TFNPD_ symbols its libraries export, and writes
abi/facts/tf-<release>.json. Only facts are written (names, types, offsets,
sizes, values, declaration order) -- never TensorFlow's source text.

Needs the `libclang` package from PyPI (`./dev facts` installs it into a tools
venv outside the repo) and binutils' `nm`.

  tools/abi_facts.py                    # every release 2.5 .. newest
  tools/abi_facts.py --releases 2.16    # one release
  tools/abi_facts.py --check            # re-measure, diff against abi/facts
  tools/abi_facts.py --installed SITE_PACKAGES/tensorflow --out facts.json
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACTS_DIR = os.path.join(REPO, "abi", "facts")
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "tfplugin", "wheels")
FIRST_RELEASE = (2, 5)

# The headers a plugin author includes (relative to tensorflow/include); the
# list lives in abi/contracts.toml with the rest of the hand-kept ABI facts.
with open(os.path.join(REPO, "abi", "contracts.toml"), "rb") as _f:
    PLUGIN_HEADERS = tomllib.load(_f)["plugin_headers"]

# Libraries TensorFlow's Python module loads into the global symbol namespace,
# i.e. the ones whose exports a plugin's undefined TF_* symbols bind to.
EXPORTING_LIBS = re.compile(
    r"^tensorflow/(libtensorflow_framework\.so(\.\d+)?|libtensorflow_cc\.so(\.\d+)?|"
    r"python/_pywrap_tensorflow_internal\.so|python/lib_pywrap_tensorflow_common\.so)$")
# TSL_: tsl_status.h (2.12+) declares TSL_* status functions that TF exports.
EXPORT_PREFIXES = ("TF_", "SE_", "TP_", "TFNPD_", "TSL_")

# Wheel tags to try, newest first: old releases only ship for old Pythons.
PYTHONS = ["3.11", "3.10", "3.9", "3.8"]
PLATFORMS = ["manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux2010_x86_64"]
PACKAGES = ["tensorflow-cpu", "tensorflow"]


# ---------------------------------------------------------------- wheels ---

def release_key(r):
    return tuple(int(x) for x in r.split("."))


def available_releases():
    """Minor releases >= 2.5 that PyPI has for any of our Python versions."""
    found = set()
    for pkg in PACKAGES:
        for py in PYTHONS:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--python-version", py, "-d", tempfile.gettempdir(), f"{pkg}==0.0.0.invalid"]
            for p in PLATFORMS:
                cmd[5:5] = ["--platform", p]
            out = subprocess.run(cmd, capture_output=True, text=True).stderr
            m = re.search(r"from versions: ([^)]*)\)", out)
            for v in (m.group(1).split(", ") if m else []):
                mm = re.match(r"^(\d+)\.(\d+)\.\d+(\.post\d+)?$", v.strip())
                if mm and (int(mm.group(1)), int(mm.group(2))) >= FIRST_RELEASE:
                    found.add(f"{mm.group(1)}.{mm.group(2)}")
    return sorted(found, key=release_key)


def cached_wheel(release):
    """Newest cached wheel of this minor release, preferring tensorflow-cpu."""
    for pkg in ("tensorflow_cpu", "tensorflow"):
        hits = glob.glob(os.path.join(CACHE, f"{pkg}-{release}.*.whl"))
        hits = [h for h in hits if re.match(rf"{pkg}-{re.escape(release)}\.\d+(\.post\d+)?-",
                                              os.path.basename(h))]
        if hits:
            return sorted(hits, key=lambda h: [int(x) for x in re.findall(r"\d+", os.path.basename(h).split("-")[1])])[-1]
    return None


def fetch_wheel(release):
    """Return (path, None) or (None, reason)."""
    os.makedirs(CACHE, exist_ok=True)
    if cached_wheel(release):
        return cached_wheel(release), None
    reasons = []
    for pkg in PACKAGES:
        for py in PYTHONS:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--python-version", py, "-d", CACHE, f"{pkg}=={release}.*"]
            for p in PLATFORMS:
                cmd[5:5] = ["--platform", p]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0 and cached_wheel(release):
                return cached_wheel(release), None
            last = (r.stderr.strip().splitlines() or ["no output"])[-1]
            reasons.append(f"{pkg} py{py}: {last}")
    return None, "; ".join(reasons[-2:])


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class WheelTree:
    """The wheel's `tensorflow/` tree, extracted lazily into a temp dir."""

    def __init__(self, wheel):
        self.zip = zipfile.ZipFile(wheel)
        self.names = set(self.zip.namelist())
        self.root = tempfile.mkdtemp(prefix="tfplugin-facts-")
        self.include = os.path.join(self.root, "tensorflow", "include")

    def extract_headers(self, start):
        """Extract `start` and every quoted #include it reaches that the wheel has."""
        todo, seen = list(start), set()
        while todo:
            rel = todo.pop()
            member = "tensorflow/include/" + rel
            if rel in seen or member not in self.names:
                continue
            seen.add(rel)
            self.zip.extract(member, self.root)
            text = self.zip.read(member).decode("utf-8", "replace")
            todo += re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)
        return seen

    def exporting_libs(self):
        for name in sorted(self.names):
            if EXPORTING_LIBS.match(name):
                path = self.zip.extract(name, self.root)
                yield name[len("tensorflow/"):], path
                os.unlink(path)  # only one large library on disk at a time

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


# --------------------------------------------------------------- symbols ---

REQUIRED_FIELD = re.compile(rb"'(\w+)' field in (\w+) must be set\.")
# Each pattern starts with a literal so scanning a 800 MB library stays fast;
# the struct name before " struct size member" is read backwards by hand.
STRUCT_SIZE_CHECKS = [
    re.compile(rb"Expected initialized `(\w+)` structure with `struct_size` field set to (\w+)\."),
    re.compile(rb"struct_size field in (\w+) must be set to (\w+)\."),
]
IDENT_BYTES = {bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"}
STRUCT_SIZE_MEMBER = re.compile(rb" struct size member must be set to (\w+)")


def tf_checks(path, checks):
    """What TF validates when a plugin registers, from its error-message strings.

    TF reports a missing callback as "'<field>' field in <struct> must be set."
    and a zero struct_size naming the size macro, so the strings in the binary
    are the list of fields that release requires.
    """
    with open(path, "rb") as f:
        data = f.read()
    for m in REQUIRED_FIELD.finditer(data):
        field, struct = m.group(1).decode(), m.group(2).decode()
        fields = checks["required_fields"].setdefault(struct, [])
        if field not in fields:
            fields.append(field)
    for pattern in STRUCT_SIZE_CHECKS:
        for m in pattern.finditer(data):
            checks["struct_size_checked"][m.group(1).decode()] = m.group(2).decode()
    for m in STRUCT_SIZE_MEMBER.finditer(data):
        start = m.start()
        while start > 0 and data[start - 1:start] in IDENT_BYTES:
            start -= 1
        checks["struct_size_checked"][data[start:m.start()].decode()] = m.group(1).decode()
    if b"[A-Z][A-Z_]*" in data:
        checks["name_pattern"] = "[A-Z][A-Z_]*"


def exported_symbols(libs):
    """{symbol: {"kind": "function"|"object", "libs": [...]}} for our prefixes."""
    out = {}
    checks = {"required_fields": {}, "struct_size_checked": {}, "name_pattern": None}
    for libname, path in libs:
        tf_checks(path, checks)
        r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                           check=True)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) != 3 or not parts[2].startswith(EXPORT_PREFIXES):
                continue
            kind = "function" if parts[1] in "TtWi" else "object"
            name = parts[2].split("@")[0]
            entry = out.setdefault(name, {"kind": kind, "libs": []})
            if libname not in entry["libs"]:
                entry["libs"].append(libname)
    for struct in checks["required_fields"]:
        checks["required_fields"][struct].sort()
    checks["required_fields"] = dict(sorted(checks["required_fields"].items()))
    checks["struct_size_checked"] = dict(sorted(checks["struct_size_checked"].items()))
    return dict(sorted(out.items())), checks


# --------------------------------------------------------------- headers ---

def clang_index():
    import clang.cindex as ci
    return ci


def clang_args(include):
    resource = subprocess.run(["clang", "-print-resource-dir"], capture_output=True,
                              text=True).stdout.strip()
    args = ["-x", "c", "-std=gnu11", "--target=x86_64-pc-linux-gnu", "-I", include]
    if resource:
        args += ["-isystem", os.path.join(resource, "include")]
    return args


def parse(ci, source, include, name="facts.c"):
    idx = ci.Index.create()
    tu = idx.parse(name, args=clang_args(include), unsaved_files=[(name, source)],
                   options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    return tu, errors


def rel_file(cursor, include):
    f = cursor.location.file if hasattr(cursor, "location") else cursor
    if f is None:
        return None
    path = os.path.realpath(f.name)
    root = os.path.realpath(include) + os.sep
    return path[len(root):] if path.startswith(root) else None


ANON = re.compile(r"\((?:unnamed|anonymous) (struct|union|enum) at [^)]*\)")


def spell(t):
    """Type spelling without the temp path clang puts in anonymous type names."""
    return ANON.sub(r"anonymous \1", t.spelling)


def tokens(cursor):
    return " ".join(t.spelling for t in cursor.get_tokens())


def fn_params(ci, cursor):
    return [{"name": c.spelling, "type": c.type.spelling}
            for c in cursor.get_children() if c.kind == ci.CursorKind.PARM_DECL]


def record_facts(ci, cursor):
    fields = []
    for f in cursor.type.get_fields():
        field = {"name": f.spelling, "type": spell(f.type),
                 "offset": f.get_field_offsetof() // 8, "size": f.type.get_size()}
        pointee = f.type.get_canonical()
        if pointee.kind == ci.TypeKind.POINTER and \
                pointee.get_pointee().kind in (ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO):
            field["params"] = [p["name"] for p in fn_params(ci, f)]
        if f.is_bitfield():
            field["bitfield_width"] = f.get_bitfield_width()
        decl = f.type.get_declaration()
        if decl.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL) and decl.is_anonymous():
            # An unnamed struct/union member: its layout is part of this record's.
            field["record"] = {"kind": "union" if decl.kind == ci.CursorKind.UNION_DECL else "struct",
                               **record_facts(ci, decl)}
        fields.append(field)
    return {"size": cursor.type.get_size(), "align": cursor.type.get_align(), "fields": fields}


TAG_ONLY = re.compile(r"must use 'struct' tag to refer to type '(\w+)'")


def header_facts(ci, include, headers):
    """Walk every declaration the plugin headers (and what they include) make."""
    source = "".join(f'#include "{h}"\n' for h in headers)
    tu, errors = parse(ci, source, include)
    # Some headers (ops.h) forward-declare `struct X;` and then write `X*`:
    # valid C++ only. Measure them as C with the missing typedefs supplied
    # (outside TF's files, so not recorded as TF declarations) and record the
    # names, so our headers can add the typedefs.
    tag_only = set()
    while True:  # clang stops reporting after a few errors: repeat until none new
        new = set(m for e in errors for m in TAG_ONLY.findall(e)) - tag_only
        if not new:
            break
        tag_only |= new
        pre = "".join(f"typedef struct {n} {n};\n" for n in sorted(tag_only))
        tu, errors = parse(ci, pre + source, include)
    tag_only = sorted(tag_only)
    if errors:
        raise RuntimeError("headers do not parse as C: " + "; ".join(errors[:5]))

    files, records, enums, functions, typedefs, macros, variables = {}, {}, {}, {}, {}, {}, {}
    K = ci.CursorKind

    def declare(path, kind, name, line):
        files.setdefault(path, []).append({"kind": kind, "name": name, "line": line})

    for c in tu.cursor.get_children():
        path = rel_file(c, include)
        if path is None:
            continue
        line = c.location.line
        if c.kind == K.STRUCT_DECL and c.is_definition():
            name = c.spelling if not c.is_anonymous() else None
            if name and name not in records:
                records[name] = record_facts(ci, c)
                records[name]["tag"] = name
                declare(path, "struct", name, line)
        elif c.kind == K.STRUCT_DECL and not c.is_definition():
            declare(path, "struct_forward", c.spelling, line)
        elif c.kind == K.ENUM_DECL and c.is_definition():
            name = c.spelling if not c.is_anonymous() else None
            consts = {e.spelling: e.enum_value for e in c.get_children()
                      if e.kind == K.ENUM_CONSTANT_DECL}
            entry = {"underlying": c.enum_type.spelling, "constants": consts}
            if name:
                enums[name] = entry
                declare(path, "enum", name, line)
            else:
                enums.setdefault(f"<anonymous@{path}:{line}>", entry)
        elif c.kind == K.TYPEDEF_DECL:
            under = c.underlying_typedef_type
            decl = under.get_declaration()
            entry = {"type": spell(under)}
            if decl.kind in (K.STRUCT_DECL, K.ENUM_DECL) and decl.is_anonymous() \
                    and decl.is_definition():
                kind = "struct" if decl.kind == K.STRUCT_DECL else "enum"
                entry = {"type": f"anonymous {kind}"}
                if kind == "struct":
                    records[c.spelling] = record_facts(ci, decl)
                    records[c.spelling]["tag"] = None
                else:
                    anon = f"<anonymous@{path}:{decl.location.line}>"
                    enums[c.spelling] = enums.pop(anon, {
                        "underlying": decl.enum_type.spelling,
                        "constants": {e.spelling: e.enum_value for e in decl.get_children()}})
                    enums[c.spelling]["tag"] = None
            elif decl.kind == K.STRUCT_DECL:
                entry["tag_kind"] = "struct"
            typedefs[c.spelling] = entry
            declare(path, "typedef", c.spelling, line)
        elif c.kind == K.FUNCTION_DECL:
            proto = c.type.kind == ci.TypeKind.FUNCTIONPROTO
            # A static function is code in the header, never an import; one
            # may be declared before (or after) its definition, so once static
            # always static.
            static = c.storage_class == ci.StorageClass.STATIC or \
                functions.get(c.spelling, {}).get("inline", False)
            functions[c.spelling] = {
                "header": path, "return": spell(c.result_type),
                "inline": static,
                "params": fn_params(ci, c),
                "variadic": bool(proto and c.type.is_function_variadic()),
                "prototype": proto,
            }
            declare(path, "function", c.spelling, line)
        elif c.kind == K.VAR_DECL:
            toks = [t.spelling for t in c.get_tokens()]
            init = " ".join(toks[toks.index("=") + 1:]).rstrip(" ;") if "=" in toks else None
            variables[c.spelling] = {"header": path, "type": spell(c.type), "init": init}
            declare(path, "variable", c.spelling, line)
        elif c.kind == K.MACRO_DEFINITION:
            toks = [t.spelling for t in c.get_tokens()]
            name = toks[0]
            if re.match(r"^[A-Z0-9_]+_H_?$", name) and len(toks) == 1:
                continue  # include guard
            function_like = len(toks) > 1 and toks[1] == "(" and \
                _adjacent(c, toks)
            macros[name] = {"header": path, "function_like": function_like,
                            "tokens": " ".join(toks[1:])}
            declare(path, "macro", name, line)
    for path in files:
        files[path].sort(key=lambda d: d["line"])
    # Which TF header includes which (plugin code relies on transitive
    # includes): every #include directive, system headers in <>.
    includes, todo = {}, list(headers)
    while todo:
        path = todo.pop(0)
        if path in includes or not os.path.exists(os.path.join(include, path)):
            continue
        includes[path] = []
        with open(os.path.join(include, path), errors="replace") as f:
            for kind, target in re.findall(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', f.read(), re.M):
                if kind == '"' and not os.path.exists(os.path.join(include, target)):
                    continue
                includes[path].append(target if kind == '"' else f"<{target}>")
                if kind == '"':
                    todo.append(target)
    return {"files": dict(sorted(files.items())), "struct_tag_only": tag_only,
            "includes": dict(sorted(includes.items())), "records": dict(sorted(records.items())),
            "enums": dict(sorted((k, v) for k, v in enums.items() if not k.startswith("<"))),
            "functions": dict(sorted(functions.items())),
            "typedefs": dict(sorted(typedefs.items())), "macros": dict(sorted(macros.items())),
            "variables": dict(sorted(variables.items()))}


def _adjacent(cursor, toks):
    """A macro is function-like iff '(' directly follows its name (no space)."""
    t = list(cursor.get_tokens())
    return len(t) > 1 and t[1].spelling == "(" and \
        t[1].extent.start.offset == t[0].extent.end.offset


def evaluate_constants(ci, include, headers, exprs):
    """Value of each integer constant expression, read back as an array size.

    Each expression is tried as `(E) + 1` and as `1 + (E)`: a macro that names a
    type (`unsigned char`) turns the first into a cast and fails the second, so
    only real constants get a value.
    """
    names = sorted(exprs)
    src = "".join(f'#include "{h}"\n' for h in headers)
    for i, n in enumerate(names):
        src += f"typedef char tfp_eval_a{i}[({exprs[n]}) + 1];\n"
        src += f"typedef char tfp_eval_b{i}[1 + ({exprs[n]})];\n"
    tu, _ = parse(ci, src, include, "eval.c")
    sizes = {}
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.TYPEDEF_DECL and c.spelling.startswith("tfp_eval_"):
            sizes[c.spelling[len("tfp_eval_"):]] = c.underlying_typedef_type.get_size()
    values = {}
    for i, n in enumerate(names):
        a, b = sizes.get(f"a{i}", -1), sizes.get(f"b{i}", -1)
        if a > 0 and a == b:
            values[n] = a - 1
    return values


def measure(include, headers, libs):
    ci = clang_index()
    present = [h for h in headers if os.path.exists(os.path.join(include, h))]
    facts = header_facts(ci, include, present)
    exprs = {}
    for name, m in facts["macros"].items():
        if not m["function_like"] and m["tokens"] and '"' not in m["tokens"]:
            exprs[name] = name
    for name, v in facts["variables"].items():
        if v["init"]:
            exprs[name] = v["init"]
    values = evaluate_constants(ci, include, present, exprs)
    for name, value in values.items():
        (facts["macros"].get(name) or facts["variables"][name])["value"] = value
    facts["plugin_headers"] = present
    facts["missing_headers"] = [h for h in headers if h not in present]
    facts["exports"], facts["tf_checks"] = exported_symbols(libs)
    return facts


# ----------------------------------------------------------------- main ---

def facts_for_release(release):
    wheel, reason = fetch_wheel(release)
    if not wheel:
        return None, reason
    tree = WheelTree(wheel)
    try:
        tree.extract_headers(PLUGIN_HEADERS)
        facts = measure(tree.include, PLUGIN_HEADERS, tree.exporting_libs())
    finally:
        tree.close()
    base = os.path.basename(wheel)
    head = {"release": release, "version": base.split("-")[1],
            "wheel": {"file": base, "sha256": sha256(wheel)}, "target": "x86_64-linux-gnu"}
    return {**head, **facts}, None


def facts_for_installed(tf_dir):
    """Facts of an installed TensorFlow package directory (site-packages/tensorflow)."""
    include = os.path.join(tf_dir, "include")
    libs = []
    for root, _, names in os.walk(tf_dir):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), os.path.dirname(tf_dir))
            if EXPORTING_LIBS.match(rel):
                libs.append((rel[len("tensorflow/"):], os.path.join(root, n)))
    head = {}
    # The distribution that installed this package (tensorflow, tensorflow-cpu,
    # ...) is the dist-info next to it whose RECORD lists tensorflow/__init__.py.
    for meta in sorted(glob.glob(os.path.join(os.path.dirname(tf_dir), "*.dist-info"))):
        try:
            with open(os.path.join(meta, "RECORD"), errors="replace") as f:
                if not any(line.startswith("tensorflow/__init__.py,") for line in f):
                    continue
            with open(os.path.join(meta, "METADATA"), errors="replace") as f:
                version = re.search(r"^Version:\s*(\S+)", f.read(), re.M).group(1)
        except (OSError, AttributeError):
            continue
        head = {"release": ".".join(version.split(".")[:2]), "version": version}
        break
    return {**head, **measure(include, PLUGIN_HEADERS, sorted(libs))}


def dump(obj):
    return json.dumps(obj, indent=1, sort_keys=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", help="comma-separated minor releases (default: all from 2.5)")
    ap.add_argument("--out", default=FACTS_DIR, help="facts directory, or file with --installed")
    ap.add_argument("--check", action="store_true",
                    help="re-measure and report any difference from the committed facts")
    ap.add_argument("--installed", metavar="TF_DIR",
                    help="measure an installed tensorflow package directory instead of wheels")
    args = ap.parse_args()

    if args.installed:
        with open(args.out, "w") as f:
            f.write(dump(facts_for_installed(args.installed)))
        return 0

    releases = args.releases.split(",") if args.releases else available_releases()
    out = tempfile.mkdtemp() if args.check else args.out
    os.makedirs(out, exist_ok=True)
    unavailable, status = {}, 0
    for rel in releases:
        facts, reason = facts_for_release(rel)
        if facts is None:
            unavailable[rel] = reason
            print(f"tf-{rel}: unavailable: {reason}", file=sys.stderr)
            continue
        path = os.path.join(out, f"tf-{rel}.json")
        with open(path, "w") as f:
            f.write(dump(facts))
        print(f"tf-{rel}: {facts['version']}: {len(facts['records'])} structs, "
              f"{len(facts['functions'])} functions, {len(facts['exports'])} exports")
        if args.check:
            committed = os.path.join(FACTS_DIR, f"tf-{rel}.json")
            same = os.path.exists(committed) and open(committed).read() == dump(facts)
            print(f"  {'reproduced' if same else 'DIFFERS from'} {committed}")
            status |= 0 if same else 1
    if not args.releases and not args.check:
        with open(os.path.join(out, "unavailable.json"), "w") as f:
            f.write(dump(unavailable))
    return status


if __name__ == "__main__":
    sys.exit(main())
