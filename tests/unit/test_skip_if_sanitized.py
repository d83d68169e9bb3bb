#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tf_venv.skip_if_sanitized recognises this build's sanitizer.

  test_skip_if_sanitized.py LIBRARY B_SANITIZE

LIBRARY is a shared object of this build (libvacc.so), B_SANITIZE meson's
b_sanitize option ("none", "address,undefined", "thread"). In a sanitizer
build the tests that load LIBRARY into TensorFlow must skip naming the
sanitizer; in a normal build they must run (no Skip).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensorflow"))
from tf_venv import Skip, skip_if_sanitized  # noqa: E402

NAMES = {"address": "AddressSanitizer", "thread": "ThreadSanitizer",
         "undefined": "UndefinedBehaviorSanitizer"}


def main(library, b_sanitize):
    wanted = [NAMES[s] for s in b_sanitize.split(",") if s in NAMES]
    try:
        skip_if_sanitized(library)
    except Skip as e:
        missing = [name for name in wanted if name not in str(e)]
        if not wanted or missing:
            print(f"FAIL: b_sanitize={b_sanitize}, but skipped with: {e}")
            return 1
        print(f"OK: skipped as it should: {e}")
        return 0
    if wanted:
        print(f"FAIL: b_sanitize={b_sanitize}, but {library} was not recognised as sanitized")
        return 1
    print(f"OK: {os.path.basename(library)} is not sanitized; TensorFlow tests run")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
