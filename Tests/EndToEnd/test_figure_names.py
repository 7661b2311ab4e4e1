"""A figure's names are declared once (issue 43, item 3): its JSON key (a case of `Figure.Field`),
its run figures' keys (`RunFigure`, `PhaseFigure`, and the table's summaries: `.max("…")` in
FigureTable.swift) and its Prometheus names (the table's `metric`, `TargetSeries`). Code elsewhere
names a figure by its case (`Figure[.rss_bytes]`, `aggregates[.cpu_percent, .max]`,
`Figure.metricName(.processes)`, `RunFigure.fps_avg.key`): a name written again as a string would
not follow a rename, and would say nothing when its figure is gone. This test fails on one.

It reads the sources as text (no build): the declarations, then every string literal of
Sources/. Flagged: a literal that is exactly a key with an underscore (one-word keys such as
`phase` or `threads` are also plain words in messages), and a Prometheus name anywhere in a
literal (`"perfhud_target_info_info{…"`)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ROOT / "Sources"
TABLE = SOURCES / "PerfHUDPipeline/FigureTable.swift"
FIELDS = SOURCES / "PerfHUDPipeline/Figures.swift"
NAMES = SOURCES / "PerfHUDPipeline/RunFigures.swift"
DECLARING = {TABLE, FIELDS, NAMES}

# Literals that are the same text as a figure's name but name something else, each with why.
ELSEWHERE = {
    ("NetworkUnreported.swift", "net_source"): "the kind of a recording's `reasons` rows (a file format), not the figure",
}

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def enum_cases(text, declaration):
    """The case names of the enum `declaration` opens (`enum Field: String`)."""
    start = text.index(declaration)
    body = text[text.index("{", start) + 1:]
    depth, end = 1, 0
    for end, char in enumerate(body):
        depth += char == "{"
        depth -= char == "}"
        if depth == 0:
            break
    body = body[:end]
    body = body[:body.find("\n    public var")] if "\n    public var" in body else body
    names = []
    for line in body.splitlines():
        line = line.split("//")[0].strip()
        if line.startswith("case ") and "(" not in line and ":" not in line:
            names += [name.strip() for name in line[5:].split(",")]
    return names


def declared():
    table, fields, names = TABLE.read_text(), FIELDS.read_text(), NAMES.read_text()
    keys = set(enum_cases(fields, "public enum Field: String"))
    keys |= set(re.findall(r'\.(?:mean|max|min|first|last|atStart)\("([a-z0-9_]+)"\)', table))
    keys |= set(enum_cases(names, "public enum RunFigure")) | set(enum_cases(names, "public enum PhaseFigure"))
    metrics = set(re.findall(r'"(perfhud_[a-z0-9_]+)"', table)) | set(enum_cases(names, "public enum TargetSeries"))
    return keys, metrics


def code_of(text):
    """The text without comments (string literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i) + 2
        elif text[i] == '"':
            match = LITERAL.match(text, i)
            end = match.end() if match else i + 1
            out.append(text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def sources():
    return [(str(path.relative_to(ROOT)), path.name, path.read_text()) for path in sorted(SOURCES.rglob("*.swift")) if path not in DECLARING]


def names_written_again(files):
    """`path:line: "name"` for each name of a figure written again in `files` ((path, file name, text))."""
    keys, metrics = declared()
    found = []
    for shown, name_of_file, text in files:
        code = code_of(text)
        for match in LITERAL.finditer(code):
            literal = match.group(1)
            line = code[:match.start()].count("\n") + 1
            hits = [literal] if "_" in literal and literal in keys else []
            hits += [name for name in re.findall(r"perfhud_[a-z0-9_]+", literal) if name in metrics]
            for name in hits:
                if (name_of_file, name) not in ELSEWHERE:
                    found.append(f"{shown}:{line}: \"{name}\"")
    return found


def test_the_declarations_are_read():
    keys, metrics = declared()
    # Some of each kind, so that a change of the declarations' shape cannot empty the sets.
    assert {"rss_bytes", "memory_limit_bytes", "cpu_percent_max", "memory_limit_bytes_min", "fps_avg", "kept_bytes"} <= keys
    assert {"perfhud_target_memory_limit_bytes", "perfhud_target_up", "perfhud_target_info"} <= metrics


def test_no_figure_key_or_metric_name_is_written_outside_the_table():
    found = names_written_again(sources())
    assert not found, "name the figure by its case instead:\n" + "\n".join(found)


def test_the_check_finds_a_name_written_again():
    planted = ('let a = aggregates["rss_peak_bytes"]   // "fds_open_max" in a comment is no use\n'
               'let b = "perfhud_target_up{target=\\"x\\"}"\nlet c = "a phase"\nlet d = "threads"\n')
    assert names_written_again([("Planted.swift", "Planted.swift", planted)]) == [
        'Planted.swift:1: "rss_peak_bytes"', 'Planted.swift:2: "perfhud_target_up"']
