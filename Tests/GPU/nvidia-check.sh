#!/usr/bin/env bash
# nvidia-check.sh - check perfhud's GPU figures against NVML and nvidia-smi on a
# machine with a real NVIDIA GPU. Run by hand:
#
#   Tests/GPU/nvidia-check.sh            # uses .build/release/perfhud
#   PERFHUD=/path/to/perfhud Tests/GPU/nvidia-check.sh
#
# Needs: an NVIDIA GPU and driver (nvidia-smi), python3 with PyTorch (CUDA) and
# pynvml (pip install nvidia-ml-py). Takes about a minute.
#
# Two runs, one after the other:
#   1. a PyTorch load (busy DUTY of every 100 ms, holding LOAD_GIB of device
#      memory); `perfhud attach PID --output json --tick 1s --count 20` beside
#      an NVML sampler (pynvml) and `nvidia-smi pmon -c 20 -s um`;
#   2. the same load as the child of a shell; perfhud attaches to the shell
#      with --include-children.
# Each prints perfhud's figures beside NVML's and nvidia-smi's, and the script
# exits 1 when:
#   - gpu_memory_bytes is not a value NVML's usedGpuMemory for the PID had
#     during the run (exactly; only a change during the run is allowed for),
#   - perfhud's median gpu_percent differs from pmon's median sm% by > 10 points,
#   - a figure perfhud printed is null (after its first 2 rows) while NVML had it,
#   - gpu_device_memory_total_bytes or gpu_name differ from NVML's/nvidia-smi's.
# Exit 2: the machine cannot run the check (no GPU, no torch, no pynvml, ...).
#
# Knobs (environment): PERFHUD, LOAD_GIB (4), DUTY (0.5), TICKS (20),
# BUSY_TOLERANCE (10), KEEP_WORK=1 keeps the temporary folder with the raw output.

set -euo pipefail

PERFHUD=${PERFHUD:-.build/release/perfhud}
LOAD_GIB=${LOAD_GIB:-4}
DUTY=${DUTY:-0.5}
TICKS=${TICKS:-20}
BUSY_TOLERANCE=${BUSY_TOLERANCE:-10}
PYTHON=${PYTHON:-python3}

say() { printf '%s\n' "nvidia-check: $*" >&2; }
cannot() { say "cannot run the check: $*"; exit 2; }

# ---- preflight -----------------------------------------------------------------

[[ -x "$PERFHUD" ]] || cannot "no perfhud binary at $PERFHUD (build with 'swift build -c release' or set PERFHUD)"
command -v nvidia-smi >/dev/null || cannot "nvidia-smi is not on PATH (no NVIDIA driver?)"
command -v "$PYTHON" >/dev/null || cannot "$PYTHON is not on PATH"
nvidia-smi -L >/dev/null 2>&1 || cannot "nvidia-smi -L fails: $(nvidia-smi -L 2>&1 | head -n 1)"
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || cannot "$PYTHON has no PyTorch with CUDA (import torch; torch.cuda.is_available())"
"$PYTHON" -c 'import pynvml' 2>/dev/null \
    || cannot "$PYTHON has no pynvml: pip install nvidia-ml-py"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvidia-check.XXXXXX")
PIDS=()   # every process this script started, killed on exit

# shellcheck disable=SC2329  # invoked by the EXIT trap
cleanup() {
    local rc=$?
    local pid
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ "${KEEP_WORK:-0}" == 1 ]]; then
        say "raw output kept in $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# ---- the load --------------------------------------------------------------------

cat >"$WORK/load.py" <<'PY'
"""A GPU load: holds GIB of device memory, keeps the GPU busy DUTY of every
PERIOD seconds. Writes its PID to READY once the memory is held and the
kernels are warm. Exits by itself when WATCH (the check script) is gone."""
import os, sys, time
gib, duty, period, ready, watch = float(sys.argv[1]), float(sys.argv[2]), 0.1, sys.argv[3], int(sys.argv[4])
import torch
dev = torch.device("cuda")
hold = torch.empty(int(gib * 2**30), dtype=torch.uint8, device=dev)
hold.fill_(1)                      # touch it: the memory is really resident
n = 2048
a = torch.randn(n, n, device=dev)
b = torch.randn(n, n, device=dev)
c = torch.empty(n, n, device=dev)  # out=: no allocation in the loop, so memory stays flat
for _ in range(20):
    torch.mm(a, b, out=c)
torch.cuda.synchronize()
with open(ready + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(ready + ".tmp", ready)
deadline = time.monotonic() + 600
while time.monotonic() < deadline:
    try:
        os.kill(watch, 0)
    except ProcessLookupError:
        break
    start = time.monotonic()
    busy_until = start + duty * period
    while time.monotonic() < busy_until:
        torch.mm(a, b, out=c)
        torch.cuda.synchronize()
    rest = start + period - time.monotonic()
    if rest > 0:
        time.sleep(rest)
PY

# ---- the NVML sampler ----------------------------------------------------------

cat >"$WORK/nvml_sampler.py" <<'PY'
"""Every second for N seconds: NVML's view of PID (usedGpuMemory from the
compute and graphics lists, sm/mem/enc/dec from process utilization samples)
and of the device it runs on. One JSON line per second."""
import json, sys, time
import pynvml as N
pid, seconds, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
N.nvmlInit()
handles = [N.nvmlDeviceGetHandleByIndex(i) for i in range(N.nvmlDeviceGetCount())]
last_seen = [0] * len(handles)

def maybe(f, *a):
    try:
        return f(*a)
    except N.NVMLError:
        return None

def text(v):
    return v.decode() if isinstance(v, bytes) else v

with open(out, "w") as f:
    start = time.monotonic()
    for k in range(seconds):
        time.sleep(max(0.0, start + k + 1 - time.monotonic()))
        row = {"t": time.time(), "devices": []}
        for i, h in enumerate(handles):
            procs = (maybe(N.nvmlDeviceGetComputeRunningProcesses, h) or []) + \
                    (maybe(N.nvmlDeviceGetGraphicsRunningProcesses, h) or [])
            mine = [p for p in procs if p.pid == pid]
            if not mine:
                # samples newer than last_seen are still consumed, to keep windows aligned
                s = maybe(N.nvmlDeviceGetProcessUtilization, h, last_seen[i]) or []
                if s:
                    last_seen[i] = max(x.timeStamp for x in s)
                continue
            samples = maybe(N.nvmlDeviceGetProcessUtilization, h, last_seen[i]) or []
            if samples:
                last_seen[i] = max(x.timeStamp for x in samples)
            ps = [x for x in samples if x.pid == pid]
            mem = maybe(N.nvmlDeviceGetMemoryInfo, h)
            util = maybe(N.nvmlDeviceGetUtilizationRates, h)
            power = maybe(N.nvmlDeviceGetPowerUsage, h)
            row["devices"].append({
                "index": i,
                "name": text(maybe(N.nvmlDeviceGetName, h)),
                "used_gpu_memory": sum(p.usedGpuMemory or 0 for p in mine),
                "sm": max((x.smUtil for x in ps), default=None),
                "mem_busy": max((x.memUtil for x in ps), default=None),
                "enc": max((x.encUtil for x in ps), default=None),
                "dec": max((x.decUtil for x in ps), default=None),
                "device_memory_total": mem.total if mem else None,
                "device_memory_used": mem.used if mem else None,
                "device_percent": util.gpu if util else None,
                "temperature": maybe(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
                "power_watts": power / 1000.0 if power is not None else None,
                "clock_mhz": maybe(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM),
                "throttle_reasons": maybe(N.nvmlDeviceGetCurrentClocksEventReasons, h),
            })
        f.write(json.dumps(row) + "\n")
        f.flush()
N.nvmlShutdown()
PY

# ---- the comparison ------------------------------------------------------------

cat >"$WORK/compare.py" <<'PY'
"""Prints perfhud's figures beside NVML's and nvidia-smi's; exits 1 on a mismatch."""
import json, statistics, sys
label, pid, workdir, tolerance, duty = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])

def lines(path):
    with open(path) as f:
        return [l for l in f.read().splitlines() if l.strip()]

rows = [json.loads(l) for l in lines(f"{workdir}/perfhud.jsonl")]
if rows and set(rows[-1]) == {"summary"}:
    rows.pop()
nvml = [json.loads(l) for l in lines(f"{workdir}/nvml.jsonl")]
smi_name, smi_total_mib = [x.strip() for x in lines(f"{workdir}/smi.csv")[0].rsplit(",", 1)]

# nvidia-smi pmon: find the columns by the header ("# gpu pid type sm mem enc dec ... fb ... command")
pmon_sm, pmon_mem, pmon_fb = [], [], []
cols = None
for l in lines(f"{workdir}/pmon.txt"):
    if l.startswith("#"):
        names = l.lstrip("#").split()
        if "pid" in names and "sm" in names:
            cols = names
        continue
    if cols is None:
        continue
    v = l.split()
    if len(v) < len(cols) - 1:
        continue
    rec = dict(zip(cols, v))
    if rec.get("pid") != str(pid):
        continue
    for key, acc in (("sm", pmon_sm), ("mem", pmon_mem), ("fb", pmon_fb)):
        x = rec.get(key, "-")
        if x not in ("-", ""):
            try:
                acc.append(float(x))
            except ValueError:
                pass

failures = []
def fail(msg):
    failures.append(msg)

print(f"\n=== {label}: PID {pid} ===")
if not rows:
    print("perfhud printed no rows")
    sys.exit(1)
devs = [d for r in nvml for d in r["devices"]]
if not devs:
    print(f"NVML never listed PID {pid} among the GPU's processes. In a container without the host's PID")
    print("namespace NVML reports host PIDs, which do not match: run on the host (or with --pid=host).")
    sys.exit(1)
dev_names = {d["name"] for d in devs}

def pvals(key, skip=0):
    return [r.get(key) for r in rows[skip:]]

def nvals(key):
    return [d[key] for d in devs if d.get(key) is not None]

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def fmt(x):
    if x is None:
        return "null"
    if isinstance(x, float):
        return f"{x:.1f}"
    return str(x)

table = []
def show(what, perfhud, reference, source):
    table.append((what, fmt(perfhud), fmt(reference), source))

# memory: every non-null perfhud value must be one NVML reported during the run
mem_p = [x for x in pvals("gpu_memory_bytes") if x is not None]
mem_n = sorted(set(nvals("used_gpu_memory")))
show("gpu_memory_bytes (distinct)", sorted(set(mem_p)), mem_n, "NVML usedGpuMemory")
bad = sorted({x for x in mem_p if x not in mem_n})
if bad:
    fail(f"gpu_memory_bytes {bad} is not a value NVML's usedGpuMemory had for PID {pid} during the run {mem_n}")
if len(mem_n) > 1:
    print(f"note: NVML's usedGpuMemory changed during the run: {mem_n}")

# busy: medians
busy_p = med(pvals("gpu_percent", 2))
busy_pmon = med(pmon_sm)
busy_nvml = med(nvals("sm"))
show("gpu_percent (median)", busy_p, busy_pmon, "nvidia-smi pmon sm% (median)")
show("gpu_percent (median)", busy_p, busy_nvml, "NVML process smUtil (median)")
show("gpu_percent (median)", busy_p, duty * 100, "the load's duty (expected, loose)")
if busy_pmon is None:
    fail(f"nvidia-smi pmon printed no sm% for PID {pid}")
elif busy_p is None:
    fail("perfhud's gpu_percent was null in every row")
elif abs(busy_p - busy_pmon) > tolerance:
    fail(f"median gpu_percent {busy_p:.1f} differs from pmon's median sm% {busy_pmon:.1f} by more than {tolerance:g}")

show("gpu_memory_busy_percent (median)", med(pvals("gpu_memory_busy_percent", 2)), med(pmon_mem), "nvidia-smi pmon mem%")
show("gpu_encoder_percent (median)", med(pvals("gpu_encoder_percent", 2)), med(nvals("enc")), "NVML encUtil")
show("gpu_decoder_percent (median)", med(pvals("gpu_decoder_percent", 2)), med(nvals("dec")), "NVML decUtil")
show("gpu_memory_bytes / MiB (median)", (med(mem_p) or 0) / 2**20 if mem_p else None, med(pmon_fb), "nvidia-smi pmon fb MB (info)")

# device figures
total_p = sorted({x for x in pvals("gpu_device_memory_total_bytes") if x is not None})
total_n = sorted(set(nvals("device_memory_total")))
show("gpu_device_memory_total_bytes", total_p, total_n, "NVML memory total")
show("gpu_device_memory_total_bytes / MiB", [x // 2**20 for x in total_p], smi_total_mib, "nvidia-smi memory.total [MiB]")
if total_p and total_n and total_p != total_n:
    fail(f"gpu_device_memory_total_bytes {total_p} != NVML's {total_n}")
if total_p and any(x // 2**20 != int(smi_total_mib) for x in total_p):
    fail(f"gpu_device_memory_total_bytes {total_p} is not nvidia-smi's memory.total {smi_total_mib} MiB")
names_p = sorted({x for x in pvals("gpu_name") if x is not None})
show("gpu_name", names_p, smi_name, "nvidia-smi name")
show("gpu_name", names_p, sorted(dev_names), "NVML name")
if names_p and (names_p != sorted(dev_names) or smi_name not in names_p):
    fail(f"gpu_name {names_p} differs from NVML's {sorted(dev_names)} / nvidia-smi's {smi_name!r}")
show("gpu_device_percent (median)", med(pvals("gpu_device_percent", 2)), med(nvals("device_percent")), "NVML utilization.gpu")
show("gpu_device_memory_used_bytes (median)", med(pvals("gpu_device_memory_used_bytes")), med(nvals("device_memory_used")), "NVML memory used")
show("gpu_temperature_celsius (median)", med(pvals("gpu_temperature_celsius")), med(nvals("temperature")), "NVML temperature")
show("gpu_power_watts (median)", med(pvals("gpu_power_watts")), med(nvals("power_watts")), "NVML power")
show("gpu_clock_mhz (median)", med(pvals("gpu_clock_mhz")), med(nvals("clock_mhz")), "NVML SM clock")
show("gpu_throttle_reasons (last)", rows[-1].get("gpu_throttle_reasons"), (nvals("throttle_reasons") or [None])[-1], "NVML event reasons")
show("gpu_unreported_reason (distinct)", sorted({str(x) for x in pvals("gpu_unreported_reason")}), "", "")

w = max(len(t[0]) for t in table)
print(f"{'figure':<{w}}  {'perfhud':>24}  {'reference':>24}  source")
for what, p, r, src in table:
    print(f"{what:<{w}}  {p:>24}  {r:>24}  {src}")

# nulls: after the first 2 rows, a figure perfhud printed as null while NVML had it
had = {
    "gpu_percent": nvals("sm"), "gpu_memory_bytes": nvals("used_gpu_memory"),
    "gpu_memory_busy_percent": nvals("mem_busy"), "gpu_encoder_percent": nvals("enc"),
    "gpu_decoder_percent": nvals("dec"), "gpu_name": nvals("name"),
    "gpu_device_percent": nvals("device_percent"), "gpu_device_memory_used_bytes": nvals("device_memory_used"),
    "gpu_device_memory_total_bytes": nvals("device_memory_total"), "gpu_temperature_celsius": nvals("temperature"),
    "gpu_power_watts": nvals("power_watts"), "gpu_clock_mhz": nvals("clock_mhz"),
    "gpu_throttle_reasons": nvals("throttle_reasons"),
}
for key, reference in had.items():
    if not reference:
        continue
    if not any(key in r for r in rows):
        fail(f"perfhud's rows have no {key} key")
        continue
    nulls = sum(1 for r in rows[2:] if r.get(key) is None)
    if nulls:
        fail(f"{key} is null in {nulls} of rows 3..{len(rows)} while NVML had it "
             f"(gpu_unreported_reason: {sorted({str(r.get('gpu_unreported_reason')) for r in rows})})")

if failures:
    print(f"\n{label}: FAILED")
    for m in failures:
        print("  - " + m)
    sys.exit(1)
print(f"\n{label}: ok")
PY

# ---- running ---------------------------------------------------------------------

# start_load READY_FILE [via-shell]: starts the load, waits until it is ready;
# sets LOAD_PID (the load) and TARGET_PID (what perfhud attaches to).
start_load() {
    local ready=$1 via=${2:-}
    rm -f "$ready"
    if [[ "$via" == via-shell ]]; then
        # A shell that forks the load (not exec: the '& wait' keeps the shell as the parent).
        bash -c '"$@" & wait' nvidia-check-shell "$PYTHON" "$WORK/load.py" "$LOAD_GIB" "$DUTY" "$ready" "$$" &
    else
        "$PYTHON" "$WORK/load.py" "$LOAD_GIB" "$DUTY" "$ready" "$$" &
    fi
    TARGET_PID=$!
    PIDS+=("$TARGET_PID")
    local waited=0
    while [[ ! -s "$ready" ]]; do
        if ! kill -0 "$TARGET_PID" 2>/dev/null; then
            say "the load exited before it was ready (out of device memory? LOAD_GIB=$LOAD_GIB)"
            exit 2
        fi
        if ((waited >= 1200)); then
            say "the load was not ready after 120 s"
            exit 2
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    LOAD_PID=$(<"$ready")
    if [[ "$LOAD_PID" != "$TARGET_PID" ]]; then
        PIDS+=("$LOAD_PID")
    fi
    sleep 2   # let NVML's per-process samples cover a steady load
}

stop_load() {
    local pid
    for pid in "$LOAD_PID" "$TARGET_PID"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    wait "$TARGET_PID" 2>/dev/null || true
    # LOAD_PID of the shell run is not this shell's child: wait for it to go
    local n=0
    while kill -0 "$LOAD_PID" 2>/dev/null && ((n < 100)); do
        sleep 0.1
        n=$((n + 1))
    done
}

# measure LABEL DIR [perfhud options...]: perfhud, the NVML sampler and pmon over the same seconds.
measure() {
    local label=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits -i "$(gpu_index_of "$LOAD_PID")" >"$dir/smi.csv"
    say "$label: perfhud attach $TARGET_PID${*:+ $*} --output json --tick 1s --count $TICKS (load PID $LOAD_PID)"
    "$PYTHON" "$WORK/nvml_sampler.py" "$LOAD_PID" "$TICKS" "$dir/nvml.jsonl" &
    local sampler=$!
    PIDS+=("$sampler")
    nvidia-smi pmon -c "$TICKS" -s um >"$dir/pmon.txt" 2>"$dir/pmon.err" &
    local pmon=$!
    PIDS+=("$pmon")
    # In the background and waited for, so that a signal to this script runs its trap at once.
    "$PERFHUD" attach "$TARGET_PID" "$@" --output json --tick 1s --count "$TICKS" \
        >"$dir/perfhud.jsonl" 2>"$dir/perfhud.err" &
    local perfhud=$!
    PIDS+=("$perfhud")
    local rc=0
    wait "$perfhud" || rc=$?
    wait "$sampler" || { say "the NVML sampler failed"; exit 2; }
    wait "$pmon" || { say "nvidia-smi pmon failed: $(head -n 3 "$dir/pmon.err")"; exit 2; }
    if ((rc != 0)); then
        say "$label: perfhud exited $rc: $(tail -n 5 "$dir/perfhud.err")"
        return 1
    fi
    [[ -s "$dir/perfhud.err" ]] && say "$label: perfhud's stderr: $(tail -n 5 "$dir/perfhud.err")"
    "$PYTHON" "$WORK/compare.py" "$label" "$LOAD_PID" "$dir" "$BUSY_TOLERANCE" "$DUTY"
}

# The NVML index of the GPU holding PID's memory (for nvidia-smi -i); 0 if not found.
gpu_index_of() {
    "$PYTHON" - "$1" <<'PY'
import sys
import pynvml as N
N.nvmlInit()
pid = int(sys.argv[1])
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    try:
        procs = N.nvmlDeviceGetComputeRunningProcesses(h)
    except N.NVMLError:
        continue
    if any(p.pid == pid for p in procs):
        print(i)
        break
else:
    print(0)
PY
}

status=0

say "driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1); perfhud $PERFHUD; load ${LOAD_GIB} GiB, duty $DUTY"

start_load "$WORK/ready1"
measure "direct" "$WORK/direct" || status=1
stop_load

start_load "$WORK/ready2" via-shell
if [[ "$(ps -o ppid= -p "$LOAD_PID" | tr -d ' ')" != "$TARGET_PID" ]]; then
    say "the load $LOAD_PID is not the shell $TARGET_PID's child"
    exit 2
fi
measure "include-children (shell $TARGET_PID, child $LOAD_PID)" "$WORK/children" --include-children || status=1
stop_load

if ((status == 0)); then
    say "all checks passed"
else
    say "FAILED (KEEP_WORK=1 keeps the raw output)"
fi
exit "$status"
