"""The network per process (issue 33) with real sockets: targets and peers are small Python programs
(helpers/net_peer.py) that move a known number of bytes once perfhud has read the network once, and
say what they moved and what their own TCP_INFO counted. Loopback known bytes at every sink of one
run (rows, summary, recording, report, --fail-on, replay, CSV, NDJSON), connections shorter than a
pass (destroy events), --include-children, a target in a network namespace of its own with segments
dropped by nftables (retransmits checked against the target's tcpi_total_retrans), UDP, the daemon."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

from test_recording import screenshot
from conftest import PERFHUD, ROOT, perfhud, wait_until, json_rows_of, summary_of
import test_daemon_targets as targets

HELPER = str(ROOT / "Tests/EndToEnd/helpers/net_peer.py")
UDP_REASON = "UDP not counted: the kernel keeps no bytes per UDP socket"
NOT_READ = "network not read yet"
SHORT_REASON = ("connections opened and closed between two passes (under a second) by the target's user are not counted: "
                "the kernel's socket events name no process")
NET_FIGURES = ["net_tx_bytes_per_second", "net_rx_bytes_per_second", "net_tx_bytes_total", "net_rx_bytes_total",
               "tcp_connections", "tcp_retransmits_per_second", "tcp_retransmits_total", "tcp_retransmit_percent",
               "tcp_rtt_ms", "net_source", "net_unreported_reason", "tcp_connections_opened_total", "tcp_connections_opened_per_second"]
RUN_FIGURES = ["net_tx_bytes_total", "net_rx_bytes_total", "tcp_retransmits_total", "net_tx_bytes_per_second_max",
               "net_rx_bytes_per_second_max", "net_tx_bytes_per_second_avg", "net_rx_bytes_per_second_avg",
               "tcp_connections_max", "tcp_rtt_ms_avg", "tcp_rtt_ms_max", "tcp_retransmits_per_second_max",
               "tcp_retransmit_percent_max"]

IS_ROOT = os.geteuid() == 0
HAS_IP = shutil.which("ip") is not None
HAS_NFT = shutil.which("nft") is not None
needs_root = pytest.mark.skipif(not IS_ROOT, reason="destroy events and setns need root")
needs_netns = pytest.mark.skipif(not (IS_ROOT and HAS_IP), reason="needs root and ip (iproute2)")
needs_nft = pytest.mark.skipif(not (IS_ROOT and HAS_IP and HAS_NFT), reason="needs root, ip and nft (nftables)")


def net(row):
    return {key: row.get(key) for key in NET_FIGURES}


def read(path):
    with open(path) as handle:
        return json.load(handle)


def is_read(row):
    return row.get("net_tx_bytes_total") is not None


class Watch:
    """`perfhud attach PID --output json` running, its lines read as they come (with when they came)."""

    def __init__(self, pid, *args, tick="250ms"):
        self.process = subprocess.Popen([PERFHUD, "attach", str(pid), "--output", "json", "--tick", tick, *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            if line.strip():
                self.lines.append((time.monotonic(), line))

    def rows(self):
        return [(at, json.loads(line)) for at, line in list(self.lines) if line.startswith('{"time"')]

    def wait_read(self, timeout=10):
        """Waits for the first row with figures (perfhud's first pass is done). - Returns: when it came."""
        assert wait_until(lambda: any(is_read(row) for _, row in self.rows()), timeout=timeout), \
            [net(row) for _, row in self.rows()] or self.process.stderr.read()
        return next(at for at, row in self.rows() if is_read(row))

    def finish(self, timeout=30):
        """Waits for perfhud to end (its target ended). - Returns: the output."""
        self.process.wait(timeout=timeout)
        self.reader.join(timeout=5)
        assert self.process.returncode == 0, self.process.stderr.read()
        return "".join(line for _, line in self.lines)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def started():
    """Processes (and perfhuds) started for a test, killed at its end."""
    processes, watches = [], []

    def start(*command, prefix=()):
        processes.append(subprocess.Popen([*prefix, sys.executable, HELPER, *command]))
        return processes[-1]

    def watch(*args, **kwargs):
        watches.append(Watch(*args, **kwargs))
        return watches[-1]

    start.watch = watch
    yield start
    for item in watches:
        item.kill()
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


def port_of(path, timeout=10):
    assert wait_until(lambda: os.path.exists(path), timeout=timeout), f"{path} never written"
    return read(path)["port"]


def port_of_sink(started, tmp_path, prefix=(), host="127.0.0.1"):
    started("sink", f"host={host}", f"portfile={tmp_path / 'sink'}", prefix=prefix)
    return port_of(str(tmp_path / "sink"))


def go(directory):
    (directory / "go").touch()


def passes(rows, key):
    """The figures each pass published, in order: (total, row of the first tick that showed it)."""
    seen, previous = [], None
    for row in rows:
        if is_read(row) and row[key] != previous:
            seen.append((row[key], row))
            previous = row[key]
    return seen


def steady(rows, key, final):
    """The rows of the passes whose whole interval lay inside the transfer: the pass before had
    already counted bytes, and this one had not counted them all."""
    published = passes(rows, key)
    return [row for (before, _), (total, row) in zip(published, published[1:]) if before > 0 and total < final]


def start_sender(started, tmp_path, port, role="sender", prefix=(), **settings):
    result = str(tmp_path / "result")
    values = {"port": port, "go": str(tmp_path / "go"), "result": result, **settings}
    target = started(role, *[f"{key}={value}" for key, value in values.items()], prefix=prefix)
    assert wait_until(lambda: os.path.exists(result + ".ready"), timeout=15), "the sender never connected"
    return read(result + ".ready")["pid"], result


# 3 connections, 3 MB/s out, 1 MB/s back, 4 s.
TX_RATE, RX_RATE, SECONDS, CONNECTIONS = 3_000_000, 999_999, 4.0, 3


def test_loopback_known_bytes_at_every_sink(tmp_path, started):
    port = port_of_sink(started, tmp_path)
    # It closes its connections and lives on for a pass after the transfer (the last pass at the
    # target's end is test_the_final_row_waits_for_the_last_pass's).
    pid, result = start_sender(started, tmp_path, port, connections=CONNECTIONS, tx=TX_RATE, rx=RX_RATE, seconds=SECONDS, hold=1.2)
    record = tmp_path / "net.db"
    watch = started.watch(pid, "--record", str(record))
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    said = read(result)
    rows, summary = json_rows_of(out), summary_of(out)
    assert said["received"] == said["back_expected"] and said["sent"] == int(TX_RATE * SECONDS), said

    # Before the first pass: unknown, with the reason; from it on, TCP with nothing left out.
    first = next(index for index, row in enumerate(rows) if is_read(row))
    for row in rows[:first]:
        assert row["net_unreported_reason"] == NOT_READ and row["net_tx_bytes_total"] is None and row["tcp_connections"] is None, net(row)
    for row in rows[first:]:
        assert row["net_source"] == "tcp" and row.get("net_unreported_reason") is None, net(row)

    final = rows[-1]
    assert final["alive"] is False
    # Every byte sent after the go, acknowledged by the peer; every byte received; at most each
    # connection's FIN on top (a sequence number, not a byte of data).
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + CONNECTIONS, (said, net(final))
    assert said["received"] <= final["net_rx_bytes_total"] <= said["received"] + CONNECTIONS, (said, net(final))
    # No loss on loopback: what the target's own TCP_INFO counted.
    assert final["tcp_retransmits_total"] == said["retrans_end"] - said["retrans_start"] == 0, (said, net(final))

    # While sending: the rates within 10 % of the real ones, the 3 connections, a loopback RTT.
    sending = steady(rows, "net_tx_bytes_total", final["net_tx_bytes_total"])
    assert len(sending) >= 2, [net(row) for row in rows]
    for row in sending:
        assert abs(row["net_tx_bytes_per_second"] - TX_RATE) <= 0.10 * TX_RATE, net(row)
        assert row["tcp_connections"] == CONNECTIONS, net(row)
        # Loopback: microseconds, but paced writes wait for delayed ACKs (ss -ti says 15-30 ms then).
        assert 0 < row["tcp_rtt_ms"] < 100, net(row)
        assert row["tcp_retransmits_per_second"] == 0 and row["tcp_retransmit_percent"] == 0, net(row)
    receiving = steady(rows, "net_rx_bytes_total", final["net_rx_bytes_total"])
    assert len(receiving) >= 2, [net(row) for row in rows]
    for row in receiving:
        assert abs(row["net_rx_bytes_per_second"] - RX_RATE) <= 0.10 * RX_RATE, net(row)
    # Totals never go back.
    totals = [(row["net_tx_bytes_total"], row["net_rx_bytes_total"]) for row in rows[first:]]
    assert totals == sorted(totals), totals

    # The summary line: the same totals, the peaks of the rows.
    assert summary["net_tx_bytes_total"] == final["net_tx_bytes_total"], summary
    assert summary["net_rx_bytes_total"] == final["net_rx_bytes_total"], summary
    assert summary["tcp_retransmits_total"] == 0 and summary["tcp_connections_max"] == CONNECTIONS, summary
    # (A row gives whole bytes a second; the summary keeps the fraction.)
    assert abs(summary["net_tx_bytes_per_second_max"] - max(row["net_tx_bytes_per_second"] or 0 for row in rows)) <= 1, summary
    assert abs(summary["net_rx_bytes_per_second_max"] - max(row["net_rx_bytes_per_second"] or 0 for row in rows)) <= 1, summary
    assert 0 < summary["tcp_rtt_ms_avg"] < 100, summary

    # The recording: report, --fail-on, replay, exports.
    report = perfhud("report", str(record), "--format", "json")
    assert report.returncode == 0, report.stderr
    reported = json.loads(report.stdout)
    exact = [key for key in RUN_FIGURES if "bytes_per_second" not in key]
    assert {key: reported.get(key) for key in exact} == {key: summary.get(key) for key in exact}
    # The recording keeps whole bytes a second (as the rows give them): the rates within a byte a second.
    for key in set(RUN_FIGURES) - set(exact):
        assert abs(reported[key] - summary[key]) <= 1, (key, reported[key], summary[key])
    total = final["net_tx_bytes_total"]
    assert perfhud("report", str(record), "--fail-on", f"net_tx_bytes_total > {total - 1}").returncode == 1
    assert perfhud("report", str(record), "--fail-on", f"net_tx_bytes_total > {total}").returncode == 0
    assert perfhud("report", str(record), "--fail-on", f"net_rx_bytes_total < {final['net_rx_bytes_total'] + 1}").returncode == 1
    assert perfhud("report", str(record), "--fail-on", "tcp_retransmits_total > 0").returncode == 0
    replay = perfhud("replay", str(record), "--output", "json", "--no-summary")
    assert replay.returncode == 0, replay.stderr
    replayed = json_rows_of(replay.stdout)
    assert [net(row) for row in replayed] == [net(row) for row in rows]
    exported = perfhud("export", str(record), "--format", "csv")
    assert exported.returncode == 0, exported.stderr
    table = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert (table[-1]["net_tx_bytes_total"], table[-1]["net_rx_bytes_total"]) == \
        (str(final["net_tx_bytes_total"]), str(final["net_rx_bytes_total"])), table[-1]
    assert [row["tcp_connections"] for row in table] == [str(row["tcp_connections"] if row["tcp_connections"] is not None else "") for row in rows]
    ndjson = perfhud("export", str(record), "--format", "ndjson")
    assert ndjson.returncode == 0, ndjson.stderr
    assert [net(row) for row in json_rows_of(ndjson.stdout)] == [net(row) for row in rows]
    # The HTML report: the network charted (sent at the rate sent), and no table of frames this
    # program never reported ahead of what it has.
    page = tmp_path / "net.html"
    assert perfhud("report", str(record), "--format", "html", "-o", str(page)).returncode == 0
    html = page.read_text()
    assert "<h3>Network</h3>" in html and "<title>sent" in html and "<title>received" in html, html[:3000]
    captions = re.findall(r"<caption>([^<]*)</caption>", html)
    assert captions[0] == "CPU and memory" and "Frames" not in captions, captions
    assert html.index("<h3>Network</h3>") < html.index("no frames recorded"), "what the run has comes first"
    screenshot(page, tmp_path, "network-report.png", size=(1280, 2400))


def test_the_final_row_waits_for_the_last_pass(tmp_path, started):
    # The target ends right after its last bytes, and its parent (this test) reaps it only a second
    # later, as a supervisor or a script may: the row saying it ended holds every byte all the same.
    port = port_of_sink(started, tmp_path)
    pid, result = start_sender(started, tmp_path, port, connections=CONNECTIONS, tx=TX_RATE, rx=RX_RATE, seconds=2, hold=0)
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    said, final = read(result), json_rows_of(out)[-1]
    assert final["alive"] is False
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + CONNECTIONS, (said, net(final))
    assert said["received"] <= final["net_rx_bytes_total"] <= said["received"] + CONNECTIONS, (said, net(final))
    assert final["tcp_connections"] == 0, net(final)
    assert summary_of(out)["net_tx_bytes_total"] == final["net_tx_bytes_total"]


def test_connections_shut_down_but_held_open_keep_their_last_bytes(tmp_path, started):
    # Both ends have sent their FIN, the target still holds its descriptors (TCP_CLOSE, no longer
    # in the kernel's socket tables) for over a pass, then closes them: every byte counted all the same
    # once they are closed (the destroy event carries the last counters; while held, no dump or look-up
    # finds the socket, so the bytes since the last pass are not known yet: never more than were sent).
    port = port_of_sink(started, tmp_path)
    pid, result = start_sender(started, tmp_path, port, connections=CONNECTIONS, tx=TX_RATE, rx=RX_RATE, seconds=2,
                               hold=1.5, closeat="end")
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    said, rows = read(result), json_rows_of(out)
    held = [row for row in rows if row["alive"] and row["tcp_connections"] == 0 and (row["net_tx_bytes_total"] or 0) > 0]
    assert held, [net(row) for row in rows]
    assert held[-1]["net_tx_bytes_total"] <= said["sent"] and held[-1]["net_rx_bytes_total"] <= said["received"], (said, net(held[-1]))
    totals = [row["net_tx_bytes_total"] for row in rows if row["net_tx_bytes_total"] is not None]
    assert totals == sorted(totals), "a total never goes back"
    final = rows[-1]
    if os.geteuid() == 0:
        assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + CONNECTIONS, (said, net(final))
        assert said["received"] <= final["net_rx_bytes_total"] <= said["received"] + CONNECTIONS, (said, net(final))


@needs_root
def test_connections_shorter_than_a_pass_are_counted(tmp_path, started):
    inbytes, outbytes, connections = 200_000, 100_000, 10
    portfile, result = str(tmp_path / "port"), str(tmp_path / "result")
    target = started("server", f"portfile={portfile}", f"result={result}", f"connections={connections}",
                     f"inbytes={inbytes}", f"outbytes={outbytes}", "hold=2.5")
    port = port_of(portfile)
    started("client", f"port={port}", f"go={tmp_path / 'go'}", f"result={tmp_path / 'client'}",
            f"connections={connections}", f"inbytes={inbytes}")
    watch = started.watch(target.pid, tick="100ms")
    seen = watch.wait_read()
    # The pass that published came at most a tick before: the next is about a second after it. The
    # client's burst goes in the middle, so that all ten connections open and close between two passes.
    time.sleep(max(0, seen + 0.3 - time.monotonic()))
    go(tmp_path)
    out = watch.finish()
    rows, burst, said = json_rows_of(out), read(str(tmp_path / "client")), read(result)
    assert burst["ended"] - burst["began"] < 0.5, burst
    assert said == {**said, "received": inbytes * connections, "sent": outbytes * connections}
    assert burst["answers"] == outbytes * connections
    read_rows = [row for row in rows if is_read(row)]
    # No pass ever found a connection open: the target held only its listening socket.
    for row in read_rows:
        assert row["tcp_connections"] == 0 and row["net_source"] == "tcp" and row.get("net_unreported_reason") is None, net(row)
    final = rows[-1]
    # Each connection counted as opened (accepted) from its destroy event: the client's count.
    assert final["tcp_connections_opened_total"] == connections, net(final)
    assert summary_of(out)["tcp_connections_opened_total"] == connections
    # Each connection's bytes from its closing (the kernel's destroy event): at most its FIN more.
    assert inbytes * connections <= final["net_rx_bytes_total"] <= inbytes * connections + connections, net(final)
    assert outbytes * connections <= final["net_tx_bytes_total"] <= outbytes * connections + connections, net(final)
    # Counted at the pass after the burst: the rows before the target ended already had them.
    held = [row for row in read_rows if row["alive"] and row["net_tx_bytes_total"] > 0]
    assert held and held[-1]["net_tx_bytes_total"] == final["net_tx_bytes_total"], [net(row) for row in read_rows]
    # Idle the last second: rates a measured 0.
    assert held[-1]["net_tx_bytes_per_second"] == 0 and held[-1]["net_rx_bytes_per_second"] == 0, net(held[-1])
    assert summary_of(out)["net_rx_bytes_total"] == final["net_rx_bytes_total"]


def test_include_children_counts_the_childs_sockets(tmp_path, started):
    port = port_of_sink(started, tmp_path)
    # The parent holds no socket; its child (started before perfhud) does the talking.
    child, result = start_sender(started, tmp_path, port, role="parent", connections=1, tx=1_000_000, rx=500_000, seconds=2, hold=1.2)
    parent = int(open(f"/proc/{child}/stat").read().rsplit(")", 1)[1].split()[1])
    assert parent != child and open(f"/proc/{parent}/cmdline").read().split("\0")[2] == "parent"
    tree = started.watch(parent, "--include-children")
    alone = started.watch(parent)
    tree.wait_read()
    alone.wait_read()
    go(tmp_path)
    tree_out, alone_out = tree.finish(), alone.finish()
    said = read(result)
    final = json_rows_of(tree_out)[-1]
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + 1, (said, net(final))
    assert said["received"] <= final["net_rx_bytes_total"] <= said["received"] + 1, (said, net(final))
    assert max(row["tcp_connections"] or 0 for row in json_rows_of(tree_out)) == 1
    assert summary_of(tree_out)["net_tx_bytes_total"] == final["net_tx_bytes_total"]
    # The parent alone: a measured 0 at every pass, not unknown.
    rows = [row for row in json_rows_of(alone_out) if is_read(row)]
    assert len(rows) >= 8, [net(row) for row in json_rows_of(alone_out)]
    for row in rows:
        assert (row["net_tx_bytes_total"], row["net_rx_bytes_total"], row["tcp_connections"], row["tcp_retransmits_total"]) == (0, 0, 0, 0), net(row)
        assert row["net_source"] == "tcp" and row.get("net_unreported_reason") is None, net(row)
        assert row["net_tx_bytes_per_second"] in (0, None) and row["net_rx_bytes_per_second"] in (0, None), net(row)
    assert rows[-1]["net_tx_bytes_per_second"] == 0, net(rows[-1])
    assert summary_of(alone_out)["net_tx_bytes_total"] == 0 and summary_of(alone_out)["net_rx_bytes_total"] == 0


class Namespaces:
    """Two network namespaces joined by a veth pair: the target's (A, 10.213.7.1) and its peer's (B, 10.213.7.2)."""

    def __init__(self):
        suffix = os.getpid()
        self.a, self.b = f"perfhud-a-{suffix}", f"perfhud-b-{suffix}"
        self.address_a, self.address_b = "10.213.7.1", "10.213.7.2"

    def make(self):
        suffix = os.getpid()
        for name in (self.a, self.b):
            subprocess.run(["ip", "netns", "add", name], check=True)
        veth_a, veth_b = f"phA{suffix % 100000}", f"phB{suffix % 100000}"
        commands = [
            ["ip", "link", "add", veth_a, "netns", self.a, "type", "veth", "peer", "name", veth_b, "netns", self.b],
        ]
        for name, veth, address in ((self.a, veth_a, self.address_a), (self.b, veth_b, self.address_b)):
            commands += [
                # IPv6 off: no router solicitations or neighbour discovery in the interface counters.
                ["ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
                ["ip", "-n", name, "link", "set", "lo", "up"],
                ["ip", "-n", name, "addr", "add", f"{address}/24", "dev", veth],
                ["ip", "-n", name, "link", "set", veth, "up"],
            ]
        for command in commands:
            subprocess.run(command, check=True, capture_output=True)

    def drop_incoming_tcp(self, name, percent):
        """nftables in namespace `name`: drops `percent` % of the TCP segments coming in."""
        for rule in (["add", "table", "inet", "perfhud"],
                     ["add", "chain", "inet", "perfhud", "in", "{ type filter hook input priority 0; }"],
                     ["add", "rule", "inet", "perfhud", "in", "meta", "l4proto", "tcp", "numgen", "random", "mod", "100", "<", str(percent), "drop"]):
            subprocess.run(["ip", "netns", "exec", name, "nft", *rule], check=True)

    def prefix(self, name):
        return ("ip", "netns", "exec", name)

    def remove(self):
        for name in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


@pytest.fixture
def namespaces():
    made = Namespaces()
    try:
        made.make()
        yield made
    finally:
        made.remove()


def test_loopback_in_a_namespace_of_its_own_is_counted(tmp_path, started, namespaces):
    """A target in a namespace of its own sending to a peer in the same namespace over 127.0.0.1
    (a pod's app and its sidecar on localhost): no interface but `lo` carries it, which the
    namespace's count leaves out; its TCP sockets carried it, and those bytes are its."""
    port = port_of_sink(started, tmp_path, prefix=namespaces.prefix(namespaces.a), host="127.0.0.1")
    payload_rate, seconds = 4_000_000, 2.0
    pid, result = start_sender(started, tmp_path, port, prefix=namespaces.prefix(namespaces.a), host="127.0.0.1",
                               connections=1, tx=payload_rate, rx=0, seconds=seconds, hold=1.2)
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    said, final = read(result), json_rows_of(out)[-1]
    assert said["sent"] >= 7_000_000, said
    assert final["net_source"] == "netns", net(final)
    # The payload its socket sent (acknowledged by the peer), at most its FIN more, and nothing of
    # the veth (idle).
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + 1 + 2_000, (said, net(final))


def test_short_client_connections_are_said_not_counted(tmp_path, started):
    """A client without keep-alive: 10 connections of 4 MiB, each opened and closed between two
    passes. No pass sees one, and the kernel's destroy events name no process: the bytes are not
    counted, and every row after them says so, never a silent 0."""
    inbytes, connections = 4 << 20, 10
    portfile = str(tmp_path / "port")
    started("server", f"portfile={portfile}", f"result={tmp_path / 'server'}", f"connections={connections}",
            f"inbytes={inbytes}", "outbytes=1000", "hold=5")
    port = port_of(portfile)
    client = started("client", f"port={port}", f"go={tmp_path / 'go'}", f"result={tmp_path / 'client'}",
                     f"connections={connections}", f"inbytes={inbytes}", "hold=2")
    watch = started.watch(client.pid, tick="100ms")
    seen = watch.wait_read()
    time.sleep(max(0, seen + 0.3 - time.monotonic()))
    go(tmp_path)
    out = watch.finish()
    burst = read(str(tmp_path / "client"))
    assert burst["ended"] - burst["began"] < 0.6, burst
    rows = [row for row in json_rows_of(out) if is_read(row)]
    after = [row for row in rows if row.get("net_unreported_reason") == SHORT_REASON]
    assert after, [net(row) for row in rows]
    # Once said, said to the end: the totals lack those bytes for good.
    assert rows[-1].get("net_unreported_reason") == SHORT_REASON, net(rows[-1])
    assert all(row["tcp_connections"] == 0 for row in rows), [net(row) for row in rows]


@needs_nft
def test_a_namespace_of_its_own_counts_its_interfaces_and_the_kernels_retransmits(tmp_path, started, namespaces):
    # The receiver's namespace drops 3 % of the segments coming in: the target's data, which it resends.
    namespaces.drop_incoming_tcp(namespaces.b, 3)
    port = port_of_sink(started, tmp_path, prefix=namespaces.prefix(namespaces.b), host=namespaces.address_b)
    payload_rate, seconds = 2_000_000, 2.5
    pid, result = start_sender(started, tmp_path, port, prefix=namespaces.prefix(namespaces.a), host=namespaces.address_b,
                               connections=1, tx=payload_rate, rx=0, seconds=seconds, hold=1.2)
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    said, rows = read(result), json_rows_of(out)
    read_rows = [row for row in rows if is_read(row)]
    for row in read_rows:
        assert row["net_source"] == "netns" and row.get("net_unreported_reason") is None, net(row)
    final = rows[-1]
    resent = said["retrans_end"] - said["retrans_start"]
    assert resent > 0, said
    # The kernel's count for the target's socket, from when perfhud started watching.
    assert final["tcp_retransmits_total"] == resent, (said, net(final))
    # The interfaces' bytes: every segment with its headers, the resent ones too.
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] * 1.15, (said, net(final))
    assert final["net_rx_bytes_total"] > 0, net(final)
    assert max(row["tcp_connections"] or 0 for row in read_rows) == 1, [net(row) for row in read_rows]
    assert any((row["tcp_retransmit_percent"] or 0) > 0 for row in read_rows), [net(row) for row in read_rows]
    assert any((row["tcp_retransmits_per_second"] or 0) > 0 for row in read_rows), [net(row) for row in read_rows]
    summary = summary_of(out)
    assert summary["tcp_retransmits_total"] == resent and summary["net_tx_bytes_total"] == final["net_tx_bytes_total"], summary


def test_udp_is_said_not_counted(tmp_path, started):
    started("udpsink", f"portfile={tmp_path / 'sink'}")
    port = port_of(str(tmp_path / "sink"))
    pid, result = start_sender(started, tmp_path, port, role="udp", host="127.0.0.1", size=1000, count=100, rate=100, hold=0.5)
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    rows = json_rows_of(watch.finish())
    assert read(result)["sent"] == 100_000
    assert rows and all(row.get("net_unreported_reason") in (NOT_READ, UDP_REASON) for row in rows), [net(row) for row in rows]
    assert all(row["net_unreported_reason"] == UDP_REASON for row in rows if is_read(row)), [net(row) for row in rows]
    assert rows[-1]["net_unreported_reason"] == UDP_REASON, net(rows[-1])


@needs_netns
def test_udp_in_a_namespace_of_its_own_is_counted(tmp_path, started, namespaces):
    started("udpsink", f"host={namespaces.address_b}", f"portfile={tmp_path / 'sink'}", prefix=namespaces.prefix(namespaces.b))
    port = port_of(str(tmp_path / "sink"))
    size, count = 1000, 150
    pid, result = start_sender(started, tmp_path, port, role="udp", prefix=namespaces.prefix(namespaces.a), host=namespaces.address_b,
                               size=size, count=count, rate=100, hold=1.2)
    watch = started.watch(pid)
    watch.wait_read()
    go(tmp_path)
    out = watch.finish()
    rows, said = json_rows_of(out), read(result)
    for row in (row for row in rows if is_read(row)):
        assert row["net_source"] == "netns" and row.get("net_unreported_reason") is None, net(row)
    final = rows[-1]
    # Each datagram with its UDP, IP and Ethernet headers (42 bytes), and an ARP exchange or two.
    assert said["sent"] <= final["net_tx_bytes_total"] <= said["sent"] + count * 42 + 500, (said, net(final))
    assert summary_of(out)["net_tx_bytes_total"] == final["net_tx_bytes_total"]


def test_the_daemon_exports_what_the_rows_say(tmp_path, started):
    port = port_of_sink(started, tmp_path)
    pid, result = start_sender(started, tmp_path, port, connections=CONNECTIONS, tx=1_500_000, rx=600_000, seconds=3, hold=2.5)
    idle = subprocess.Popen(["sleep", "60"])
    # Two targets: --events names a directory of sockets (with one, it would name the socket).
    daemon = targets.Daemon("--pid", f"web={pid}", "--pid", f"idle={idle.pid}")
    try:
        label = '{target="web"}'
        names = {"tx": "perfhud_target_network_transmit_bytes_total", "rx": "perfhud_target_network_receive_bytes_total",
                 "connections": "perfhud_target_tcp_connections", "retransmits": "perfhud_target_tcp_retransmits_total",
                 "ratio": "perfhud_target_tcp_retransmit_ratio", "rtt": "perfhud_target_tcp_rtt_seconds"}
        watch = started.watch(pid)
        watch.wait_read()
        assert wait_until(lambda: daemon.value(names["tx"], label) is not None, timeout=10), daemon.metrics()
        go(tmp_path)
        scrapes = []
        while not os.path.exists(result):
            scrapes.append((time.monotonic(), {key: daemon.value(name, label) for key, name in names.items()}))
            time.sleep(0.15)
        said = read(result)
        # The target has closed its connections: the pass after has all their bytes.
        assert wait_until(lambda: (daemon.value(names["tx"], label) or 0) >= said["sent"], timeout=2), \
            (said, {key: daemon.value(name, label) for key, name in names.items()}, [values for _, values in scrapes])
        settled = {key: daemon.value(name, label) for key, name in names.items()}
        out = watch.finish()
        assert daemon.value(names["tx"], '{target="idle"}') == 0 and daemon.value(names["connections"], '{target="idle"}') == 0
    finally:
        daemon.stop()
        idle.kill()
        idle.wait()
    rows = [(at, row) for at, row in watch.rows() if is_read(row)]
    final = json_rows_of(out)[-1]
    # Once the target is done: the same totals as the rows (the same bytes, counted from their first passes).
    assert settled["tx"] == final["net_tx_bytes_total"] and settled["rx"] == final["net_rx_bytes_total"], (settled, net(final))
    assert settled["retransmits"] == final["tcp_retransmits_total"] == 0 and settled["ratio"] == 0, settled
    # Its connections closed: none established.
    assert settled["connections"] == 0, settled
    # While sending: each scrape within a pass of the rows' figures; counters never go back.
    for key, figure in (("tx", "net_tx_bytes_total"), ("rx", "net_rx_bytes_total")):
        values = [values[key] for _, values in scrapes]
        assert values == sorted(values), values
        for at, values in scrapes:
            before = [row[figure] for arrived, row in rows if arrived <= at - 1.3] or [0]
            after = [row[figure] for arrived, row in rows if arrived >= at + 1.3] or [final[figure]]
            assert before[-1] <= values[key] <= after[0], (key, values[key], before[-1], after[0])
    assert any(values["connections"] == CONNECTIONS for _, values in scrapes), scrapes
    for _, values in scrapes:
        assert values["rtt"] is None or 0 < values["rtt"] < 0.1, values
    assert any(values["rtt"] for _, values in scrapes), scrapes
