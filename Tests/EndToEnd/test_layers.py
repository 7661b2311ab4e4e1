"""The core's layers are SwiftPM targets that depend one way (Tests/layers.py; docs/development.md,
"How it is built"): what the compiler cannot refuse is checked from the manifest.

Reads the manifest and the sources only: no perfhud binary, no build.
"""
import shutil
import subprocess
import sys

from conftest import ROOT

CHECKER = ROOT / "Tests" / "layers.py"


def run(*args, checker=CHECKER):
    return subprocess.run([sys.executable, str(checker), *args], capture_output=True, text=True, timeout=600)


def test_every_layer_depends_only_on_those_below_it_and_every_import_is_declared():
    result = run()
    assert result.returncode == 0, f"Tests/layers.py:\n{result.stdout}{result.stderr}"
    assert "Every layer depends only on those below it" in result.stdout
    assert "PerfHUDRuntime     <- PerfHUDSupport" in result.stdout
    # Live, replayed and the daemon's: each is a TickSink, and each reads the tick alone.
    sinks = result.stdout.split("Every sink of ticks reads the tick alone: ")[1]
    for sink in ["Recorder", "RowWriter", "ScreenSink", "SessionSummary", "TargetMetrics", "TargetJournal", "DaemonRecording"]:
        assert sink in sinks, sinks


def test_the_checker_finds_a_dependency_up_the_order_an_undeclared_import_and_a_sink_reading_beside_the_tick(tmp_path):
    """The checker itself, on a copy of the package: Store made to depend on Render (a use up the
    order that closes no circle SwiftPM would refuse), a file of Events importing Store, which
    Events does not depend on, and a sink that counts actions from the aggregator beside its ticks.
    Each is named, with the file."""
    shutil.copytree(ROOT / "Sources", tmp_path / "Sources", symlinks=True,
                    ignore=shutil.ignore_patterns("FrameHooks"))
    shutil.copytree(ROOT / "Tests", tmp_path / "Tests", ignore=shutil.ignore_patterns("EndToEnd", "Fixtures", "Fuzz", "GPU"))
    manifest = (ROOT / "Package.swift").read_text()
    store = '.target(name: "PerfHUDStore", dependencies: ["PerfHUDSupport", "PerfHUDSampling"]'
    assert store in manifest
    (tmp_path / "Package.swift").write_text(manifest.replace(store, store.replace('"PerfHUDSampling"]', '"PerfHUDSampling", "PerfHUDRender"]')))
    (tmp_path / "Packaging").mkdir()
    (tmp_path / "Sources" / "PerfHUDEvents" / "Upward.swift").write_text("import PerfHUDStore\n")
    (tmp_path / "Sources" / "PerfHUDOutput" / "Beside.swift").write_text(
        "import PerfHUDPipeline\n\n/// Counts actions (a comment naming EventAggregator is no use of it).\n"
        "final class ActionCounter: TickSink {\n    static var readsEveryFrame: Bool { false }\n"
        "    let events: SessionEvents\n    init(events: SessionEvents) { self.events = events }\n"
        "    func consume(_ tick: Tick) { _ = events.aggregator.actionTotals() }\n}\n")
    result = run(checker=tmp_path / "Tests" / "layers.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Use up the order: PerfHUDStore depends on PerfHUDRender" in result.stdout
    assert "Sources/PerfHUDEvents/Upward.swift imports PerfHUDStore, which PerfHUDEvents does not depend on" in result.stdout
    assert "Sources/PerfHUDOutput/Beside.swift:6: ActionCounter names SessionEvents" in result.stdout
    assert "Sources/PerfHUDOutput/Beside.swift:8: ActionCounter names .aggregator" in result.stdout
    assert "EventAggregator" not in result.stdout, "comments are not code"


def test_no_source_file_is_over_450_lines_or_holds_more_than_3_types():
    result = run("--sizes", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Every Swift file" in result.stdout
