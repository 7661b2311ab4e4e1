#!/usr/bin/env python3
"""The layers of PerfHUDCore: which folder uses which, and whether they depend one way.

Each folder of Sources/PerfHUDCore is a layer. A folder "uses" another when one of its Swift files
names a type declared there, at top level or nested (a nested name counts where it is declared in
one folder only), or a function declared outside any type: an identifier token, comments and string
literals left out, code in string interpolations kept, a name after a dot left out (`Outer.Inner`
names Outer); `extension X` names X. The folders must form no circle, and every use
must point down LAYERS, the order the data flows in (docs/development.md, "How it is built").

    python3 Tests/layers.py            the folder graph; exit 1 on a circle or a use up the order
    python3 Tests/layers.py --sizes    Swift files in Sources/ over 450 lines or with more than
                                       3 top-level types (reports only; exit 0; --strict: exit 1)

Python 3, standard library only; it reads the sources and needs no build.
"""
import argparse
import pathlib
import re
import sys
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = ROOT / "Sources"
CORE = SOURCES / "PerfHUDCore"

# Bottom first: a folder may use the folders before it, never one after it.
LAYERS = [
    "Support",     # system calls, buffers, clocks, errors, text helpers: what every layer uses
    "Sampling",    # /proc and the control group: one Sample per tick
    "Events",      # the event socket, its parser and aggregator, reducer logs, frames
    "Store",       # ring buffers of the samples, the report, phases
    "Pipeline",    # one tick: sample + store + events -> Tick, and what the whole run adds up
    "Render",      # the HUD's lines from a snapshot (pure)
    "Terminal",    # the screen, keys, the program's output on its area
    "Output",      # the plain/JSON rows, the end summary
    "Recordings",  # the SQLite recording, replay, reports
    "Top",         # `perfhud top`, the metrics endpoint
    "Runtime",     # the loops: the session, the launched program, its events
]

MAX_LINES = 450
MAX_TYPES = 3

TYPE_KEYWORDS = ("struct", "class", "enum", "protocol", "actor", "typealias")
DECLARATION = re.compile(r"\b(struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)")
# A function outside any type, not private: named from other files as a type is.
FUNCTION = re.compile(r"^(?:(?:public|internal|@inlinable|@inline\(__always\)|@discardableResult)\s+)*func\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
        self.nested = []      # names declared inside braces
        depth = 0
        for match in re.finditer(r"[{}]|" + DECLARATION.pattern, self.code):
            if match.group(0) == "{":
                depth += 1
            elif match.group(0) == "}":
                depth -= 1
            else:
                keyword, name = match.group(1), match.group(2)
                if keyword == "class" and name in ("func", "var", "let", "subscript", "init"):
                    continue
                (self.top_level if depth == 0 else self.nested).append((keyword, name) if depth == 0 else name)
        # `Outer.Inner` names Outer; Inner after the dot is Outer's own (TimeSeries.Figure is not Figure).
        self.functions = []   # functions declared outside any braces
        depth = 0
        for match in re.finditer(r"[{}]|" + FUNCTION.pattern, self.code, re.M):
            if match.group(0) == "{":
                depth += 1
            elif match.group(0) == "}":
                depth -= 1
            elif depth == 0:
                self.functions.append(match.group(1))
        self.tokens = {match.group(0) for match in IDENTIFIER.finditer(self.code)
                       if not re.search(r"\.\s*$", self.code[max(0, match.start() - 20):match.start()])}
        self.lines = self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    @property
    def declared(self):
        return {name for _, name in self.top_level} | set(self.nested) | set(self.functions)


def folder_of(path):
    return path.relative_to(CORE).parts[0]


def core_files():
    return sorted(path for path in CORE.rglob("*.swift"))


def graph():
    """(folders, owner of each type name, {(from, to): [(file, type), ...]})."""
    files = [SwiftFile(path) for path in core_files()]
    owners = defaultdict(set)
    for file in files:
        for name in [name for _, name in file.top_level] + file.functions:
            owners[name].add(folder_of(file.path))
    nested_owners = defaultdict(set)
    for file in files:
        for name in file.nested:
            nested_owners[name].add(folder_of(file.path))
    # A nested type counts when its name is declared in one folder only and nowhere at top level:
    # `Outer.Inner` already names Outer, and a common nested name (Kind, Row) would be guesswork.
    for name, folders in nested_owners.items():
        if name not in owners and len(folders) == 1:
            owners[name] = set(folders)
    edges = defaultdict(list)
    folders = sorted({folder_of(file.path) for file in files})
    for file in files:
        here = folder_of(file.path)
        own = file.declared
        for token in sorted(file.tokens):
            if token in own or token not in owners:
                continue
            there = owners[token]
            if here in there:
                continue
            for folder in sorted(there):
                edges[(here, folder)].append((file.path.relative_to(CORE).as_posix(), token))
    return folders, owners, edges


def strongly_connected(folders, edges):
    """Tarjan's components of the folder graph, each a sorted list."""
    successors = defaultdict(set)
    for a, b in edges:
        successors[a].add(b)
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for next_node in sorted(successors[node]):
            if next_node not in index:
                visit(next_node)
                low[node] = min(low[node], low[next_node])
            elif next_node in on_stack:
                low[node] = min(low[node], index[next_node])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for folder in folders:
        if folder not in index:
            visit(folder)
    return components


def evidence(uses, limit=None):
    shown = uses if limit is None else uses[:limit]
    text = ", ".join(f"{file}:{name}" for file, name in shown)
    if limit is not None and len(uses) > limit:
        text += f", … ({len(uses) - limit} more)"
    return text


def check_layers(verbose=False):
    folders, _, edges = graph()
    status = 0
    order = {name: position for position, name in enumerate(LAYERS)}
    print("PerfHUDCore's folders, bottom first, and the folders each uses:")
    for folder in sorted(folders, key=lambda name: (order.get(name, len(LAYERS)), name)):
        used = sorted({b for a, b in edges if a == folder}, key=lambda name: (order.get(name, len(LAYERS)), name))
        print(f"  {folder:<11} <- {', '.join(used) if used else '(nothing)'}")
    unknown = [folder for folder in folders if folder not in order]
    if unknown:
        status = 1
        print(f"\nFolders not in LAYERS (Tests/layers.py): {', '.join(unknown)}")
    missing = [folder for folder in LAYERS if folder not in folders]
    if missing:
        print(f"\nLAYERS names folders that are gone: {', '.join(missing)}")
    circles = [component for component in strongly_connected(folders, edges) if len(component) > 1]
    for component in circles:
        status = 1
        print(f"\nCircle: {', '.join(component)} depend on each other. The uses that close it:")
        for (a, b), uses in sorted(edges.items()):
            if a in component and b in component:
                print(f"  {a} -> {b}: {evidence(uses)}")
    upward = [(a, b) for a, b in edges if a in order and b in order and order[b] > order[a]]
    if upward:
        status = 1
        print("\nUses up the order (a lower layer naming a type of a higher one):")
        for a, b in sorted(upward, key=lambda edge: (order[edge[0]], order[edge[1]])):
            print(f"  {a} -> {b}: {evidence(edges[(a, b)])}")
    if verbose:
        print("\nEvery use:")
        for (a, b), uses in sorted(edges.items()):
            print(f"  {a} -> {b}: {evidence(uses)}")
    if status == 0:
        print(f"\nNo circle; every use points down: {' <- '.join(LAYERS)}.")
    return status


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
    parser.add_argument("--verbose", "-v", action="store_true", help="list every use between folders")
    arguments = parser.parse_args()
    if arguments.sizes:
        return check_sizes(arguments.strict)
    return check_layers(arguments.verbose)


if __name__ == "__main__":
    sys.exit(main())
