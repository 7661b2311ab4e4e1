"""GPU per process (issue 32) without a GPU: perfhud loads a stand-in `libnvidia-ml.so.1`
(Tests/GPU/fake_nvml.c, NVML's ABI, proven against pynvml's structs by Tests/GPU/test_fake_nvml_abi.py)
through LD_LIBRARY_PATH, driven by a scenario file it re-reads at every call. Every figure at every
sink of one run (row, recording, report, replay, CSV, daemon), the size-then-fill pattern, NOT_FOUND,
NO_PERMISSION, a missing symbol, a call that stalls, a list that changes; and without the library,
a reason and no zeros."""
import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import PERFHUD, ROOT, perfhud, wait_until, json_rows_of, summary_of
import test_daemon_targets as targets

GPU_FIGURES = ["gpu_percent", "gpu_memory_bytes", "gpu_memory_busy_percent", "gpu_encoder_percent", "gpu_decoder_percent",
               "gpu_name", "gpu_device_percent", "gpu_device_memory_used_bytes", "gpu_device_memory_total_bytes",
               "gpu_temperature_celsius", "gpu_power_watts", "gpu_clock_mhz", "gpu_throttle_reasons"]


def build(tmp_path_factory, name, *flags):
    out = tmp_path_factory.mktemp(name)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", *flags, "-o", str(out / "libnvidia-ml.so.1"),
                    str(ROOT / "Tests/GPU/fake_nvml.c"), "-lpthread"], check=True)
    return out


@pytest.fixture(scope="module")
def nvml(tmp_path_factory):
    return build(tmp_path_factory, "nvml")


class Scenario:
    def __init__(self, directory, library):
        self.path = directory / "scenario"
        self.log = directory / "calls.log"
        self.library = library
        self.values = {}

    def write(self, **values):
        self.values.update({key.replace("__", "."): value for key, value in values.items()})
        temporary = self.path.with_suffix(".new")
        temporary.write_text("".join(f"{key}={value}\n" for key, value in self.values.items()) + f"log={self.log}\n")
        os.replace(temporary, self.path)

    @property
    def env(self):
        return {**os.environ, "FAKE_NVML_SCENARIO": str(self.path), "LD_LIBRARY_PATH": str(self.library)}


@pytest.fixture
def sleeper():
    """A process to attach to, and another that is not the target; their PIDs."""
    started = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    yield [process.pid for process in started]
    for process in started:
        process.kill()
        process.wait()


def scenario_for(tmp_path, library, target, other, **extra):
    scenario = Scenario(tmp_path, library)
    values = dict(devices=1, device__0__name="NVIDIA H100 80GB HBM3", device__0__memory_total=85520809984,
                  device__0__memory_used=10422845440, device__0__utilization_gpu=99, device__0__temperature=62,
                  device__0__power_mw=638498, device__0__clock_sm_mhz=1980, device__0__clocks_event_reasons=4,
                  device__0__compute=f"{target}:7358906368,{other}:3063939072",
                  device__0__samples=f"{target}:17:2:3:4,{other}:79:4:0:0")
    scenario.write(**{**values, **extra})
    return scenario


def gpu(row):
    return {key: row.get(key) for key in GPU_FIGURES + ["gpu_unreported_reason"]}


def attach(pid, scenario, *args, count=8, tick="250ms"):
    result = perfhud("attach", str(pid), "--output", "json", "--tick", tick, "--count", str(count), *args, env=scenario.env)
    assert result.returncode == 0, result.stderr
    return [row for row in json_rows_of(result.stdout)]


def test_every_figure_at_every_sink(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other)
    path = tmp_path / "gpu.db"
    result = perfhud("attach", str(target), "--output", "json", "--tick", "250ms", "--count", "8", "--record", str(path), env=scenario.env)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    read = [row for row in rows if row.get("gpu_unreported_reason") is None]
    assert len(read) >= 6, [gpu(row) for row in rows]
    for row in read:
        # NVML's figures for the target's PID, not the other process's, not the device's.
        assert gpu(row) == {"gpu_percent": 17, "gpu_memory_bytes": 7358906368, "gpu_memory_busy_percent": 2,
                            "gpu_encoder_percent": 3, "gpu_decoder_percent": 4, "gpu_name": "NVIDIA H100 80GB HBM3",
                            "gpu_device_percent": 99, "gpu_device_memory_used_bytes": 10422845440,
                            "gpu_device_memory_total_bytes": 85520809984, "gpu_temperature_celsius": 62,
                            "gpu_power_watts": 638.498, "gpu_clock_mhz": 1980, "gpu_throttle_reasons": 4,
                            "gpu_unreported_reason": None}, row
    # Before the first reading, if a row came first: unknown, with the reason, never 0.
    for row in rows[:len(rows) - len(read)]:
        assert row["gpu_unreported_reason"] == "GPU not read yet" and row["gpu_percent"] is None and row["gpu_memory_bytes"] is None
    summary = summary_of(result.stdout)
    assert summary["gpu_memory_bytes_max"] == 7358906368 and summary["gpu_percent_max"] == 17 and summary["gpu_power_watts_max"] == 638.498

    # The recording, report, --fail-on, replay and exports say the same.
    report = perfhud("report", str(path), "--format", "json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout) == summary
    assert perfhud("report", str(path), "--fail-on", "gpu_memory_bytes_max > 7000000000").returncode == 1
    assert perfhud("report", str(path), "--fail-on", "gpu_percent_max > 20").returncode == 0
    markdown = perfhud("report", str(path)).stdout
    assert "| gpu_memory_bytes_max | 6.85 GiB |" in markdown and "| gpu_power_watts_max | 638.5 W |" in markdown, markdown
    page = perfhud("report", str(path), "--format", "html").stdout
    assert re.search(r'data-key="gpu_memory_bytes_max"><td>GPU memory, peak <code>gpu_memory_bytes_max</code></td><td>6.85 GiB</td>', page), page[:3000]
    replay = perfhud("replay", str(path), "--output", "json", "--speed", "64", "--no-summary")
    assert replay.returncode == 0, replay.stderr
    assert [gpu(row) for row in json_rows_of(replay.stdout)] == [gpu(row) for row in rows]
    exported = perfhud("export", str(path), "--format", "csv")
    table = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [row["gpu_memory_bytes"] for row in table] == [str(row["gpu_memory_bytes"] or "") for row in rows]
    assert [row["gpu_throttle_reasons"] for row in table][-1] == "4"
    database = sqlite3.connect(str(path))
    assert database.execute("PRAGMA user_version").fetchone()[0] == 10
    assert database.execute("SELECT gpu_name_from_here FROM samples WHERE gpu_name_from_here != ''").fetchall() == [("NVIDIA H100 80GB HBM3",)]
    database.close()


def test_size_then_fill_and_a_list_that_grows_in_between(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other, grow__nvmlDeviceGetComputeRunningProcesses_v3=6)
    rows = attach(target, scenario, count=6)
    assert rows[-1]["gpu_memory_bytes"] == 7358906368, gpu(rows[-1])
    calls = [line for line in scenario.log.read_text().splitlines() if line.startswith("nvmlDeviceGetComputeRunningProcesses_v3")]
    # A size query (count 0: INSUFFICIENT_SIZE with the count), a fill, and, once the list grew past
    # the room perfhud gave it, INSUFFICIENT_SIZE again and a second fill that succeeds.
    assert "count_in=0" in calls[0] and "rc=7" in calls[0], calls[:4]
    assert any("count_in=0" not in line and "rc=7" in line for line in calls), calls[:6]
    assert any("count_in=0" not in line and "rc=0" in line for line in calls), calls[:6]


def test_the_list_changes_while_watched(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other)
    process = subprocess.Popen([PERFHUD, "attach", str(target), "--output", "json", "--tick", "250ms", "--count", "24"],
                               stdout=subprocess.PIPE, text=True, env=scenario.env)
    time.sleep(2.5)
    # The target frees its memory and stops using the GPU (off the list, no samples): a measured 0.
    scenario.write(device__0__compute=f"{other}:3063939072", device__0__samples=f"{other}:79:4:0:0")
    out, _ = process.communicate(timeout=30)
    rows = [row for row in json_rows_of(out) if row.get("gpu_unreported_reason") is None]
    assert rows[0]["gpu_memory_bytes"] == 7358906368 and rows[0]["gpu_percent"] == 17
    # Within a reading (1 s) of the change for the memory; the busy share holds its last sample
    # for up to 3 s (NVML samples come about once a second, and a busy process may miss one).
    assert rows[-1]["gpu_memory_bytes"] == 0 and rows[-1]["gpu_percent"] == 0, gpu(rows[-1])
    assert rows[-1]["gpu_name"] == "NVIDIA H100 80GB HBM3"


def test_not_found_means_idle_and_bad_samples_are_dropped(tmp_path, nvml, sleeper):
    target, other = sleeper
    # No samples at all (NOT_FOUND): the target holds memory on an idle GPU, busy a measured 0.
    scenario = scenario_for(tmp_path, nvml, target, other, device__0__samples="")
    row = attach(target, scenario, count=6)[-1]
    assert row["gpu_percent"] == 0 and row["gpu_memory_bytes"] == 7358906368, gpu(row)
    # A sample over 100 % is dropped; so is one older than what perfhud has seen.
    scenario.write(device__0__samples=f"{target}:150:2:0:0,{other}:79:4:0:0:10000000")
    row = attach(target, scenario, count=6)[-1]
    assert row["gpu_percent"] == 0, gpu(row)
    scenario.write(device__0__samples=f"{target}:40:2:0:0")
    row = attach(target, scenario, count=6)[-1]
    assert row["gpu_percent"] == 40, gpu(row)


def test_no_permission_and_mig_say_why(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other, init="no_permission")
    row = attach(target, scenario, count=5)[-1]
    assert row["gpu_unreported_reason"] == "no permission (NVML)"
    assert all(row[key] is None for key in GPU_FIGURES), gpu(row)
    # Recorded as a code, read back as the text: by perfhud and by the `samples` view.
    path = tmp_path / "denied.db"
    assert perfhud("attach", str(target), "--count", "2", "--tick", "200ms", "--output", "json", "--record", str(path), env=scenario.env).returncode == 0
    database = sqlite3.connect(str(path))
    assert database.execute("SELECT gpu_unreported_reason FROM samples").fetchall()[-1] == ("no permission (NVML)",)
    database.close()

    scenario.write(init="ok", error__nvmlDeviceGetComputeRunningProcesses_v3="no_permission",
                   error__nvmlDeviceGetGraphicsRunningProcesses_v3="no_permission", device__0__samples="")
    row = attach(target, scenario, count=5)[-1]
    assert row["gpu_unreported_reason"] == "no permission (NVML process list)", gpu(row)
    assert row["gpu_percent"] is None and row["gpu_device_memory_total_bytes"] == 85520809984, gpu(row)

    scenario = scenario_for(tmp_path, nvml, target, other, device__0__mig=1)
    row = attach(target, scenario, count=5)[-1]
    assert row["gpu_unreported_reason"] == "MIG: per-process use not reported", gpu(row)
    assert row["gpu_percent"] is None and row["gpu_memory_bytes"] == 7358906368, gpu(row)


def test_one_refused_process_list_is_unknown_not_zero(tmp_path, nvml, sleeper):
    """NVML refuses the compute list (NVML_ERROR_NO_PERMISSION) and answers the graphics one: a
    target on neither answer (a CUDA program, whose memory is on the compute list alone) is
    unknown with the permission reason, not a measured 0 B; a target on the graphics list has
    its figures from it, and the reason says the compute list was refused."""
    target, other = sleeper
    refused = dict(error__nvmlDeviceGetComputeRunningProcesses_v3="no_permission", device__0__samples="")
    scenario = scenario_for(tmp_path, nvml, target, other, **refused)
    rows = attach(target, scenario, count=5)
    for row in rows[1:]:
        assert row["gpu_unreported_reason"] == "no permission (NVML process list)", gpu(row)
        assert all(row[key] is None for key in ("gpu_percent", "gpu_memory_bytes", "gpu_memory_busy_percent")), gpu(row)
        assert row["gpu_device_memory_total_bytes"] == 85520809984, "the device still answers"
    scenario.write(device__0__graphics=f"{target}:268435456", device__0__samples=f"{target}:17:2:3:4")
    rows = attach(target, scenario, count=5)
    row = rows[-1]
    assert row["gpu_memory_bytes"] == 268435456 and row["gpu_percent"] == 17, gpu(row)
    assert row["gpu_unreported_reason"] == "no permission (NVML compute process list): figures from the graphics list alone", gpu(row)
    # Both refused: nothing per process is known, not 0 B.
    scenario.write(error__nvmlDeviceGetGraphicsRunningProcesses_v3="no_permission")
    row = attach(target, scenario, count=5)[-1]
    assert row["gpu_unreported_reason"] == "no permission (NVML process list)", gpu(row)
    assert row["gpu_memory_bytes"] is None and row["gpu_percent"] is None, gpu(row)


def test_a_missing_symbol_loses_only_its_figure(tmp_path_factory, tmp_path, sleeper):
    target, other = sleeper
    library = build(tmp_path_factory, "nvml-old", "-DFAKE_NVML_WITHOUT_PROCESS_UTILIZATION", "-DFAKE_NVML_WITHOUT_POWER")
    scenario = scenario_for(tmp_path, library, target, other)
    row = attach(target, scenario, count=5)[-1]
    assert row["gpu_percent"] is None and row["gpu_memory_busy_percent"] is None and row["gpu_power_watts"] is None, gpu(row)
    assert row["gpu_memory_bytes"] == 7358906368 and row["gpu_temperature_celsius"] == 62 and row["gpu_clock_mhz"] == 1980, gpu(row)


def test_a_stalled_driver_never_stalls_the_rows(tmp_path, nvml, sleeper):
    target, other = sleeper
    # 1.5 s a call: readings come late but within 3 s, so they stay current.
    scenario = scenario_for(tmp_path, nvml, target, other, stall__nvmlDeviceGetComputeRunningProcesses_v3=1500)
    process = subprocess.Popen([PERFHUD, "attach", str(target), "--output", "json", "--tick", "200ms", "--count", "30"],
                               stdout=subprocess.PIPE, text=True, env=scenario.env)
    arrivals, rows = [], []
    for line in process.stdout:
        arrivals.append(time.monotonic())
        if line.startswith('{"time"'):
            rows.append(json.loads(line))
    process.wait(timeout=30)
    gaps = [b - a for a, b in zip(arrivals[1:-1], arrivals[2:-1])]
    assert max(gaps) < 0.5, gaps          # a tick is 0.2 s; a call held for 1.5 s shows in none
    # Once read (the first pass asks the list's size, then fills it: two held calls), current to the end.
    first = next(index for index, row in enumerate(rows) if row.get("gpu_unreported_reason") is None)
    assert all(row.get("gpu_unreported_reason") is None and row["gpu_memory_bytes"] == 7358906368 for row in rows[first:]), \
        [gpu(row) for row in rows[first:]]

    # 5 s a call: the reading grows older than 3 s and is said to be stale, never shown as current.
    scenario.write(stall__nvmlDeviceGetComputeRunningProcesses_v3=5000)
    started = time.monotonic()
    rows = attach(target, scenario, count=40, tick="200ms")
    assert time.monotonic() - started < 12
    stale = [row for row in rows if row.get("gpu_unreported_reason") == "stale: the GPU driver has not answered for over 3 s"]
    assert stale, [gpu(row) for row in rows]
    assert all(row[key] is None for row in stale for key in GPU_FIGURES)


def test_include_children_sums_the_tree(tmp_path, nvml):
    parent = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"])
    try:
        assert wait_until(lambda: len(open(f"/proc/{parent.pid}/task/{parent.pid}/children").read().split()) == 2)
        children = [int(pid) for pid in open(f"/proc/{parent.pid}/task/{parent.pid}/children").read().split()]
        scenario = scenario_for(tmp_path, nvml, children[0], children[1],
                                device__0__samples=f"{children[0]}:17:2:0:0,{children[1]}:30:4:0:0")
        row = attach(parent.pid, scenario, "--include-children", count=6)[-1]
        assert row["gpu_memory_bytes"] == 7358906368 + 3063939072 and row["gpu_percent"] == 47, gpu(row)
        # The parent alone holds nothing on a GPU that is there: a measured 0, not unknown.
        row = attach(parent.pid, scenario, count=6)[-1]
        assert row["gpu_memory_bytes"] == 0 and row["gpu_percent"] == 0 and row["gpu_name"] == "NVIDIA H100 80GB HBM3", gpu(row)
    finally:
        parent.kill()
        subprocess.run(["pkill", "-P", str(parent.pid)])
        parent.wait()


def test_without_a_driver_a_reason_and_no_zeros(sleeper):
    target, _ = sleeper
    environment = {name: value for name, value in os.environ.items() if name not in ("LD_LIBRARY_PATH", "FAKE_NVML_SCENARIO")}
    # Past the 3 s after which a driver that stopped answering is `stale`: no driver never is.
    result = perfhud("attach", str(target), "--output", "json", "--tick", "500ms", "--duration", "4.5s", env=environment)
    rows = json_rows_of(result.stdout)
    assert len(rows) >= 8, rows
    for row in rows:
        assert row["gpu_unreported_reason"] == "no GPU driver", gpu(row)
        assert all(row[key] is None for key in GPU_FIGURES), gpu(row)
    assert summary_of(result.stdout).get("gpu_memory_bytes_max") is None


def test_the_hud_shows_the_target_and_its_device(tmp_path, nvml, sleeper, terminal):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other)
    screen = terminal(["attach", str(target), "--details", "--tick", "250ms"], columns=220, env={
        "FAKE_NVML_SCENARIO": str(scenario.path), "LD_LIBRARY_PATH": str(nvml)})
    screen.wait_for(lambda s: "GPU 17% 6.85 GiB" in s.text(), timeout=10, what="the GPU segment")
    screen.wait_for(lambda s: re.search(r"gpu H100 80GB HBM3 99\.0% 9\.71 GiB/79\.65 GiB 62°C 638W 1980MHz throttled power", s.text()),
                    timeout=10, what="the GPU on the details line")


def test_the_daemon_exports_the_target_and_each_gpu(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other)
    daemon = targets.Daemon("--pid", f"trainer={target}", "--pid", f"other={other}", env=scenario.env)
    try:
        assert wait_until(lambda: daemon.value("perfhud_target_gpu_memory_bytes", '{target="trainer"}') == 7358906368, timeout=10), daemon.metrics()
        assert daemon.value("perfhud_target_gpu_busy_ratio", '{target="trainer"}') == 0.17
        assert daemon.value("perfhud_target_gpu_memory_bytes", '{target="other"}') == 3063939072
        labels = '{gpu="GPU-6a1f0c8e-0000-0000-0000-000000000000",name="NVIDIA H100 80GB HBM3"}'
        assert daemon.value("perfhud_gpu_memory_total_bytes", labels) == 85520809984, daemon.metrics()
        assert daemon.value("perfhud_gpu_busy_ratio", labels) == 0.99
        assert daemon.value("perfhud_gpu_memory_used_bytes", labels) == 10422845440
        assert daemon.value("perfhud_gpu_temperature_celsius", labels) == 62
        assert daemon.value("perfhud_gpu_power_watts", labels) == 638.498
    finally:
        daemon.stop()


def test_top_has_a_gpu_column_only_where_there_is_a_gpu(tmp_path, nvml, sleeper):
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other)
    daemon = targets.Daemon("--pid", f"trainer={target}", "--pid", f"other={other}", env=scenario.env)
    try:
        assert wait_until(lambda: daemon.value("perfhud_target_gpu_memory_bytes", '{target="other"}') == 3063939072, timeout=10)
        result = perfhud("top", "--from", f"http://127.0.0.1:{daemon.port}", "--sort", "name", timeout=20)
        assert result.returncode == 0, result
        lines = result.stdout.splitlines()
        assert "GPU" in lines[1].split(), lines
        rows = {line.split()[0]: line for line in lines[2:]}
        assert "17.0% 6.85 GiB" in rows["trainer"] and "79.0% 2.85 GiB" in rows["other"], lines
    finally:
        daemon.stop()
    # Without a GPU: no column.
    environment = {name: value for name, value in os.environ.items() if name not in ("LD_LIBRARY_PATH", "FAKE_NVML_SCENARIO")}
    daemon = targets.Daemon("--pid", f"trainer={target}", "--pid", f"other={other}", env=environment)
    try:
        assert wait_until(lambda: daemon.value("perfhud_target_up", '{target="other"}') == 1, timeout=10)
        result = perfhud("top", "--from", f"http://127.0.0.1:{daemon.port}", "--sort", "name", timeout=20)
        assert "GPU" not in result.stdout.splitlines()[1].split(), result.stdout
    finally:
        daemon.stop()


def test_a_driver_that_loads_later_is_found(tmp_path, nvml, sleeper):
    # A daemon started at boot before the NVIDIA driver: NVML answers "driver not loaded", then, once
    # loaded, is asked again (every 10 s) and read from then on.
    target, other = sleeper
    scenario = scenario_for(tmp_path, nvml, target, other, init="driver_not_loaded")
    daemon = targets.Daemon("--pid", f"trainer={target}", "--pid", f"other={other}", env=scenario.env)
    try:
        assert wait_until(lambda: daemon.value("perfhud_target_up", '{target="trainer"}') == 1, timeout=10)
        time.sleep(1.5)
        assert daemon.value("perfhud_target_gpu_memory_bytes", '{target="trainer"}') is None, "unknown while the driver is not loaded"
        scenario.write(init="ok")
        assert wait_until(lambda: daemon.value("perfhud_target_gpu_memory_bytes", '{target="trainer"}') == 7358906368, timeout=15), \
            daemon.metrics()
    finally:
        daemon.stop()
