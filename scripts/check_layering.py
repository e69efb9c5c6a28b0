#!/usr/bin/env python3
"""Fails on an #include against the library graph (docs/design.md §6).

Reads each top-level folder's CMakeLists.txt for `stax_library(NAME ...
DEPS ...)` (and `target_link_libraries(stax_NAME ...)`), takes the
transitive closure over the `stax::X` dependencies, then scans every source
file under each library's folder for `#include "X/..."` with X a top-level
folder of the project: X must be the library itself or in its closure.
`tests/<dir>/` is checked against the libraries its executables link, as
tests/CMakeLists.txt declares them (`set(stax_test_libs_<dir> stax::X ...)`:
the library the folder tests, and the checkers its tests use), else against
`<dir>` itself; the shared test helpers (`#include "tests/..."`) are allowed
there. Folders that hold only
executables above every library (bench/, fuzz/) may include any library.

    python3 scripts/check_layering.py [--quiet] [--no-tests] [--root DIR]

Prints `file:line: <lib> includes <X>/... but does not depend on it` for
each violation and a one-line summary; exit 1 if there is any.
"""
import argparse
import os
import re
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_EXT = (".cpp", ".cc", ".h", ".hpp", ".inc")
# Folders of executables that sit above every library (docs/design.md §6).
TOP_EXECUTABLES = ("bench", "fuzz")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')


def strip_cmake_comments(text):
    # A '#' starts a comment unless it is inside a quoted argument.
    out = []
    for line in text.splitlines():
        quoted = False
        for i, c in enumerate(line):
            if c == '"':
                quoted = not quoted
            elif c == "#" and not quoted:
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def read_libraries():
    """{library name: (folder, set of direct stax deps)}."""
    libs = {}
    for folder in sorted(os.listdir(ROOT)):
        cml = os.path.join(ROOT, folder, "CMakeLists.txt")
        if folder.startswith(".") or not os.path.isfile(cml):
            continue
        with open(cml, encoding="utf-8") as f:
            text = strip_cmake_comments(f.read())
        for m in re.finditer(r"\bstax_library\s*\(([^)]*)\)", text):
            args = m.group(1).split()
            if not args:
                continue
            name = args[0]
            deps = set()
            if "DEPS" in args:
                for a in args[args.index("DEPS") + 1:]:
                    if a in ("SOURCES",):
                        break
                    if a.startswith("stax::"):
                        deps.add(a[len("stax::"):])
            libs[name] = (folder, deps)
        for m in re.finditer(r"\btarget_link_libraries\s*\(\s*stax_(\w+)([^)]*)\)", text):
            name = m.group(1)
            if name in libs:
                libs[name][1].update(a[len("stax::"):] for a in m.group(2).split() if a.startswith("stax::"))
                libs[name][1].update(a[len("stax_"):] for a in m.group(2).split()
                                     if a.startswith("stax_") and a[len("stax_"):] in libs)
    return libs


def read_test_links():
    """{tests/ folder: the stax libraries its executables link} (tests/CMakeLists.txt)."""
    path = os.path.join(ROOT, "tests", "CMakeLists.txt")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        text = strip_cmake_comments(f.read())
    return {m.group(1): [a[len("stax::"):] for a in m.group(2).split() if a.startswith("stax::")]
            for m in re.finditer(r"\bset\s*\(\s*stax_test_libs_(\w+)([^)]*)\)", text)}


def closure(libs):
    """{library: the set of libraries it may use, itself included}."""
    result = {}

    def visit(n, stack):
        if n in result:
            return result[n]
        if n in stack:
            sys.exit(f"check_layering: dependency cycle through {' -> '.join(stack + [n])}")
        seen = {n}
        for d in libs.get(n, ("", set()))[1]:
            if d not in libs:
                sys.exit(f"check_layering: {n} depends on stax::{d}, which no stax_library declares")
            seen |= visit(d, stack + [n])
        result[n] = seen
        return seen

    for n in libs:
        visit(n, [])
    return result


def top_folders():
    return {d for d in os.listdir(ROOT)
            if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith(".") and d != "build"
            and not d.startswith("build-")}


def sources(folder):
    base = os.path.join(ROOT, folder)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, fn)


def scan(path, lib, allowed, folders, extra_ok, violations):
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            x = m.group(1)
            if x not in folders or x in allowed or x in extra_ok:
                continue
            violations.append((rel, lineno, lib, x))


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    ap.add_argument("--no-tests", action="store_true", help="check the libraries only, not tests/<lib>/")
    ap.add_argument("--root", default=ROOT, help="the project's root (default: this script's repository)")
    args = ap.parse_args()
    ROOT = os.path.abspath(args.root)

    libs = read_libraries()
    if not libs:
        sys.exit("check_layering: no stax_library(...) found in any top-level CMakeLists.txt")
    reach = closure(libs)
    folders = top_folders()
    lib_of_folder = {folder: name for name, (folder, _) in libs.items()}
    everything = set(libs)

    violations = []
    files = 0
    for folder in sorted(folders):
        if folder in lib_of_folder:
            lib = lib_of_folder[folder]
            allowed = reach[lib]
        elif folder in TOP_EXECUTABLES:
            lib, allowed = folder, everything | {folder}
        else:
            continue
        for path in sources(folder):
            files += 1
            scan(path, lib, allowed, folders, set(), violations)
    lib_violations = len(violations)

    test_files = 0
    if not args.no_tests and os.path.isdir(os.path.join(ROOT, "tests")):
        links = read_test_links()
        for sub in sorted(os.listdir(os.path.join(ROOT, "tests"))):
            if not os.path.isdir(os.path.join(ROOT, "tests", sub)):
                continue
            if sub in links:
                unknown = [x for x in links[sub] if x not in reach]
                if unknown:
                    sys.exit(f"check_layering: tests/{sub} links stax::{unknown[0]}, which no stax_library declares")
                lib, allowed = sub, set().union(*(reach[x] for x in links[sub])) | {sub}
            elif sub in libs:
                lib, allowed = sub, reach[sub]
            elif sub in TOP_EXECUTABLES:
                lib, allowed = sub, everything | {sub}
            else:
                continue  # goldens, data, scripts
            for path in sources(os.path.join("tests", sub)):
                test_files += 1
                scan(path, "tests/" + lib, allowed, folders, {"tests"}, violations)

    if not args.quiet:
        for rel, lineno, lib, x in violations:
            print(f"{rel}:{lineno}: {lib} includes {x}/... but does not depend on it")
    edges = Counter(f"{lib}->{x}" for _, _, lib, x in violations)
    summary = ", ".join(f"{e} {n}" for e, n in sorted(edges.items()))
    checked = f"{files} library files" + ("" if args.no_tests else f", {test_files} test files")
    if violations:
        print(f"check_layering: {len(violations)} includes against the library graph "
              f"({lib_violations} in libraries, {len(violations) - lib_violations} in tests; {checked}): {summary}")
        return 1
    print(f"check_layering: OK ({len(libs)} libraries, {checked})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
