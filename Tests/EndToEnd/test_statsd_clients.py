"""Issue 10, point 2: the real client libraries people already use, doing what docs/events.md shows.
PyPI `statsd` (no tags: the label goes in the metric name) over `--statsd-udp`, and PyPI `datadog`'s
DogStatsd over the Unix event socket (it normalises tag values, so labels go in the name there too,
and it buffers only when asked)."""
import json
import socket
import sys
import textwrap

from conftest import perfhud, json_rows_of

# TCA labels with what a metric name must carry: dots, parentheses, colons, commas, spaces.
MOVED = "Feature.Action.moved(x:, y:)"
ROW = "DebugTests.Action.screenA(.row(index:, action: .textChanged(query:)))"


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_client(script, *options, duration="4s"):
    """`perfhud run` a Python client; every action label seen in the reports, and the last report.
    With a threshold of 1 per second every label that arrives is listed in high_frequency_actions."""
    result = perfhud("run", "--output", "json", "--tick", "250ms", "--action-threshold", "1", "--duration", duration,
                     *options, "--", sys.executable, "-c", textwrap.dedent(script), timeout=60)
    reports = json_rows_of(result.stdout)
    assert reports, result.stderr
    labels = {entry["action"] for report in reports for entry in report["high_frequency_actions"]}
    return labels, reports[-1], result


def test_plain_statsd_client_sends_actions_and_phases_in_the_metric_name():
    port = free_udp_port()
    script = f"""
        import time, statsd
        client = statsd.StatsClient("127.0.0.1", {port})
        prefixed = statsd.StatsClient("127.0.0.1", {port}, prefix="myapp")
        time.sleep(0.5)
        client.incr("perfhud.phase.Gallery")
        client.incr("perfhud.action.Counter.tapped")
        prefixed.incr("perfhud.action.{MOVED}", 3)
        client.incr("perfhud.action.{ROW}", rate=1)
        client.timing("perfhud.frame", 16.7)
        # A burst as the README shows it: batched into datagrams by the client's pipeline.
        for batch in range(200):
            with client.pipeline() as pipe:
                for i in range(100):
                    pipe.incr("perfhud.action.{MOVED}")
        time.sleep(30)
    """
    labels, last, result = run_client(script, "--statsd-udp", f"127.0.0.1:{port}")
    assert labels == {"Counter.tapped", MOVED, ROW}, labels
    assert last["phase"] == "Gallery"
    assert last["actions_total"] == 1 + 3 + 1 + 20_000, result.stderr
    assert last["frames_total"] == 1
    assert last["events_received"] == 5 + 20_000
    assert last["events_malformed"] == 0 and last["events_ignored"] == 0


def test_datadog_client_as_the_readme_shows_keeps_every_line_and_label():
    # Exactly the README's settings, then a burst of 20,000 lines: every one must arrive.
    script = f"""
        import os, time
        from datadog.dogstatsd import DogStatsd
        statsd = DogStatsd(socket_path=os.environ["PERFHUD_SOCKET"], disable_buffering=False, socket_timeout=1,
                           disable_telemetry=True)
        time.sleep(0.5)
        statsd.increment("perfhud.phase.Editor")
        for i in range(10_000):
            statsd.increment("perfhud.action.{MOVED}")
            statsd.increment("perfhud.action.{ROW}")
        statsd.flush()
        time.sleep(30)
    """
    labels, last, result = run_client(script)
    assert labels == {MOVED, ROW}, labels
    assert last["events_received"] == 20_001, result.stderr
    assert last["actions_total"] == 20_000 and last["phase"] == "Editor"
    assert last["events_malformed"] == 0


def test_datadog_client_normalises_tag_values_as_the_readme_says():
    # The README tells users not to put labels in tags with this client: this is why.
    script = """
        import os, time
        from datadog.dogstatsd import DogStatsd
        statsd = DogStatsd(socket_path=os.environ["PERFHUD_SOCKET"], disable_telemetry=True)
        time.sleep(0.5)
        statsd.increment("perfhud.action", tags=["action:Feature.Action.slider(.changed(_:))"])
        statsd.increment("perfhud.action", tags=["action:Feature.Action.moved(x:, y:)"])
        time.sleep(30)
    """
    labels, last, _ = run_client(script, duration="2s")
    assert labels == {"Feature.Action.slider_.changed__:__", "Feature.Action.moved_x:__y:_"}, labels


def test_dogstatsd_events_and_service_checks_are_ignored_not_malformed():
    script = """
        import os, socket, time
        from datadog.dogstatsd import DogStatsd
        statsd = DogStatsd(socket_path=os.environ["PERFHUD_SOCKET"], disable_telemetry=True)
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        raw.connect(os.environ["PERFHUD_SOCKET"])
        time.sleep(0.5)
        raw.send(b"_e{5,4}:title|text")
        raw.send(b"_sc|name|0")
        statsd.event("Deployed", "version 2", alert_type="info", tags=["env:dev"])
        statsd.service_check("app.up", 0, message="fine")
        statsd.increment("perfhud.action.After.events")
        time.sleep(30)
    """
    labels, last, result = run_client(script, duration="2s")
    assert last["events_received"] == 5, result.stderr
    assert last["events_ignored"] == 4 and last["events_malformed"] == 0, last
    assert labels == {"After.events"}
