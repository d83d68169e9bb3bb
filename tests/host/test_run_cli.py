#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tfplugin-run end to end on the test plugin: list, op, discover, errors.

  test_run_cli.py TFPLUGIN_RUN TEST_PLUGIN.so
"""
import os
import subprocess
import sys
import tempfile

failures = []


def run(*args, env=None):
    p = subprocess.run([RUN, *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}\n{detail}")
    else:
        print(f"ok   {name}")


def main():
    global RUN
    RUN, plugin = sys.argv[1], sys.argv[2]

    rc, out, err = run("list", plugin)
    expect("list exits 0", rc == 0, err)
    for want in ("entry points: SE_InitPlugin TF_InitKernel", "platform: name TESTDEV, type TESTDEV, 2 device(s)",
                 "device:TESTDEV:1", "MatMul on TESTDEV {T=float}", "Identity on TESTDEV priority=1",
                 "Shape on TESTDEV {out_type=int32} host_memory=[output]", "TestAsyncIdentity on TESTDEV async",
                 "TestContext(x: T) -> (out: int64)"):
        expect(f"list shows {want!r}", want in out, out)

    rc, out, err = run("list", plugin, "--tf", "2.9")
    expect("list --tf 2.9", rc == 0 and "emulating: TensorFlow 2.9" in out, out + err)
    rc, out, err = run("list", plugin, "--tf", "1.15")
    expect("unknown release fails", rc == 1 and "unknown TensorFlow release '1.15'" in err, err)

    rc, out, err = run("op", plugin, "AddV2", "--input", "int32:4=1,2,3,4", "--input", "int32:scalar=10")
    expect("AddV2 int32", rc == 0 and "output 0: int32 [4] = [11, 12, 13, 14]" in out, out + err)
    rc, out, err = run("op", plugin, "MatMul", "--input", "float:2x3=iota", "--input", "float:2x3=ones",
                       "--attr", "transpose_b=true")
    expect("MatMul transpose_b", rc == 0 and "output 0: float [2, 2] = [3, 3, 12, 12]" in out, out + err)
    rc, out, err = run("op", plugin, "Shape", "--input", "float:2x0x5")
    expect("Shape (host-memory output), empty input", rc == 0 and "output 0: int32 [3] = [2, 0, 5]" in out,
           out + err)
    rc, out, err = run("op", plugin, "Identity", "--input", "float:3=iota", "--attr", "_kernel=special")
    expect("labelled kernel chosen", rc == 0 and "kernel: Identity on TESTDEV label=special" in out, out + err)
    rc, out, err = run("op", plugin, "AddV2", "--input", "float:3", "--input", "float:3", "--device", "1")
    expect("second device", rc == 0, out + err)

    rc, out, err = run("op", plugin, "TestConcatLike", "--input", "float:2x3=iota", "--input", "float:1x3=ones")
    expect("variadic input, N inferred", rc == 0 and "output 0: float [3, 3] = [0, 1, 2, 3, 4, 5, 1, 1, 1]" in out,
           out + err)
    rc, out, err = run("op", plugin, "TestConcatLike", "--input", "float:2x3", "--input", "float:3")
    expect("shape function failure", rc == 1 and "INVALID_ARGUMENT: Shape must be rank 2 but is rank 1" in err,
           out + err)

    rc, out, err = run("op", plugin, "NoSuchOp")
    expect("unknown op", rc == 1 and "NOT_FOUND" in err and "NoSuchOp" in err, err)
    rc, out, err = run("op", plugin, "AddV2", "--input", "int64:2", "--input", "int64:2")
    expect("no kernel for int64", rc == 1 and "No registered 'AddV2' kernel" in err and "T=float" in err, err)
    rc, out, err = run("op", plugin, "TestFail", "--attr", "code=9", "--attr", "message=boom")
    expect("kernel failure keeps code and message", rc == 1 and "FAILED_PRECONDITION: boom" in err, err)
    rc, out, err = run("op", plugin, "MatMul", "--input", "float:2x3", "--attr", "transpose_a=maybe")
    expect("bad attr value is a usage error", rc == 2 and "transpose_a" in err, err)
    rc, out, err = run("op", plugin, "MatMul", "--input", "float:2x3", "--attr", "nosuch=1")
    expect("unknown attr names the op's attrs", rc == 2 and "has no attr 'nosuch'" in err, err)
    rc, out, err = run("op", plugin, "AddV2", "--input", "float:2x3=1,2")
    expect("wrong number of values", rc == 2 and "2 values for 6 elements" in err, err)
    rc, out, err = run("op", plugin, "AddV2", "--input", "float:2x3", "--device", "7")
    expect("no such device", rc == 1 and "no device 7" in err, err)
    rc, out, err = run("list", "/nonexistent/plugin.so")
    expect("missing plugin file", rc == 1 and "/nonexistent/plugin.so" in err, err)
    rc, out, err = run("frobnicate")
    expect("unknown command", rc == 2 and "usage:" in err, err)

    with tempfile.TemporaryDirectory() as d:
        for f in ("a.so", "b.so.1", "c.so.x", "d.txt"):
            open(os.path.join(d, f), "w").close()
        rc, out, err = run("discover", d)
        expect("discover folder", rc == 0 and out.split() == [f"{d}/a.so", f"{d}/b.so.1"], out + err)
        rc, out, err = run("discover", env={"TF_PLUGGABLE_DEVICE_LIBRARY_PATH": os.path.join(d, "a.so")})
        expect("discover env", rc == 0 and out.split() == [f"{d}/a.so"], out + err)
        rc, out, err = run("discover", os.path.join(d, "missing"))
        expect("discover missing", rc == 1 and "does not exist" in err, err)

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
