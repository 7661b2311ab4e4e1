"""Where the daemon listens: IPv4, IPv6 in brackets as a URL writes it ([::1]:9469, [::]:9469),
and messages that name the address the user gave, never a Swift type."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import urllib.request

import pytest

from conftest import PERFHUD, perfhud, wait_until, json_rows_of

TYPE_NAME = re.compile(r"[A-Z][A-Za-z]*Error\b|SocketAddress|NIO|Swift")


def free_port(family=socket.AF_INET6, host="::1"):
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def ipv6_loopback():
    try:
        free_port()
        return True
    except OSError:
        return False


needs_ipv6 = pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")


def start(listen):
    events = os.path.join(tempfile.mkdtemp(), "events.sock")
    return subprocess.Popen([PERFHUD, "daemon", "--pid", str(os.getpid()), "--metrics-listen", listen, "--events", events,
                             "--tick", "250ms", "--log-interval", "1h"], stderr=subprocess.PIPE, text=True)


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


def serving(url):
    try:
        return scrape(url)[0] == 200
    except OSError:
        return False


def stop(daemon):
    daemon.terminate()
    _, err = daemon.communicate(timeout=30)
    return daemon.returncode, err


@needs_ipv6
@pytest.mark.parametrize("listen_host, reach", [("[::1]", ["[::1]"]), ("[::]", ["[::1]", "127.0.0.1"])])
def test_the_daemon_listens_on_ipv6(listen_host, reach):
    port = free_port()
    daemon = start(f"{listen_host}:{port}")
    try:
        for host in reach:
            url = f"http://{host}:{port}/metrics"
            assert wait_until(lambda: serving(url), timeout=15), f"nothing serves {url}"
            status, body = scrape(url)
            assert status == 200 and "perfhud_target_up" in body
    finally:
        status, err = stop(daemon)
    assert status == 0, err
    assert f"metrics on http://{listen_host}:{port}/metrics" in err, "the URL as a browser takes it: " + err


@pytest.mark.parametrize("listen, says", [
    ("::1:9469", "--metrics-listen wants HOST:PORT, such as 127.0.0.1:9469 or [::1]:9469 (an IPv6 address in brackets); got '::1:9469'"),
    ("[::1]", "--metrics-listen wants HOST:PORT"),
    ("[127.0.0.1]:9469", "--metrics-listen wants HOST:PORT"),
    ("localhost:0", "--metrics-listen wants HOST:PORT"),
])
def test_an_address_that_cannot_be_read_is_refused_with_the_form_it_wants(listen, says):
    result = perfhud("daemon", "--pid", "1", "--metrics-listen", listen)
    assert result.returncode == 64, result
    assert result.stderr.startswith(f"perfhud: {says}") and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("listen, reason", [
    ("no-such-host.invalid:9469", "no such host"),
    ("192.0.2.1:9469", "cannot assign requested address"),   # TEST-NET-1: no interface has it
])
def test_an_address_that_cannot_be_had_says_why_in_one_line(listen, reason):
    result = perfhud("daemon", "--pid", str(os.getpid()), "--metrics-listen", listen, timeout=30)
    assert result.returncode == 69, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot listen on {listen}: {reason}" in lines[0], result.stderr
    assert not TYPE_NAME.search(result.stderr), result.stderr


@needs_ipv6
def test_an_ipv6_address_in_use_is_named_with_brackets():
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as taken:
        taken.bind(("::1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = perfhud("daemon", "--pid", str(os.getpid()), "--metrics-listen", f"[::1]:{port}", timeout=30)
    assert result.returncode == 69
    assert result.stderr == f"perfhud: error: cannot listen on [::1]:{port}: address already in use\n", result.stderr


@needs_ipv6
def test_statsd_datagrams_arrive_over_ipv6():
    port = free_port(socket.AF_INET6)
    sender = ("import socket, time; s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); time.sleep(0.5)\n"
              f"for _ in range(5): s.sendto(b'perfhud.action.Tapped:1|c', ('::1', {port}))\n"
              "time.sleep(30)")
    result = perfhud("run", "--output", "json", "--tick", "200ms", "--duration", "2s", "--statsd-udp", f"[::1]:{port}",
                     "--", sys.executable, "-c", sender, timeout=30)
    assert result.returncode == 0, result.stderr
    assert json_rows_of(result.stdout)[-1]["events_received"] == 5, result.stdout[-400:]
