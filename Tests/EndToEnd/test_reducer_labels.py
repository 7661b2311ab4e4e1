"""Issue 10, point 1: `--actions-from` on The Composable Architecture's real `_printChanges()` text
(Tests/Fixtures/tca, see its README) names actions as TCA's `.actionLabels` printer does, every enum
case kept at every depth, whichever of TCA's two printers wrote the log."""
import json
import subprocess

from conftest import PERFHUD, ROOT, json_rows_of

FIXTURES = ROOT / "Tests" / "Fixtures" / "tca"

# The labels TCA gives these actions, one a line (debugtests: its DebugTests.testDebugCaseOutput
# assertions); the Swift tests read the same files.
DEBUG_TESTS = (FIXTURES / "debugtests.labels.txt").read_text().splitlines()
NAVIGATION = (FIXTURES / "navigation.labels.txt").read_text().splitlines()
DOCS = ["AppFeature.Action.syncUpsList(.addSyncUpButtonTapped)", "AppFeature.Action.syncUpsList(.onDelete)"]


def labels_read(text):
    """perfhud attach --actions-from - on `text`: every label it reported, and its last report.
    A threshold of 1 per second lists each action read among high_frequency_actions."""
    target = subprocess.Popen(["sleep", "30"])
    try:
        result = subprocess.run([PERFHUD, "attach", str(target.pid), "--actions-from", "-", "--output", "json",
                                 "--tick", "100ms", "--action-threshold", "1", "--count", "8"],
                                input=text, capture_output=True, text=True, timeout=30)
    finally:
        target.kill()
        target.wait()
    reports = json_rows_of(result.stdout)
    assert reports, result.stderr
    seen = {entry["action"] for report in reports for entry in report["high_frequency_actions"]}
    return seen, reports[-1]


def fixture(name):
    return (FIXTURES / name).read_text()


def test_both_printer_forms_of_tcas_own_actions_give_tcas_labels():
    for form in ("actionLabels", "customDump"):
        seen, last = labels_read(fixture(f"debugtests.{form}.txt") + fixture(f"navigation.{form}.txt"))
        assert seen == set(DEBUG_TESTS + NAVIGATION), (form, seen)
        assert last["actions_total"] == len(DEBUG_TESTS + NAVIGATION), form


def test_tcas_documentation_dumps():
    seen, last = labels_read(fixture("faq.customDump.txt") + "\n" + fixture("syncups-ondelete.customDump.txt"))
    assert seen == set(DOCS), seen
    assert last["actions_total"] == 2
