#!/usr/bin/env python3
"""tfplugin's ABI model: measured facts + hand-kept contracts, joined once.

Every consumer (header generator, docs, tests, validator tables) reads the ABI
through this module or through the description it writes,
abi/tfplugin-abi.json, so there is one source of truth:

  abi/facts/tf-<release>.json   measured from real wheels (tools/abi_facts.py)
  abi/contracts.toml            what measurement cannot tell
  abi/tfplugin-abi.json         the joined description (this module writes it)

  tools/abi_model.py            rewrite abi/tfplugin-abi.json
  tools/abi_model.py --check    exit 1 if it is not up to date
  tools/abi_model.py --list-releases

Callback contracts ([callbacks."Struct.field"] in abi/contracts.toml) are
checked against the facts here: every callback field of a family marked
`callback_contracts = true`, in any measured release, and that family's entry
point need one, and each must name a real callback. A gap either way is a
ContractError naming the callback, and no description is written.
"""

import argparse
import glob
import json
import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACTS_DIR = os.path.join(REPO, "abi", "facts")
CONTRACTS = os.path.join(REPO, "abi", "contracts.toml")
DESCRIPTION = os.path.join(REPO, "abi", "tfplugin-abi.json")
SCHEMA_VERSION = 1

# What each [callbacks."..."] table in contracts.toml must answer, in order.
CONTRACT_KEYS = ("summary", "sync", "threads", "status", "ownership", "errors")
# Optional: what a callback does to a handle's life, where its C types cannot
# tell (a `SP_Stream *` is an out parameter, but only the contract says that
# destroy_stream ends the stream's life). "creates KIND" or "destroys KIND";
# the validation layer (tools/gen_callback_table.py) tracks handles by it.
OPTIONAL_CONTRACT_KEYS = ("lifecycle",)
HANDLE_KINDS = ("stream", "event", "timer", "device_memory", "host_memory", "unified_memory")
SYNC_VALUES = ("sync", "async")


class ContractError(ValueError):
    """abi/contracts.toml's callback contracts and the measured facts disagree."""


def release_key(release):
    return tuple(int(x) for x in release.split("."))


def release_ranges(releases, all_releases):
    """['2.5','2.6','2.9'] -> '2.5-2.6, 2.9' (runs over the known releases)."""
    idx = [all_releases.index(r) for r in sorted(releases, key=release_key)]
    runs, start = [], None
    for n, i in enumerate(idx):
        if start is None:
            start = i
        if n + 1 == len(idx) or idx[n + 1] != i + 1:
            a, b = all_releases[start], all_releases[i]
            runs.append(a if a == b else f"{a}-{b}")
            start = None
    return ", ".join(runs)


def signature(fn, name):
    params = ", ".join(p["type"] for p in fn["params"]) or "void"
    if fn.get("variadic"):
        params += ", ..."
    return f"{fn['return']} {name}({params})"


def abi_signature(sig):
    """A signature as the calling convention sees it: `const` changes nothing."""
    return re.sub(r"\bconst\s+", "", sig)


def is_callback(field_type):
    return "(*)" in field_type


def takes_stream(type_or_params):
    """Whether a callback type (or a parameter type list) has an SP_Stream parameter."""
    text = type_or_params if isinstance(type_or_params, str) else ", ".join(type_or_params)
    return re.search(r"\bSP_Stream\b(?!\s*\*)", text) is not None


class Model:
    def __init__(self, facts_dir=FACTS_DIR, contracts_path=CONTRACTS):
        self.facts = {}
        for path in glob.glob(os.path.join(facts_dir, "tf-*.json")):
            with open(path) as f:
                facts = json.load(f)
            self.facts[facts["release"]] = facts
        self.releases = sorted(self.facts, key=release_key)
        with open(contracts_path, "rb") as f:
            self.contracts = tomllib.load(f)
        unavailable = os.path.join(facts_dir, "unavailable.json")
        self.unavailable = json.load(open(unavailable)) if os.path.exists(unavailable) else {}

    # ------------------------------------------------------------ lookups --

    @property
    def newest(self):
        return self.releases[-1]

    def family_of_header(self, header):
        for name, fam in self.contracts["families"].items():
            if header in fam["headers"]:
                return name
        return "core"

    def struct_header(self, rel, struct):
        for path, decls in self.facts[rel]["files"].items():
            for d in decls:
                if d["name"] == struct and d["kind"] in ("struct", "typedef"):
                    return path
        return None

    def size_macro(self, rel, struct):
        """The *_STRUCT_SIZE macro (or const variable) measuring this struct."""
        f = self.facts[rel]
        for table in (f["macros"], f["variables"]):
            for name, m in table.items():
                expr = m.get("tokens") or m.get("init") or ""
                if name.endswith("STRUCT_SIZE") and re.match(
                        rf"^TF_OFFSET_OF_END \( {re.escape(struct)} ,", expr):
                    return name, m.get("value"), expr.split(",")[1].strip(" )")
        return None, None, None

    def required_fields(self, rel, struct):
        """[(field, condition or None)] TF insists on when it validates `struct`."""
        measured = self.facts[rel].get("tf_checks", {}).get("required_fields", {}).get(struct, [])
        cond = {}
        for c in self.contracts.get("conditional_required", []):
            if c["struct"] == struct:
                for field in c["fields"]:
                    cond[field] = c["when"]
        return [(f, cond.get(f)) for f in measured]

    def function_role(self, rel, name):
        fn = self.facts[rel]["functions"][name]
        if name in self.contracts["entry_points"]:
            return "entry_point"
        if fn.get("inline"):
            return "inline"
        return "import"

    def plugin_functions(self, rel):
        """Functions a plugin root for `rel` declares: the curated view of c_api.h,
        without TF's static inline string helpers."""
        c_api = self.contracts["c_api"]
        out = {}
        for name, fn in self.facts[rel]["functions"].items():
            if fn["header"] == c_api["header"] and name not in c_api["functions"]:
                continue
            if fn.get("inline"):
                continue
            out[name] = fn
        return out

    # --------------------------------------------------- callback contracts --

    def callback_fields(self):
        """{"Struct.field": {"family", "type", "releases"}} for every callback field
        of every measured struct (type as of the newest release that has it)."""
        out = {}
        for rel in self.releases:
            for name, rec in self.facts[rel]["records"].items():
                header = self.struct_header(rel, name)
                family = self.family_of_header(header) if header else None
                for x in rec["fields"]:
                    if is_callback(x["type"]):
                        cb = out.setdefault(f"{name}.{x['name']}", {"family": family,
                                                                   "releases": []})
                        cb["type"] = x["type"]
                        cb["releases"].append(rel)
        return out

    def callback_contracts(self):
        """{"Struct.field" or entry point: contract}, checked against the facts.

        Raises ContractError listing every callback of a family with
        `callback_contracts = true` (or its entry point) that has no contract,
        and every contract naming no measured callback or entry point, or whose
        keys or `sync` value are wrong."""
        table = self.contracts.get("callbacks", {})
        fields = self.callback_fields()
        structs = {n for r in self.releases for n in self.facts[r]["records"]}
        covered = [f for f, spec in self.contracts["families"].items()
                   if spec.get("callback_contracts")]
        needed = {k: f"a callback field of {k.split('.')[0]} in "
                     f"{release_ranges(v['releases'], self.releases)}"
                  for k, v in fields.items() if v["family"] in covered}
        for fam in covered:
            ep = self.contracts["families"][fam]["entry_point"]
            needed[ep] = f"the entry point of the {fam} family"
        problems = [f'no contract for "{k}" ({why}): add [callbacks."{k}"] to '
                    "abi/contracts.toml" for k, why in sorted(needed.items()) if k not in table]
        for key, contract in table.items():
            where = f'[callbacks."{key}"]'
            params = None
            if "." in key:
                struct, field = key.split(".", 1)
                if struct not in structs:
                    problems.append(f"{where} names struct {struct}, which no measured "
                                    "release has")
                    continue
                if key not in fields:
                    known = any(x["name"] == field for r in self.releases
                                for x in self.facts[r]["records"].get(struct, {})
                                .get("fields", []))
                    problems.append(f"{where}: {struct} has {'no callback' if known else 'no'} "
                                    f"field {field} in any measured release")
                    continue
                params = fields[key]["type"]
            else:
                fn = next((self.facts[r]["functions"][key] for r in reversed(self.releases)
                           if key in self.facts[r]["functions"]), None)
                if key not in self.contracts["entry_points"] or fn is None:
                    problems.append(f"{where} names neither a Struct.field nor a measured "
                                    "entry point")
                    continue
                params = [p["type"] for p in fn["params"]]
            if not isinstance(contract, dict):
                problems.append(f"{where} is not a table")
                continue
            missing = [k for k in CONTRACT_KEYS if not str(contract.get(k, "")).strip()]
            unknown = sorted(set(contract) - set(CONTRACT_KEYS) - set(OPTIONAL_CONTRACT_KEYS))
            if missing:
                problems.append(f"{where} lacks {', '.join(missing)}")
            if unknown:
                problems.append(f"{where} has unknown keys {', '.join(unknown)} "
                                f"(expected {', '.join(CONTRACT_KEYS)})")
            life = contract.get("lifecycle")
            if life is not None:
                verb, _, kind = str(life).partition(" ")
                if verb not in ("creates", "destroys") or kind not in HANDLE_KINDS:
                    problems.append(f'{where}: lifecycle = "{life}", expected "creates KIND" or '
                                    f'"destroys KIND" with KIND one of {", ".join(HANDLE_KINDS)}')
            sync = contract.get("sync")
            if sync is not None and sync not in SYNC_VALUES:
                problems.append(f'{where}: sync = "{sync}", expected "sync" or "async"')
            elif sync == "async" and not takes_stream(params):
                problems.append(f'{where}: sync = "async" but it takes no SP_Stream to '
                                "enqueue on")
        if problems:
            raise ContractError("abi/contracts.toml callback contracts do not match the "
                                "measured facts:\n  - " + "\n  - ".join(problems))
        return {k: {c: table[k][c] for c in CONTRACT_KEYS + OPTIONAL_CONTRACT_KEYS
                    if c in table[k]} for k in sorted(table)}

    # --------------------------------------------------------- revisions --

    def _family_shape(self, rel, family):
        """Everything in a family whose change breaks binaries built before it."""
        f = self.facts[rel]
        structs = {}
        for name, rec in f["records"].items():
            header = self.struct_header(rel, name)
            if header and self.family_of_header(header) == family:
                structs[name] = (rec["size"], rec["align"],
                                 tuple((x["name"], x["type"], x["offset"], x["size"])
                                       for x in rec["fields"]))
        enums = {}
        for name, e in f["enums"].items():
            decl_header = next((p for p, ds in f["files"].items()
                                for d in ds if d["name"] == name), None)
            if decl_header and self.family_of_header(decl_header) == family:
                enums[name] = e["constants"]
        functions = {name: abi_signature(signature(fn, name)) for name, fn in self.plugin_functions(rel).items()
                     if self.family_of_header(fn["header"]) == family}
        return structs, enums, functions

    @staticmethod
    def _struct_changes(name, old, new):
        changes = []
        old_fields = {x[0]: x for x in old[2]}
        new_fields = {x[0]: x for x in new[2]}
        order_old = [x[0] for x in old[2]]
        order_new = [x[0] for x in new[2]]
        added = [n for n in order_new if n not in old_fields]
        removed = [n for n in order_old if n not in new_fields]
        for n in added:
            pos = order_new.index(n)
            after = order_new[pos + 1:]
            kind = "appended" if all(a in added for a in after) else "inserted"
            changes.append({"struct": name, "change": f"field {kind}", "field": n,
                            "breaks": kind == "inserted"})
        for n in removed:
            changes.append({"struct": name, "change": "field removed", "field": n,
                            "breaks": True})
        for n in order_new:
            if n in old_fields and n not in added:
                o, w = old_fields[n], new_fields[n]
                if o[1] != w[1]:
                    changes.append({"struct": name, "change": "field type changed", "field": n,
                                    "from": o[1], "to": w[1], "breaks": True})
                elif o[2] != w[2] and not any(c["change"] == "field inserted" and c["struct"] == name
                                              for c in changes):
                    changes.append({"struct": name, "change": "field moved", "field": n,
                                    "from": o[2], "to": w[2], "breaks": True})
        moved = [n for n in order_new if n in old_fields and old_fields[n][2] != new_fields[n][2]]
        if moved and any(c["change"] == "field inserted" and c["struct"] == name for c in changes):
            changes.append({"struct": name, "change": "fields moved", "fields": moved,
                            "breaks": True})
        if old[0] != new[0]:
            changes.append({"struct": name, "change": "size changed", "from": old[0],
                            "to": new[0], "breaks": False})
        return changes

    def revisions(self):
        """{family: [{"id", "releases", "changes"}]}: releases sharing a shape.

        Computed once per Model: every include root and the description ask."""
        if getattr(self, "_revisions", None) is None:
            self._revisions = self._derive_revisions()
        return self._revisions

    def _derive_revisions(self):
        out = {}
        for family, spec in self.contracts["families"].items():
            revs, prev = [], None
            for rel in self.releases:
                shape = self._family_shape(rel, family)
                changes = []
                if prev is not None:
                    (ps, pe, pf), (cs, ce, cf) = prev, shape
                    for name in sorted(set(ps) & set(cs)):
                        if ps[name] != cs[name]:
                            changes += self._struct_changes(name, ps[name], cs[name])
                    for name in sorted(set(pe) & set(ce)):
                        for const, value in pe[name].items():
                            if const in ce[name] and ce[name][const] != value:
                                changes.append({"enum": name, "change": "value changed",
                                                "constant": const, "from": value,
                                                "to": ce[name][const], "breaks": True})
                    for name in sorted(set(pf) & set(cf)):
                        if pf[name] != cf[name]:
                            changes.append({"function": name, "change": "signature changed",
                                            "from": pf[name], "to": cf[name], "breaks": True})
                if not shape[0] and not shape[1]:
                    prev = shape
                    continue  # family absent in this release
                if not revs or changes:
                    revs.append({"id": f"{spec['prefix']}{len(revs) + 1}", "releases": [rel],
                                 "changes": changes})
                else:
                    revs[-1]["releases"].append(rel)
                prev = shape
            out[family] = revs
        return out

    def revision_of(self, revisions, family, rel):
        for rev in revisions[family]:
            if rel in rev["releases"]:
                return rev["id"]
        return None

    # -------------------------------------------------------- description --

    def describe(self):
        contracts = self.callback_contracts()  # raises ContractError on drift
        revisions = self.revisions()
        rels = self.releases
        desc = {
            "schema_version": SCHEMA_VERSION,
            "note": "Generated by tools/abi_model.py from abi/facts/*.json and "
                    "abi/contracts.toml. Do not edit.",
            "target": "x86_64-linux-gnu",
            "releases": [],
            "unavailable_releases": self.unavailable,
            "families": {},
            "structs": {},
            "functions": {},
            "enums": {},
        }
        for rel in rels:
            f = self.facts[rel]
            desc["releases"].append({
                "release": rel, "version": f["version"], "wheel": f["wheel"]["file"],
                "revisions": {fam: self.revision_of(revisions, fam, rel)
                              for fam in self.contracts["families"]},
                "headers": sorted(f["files"]),
                "struct_size_checked_by_tf": f.get("tf_checks", {}).get("struct_size_checked", {}),
                "name_pattern": f.get("tf_checks", {}).get("name_pattern"),
            })
        for fam, spec in self.contracts["families"].items():
            desc["families"][fam] = {"title": spec["title"], "entry_point": spec["entry_point"],
                                     "revisions": revisions[fam]}

        # Structs: fields across releases, layouts grouped, requirements.
        names = sorted({n for r in rels for n in self.facts[r]["records"]})
        for name in names:
            present = [r for r in rels if name in self.facts[r]["records"]]
            header = self.struct_header(present[-1], name)
            fields, layouts = {}, []
            for r in present:
                rec = self.facts[r]["records"][name]
                for x in rec["fields"]:
                    fd = fields.setdefault(x["name"], {"name": x["name"], "types": {},
                                                       "since": r, "releases": []})
                    fd["releases"].append(r)
                    fd["types"].setdefault(x["type"], []).append(r)
                    if "params" in x:
                        fd["params"] = x["params"]
                macro, value, last = self.size_macro(r, name)
                layout = {"size": rec["size"], "align": rec["align"], "size_macro": macro,
                          "size_macro_value": value,
                          "fields": {x["name"]: [x["offset"], x["size"]] for x in rec["fields"]}}
                if layouts and {k: v for k, v in layouts[-1].items() if k != "releases"} == layout:
                    layouts[-1]["releases"].append(r)
                else:
                    layouts.append({"releases": [r], **layout})
            out_fields = []
            for fd in fields.values():
                entry = {"name": fd["name"], "since": fd["since"],
                         "releases": release_ranges(fd["releases"], rels)}
                if len(fd["types"]) == 1:
                    entry["type"] = next(iter(fd["types"]))
                else:
                    entry["type"] = list(fd["types"])[-1]
                    entry["type_history"] = [{"type": t, "releases": release_ranges(rs, rels)}
                                             for t, rs in fd["types"].items()]
                if is_callback(entry["type"]):
                    entry["callback"] = True
                    entry["params"] = fd.get("params", [])
                    if f"{name}.{fd['name']}" in contracts:
                        entry["contract"] = contracts[f"{name}.{fd['name']}"]
                req = {}
                for r in present:
                    for field, cond in self.required_fields(r, name):
                        if field == fd["name"]:
                            req.setdefault(cond or "always", []).append(r)
                if req:
                    entry["required_by_tf"] = [{"when": w, "releases": release_ranges(rs, rels)}
                                               for w, rs in req.items()]
                out_fields.append(entry)
            desc["structs"][name] = {
                "header": header, "family": self.family_of_header(header),
                "releases": release_ranges(present, rels),
                "struct_size_checked_by_tf": release_ranges(
                    [r for r in present if name in self.facts[r].get("tf_checks", {})
                     .get("struct_size_checked", {})], rels) or None,
                "fields": out_fields,
                "layouts": [{**lay, "releases": release_ranges(lay["releases"], rels)}
                            for lay in layouts],
            }

        # Functions: signature, where declared, where exported, role.
        fnames = sorted({n for r in rels for n in self.plugin_functions(r)})
        for name in fnames:
            declared = [r for r in rels if name in self.plugin_functions(r)]
            exported = [r for r in rels if name in self.facts[r]["exports"]]
            newest = self.facts[declared[-1]]["functions"][name]
            sigs = {}
            for r in declared:
                sigs.setdefault(signature(self.facts[r]["functions"][name], name), []).append(r)
            entry = {"header": newest["header"], "role": self.function_role(declared[-1], name),
                     "signature": list(sigs)[-1],
                     "declared": release_ranges(declared, rels),
                     "exported": release_ranges(exported, rels) or None}
            if len(sigs) > 1:
                entry["signature_history"] = [{"signature": s, "releases": release_ranges(rs, rels)}
                                              for s, rs in sigs.items()]
            gone = [r for r in declared if r not in exported]
            if entry["role"] == "import" and gone:
                entry["declared_but_not_exported"] = release_ranges(gone, rels)
            if entry["role"] == "import" and exported:
                # Which of TF's libraries define it, per release: a plugin
                # links the one that has all its imports (tfplugin-wheel).
                by_lib = {}
                for r in exported:
                    for lib in self.facts[r]["exports"][name]["libs"]:
                        by_lib.setdefault(lib, []).append(r)
                entry["exported_by"] = {lib: release_ranges(rs, rels)
                                        for lib, rs in sorted(by_lib.items())}
            if name in contracts:
                entry["contract"] = contracts[name]
            desc["functions"][name] = entry

        for name in sorted({n for r in rels for n in self.facts[r]["enums"]}):
            consts = {}
            for r in rels:
                for c, v in self.facts[r]["enums"].get(name, {}).get("constants", {}).items():
                    consts.setdefault(c, {"value": v, "since": r})
            desc["enums"][name] = {"constants": consts}
        return desc


def dump(obj):
    return json.dumps(obj, indent=1) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the description is stale")
    ap.add_argument("--list-releases", action="store_true",
                    help="print the supported releases, oldest first (for meson)")
    args = ap.parse_args()
    if args.list_releases:
        print("\n".join(Model().releases))
        return 0
    try:
        text = dump(Model().describe())
    except ContractError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.check:
        current = open(DESCRIPTION).read() if os.path.exists(DESCRIPTION) else ""
        if current != text:
            print(f"{DESCRIPTION} is stale: run tools/abi_model.py", file=sys.stderr)
            return 1
        print(f"{DESCRIPTION} is up to date")
        return 0
    with open(DESCRIPTION, "w") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(DESCRIPTION, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
