#!/usr/bin/env python3
"""The layout's rules, checked over src/regionprof (docs/design.md, "Layout"):

1. Every folder of src/regionprof is an area with a level below; an area includes only its own headers
   and those of areas at lower levels, so includes run down the layers and no two areas include each
   other.
2. A public header (one src/CMakeLists.txt installs through regionprof_public_headers) includes only
   public headers, and no Boost.JSON, CUDA runtime, CUPTI or torch header.
3. Only collect/ includes <cupti*.h>; only torch/ includes torch or c10 headers.

Usage: check_layers.py SOURCE_DIR. Prints every violation (file:line: what) and exits 1, or prints a
summary and exits 0.
"""
import os
import re
import sys

# Bottom to top. An area may include the areas of lower levels only.
LEVELS = [
    ["json"],                                              # JSON helpers, microseconds text
    ["trace"],                                             # the event model, warnings, clock, identity
    ["statistics", "machine", "import", "collect", "capture"],  # sources of traces; statistics; machine
    ["regions", "analysis"],                               # the emit API; the attribution
    ["model"],                                             # Profile: the one result model (no I/O)
    ["compare", "job"],                                    # diff and cross-rank merge of profiles
    ["report", "saved"],                                   # the writers; the readers
    ["output"],                                            # the one output seam
    ["options"],                                           # the option table and its codecs
    ["session"],                                           # the one profiling session
    ["harness"],                                           # the in-process profiler
    ["benchmark", "torch", "inject"],                      # front-ends over the harness / the capture
    ["cli"],                                               # the command
]

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def level_of():
    levels = {}
    for index, areas in enumerate(LEVELS):
        for area in areas:
            levels[area] = index
    return levels


def public_headers(source_dir):
    text = open(os.path.join(source_dir, "src", "CMakeLists.txt")).read()
    headers = set()
    for block in re.findall(r"regionprof_public_headers\(\w+\s+([^)]*)\)", text):
        for word in block.split():
            headers.add("regionprof/" + word)
    return headers


def main():
    source_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    root = os.path.join(source_dir, "src", "regionprof")
    levels = level_of()
    public = public_headers(source_dir)
    problems = []
    files = 0
    for area in sorted(os.listdir(root)):
        folder = os.path.join(root, area)
        if not os.path.isdir(folder):
            continue
        if area not in levels:
            problems.append(f"src/regionprof/{area}: a folder with no level in tests/layout/check_layers.py")
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or not re.search(r"\.(cpp|hpp|h|c|def)$", name):
                continue
            files += 1
            shown = f"src/regionprof/{area}/{name}"
            is_public = f"regionprof/{area}/{name}" in public
            for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                where = f"{shown}:{number}"
                if target.startswith("cupti") and area != "collect":
                    problems.append(f"{where}: <{target}> outside collect/")
                if re.match(r"(torch|c10|ATen)/", target) and area != "torch":
                    problems.append(f"{where}: <{target}> outside torch/")
                if is_public and re.match(r"(boost/|cuda|cupti|torch/|c10/|ATen/)", target):
                    problems.append(f"{where}: public header includes <{target}>")
                r = re.match(r"regionprof/([a-z_]+)/", target)
                if not r:
                    continue
                other = r.group(1)
                if other not in levels:
                    problems.append(f"{where}: includes {target}, of no known area")
                    continue
                if other != area and levels[other] >= levels[area]:
                    problems.append(f"{where}: {area} (level {levels[area]}) includes {target} "
                                    f"({other}, level {levels[other]}): includes must run down the layers")
                if is_public and target not in public:
                    problems.append(f"{where}: public header includes the private header {target}")
    missing = sorted(h for h in public if not os.path.isfile(os.path.join(source_dir, "src", h)))
    for header in missing:
        problems.append(f"src/CMakeLists.txt: public header {header} does not exist")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layers: {len(problems)} problem(s) in {files} files")
        return 1
    print(f"check_layers: {files} files in {len(levels)} areas, {len(public)} public headers: includes run down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
