"""Proves Tests/GPU/fake_nvml.c has NVML's ABI by driving it through pynvml.

pynvml (pip package nvidia-ml-py, NVIDIA's own bindings) declares every NVML
struct as a ctypes Structure that mirrors nvml.h and loads the library with
CDLL("libnvidia-ml.so.1"). Each test compiles the fake into a temporary
directory, runs a short Python program in a subprocess whose LD_LIBRARY_PATH
finds the fake first, and checks through pynvml's structs that what comes
back is what the scenario file says.

Run: python3 -m pytest -q Tests/GPU/test_fake_nvml_abi.py
"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fake_nvml.c")

# What each variant of the library must leave out.
VARIANTS = {
    "full": [],
    "no_process_utilization": ["-DFAKE_NVML_WITHOUT_PROCESS_UTILIZATION"],
    "no_power": ["-DFAKE_NVML_WITHOUT_POWER"],
}


# ---- fixtures ----------------------------------------------------------------


@pytest.fixture(scope="session")
def pynvml_path(tmp_path_factory):
    """A PYTHONPATH entry where pynvml imports from; installs it if needed."""
    probe = subprocess.run([sys.executable, "-c", "import pynvml"], capture_output=True)
    if probe.returncode == 0:
        return ""
    target = str(tmp_path_factory.mktemp("pynvml"))
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target, "nvidia-ml-py"],
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        pytest.skip("pynvml (pip package nvidia-ml-py) cannot be installed: " + install.stderr.strip()[-500:])
    return target


@pytest.fixture(scope="session")
def libs(tmp_path_factory):
    """{variant: directory holding that variant's libnvidia-ml.so.1}."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.fail("no C compiler (cc) to build the fake NVML library")
    dirs = {}
    for name, flags in VARIANTS.items():
        d = tmp_path_factory.mktemp("nvml_" + name)
        out = os.path.join(str(d), "libnvidia-ml.so.1")
        cmd = [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", *flags, "-o", out, SOURCE, "-lpthread"]
        build = subprocess.run(cmd, capture_output=True, text=True)
        assert build.returncode == 0, "build failed: %s\n%s" % (" ".join(cmd), build.stderr)
        dirs[name] = str(d)
    return dirs


class Fake:
    """Writes scenarios and runs pynvml programs against one library build."""

    def __init__(self, libdir, pypath, tmp):
        self.libdir = libdir
        self.pypath = pypath
        self.scenario = os.path.join(str(tmp), "scenario.conf")
        self.log = os.path.join(str(tmp), "calls.log")

    def write(self, text, log=True):
        """Write the scenario atomically (temp file + rename)."""
        body = textwrap.dedent(text)
        if log:
            body += "\nlog=%s\n" % self.log
        tmp = self.scenario + ".tmp"
        with open(tmp, "w") as f:
            f.write(body)
        os.replace(tmp, self.scenario)

    def run(self, code, scenario=True, timeout=60):
        """Run code (with pynvml imported, NVML loaded but not initialized);
        the code stores results in dict `out`, which comes back."""
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = self.libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        if self.pypath:
            env["PYTHONPATH"] = self.pypath + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if scenario:
            env["FAKE_NVML_SCENARIO"] = self.scenario
        else:
            env.pop("FAKE_NVML_SCENARIO", None)
        prelude = textwrap.dedent(
            """
            import ctypes, json, os, sys, threading, time
            import pynvml
            from pynvml import *
            out = {}
            pynvml._LoadNvmlLibrary()
            LIB = pynvml.nvmlLib
            out["lib"] = LIB._name
            def fn(name):
                return pynvml._nvmlGetFunctionPointer(name)
            def err(call, *args):
                try:
                    call(*args)
                except NVMLError as e:
                    return e.value
                return 0
            def now_us():
                return time.time_ns() // 1000
            """
        )
        program = prelude + textwrap.dedent(code) + "\nprint('@@RESULT@@' + json.dumps(out))\n"
        proc = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, "subprocess failed:\n%s\n%s" % (proc.stdout, proc.stderr)
        line = [l for l in proc.stdout.splitlines() if l.startswith("@@RESULT@@")][-1]
        out = json.loads(line[len("@@RESULT@@"):])
        # The library pynvml loaded must be ours, not a real driver's.
        assert out["lib"] == "libnvidia-ml.so.1"
        return out

    def log_lines(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()


@pytest.fixture
def fake(libs, pynvml_path, tmp_path):
    return Fake(libs["full"], pynvml_path, tmp_path)


SCENARIO = """
init=ok
driver_version=550.54.15
devices=2
device.0.name=NVIDIA H100 80GB HBM3
device.0.uuid=GPU-6a1f0c8e-0000-0000-0000-000000000000
device.0.memory_total=85520809984
device.0.memory_used=10422845440
device.0.utilization_gpu=99          # percent
device.0.utilization_memory=6
device.0.temperature=62
device.0.power_mw=638498
device.0.clock_sm_mhz=1980
device.0.clock_mem_mhz=2619
device.0.clocks_event_reasons=4294967297
device.0.mig=0
device.0.compute=484:7358906368,485:3063939072
device.0.graphics=
device.0.samples=485:79:4:0:0,484:17:0:1:2
# device 1: a different card
device.1.name=NVIDIA A100-SXM4-40GB
device.1.uuid=GPU-00000000-1111-2222-3333-444444444444
device.1.memory_total=42949672960
device.1.memory_used=1048576
device.1.utilization_gpu=3
device.1.utilization_memory=1
device.1.temperature=35
device.1.power_mw=61234
device.1.clock_sm_mhz=210
device.1.clock_graphics_mhz=211
device.1.clock_mem_mhz=1215
device.1.clock_video_mhz=585
device.1.clocks_event_reasons=1
device.1.mig=1
device.1.mig_pending=0
device.1.compute=
device.1.graphics=7001:123456789
"""


# ---- layouts -----------------------------------------------------------------


def test_pynvml_struct_layouts_match_the_fakes_static_asserts(pynvml_path):
    """fake_nvml.c static-asserts these sizes/offsets; pynvml's structs agree."""
    code = """
    import ctypes, json, pynvml
    def layout(t):
        return {"size": ctypes.sizeof(t), **{f[0]: getattr(t, f[0]).offset for f in t._fields_}}
    print(json.dumps({
        "proc_v3": layout(pynvml.c_nvmlProcessInfo_v3_t),
        "proc": layout(pynvml.c_nvmlProcessInfo_t),
        "sample": layout(pynvml.c_nvmlProcessUtilizationSample_t),
        "memory": layout(pynvml.c_nvmlMemory_t),
        "util": layout(pynvml.c_nvmlUtilization_t),
    }))
    """
    env = dict(os.environ)
    if pynvml_path:
        env["PYTHONPATH"] = pynvml_path
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["proc_v3"] == {"size": 24, "pid": 0, "usedGpuMemory": 8, "gpuInstanceId": 16, "computeInstanceId": 20}
    assert got["proc"] == got["proc_v3"]
    assert got["sample"] == {
        "size": 32, "pid": 0, "timeStamp": 8, "smUtil": 16, "memUtil": 20, "encUtil": 24, "decUtil": 28,
    }
    assert got["memory"] == {"size": 24, "total": 0, "free": 8, "used": 16}
    assert got["util"] == {"size": 8, "gpu": 0, "memory": 4}


# ---- init ------------------------------------------------------------------


def test_no_scenario_means_driver_not_loaded(fake):
    out = fake.run(
        """
        out["init"] = err(nvmlInit)
        out["init_v2"] = fn("nvmlInit_v2")()
        """,
        scenario=False,
    )
    assert out["init"] == NVML_ERROR_DRIVER_NOT_LOADED
    assert out["init_v2"] == NVML_ERROR_DRIVER_NOT_LOADED


def test_missing_scenario_file_means_driver_not_loaded(fake):
    assert not os.path.exists(fake.scenario)
    out = fake.run("""out["init_v2"] = fn("nvmlInit_v2")()""")
    assert out["init_v2"] == NVML_ERROR_DRIVER_NOT_LOADED


NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_UNKNOWN = 999


@pytest.mark.parametrize(
    "value,code",
    [
        ("driver_not_loaded", NVML_ERROR_DRIVER_NOT_LOADED),
        ("no_permission", NVML_ERROR_NO_PERMISSION),
        ("lib_rm_version_mismatch", NVML_ERROR_LIB_RM_VERSION_MISMATCH),
        ("18", NVML_ERROR_LIB_RM_VERSION_MISMATCH),
    ],
)
def test_init_failures(fake, value, code):
    fake.write("init=%s\n" % value)
    out = fake.run(
        """
        out["init_v2"] = fn("nvmlInit_v2")()
        out["init"] = fn("nvmlInit")()
        out["pynvml_init"] = err(nvmlInit)
        out["count_after"] = err(nvmlDeviceGetCount)
        out["message"] = str(NVMLError(out["init_v2"]))
        """
    )
    assert out["init_v2"] == code
    assert out["init"] == code
    assert out["pynvml_init"] == code
    assert out["count_after"] == NVML_ERROR_UNINITIALIZED


def test_calls_before_init_and_after_shutdown_are_uninitialized(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        h = c_nvmlDevice_t()
        out["count"] = err(nvmlDeviceGetCount)
        out["driver"] = err(nvmlSystemGetDriverVersion)
        out["shutdown"] = fn("nvmlShutdown")()
        out["init"] = fn("nvmlInit_v2")()
        out["handle"] = fn("nvmlDeviceGetHandleByIndex_v2")(ctypes.c_uint(0), ctypes.byref(h))
        out["init2"] = fn("nvmlInit_v2")()        # refcounted, as in NVML
        out["shutdown1"] = fn("nvmlShutdown")()
        out["temp_between"] = err(nvmlDeviceGetTemperature, h, NVML_TEMPERATURE_GPU)
        out["shutdown2"] = fn("nvmlShutdown")()
        out["temp_after"] = err(nvmlDeviceGetTemperature, h, NVML_TEMPERATURE_GPU)
        out["procs_after"] = err(nvmlDeviceGetComputeRunningProcesses, h)
        """
    )
    assert out["count"] == NVML_ERROR_UNINITIALIZED
    assert out["driver"] == NVML_ERROR_UNINITIALIZED
    assert out["shutdown"] == NVML_ERROR_UNINITIALIZED
    assert out["init"] == 0 and out["handle"] == 0 and out["init2"] == 0 and out["shutdown1"] == 0
    assert out["temp_between"] == 0
    assert out["shutdown2"] == 0
    assert out["temp_after"] == NVML_ERROR_UNINITIALIZED
    assert out["procs_after"] == NVML_ERROR_UNINITIALIZED


# ---- device values -------------------------------------------------------------


def test_every_device_value_comes_back_through_pynvml(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        nvmlInit()
        out["driver"] = nvmlSystemGetDriverVersion()
        out["count"] = nvmlDeviceGetCount()
        out["devices"] = []
        for i in range(out["count"]):
            h = nvmlDeviceGetHandleByIndex(i)
            m = nvmlDeviceGetMemoryInfo(h)
            u = nvmlDeviceGetUtilizationRates(h)
            out["devices"].append({
                "name": nvmlDeviceGetName(h),
                "uuid": nvmlDeviceGetUUID(h),
                "memory": [m.total, m.free, m.used],
                "util": [u.gpu, u.memory],
                "temp": nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU),
                "power": nvmlDeviceGetPowerUsage(h),
                "clocks": [nvmlDeviceGetClockInfo(h, t) for t in
                           (NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_CLOCK_VIDEO)],
                "event": nvmlDeviceGetCurrentClocksEventReasons(h),
                "throttle": nvmlDeviceGetCurrentClocksThrottleReasons(h),
                "mig": nvmlDeviceGetMigMode(h),
            })
        h0 = nvmlDeviceGetHandleByIndex(0)
        h1 = nvmlDeviceGetHandleByIndex(1)
        out["distinct_handles"] = ctypes.cast(h0, ctypes.c_void_p).value != ctypes.cast(h1, ctypes.c_void_p).value
        out["same_handle_again"] = (ctypes.cast(h0, ctypes.c_void_p).value
                                    == ctypes.cast(nvmlDeviceGetHandleByIndex(0), ctypes.c_void_p).value)
        out["bad_index"] = err(nvmlDeviceGetHandleByIndex, 2)
        out["bad_sensor"] = err(nvmlDeviceGetTemperature, h0, 1)
        out["bad_clock"] = err(nvmlDeviceGetClockInfo, h0, 4)
        small = ctypes.create_string_buffer(8)
        out["name_small"] = fn("nvmlDeviceGetName")(h0, small, ctypes.c_uint(8))
        es = nvmlErrorString(NVML_ERROR_INSUFFICIENT_SIZE)
        out["error_string"] = es.decode() if isinstance(es, bytes) else es
        nvmlShutdown()
        """
    )
    assert out["driver"] == "550.54.15"
    assert out["count"] == 2
    d0, d1 = out["devices"]
    assert d0 == {
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-6a1f0c8e-0000-0000-0000-000000000000",
        "memory": [85520809984, 85520809984 - 10422845440, 10422845440],
        "util": [99, 6],
        "temp": 62,
        "power": 638498,
        "clocks": [1980, 1980, 2619, 1755],
        "event": 4294967297,
        "throttle": 4294967297,
        "mig": [0, 0],
    }
    assert d1 == {
        "name": "NVIDIA A100-SXM4-40GB",
        "uuid": "GPU-00000000-1111-2222-3333-444444444444",
        "memory": [42949672960, 42949672960 - 1048576, 1048576],
        "util": [3, 1],
        "temp": 35,
        "power": 61234,
        "clocks": [211, 210, 1215, 585],
        "event": 1,
        "throttle": 1,
        "mig": [1, 0],
    }
    assert out["distinct_handles"] and out["same_handle_again"]
    assert out["bad_index"] == NVML_ERROR_INVALID_ARGUMENT
    assert out["bad_sensor"] == NVML_ERROR_INVALID_ARGUMENT
    assert out["bad_clock"] == NVML_ERROR_INVALID_ARGUMENT
    assert out["name_small"] == NVML_ERROR_INSUFFICIENT_SIZE
    assert out["error_string"] == "Insufficient Size"


def test_defaults_when_keys_are_missing(fake):
    fake.write("init=ok\n")
    out = fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        m = nvmlDeviceGetMemoryInfo(h)
        u = nvmlDeviceGetUtilizationRates(h)
        out.update(count=nvmlDeviceGetCount(), name=nvmlDeviceGetName(h), uuid=nvmlDeviceGetUUID(h),
                   memory=[m.total, m.used], util=[u.gpu, u.memory],
                   temp=nvmlDeviceGetTemperature(h, 0), power=nvmlDeviceGetPowerUsage(h),
                   sm=nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM), mem=nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM),
                   reasons=nvmlDeviceGetCurrentClocksEventReasons(h), mig=nvmlDeviceGetMigMode(h),
                   compute=len(nvmlDeviceGetComputeRunningProcesses(h)),
                   graphics=len(nvmlDeviceGetGraphicsRunningProcesses(h)),
                   samples=err(nvmlDeviceGetProcessUtilization, h, 0))
        """
    )
    assert out == {
        "lib": "libnvidia-ml.so.1",
        "count": 1,
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-6a1f0c8e-0000-0000-0000-000000000000",
        "memory": [85520809984, 10422845440],
        "util": [99, 6],
        "temp": 62,
        "power": 638498,
        "sm": 1980,
        "mem": 2619,
        "reasons": 0,
        "mig": [0, 0],
        "compute": 0,
        "graphics": 0,
        "samples": NVML_ERROR_NOT_FOUND,
    }


# ---- process lists ---------------------------------------------------------------


def test_process_lists_v3_through_pynvml(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        nvmlInit()
        h0, h1 = nvmlDeviceGetHandleByIndex(0), nvmlDeviceGetHandleByIndex(1)
        def procs(ps):
            return [[p.pid, p.usedGpuMemory, p.gpuInstanceId, p.computeInstanceId] for p in ps]
        out["compute0"] = procs(nvmlDeviceGetComputeRunningProcesses(h0))
        out["graphics0"] = procs(nvmlDeviceGetGraphicsRunningProcesses(h0))
        out["compute1"] = procs(nvmlDeviceGetComputeRunningProcesses_v3(h1))
        out["graphics1"] = procs(nvmlDeviceGetGraphicsRunningProcesses_v3(h1))
        """
    )
    none = 0xFFFFFFFF
    assert out["compute0"] == [[484, 7358906368, none, none], [485, 3063939072, none, none]]
    assert out["graphics0"] == []
    assert out["compute1"] == []
    assert out["graphics1"] == [[7001, 123456789, none, none]]


def test_process_list_size_then_fill_semantics(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        f = fn("nvmlDeviceGetComputeRunningProcesses_v3")
        T = c_nvmlProcessInfo_v3_t
        res = {}
        c = ctypes.c_uint(0)
        res["size_null"] = [f(h, ctypes.byref(c), None), c.value]
        buf = (T * 8)()
        c = ctypes.c_uint(0)
        res["size_zero_with_buffer"] = [f(h, ctypes.byref(c), buf), c.value]
        c = ctypes.c_uint(1)
        res["too_small"] = [f(h, ctypes.byref(c), buf), c.value]
        # exact size, with a sentinel entry after it: the fake's stride must be 24 bytes
        buf = (T * 3)()
        buf[2].pid = 0xDEADBEEF; buf[2].usedGpuMemory = 0x1122334455667788
        buf[2].gpuInstanceId = 7; buf[2].computeInstanceId = 9
        c = ctypes.c_uint(2)
        rc = f(h, ctypes.byref(c), buf)
        res["exact"] = [rc, c.value, [[buf[i].pid, buf[i].usedGpuMemory] for i in range(2)]]
        res["sentinel"] = [buf[2].pid, buf[2].usedGpuMemory, buf[2].gpuInstanceId, buf[2].computeInstanceId]
        c = ctypes.c_uint(8)
        big = (T * 8)()
        res["bigger"] = [f(h, ctypes.byref(c), big), c.value]
        # no processes: SUCCESS with count 0, even for a size query
        g = fn("nvmlDeviceGetGraphicsRunningProcesses_v3")
        c = ctypes.c_uint(0)
        res["empty_size"] = [g(h, ctypes.byref(c), None), c.value]
        c = ctypes.c_uint(5)
        res["empty_fill"] = [g(h, ctypes.byref(c), big), c.value]
        res["null_count"] = f(h, None, None)
        out.update(res)
        """
    )
    assert out["size_null"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["size_zero_with_buffer"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["too_small"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["exact"] == [0, 2, [[484, 7358906368], [485, 3063939072]]]
    assert out["sentinel"] == [0xDEADBEEF, 0x1122334455667788, 7, 9]
    assert out["bigger"] == [0, 2]
    assert out["empty_size"] == [0, 0]
    assert out["empty_fill"] == [0, 0]
    assert out["null_count"] == NVML_ERROR_INVALID_ARGUMENT
    log = "\n".join(fake.log_lines())
    assert "nvmlDeviceGetComputeRunningProcesses_v3 " in log
    assert "count_in=0 infos=null rc=7 count_out=2" in log


@pytest.mark.parametrize(
    "func", ["nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3"]
)
def test_grow_between_size_query_and_fill(fake, func):
    key = "compute" if "Compute" in func else "graphics"
    fake.write("init=ok\ndevice.0.%s=484:7358906368,485:3063939072\ngrow.%s=1\n" % (key, func))
    out = fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        f = fn(%r)
        T = c_nvmlProcessInfo_v3_t
        c = ctypes.c_uint(0)
        out["size"] = [f(h, ctypes.byref(c), None), c.value]
        buf = (T * c.value)()
        out["fill_old_size"] = [f(h, ctypes.byref(c), buf), c.value]
        buf = (T * c.value)()
        rc = f(h, ctypes.byref(c), buf)
        out["fill_new_size"] = [rc, c.value, [[buf[i].pid, buf[i].usedGpuMemory] for i in range(c.value)]]
        c = ctypes.c_uint(0)
        out["size_again"] = [f(h, ctypes.byref(c), None), c.value]
        # it fired once for this value; pynvml's own size-then-fill (which oversizes) sees 3
        out["pynvml"] = [[p.pid, p.usedGpuMemory] for p in
                         (nvmlDeviceGetComputeRunningProcesses(h) if %r == "compute"
                          else nvmlDeviceGetGraphicsRunningProcesses(h))]
        """ % (func, key)
    )
    assert out["size"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["fill_old_size"] == [NVML_ERROR_INSUFFICIENT_SIZE, 3]
    assert out["fill_new_size"] == [0, 3, [[484, 7358906368], [485, 3063939072], [900001, 1048576]]]
    assert out["size_again"] == [NVML_ERROR_INSUFFICIENT_SIZE, 3]
    assert out["pynvml"] == [[484, 7358906368], [485, 3063939072], [900001, 1048576]]


# ---- per-process utilization -----------------------------------------------------


def test_process_utilization_samples_through_pynvml(fake):
    fake.write(SCENARIO + "\ndevice.1.samples=7001:5:6:7:8:3000000\n")
    out = fake.run(
        """
        nvmlInit()
        h0, h1 = nvmlDeviceGetHandleByIndex(0), nvmlDeviceGetHandleByIndex(1)
        before = now_us()
        s = nvmlDeviceGetProcessUtilization(h0, 0)
        after = now_us()
        out["samples0"] = [[x.pid, x.smUtil, x.memUtil, x.encUtil, x.decUtil] for x in s]
        out["ts_in_window"] = all(before <= x.timeStamp <= after for x in s)
        # the next call after >= 1 us yields fresh samples newer than the last seen
        last = max(x.timeStamp for x in s)
        time.sleep(0.002)
        s2 = nvmlDeviceGetProcessUtilization(h0, last)
        out["fresh"] = [len(s2), all(x.timeStamp > last for x in s2)]
        # a sample aged 3 s: seen with lastSeen 0 and 10 s ago, not with lastSeen 1 s ago
        t = now_us()
        s3 = nvmlDeviceGetProcessUtilization(h1, t - 10_000_000)
        out["aged"] = [[x.pid, x.smUtil, x.memUtil, x.encUtil, x.decUtil] for x in s3]
        out["aged_ts_ok"] = all(t - 3_500_000 < x.timeStamp < t - 2_500_000 for x in s3)
        out["aged_filtered"] = err(nvmlDeviceGetProcessUtilization, h1, t - 1_000_000)
        out["future"] = err(nvmlDeviceGetProcessUtilization, h0, now_us() + 60_000_000)
        """
    )
    assert out["samples0"] == [[485, 79, 4, 0, 0], [484, 17, 0, 1, 2]]
    assert out["ts_in_window"]
    assert out["fresh"] == [2, True]
    assert out["aged"] == [[7001, 5, 6, 7, 8]]
    assert out["aged_ts_ok"]
    assert out["aged_filtered"] == NVML_ERROR_NOT_FOUND
    assert out["future"] == NVML_ERROR_NOT_FOUND


def test_process_utilization_raw_size_semantics(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        f = fn("nvmlDeviceGetProcessUtilization")
        S = c_nvmlProcessUtilizationSample_t
        c = ctypes.c_uint(0)
        out["size"] = [f(h, None, ctypes.byref(c), ctypes.c_ulonglong(0)), c.value]
        c = ctypes.c_uint(1)
        buf = (S * 3)()
        out["too_small"] = [f(h, buf, ctypes.byref(c), ctypes.c_ulonglong(0)), c.value]
        buf[2].pid = 0xCAFEBABE; buf[2].timeStamp = 42; buf[2].decUtil = 77
        c = ctypes.c_uint(2)
        out["exact"] = [f(h, buf, ctypes.byref(c), ctypes.c_ulonglong(0)), c.value,
                        [[buf[i].pid, buf[i].smUtil, buf[i].memUtil, buf[i].encUtil, buf[i].decUtil] for i in range(2)]]
        out["sentinel"] = [buf[2].pid, buf[2].timeStamp, buf[2].decUtil]
        c = ctypes.c_uint(0)
        out["none_newer"] = f(h, None, ctypes.byref(c), ctypes.c_ulonglong(now_us() + 60_000_000))
        """
    )
    assert out["size"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["too_small"] == [NVML_ERROR_INSUFFICIENT_SIZE, 2]
    assert out["exact"] == [0, 2, [[485, 79, 4, 0, 0], [484, 17, 0, 1, 2]]]
    assert out["sentinel"] == [0xCAFEBABE, 42, 77]
    assert out["none_newer"] == NVML_ERROR_NOT_FOUND


# ---- errors, stalls, missing symbols, re-reading ----------------------------------


def test_error_injection(fake):
    fake.write(
        SCENARIO
        + """
error.nvmlDeviceGetPowerUsage=no_permission
error.nvmlDeviceGetComputeRunningProcesses_v3=gpu_is_lost
error.nvmlDeviceGetProcessUtilization=not_supported
error.nvmlDeviceGetMigMode=3
error.nvmlDeviceGetTemperature=unknown
device.1.error.nvmlDeviceGetName=not_found
"""
    )
    out = fake.run(
        """
        nvmlInit()
        h0, h1 = nvmlDeviceGetHandleByIndex(0), nvmlDeviceGetHandleByIndex(1)
        out["power"] = [err(nvmlDeviceGetPowerUsage, h0), err(nvmlDeviceGetPowerUsage, h1)]
        out["procs"] = err(nvmlDeviceGetComputeRunningProcesses, h0)
        out["samples"] = err(nvmlDeviceGetProcessUtilization, h0, 0)
        out["mig"] = err(nvmlDeviceGetMigMode, h0)
        out["temp"] = err(nvmlDeviceGetTemperature, h0, 0)
        out["name"] = [err(nvmlDeviceGetName, h0), err(nvmlDeviceGetName, h1)]
        out["graphics_ok"] = err(nvmlDeviceGetGraphicsRunningProcesses, h0)
        out["noperm_class"] = type(NVMLError(4)).__name__
        """
    )
    assert out["power"] == [NVML_ERROR_NO_PERMISSION, NVML_ERROR_NO_PERMISSION]
    assert out["procs"] == NVML_ERROR_GPU_IS_LOST
    assert out["samples"] == NVML_ERROR_NOT_SUPPORTED
    assert out["mig"] == NVML_ERROR_NOT_SUPPORTED
    assert out["temp"] == NVML_ERROR_UNKNOWN
    assert out["name"] == [0, NVML_ERROR_NOT_FOUND]
    assert out["graphics_ok"] == 0
    assert out["noperm_class"] == "NVMLError_NoPermission"


def test_scenario_is_reread_at_every_call(fake):
    fake.write(SCENARIO)
    out = fake.run(
        """
        import shutil
        nvmlInit()
        h0, h1 = nvmlDeviceGetHandleByIndex(0), nvmlDeviceGetHandleByIndex(1)
        path = os.environ["FAKE_NVML_SCENARIO"]
        text = open(path).read()
        out["before"] = [nvmlDeviceGetTemperature(h0, 0), len(nvmlDeviceGetComputeRunningProcesses(h0))]
        def rewrite(t):
            with open(path + ".new", "w") as f:
                f.write(t)
            os.replace(path + ".new", path)
        rewrite(text.replace("device.0.temperature=62", "device.0.temperature=91")
                    .replace("device.0.compute=484:7358906368,485:3063939072", "device.0.compute=484:1")
                    .replace("devices=2", "devices=1"))
        out["after"] = [nvmlDeviceGetTemperature(h0, 0),
                        [[p.pid, p.usedGpuMemory] for p in nvmlDeviceGetComputeRunningProcesses(h0)]]
        out["count"] = nvmlDeviceGetCount()
        out["gone_device"] = err(nvmlDeviceGetTemperature, h1, 0)
        rewrite(text + "\\nerror.nvmlDeviceGetTemperature=gpu_is_lost\\n")
        out["injected"] = err(nvmlDeviceGetTemperature, h0, 0)
        """
    )
    assert out["before"] == [62, 2]
    assert out["after"] == [91, [[484, 1]]]
    assert out["count"] == 1
    assert out["gone_device"] == NVML_ERROR_GPU_IS_LOST
    assert out["injected"] == NVML_ERROR_GPU_IS_LOST


def test_stall_does_not_hold_the_lock(fake):
    fake.write(SCENARIO + "\nstall.nvmlDeviceGetTemperature=800\n")
    out = fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        res = {}
        def slow():
            t = time.monotonic()
            res["temp"] = nvmlDeviceGetTemperature(h, 0)
            res["slow_s"] = time.monotonic() - t
        th = threading.Thread(target=slow)
        th.start()
        time.sleep(0.1)
        t = time.monotonic()
        res["power"] = nvmlDeviceGetPowerUsage(h)   # another thread, during the stall
        res["fast_s"] = time.monotonic() - t
        th.join()
        out.update(res)
        """
    )
    assert out["temp"] == 62 and out["power"] == 638498
    assert out["slow_s"] >= 0.75
    assert out["fast_s"] < 0.3


def test_missing_symbols(libs, pynvml_path, tmp_path):
    for variant, absent in [("no_process_utilization", "nvmlDeviceGetProcessUtilization"),
                            ("no_power", "nvmlDeviceGetPowerUsage")]:
        fake = Fake(libs[variant], pynvml_path, tmp_path)
        fake.write(SCENARIO)
        out = fake.run(
            """
            nvmlInit()
            h = nvmlDeviceGetHandleByIndex(0)
            out["present"] = {n: hasattr(LIB, n) for n in
                              ["nvmlDeviceGetProcessUtilization", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature"]}
            out["samples"] = err(nvmlDeviceGetProcessUtilization, h, 0)
            out["power"] = err(nvmlDeviceGetPowerUsage, h)
            out["temp"] = nvmlDeviceGetTemperature(h, 0)
            """
        )
        assert out["present"][absent] is False, variant
        assert out["present"]["nvmlDeviceGetTemperature"] is True
        other = ({"nvmlDeviceGetProcessUtilization", "nvmlDeviceGetPowerUsage"} - {absent}).pop()
        assert out["present"][other] is True
        want = {"nvmlDeviceGetProcessUtilization": "samples", "nvmlDeviceGetPowerUsage": "power"}
        assert out[want[absent]] == NVML_ERROR_FUNCTION_NOT_FOUND
        # the remaining one works (samples answer INSUFFICIENT_SIZE then fill inside pynvml)
        assert out[want[other]] == 0
        assert out["temp"] == 62


def test_log_lines(fake):
    fake.write(SCENARIO)
    fake.run(
        """
        nvmlInit()
        h = nvmlDeviceGetHandleByIndex(0)
        nvmlDeviceGetComputeRunningProcesses(h)
        nvmlDeviceGetProcessUtilization(h, 0)
        nvmlShutdown()
        """
    )
    lines = fake.log_lines()
    names = [l.split()[0] for l in lines]
    assert names == [
        "nvmlInitWithFlags",
        "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetProcessUtilization",
        "nvmlDeviceGetProcessUtilization",
        "nvmlShutdown",
    ]
    assert "count_in=0 infos=null rc=7 count_out=2" in lines[2]
    assert "rc=0 count_out=2 484:7358906368 485:3063939072" in lines[3]
    assert "samples=null last_seen=0 rc=7 count_out=2" in lines[4]
    assert all(" tid=" in l for l in lines)
