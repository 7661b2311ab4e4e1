#!/usr/bin/env python3
"""The layers of perfhud's core, and the size of its files.

The core is one SwiftPM target per layer (Package.swift), in the order the data flows: a file names
only what its target imports, `package` access is what crosses a layer, and the compiler refuses the
rest. What the compiler cannot refuse is checked here, from the manifest as SwiftPM reads it
(`swift package dump-package`):

  - every core target depends only on targets below it in LAYERS (SwiftPM refuses a circle, not a
    use up the order that makes none yet), and every layer is a target;
  - every `import PerfHUD...` of a Swift file under Sources/ or Tests/ is a dependency its target
    declares (SwiftPM finds a module built for another target without one, so a file could import
    a layer its target does not depend on while that layer happened to be built first);
  - a sink of ticks (a type conforming to `TickSink`, live, replayed or the daemon's) reads the tick
    alone: its file names none of the places a tick is made from (`BESIDE_THE_TICK`: the event
    stream's aggregator, the watcher, the sampler, the store, a daemon target's group).

    python3 Tests/layers.py            the check above; exit 1 on a use up the order or an undeclared import
    python3 Tests/layers.py --sizes    Swift files in Sources/ over 450 lines or with more than
                                       3 top-level types (reports only; exit 0; --strict: exit 1)
    python3 Tests/layers.py --targets  each library and system-library target of the package, a line
                                       each: NAME TYPE DEPENDENCY... (what Tests/Fuzz/run.sh builds from)

Python 3, standard library only, and the Swift toolchain's `swift package dump-package` (no build).
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ROOT / "Sources"

# Bottom first: a layer may depend on those before it, never on one after it.
LAYERS = [
    "PerfHUDSupport",     # system calls, buffers, clocks, errors, text helpers: what every layer uses
    "PerfHUDSampling",    # /proc and the control group: one Sample per tick
    "PerfHUDEvents",      # the event socket, its parser and aggregator, reducer logs, frames
    "PerfHUDStore",       # ring buffers of the samples, the leak trend, phases
    "PerfHUDPipeline",    # one tick: sample + store + events -> Tick, and what the whole run adds up
    "PerfHUDRender",      # the HUD's lines from a snapshot (pure)
    "PerfHUDTerminal",    # the screen, keys, the program's output on its area
    "PerfHUDOutput",      # the plain/JSON rows, the end summary
    "PerfHUDRecordings",  # the SQLite recording, replay, reports
    "PerfHUDTop",         # `perfhud top`
    "PerfHUDRuntime",     # the loops: the session, the launched program, its events
]

# What a tick is made from (`TargetWatcher`): a sink that reached for one of these would read
# beside the tick what the other sinks do not see.
BESIDE_THE_TICK = ["EventAggregator", "SessionEvents", "TargetWatcher", "ProcessSampler", "MetricsStore",
                   "TargetGroup", ".aggregator", ".watcher", ".group"]
SINK = re.compile(r"\b(?:class|struct)\s+(\w+)\s*:[^{]*\bTickSink\b")

MAX_LINES = 450
MAX_TYPES = 3

DECLARATION = re.compile(r"\b(struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)")


def code_of(text):
    """The text with comments and string literals blanked (newlines kept), interpolations kept."""
    out = []
    i, n = 0, len(text)
    # Each entry: ("code", parens) inside an interpolation, or ("string", hashes, multiline).
    stack = [("code", 0)]
    while i < n:
        top = stack[-1]
        c = text[i]
        if top[0] == "code":
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                out.append(" " * (end - i))
                i = end
                continue
            if text.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth, j = depth + 1, j + 2
                    elif text.startswith("*/", j):
                        depth, j = depth - 1, j + 2
                    else:
                        j += 1
                out.append(re.sub(r"[^\n]", " ", text[i:j]))
                i = j
                continue
            match = re.compile(r'(#*)("""|")').match(text, i)
            if match and (c == '"' or c == "#"):
                hashes = len(match.group(1))
                multiline = match.group(2) == '"""'
                stack.append(("string", hashes, multiline))
                out.append(" " * (match.end() - i))
                i = match.end()
                continue
            if len(stack) > 1:  # inside \( … ): the closing parenthesis goes back to the string
                if c == "(":
                    stack[-1] = ("code", top[1] + 1)
                elif c == ")":
                    if top[1] == 0:
                        stack.pop()
                        out.append(" ")
                        i += 1
                        continue
                    stack[-1] = ("code", top[1] - 1)
            out.append(c)
            i += 1
            continue
        # Inside a string literal.
        _, hashes, multiline = top
        closing = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        if text.startswith(closing, i):
            stack.pop()
            out.append(" " * len(closing))
            i += len(closing)
            continue
        if text.startswith(escape, i):
            after = i + len(escape)
            if after < n and text[after] == "(":
                stack.append(("code", 0))
                out.append(" " * (after + 1 - i))
                i = after + 1
                continue
            skip = min(after + 1, n) - i
            out.append(re.sub(r"[^\n]", " ", text[i:i + skip]))
            i += skip
            continue
        out.append("\n" if c == "\n" else " ")
        i += 1
    return "".join(out)


class SwiftFile:
    def __init__(self, path):
        self.path = path
        self.text = path.read_text()
        self.code = code_of(self.text)
        self.top_level = []   # (keyword, name) declared outside any braces
        depth = 0
        for match in re.finditer(r"[{}]|" + DECLARATION.pattern, self.code):
            if match.group(0) == "{":
                depth += 1
            elif match.group(0) == "}":
                depth -= 1
            elif depth == 0:
                keyword, name = match.group(1), match.group(2)
                if keyword == "class" and name in ("func", "var", "let", "subscript", "init"):
                    continue
                self.top_level.append((keyword, name))
        self.lines = self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)


def manifest(root=ROOT):
    """{target name: (type, [its dependencies that are targets of the package], path)} from SwiftPM."""
    result = subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"swift package dump-package failed:\n{result.stderr}")
    targets = json.loads(result.stdout)["targets"]
    names = {target["name"] for target in targets}
    out = {}
    for target in targets:
        dependencies = [value[0] for entry in target["dependencies"] for kind, value in entry.items()
                        if kind in ("target", "byName") and value[0] in names]
        kind = target["type"]
        folder = target.get("path") or ("Tests/" if kind == "test" else "Sources/") + target["name"]
        out[target["name"]] = (kind, dependencies, folder)
    return out


def check_layers(root=ROOT):
    targets = manifest(root)
    order = {name: position for position, name in enumerate(LAYERS)}
    status = 0
    missing = [name for name in LAYERS if name not in targets]
    if missing:
        status = 1
        print(f"LAYERS names what is no target of Package.swift: {', '.join(missing)}")
    print("The core's targets, bottom first, and what each depends on:")
    for name in LAYERS:
        if name in targets:
            print(f"  {name:<18} <- {', '.join(targets[name][1]) or '(nothing)'}")
    for name in LAYERS:
        if name not in targets:
            continue
        upward = [dependency for dependency in targets[name][1] if order.get(dependency, -1) >= order[name]]
        if upward:
            status = 1
            print(f"Use up the order: {name} depends on {', '.join(upward)}")
    undeclared = []
    for name, (kind, dependencies, folder) in sorted(targets.items()):
        if kind == "system":
            continue
        for path in sorted((root / folder).rglob("*.swift")):
            for module in re.findall(r"^(?:@testable |@preconcurrency )?import (PerfHUD\w+)", path.read_text(), re.M):
                if module in targets and module not in dependencies:
                    undeclared.append(f"{path.relative_to(root).as_posix()} imports {module}, which {name} does not depend on")
    if undeclared:
        status = 1
        print("Imports of a target not declared in Package.swift:")
        for line in undeclared:
            print(f"  {line}")
    sinks, beside = check_sinks(root)
    if beside:
        status = 1
        print("A sink of ticks reads beside the tick:")
        for line in beside:
            print(f"  {line}")
    if status == 0:
        print(f"\nEvery layer depends only on those below it: {' <- '.join(LAYERS)}; every import is declared.")
        print(f"Every sink of ticks reads the tick alone: {', '.join(sinks)}.")
    return status


def check_sinks(root=ROOT):
    """The sinks found under Sources/, and a line for each name of BESIDE_THE_TICK a sink's file uses."""
    sinks, beside = [], []
    for path in sorted((root / "Sources").rglob("*.swift")):
        code = code_of(path.read_text())
        found = SINK.findall(code)
        if not found:
            continue
        sinks += found
        for name in BESIDE_THE_TICK:
            pattern = re.escape(name) + r"\b" if name.startswith(".") else r"\b" + re.escape(name) + r"\b"
            for match in re.finditer(pattern, code):
                line = code.count("\n", 0, match.start()) + 1
                beside.append(f"{path.relative_to(root).as_posix()}:{line}: {', '.join(found)} names {name}")
    return sorted(sinks), beside


def check_sizes(strict=False):
    offenders = []
    for path in sorted(SOURCES.rglob("*.swift")):
        file = SwiftFile(path)
        types = [name for keyword, name in file.top_level if keyword != "typealias"]
        problems = []
        if file.lines > MAX_LINES:
            problems.append(f"{file.lines} lines (at most {MAX_LINES})")
        if len(types) > MAX_TYPES:
            problems.append(f"{len(types)} top-level types (at most {MAX_TYPES}): {', '.join(types)}")
        if problems:
            offenders.append((path.relative_to(ROOT).as_posix(), problems))
    if not offenders:
        print(f"Every Swift file in Sources/ has at most {MAX_LINES} lines and {MAX_TYPES} top-level types.")
        return 0
    print(f"Swift files in Sources/ over {MAX_LINES} lines or with more than {MAX_TYPES} top-level types:")
    for path, problems in offenders:
        print(f"  {path}: {'; '.join(problems)}")
    return 1 if strict else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", action="store_true", help="check file sizes instead (reports only)")
    parser.add_argument("--strict", action="store_true", help="with --sizes: exit 1 when a file is over")
    parser.add_argument("--targets", action="store_true", help="list the library targets and their dependencies")
    arguments = parser.parse_args()
    if arguments.targets:
        for name, (kind, dependencies, _) in manifest().items():
            if kind in ("regular", "system"):
                print(name, kind, *dependencies)
        return 0
    if arguments.sizes:
        return check_sizes(arguments.strict)
    return check_layers()


if __name__ == "__main__":
    sys.exit(main())
