"""Each row's figures are that row's: totals end at what the kernel counted, and at a tick of a
second the once-a-second figures (busiest threads, context switches) are read for every row,
not left over from the row before.

`burn busy SECONDS` spins until it has used SECONDS of CPU time and prints what it used just
before it exits; the pacer below changes how busy it is every half second, sleeping in 1 ms
naps while idle (so its voluntary switches change with it)."""
import subprocess
import sys

from conftest import cpu_said, json_rows_of, perfhud




def test_the_exit_row_has_the_whole_runs_cpu_time(burn, tmp_path):
    # At a half-second tick the last regular row is up to 0.5 s of CPU short of the end: the exit
    # row must add what the program spent after it, as the kernel counted it.
    path = tmp_path / "run.db"
    result = perfhud("run", "--output", "json", "--tick", "500ms", "--record", str(path), "--", burn, "busy", "0.781", timeout=60)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    end = rows[-1]
    assert end["alive"] is False and end["exit_code"] == 0, end
    spent = cpu_said(result.stderr)
    assert spent - 0.001 <= end["cpu_seconds_total"] <= spent + 0.01, (end["cpu_seconds_total"], spent, [row["cpu_seconds_total"] for row in rows])
    # The recording keeps the same total as its last sample and its maximum.
    recorded = subprocess.run(["sqlite3", str(path), "select max(cpu_seconds_total) from samples"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert abs(float(recorded) - end["cpu_seconds_total"]) < 1e-6, (recorded, end)


PACER = """
import random, sys, time
random.seed(int(sys.argv[1]))
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    busy = random.choice([0.1, 0.3, 0.5, 0.7, 0.9])
    stop = time.monotonic() + 0.5
    while time.monotonic() < stop:
        spin = time.monotonic() + busy * 0.01
        while time.monotonic() < spin:
            pass
        for _ in range(round((1 - busy) * 10)):   # idle in 1 ms naps: a voluntary switch each
            time.sleep(0.001)
"""


def test_at_a_one_second_tick_every_row_has_its_own_once_a_second_figures():
    program = subprocess.Popen([sys.executable, "-c", PACER, "7", "14"], stdout=subprocess.PIPE, text=True)
    try:
        assert program.stdout.readline().strip() == "ready"
        result = perfhud("attach", "--output", "json", "--tick", "1s", "--count", "11", str(program.pid), timeout=60)
        assert result.returncode == 0, result.stderr
    finally:
        program.kill()
        program.wait()
    rows = json_rows_of(result.stdout)[2:]   # the first rows start the once-a-second intervals
    assert len(rows) >= 8, result.stdout
    for row in rows:
        # One thread does all the work: its share of the last second is the row's CPU over the same second.
        busiest = row["busiest_threads"]
        assert busiest, row
        assert abs(busiest[0]["cpu_percent"] - row["cpu_percent"]) <= 8, [(r["cpu_percent"], r["busiest_threads"]) for r in rows]
    # Its naps follow the same duty cycle: the busier a row's second, the fewer its voluntary
    # switches. A row holding the second before's switches breaks the order.
    pairs = [(row["cpu_percent"], row["context_switches_voluntary_per_second"]) for row in rows]
    apart = [(a, b) for a in pairs for b in pairs if b[0] > a[0] + 20]
    assert len(apart) >= 3, pairs      # seconds of clearly different duty cycles
    assert all(b[1] < a[1] for a, b in apart), pairs
