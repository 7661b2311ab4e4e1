"""A strict checker of the i3bar protocol (https://i3wm.org/docs/i3bar-protocol.html), for the
tests of `perfhud status TARGET --format i3bar --follow`.

i3bar and swaybar ignore much of what they do not understand, so a stream that "works" in a bar
can still be wrong: this checks the written protocol instead. The stream's shape, as i3status
prints it and as line-oriented consumers (i3blocks wrappers, scripts that prefix a line) expect:

    {"version": 1}            header: one JSON object on the first line
    [                         the opening of the infinite array, alone on its line
    [{"full_text": "..."}]    the first status line
    ,[{"full_text": "..."}]   each later one, prefixed by a comma

A `--follow` stream ends when it is killed, so a last line without its newline is ignored.
"""
import json
import re

HEADER_KEYS = {"version": int, "click_events": bool, "stop_signal": int, "cont_signal": int}
COLOR = re.compile(r"#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?\Z")


def _is_int(value):   # JSON's true is no number: Python's bool is an int
    return isinstance(value, int) and not isinstance(value, bool)


def _pixels(value):
    return _is_int(value) and value >= 0


# Each documented block key and the test its value must pass.
BLOCK_KEYS = {
    "full_text": lambda v: isinstance(v, str),
    "short_text": lambda v: isinstance(v, str),
    "color": lambda v: isinstance(v, str) and bool(COLOR.match(v)),
    "background": lambda v: isinstance(v, str) and bool(COLOR.match(v)),
    "border": lambda v: isinstance(v, str) and bool(COLOR.match(v)),
    "border_top": _pixels, "border_right": _pixels, "border_bottom": _pixels, "border_left": _pixels,
    "min_width": lambda v: _pixels(v) or isinstance(v, str),   # pixels, or a text as wide as it
    "align": lambda v: v in ("left", "center", "right"),
    "urgent": lambda v: isinstance(v, bool),
    "name": lambda v: isinstance(v, str),
    "instance": lambda v: isinstance(v, str),
    "separator": lambda v: isinstance(v, bool),
    "separator_block_width": _pixels,
    "markup": lambda v: v in ("pango", "none"),
}


def _strict_json(text, where):
    """json.loads that refuses what is no JSON though Python takes it (NaN, Infinity) and
    duplicate keys (a bar keeps one of them, silently)."""
    def no_constant(name):
        raise AssertionError(f"{where}: {name} is not JSON: {text!r}")

    def no_duplicates(pairs):
        keys = [key for key, _ in pairs]
        duplicated = sorted({key for key in keys if keys.count(key) > 1})
        assert not duplicated, f"{where}: duplicate keys {duplicated}: {text!r}"
        return dict(pairs)
    try:
        return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as error:
        raise AssertionError(f"{where}: not JSON ({error}): {text!r}") from None


def _check_block(block, where):
    assert isinstance(block, dict), f"{where}: a block is a JSON object, not {block!r}"
    assert "full_text" in block, f"{where}: a block without full_text: {block!r}"
    for key, value in block.items():
        if key.startswith("_"):   # the documented place for keys of one's own
            continue
        assert key in BLOCK_KEYS, f"{where}: key {key!r} is not in the protocol (own keys start with _): {block!r}"
        assert BLOCK_KEYS[key](value), f"{where}: {key} = {value!r} is not a valid value: {block!r}"


def check_i3bar_stream(text):
    """The status lines of an i3bar stream (each a list of block dicts), or AssertionError naming
    the first violation and its line. `]` closing the array is taken as the stream's end."""
    lines = text.split("\n")
    lines.pop()   # the text after the last newline: empty, or a line cut off by a kill
    assert lines, f"no complete header line: {text[:200]!r}"
    header = _strict_json(lines[0], "line 1 (header)")
    assert isinstance(header, dict), f"line 1 (header): a JSON object, not {header!r}"
    for key, value in header.items():
        assert key in HEADER_KEYS, f"line 1 (header): unknown key {key!r}: {lines[0]!r}"
        kind = HEADER_KEYS[key]
        assert (_is_int(value) if kind is int else isinstance(value, kind)), \
            f"line 1 (header): {key} must be {kind.__name__}, not {value!r}"
    assert header.get("version") == 1, f"line 1 (header): version must be 1: {lines[0]!r}"
    for key in ("stop_signal", "cont_signal"):   # 0 turns stopping off; the rest are signal numbers
        assert 0 <= header.get(key, 0) <= 64, f"line 1 (header): {key} is no signal: {header[key]!r}"
    if len(lines) < 2:
        return []
    assert lines[1] == "[", f"line 2: the infinite array opens with '[' alone, not {lines[1]!r}"
    status_lines = []
    for number, line in enumerate(lines[2:], start=3):
        where = f"line {number}"
        if line == "]":   # a stream that closed its array: nothing may follow
            assert number == len(lines), f"{where}: lines after the closing ']': {lines[number:]!r}"
            break
        if status_lines:
            assert line.startswith(","), f"{where}: a status line after the first starts with ',': {line!r}"
            line = line[1:]
        else:
            assert not line.startswith(","), f"{where}: the first status line has no ',': {line!r}"
        blocks = _strict_json(line, where)
        assert isinstance(blocks, list), f"{where}: a status line is a JSON array of blocks, not {blocks!r}"
        for index, block in enumerate(blocks):
            _check_block(block, f"{where}, block {index}")
        status_lines.append(blocks)
    return status_lines


if __name__ == "__main__":
    good = ('{"version": 1, "click_events": false, "stop_signal": 0}\n[\n'
            '[{"full_text": "PID 1 CPU 3%", "short_text": "3%", "color": "#FF0000", "urgent": true,'
            ' "name": "perfhud", "instance": "1", "min_width": "CPU 100%", "align": "right", "_pid": 1}]\n'
            ',[{"full_text": "PID 1 CPU 4%", "separator": false, "separator_block_width": 9, "markup": "none",'
            ' "background": "#00000080", "border": "#112233", "border_top": 0, "min_width": 80}]\n'
            ',[{"full_text": "PID 1 C')   # killed mid-line
    assert [blocks[0]["full_text"] for blocks in check_i3bar_stream(good)] == ["PID 1 CPU 3%", "PID 1 CPU 4%"]
    assert check_i3bar_stream('{"version": 1}\n[\n[]\n,[]\n]\n') == [[], []]
    assert check_i3bar_stream('{"version": 1}\n') == []
    bad = {
        "no header": '{"version": 1',
        "header not an object": '[1]\n[\n',
        "version 2": '{"version": 2}\n[\n',
        "version true": '{"version": true}\n[\n',
        "unknown header key": '{"version": 1, "colors": true}\n[\n',
        "click_events as int": '{"version": 1, "click_events": 1}\n[\n',
        "no opening bracket": '{"version": 1}\n[{"full_text": "x"}]\n',
        "first line with comma": '{"version": 1}\n[\n,[{"full_text": "x"}]\n',
        "second line without comma": '{"version": 1}\n[\n[{"full_text": "x"}]\n[{"full_text": "y"}]\n',
        "status line not an array": '{"version": 1}\n[\n{"full_text": "x"}\n',
        "no full_text": '{"version": 1}\n[\n[{"short_text": "x"}]\n',
        "full_text not a string": '{"version": 1}\n[\n[{"full_text": 3}]\n',
        "bad color": '{"version": 1}\n[\n[{"full_text": "x", "color": "red"}]\n',
        "short color": '{"version": 1}\n[\n[{"full_text": "x", "color": "#f00"}]\n',
        "bad align": '{"version": 1}\n[\n[{"full_text": "x", "align": "middle"}]\n',
        "urgent as string": '{"version": 1}\n[\n[{"full_text": "x", "urgent": "true"}]\n',
        "width as float": '{"version": 1}\n[\n[{"full_text": "x", "separator_block_width": 9.5}]\n',
        "bad markup": '{"version": 1}\n[\n[{"full_text": "x", "markup": "html"}]\n',
        "unknown key": '{"version": 1}\n[\n[{"full_text": "x", "class": "alert"}]\n',
        "NaN": '{"version": 1}\n[\n[{"full_text": "x", "_v": NaN}]\n',
        "duplicate key": '{"version": 1}\n[\n[{"full_text": "x", "full_text": "y"}]\n',
        "bad JSON": '{"version": 1}\n[\n[{bad json}]\n',
        "after the end": '{"version": 1}\n[\n[]\n]\n,[]\n',
    }
    for case, stream in bad.items():
        try:
            check_i3bar_stream(stream)
        except AssertionError as error:
            print(f"ok  {case}: {error}")
        else:
            raise SystemExit(f"accepted: {case}")
    print("i3bar_protocol self-test passed")
