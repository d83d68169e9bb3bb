#!/usr/bin/env python3
"""Extract the op definitions of an installed TensorFlow into abi/ops.

Writes abi/ops/tf-<release>.txt: every op in TensorFlow's global op registry
(after `import tensorflow`), one per line, as the REGISTER_OP-style spec
strings libtfplugin_shims parses (src/shims/op_def.cc, ParseArgSpec and
ParseAttrSpec). Facts only: names, types, attrs, defaults, flags -- never
TensorFlow's summaries, descriptions or deprecation explanations.

Line format (tab-separated; empty fields left out; `|` separates specs):

  Name  in=a: T|b: T  out=product: T  attr=T: {float, half}|N: int >= 1
        flags=commutative,aggregate,stateful,allows_uninitialized_input
        deprecated=<graph version>

Spec syntax, as TensorFlow's OpDefBuilder reads it, plus the shims' forms
for values TensorFlow writes as text protos:
  inputs/outputs   "x: T", "x: N * T", "x: Tlist", "x: float", "x: Ref(T)"
  attrs            "name: type", "name: list(int) >= 1", "T: {float, int32}",
                   "padding: {'SAME', 'VALID'}", "name: type = default"
  defaults         ints 3; floats shortest round-trip %g (1e-05, 0.75, inf);
                   true/false; 'text' (C escapes, and | as \\174); DT_FLOAT;
                   shapes [2, ?] or ? (unknown rank); lists [1, 2];
                   tensors Tensor(DT_UINT8, [4], [255, 0, 0, 255]);
                   funcs by name 'f'
An op is skipped (and counted) only if a default has no such form (a tensor
of a type without one, a func carrying attrs, an attr placeholder).

Fields TensorFlow has that the shims' OpDef does not model are dropped and
counted: the args' experimental_full_type, is_distributed_communication,
control outputs.

TensorFlow runs in its own interpreter (a venv), as a subprocess running this
file with --child; this side only writes the file.

  tools/tf_opdefs.py [--python PATH] [--out FILE]
"""

import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PYTHON = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                              "tfplugin", "venv-tf2.21", "bin", "python")
# Distribution names TensorFlow is installed under, most specific first.
DISTRIBUTIONS = ["tensorflow-cpu", "tensorflow", "tensorflow-intel", "tf-nightly-cpu", "tf-nightly"]

# The data types a tensor default can be written in (the shims' parser reads
# these), and how their values are written.
TENSOR_KINDS = {
    "DT_BOOL": "bool", "DT_INT8": "int", "DT_UINT8": "int", "DT_INT16": "int",
    "DT_UINT16": "int", "DT_INT32": "int", "DT_UINT32": "int", "DT_INT64": "int",
    "DT_UINT64": "int", "DT_FLOAT": "float", "DT_DOUBLE": "double",
}
# AttrValue's field for each attr base type.
FIELDS = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type",
          "shape": "shape", "tensor": "tensor", "func": "func"}


class Inexpressible(Exception):
    """A default value the line format has no form for."""


# ------------------------------------------------------------- formatting ---
# Pure functions of the OpDef protobuf; they run in the child (TensorFlow's
# interpreter), and must agree with AttrValueText in src/shims/attr_value.cc.

def type_name(dt_enum_name):
    """DT_FLOAT -> float: TensorFlow's DataTypeString is the enum name's tail."""
    return dt_enum_name[3:].lower()


def quote(b):
    """A string value in single quotes with C escapes. `|` is escaped too so
    fields split on it; the shims' parser reads octal escapes."""
    out = []
    for c in b:
        ch = chr(c)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "|" or c < 0x20 or c >= 0x7f:
            out.append("\\%03o" % c)
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def format_float32(v):
    """Shortest %.<p>g text that reads back as the same float32."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    want = struct.pack("<f", v)
    # The shortest text among the precisions that round-trip: 10 not 1e+01.
    fits = [s for s in ("%.*g" % (p, v) for p in range(1, 10))
            if struct.pack("<f", float(s)) == want]
    return min(fits, key=len)


def format_double(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    fits = [s for s in ("%.*g" % (p, v) for p in range(1, 18)) if float(s) == v]
    return min(fits, key=len)


def format_shape(shape):
    if shape.unknown_rank:
        return "?"
    return "[" + ", ".join("?" if d.size < 0 else str(d.size) for d in shape.dim) + "]"


def format_tensor(t, types_pb2):
    from tensorflow.python.framework import tensor_util  # child only
    dt = types_pb2.DataType.Name(t.dtype)
    if dt not in TENSOR_KINDS:
        raise Inexpressible(f"tensor default of type {dt}")
    kind = TENSOR_KINDS[dt]
    values = tensor_util.MakeNdarray(t).flatten().tolist()
    if kind == "bool":
        vals = ["true" if v else "false" for v in values]
    elif kind == "int":
        vals = [str(int(v)) for v in values]
    elif kind == "float":
        vals = [format_float32(v) for v in values]
    else:
        vals = [format_double(v) for v in values]
    dims = "[" + ", ".join(str(d.size) for d in t.tensor_shape.dim) + "]"
    return f"Tensor({dt}, {dims}, [{', '.join(vals)}])"


def format_func(f):
    if f.attr:
        raise Inexpressible("func default with attrs")
    return quote(f.name.encode())


def format_value(v, attr_type, types_pb2):
    """An AttrValue of the attr type `attr_type` ("int", "list(shape)", ...)."""
    which = v.WhichOneof("value")
    if which == "placeholder":
        raise Inexpressible("placeholder default")
    base = attr_type[5:-1] if attr_type.startswith("list(") else attr_type
    one = {
        "string": lambda x: quote(x),
        "int": str,
        "float": format_float32,
        "bool": lambda x: "true" if x else "false",
        "type": lambda x: types_pb2.DataType.Name(x),
        "shape": format_shape,
        "tensor": lambda x: format_tensor(x, types_pb2),
        "func": format_func,
    }[base]
    if attr_type.startswith("list("):
        return "[" + ", ".join(one(x) for x in getattr(v.list, FIELDS[base])) + "]"
    return one(getattr(v, FIELDS[base]))


def arg_spec(arg, types_pb2):
    if arg.type_list_attr:
        t = arg.type_list_attr
    else:
        t = arg.type_attr or type_name(types_pb2.DataType.Name(arg.type))
        if arg.number_attr:
            t = f"{arg.number_attr} * {t}"
    if arg.is_ref:
        t = f"Ref({t})"
    return f"{arg.name}: {t}"


def attr_spec(a, types_pb2):
    t = a.type
    if a.HasField("allowed_values"):
        allowed = a.allowed_values.list
        base = t[5:-1] if t.startswith("list(") else t
        if base == "type":
            items = [type_name(types_pb2.DataType.Name(x)) for x in allowed.type]
        elif base == "string":
            items = [quote(x) for x in allowed.s]
        else:
            raise Inexpressible(f"allowed values on a {t} attr")
        t = "{" + ", ".join(items) + "}"
        if a.type.startswith("list("):
            t = f"list({t})"
    spec = f"{a.name}: {t}"
    if a.has_minimum:
        spec += f" >= {a.minimum}"
    if a.HasField("default_value"):
        spec += " = " + format_value(a.default_value, a.type, types_pb2)
    return spec


def op_line(op, types_pb2):
    fields = [op.name]
    if op.input_arg:
        fields.append("in=" + "|".join(arg_spec(a, types_pb2) for a in op.input_arg))
    if op.output_arg:
        fields.append("out=" + "|".join(arg_spec(a, types_pb2) for a in op.output_arg))
    if op.attr:
        fields.append("attr=" + "|".join(attr_spec(a, types_pb2) for a in op.attr))
    flags = [name for name, on in (("commutative", op.is_commutative),
                                   ("aggregate", op.is_aggregate),
                                   ("stateful", op.is_stateful),
                                   ("allows_uninitialized_input", op.allows_uninitialized_input))
             if on]
    if flags:
        fields.append("flags=" + ",".join(flags))
    if op.HasField("deprecation"):
        fields.append(f"deprecated={op.deprecation.version}")
    return "\t".join(fields)


def child():
    """Runs in TensorFlow's interpreter: prints the lines and counts as JSON."""
    import importlib.metadata
    import tensorflow as tf  # noqa: F401  (registers every op)
    from tensorflow.core.framework import op_def_pb2, types_pb2
    from tensorflow.python.client import pywrap_tf_session

    buf = pywrap_tf_session.TF_GetAllOpList()
    try:
        ops = op_def_pb2.OpList()
        ops.ParseFromString(pywrap_tf_session.TF_GetBuffer(buf))
    finally:
        pywrap_tf_session.TF_DeleteBuffer(buf)

    dist = None
    for name in DISTRIBUTIONS:
        try:
            dist = (name, importlib.metadata.version(name))
            break
        except importlib.metadata.PackageNotFoundError:
            continue
    if dist is None:
        dist = ("tensorflow", tf.__version__)

    lines, skipped = [], {}
    dropped = {"experimental_full_type": 0, "is_distributed_communication": 0,
               "control_output": 0}
    for op in sorted(ops.op, key=lambda o: o.name):
        try:
            lines.append(op_line(op, types_pb2))
        except Inexpressible as e:
            skipped[op.name] = str(e)
            continue
        dropped["experimental_full_type"] += sum(
            a.HasField("experimental_full_type") for a in list(op.input_arg) + list(op.output_arg))
        dropped["is_distributed_communication"] += op.is_distributed_communication
        dropped["control_output"] += len(op.control_output)
    json.dump({"distribution": dist[0], "version": dist[1], "lines": lines,
               "skipped": skipped, "dropped": dropped}, sys.stdout)


# ----------------------------------------------------------------- driver ---

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=DEFAULT_PYTHON,
                    help="interpreter with TensorFlow installed (default: %(default)s)")
    ap.add_argument("--out", help="output file (default: abi/ops/tf-<release>.txt)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child()
        return 0

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        r = subprocess.run([args.python, os.path.abspath(__file__), "--child"],
                           capture_output=True, text=True, env=env)
    except OSError as e:
        raise SystemExit(f"tf_opdefs: cannot run {args.python}: {e}")
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"tf_opdefs: {args.python} could not list TensorFlow's ops")
    data = json.loads(r.stdout)
    m = re.match(r"^(\d+)\.(\d+)", data["version"])
    if not m:
        raise SystemExit(f"tf_opdefs: cannot tell the release of version {data['version']}")
    release = f"{m.group(1)}.{m.group(2)}"
    out = args.out or os.path.join(REPO, "abi", "ops", f"tf-{release}.txt")

    lines = data["lines"]
    header = (f"# generated by tools/tf_opdefs.py from {data['distribution']} "
              f"{data['version']}; {len(lines)} ops")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(header + "\n")
        f.write("\n".join(lines) + "\n")

    print(f"{out}: {len(lines)} ops from {data['distribution']} {data['version']}")
    print(f"skipped {len(data['skipped'])} ops" + (":" if data["skipped"] else ""))
    for name, why in sorted(data["skipped"].items()):
        print(f"  {name}: {why}")
    for field, n in data["dropped"].items():
        if n:
            print(f"dropped (not modelled by the shims' OpDef): {field} x{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
