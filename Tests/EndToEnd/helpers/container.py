"""A fresh Debian 12 booted by systemd-nspawn with a real systemd as its PID 1, for the tests that
install perfhud's .deb and run it as an operator would (test_systemd.py).

How it is made, and why so:

* The root file system comes from ``debootstrap --variant=minbase`` (about a minute), cached under
  ``/var/cache/perfhud-e2e/bookworm-KEY`` (KEY: a hash of the suite and the package list), so repeated
  local runs skip it. Every session boots a FRESH COPY of it (``cp -a``, about a second) that is
  deleted afterwards: no state leaks from one run to the next. ``PERFHUD_E2E_CACHE`` moves the cache.
* The mirror is the host's own Debian mirror, read from apt's sources at run time (never a host
  written into the repository); ``PERFHUD_E2E_MIRROR`` overrides it.
* ``systemd-nspawn --boot`` with the host's network (no ``--private-network``: the container's
  loopback is the host's, so the daemon's ``/metrics`` answers on the host's 127.0.0.1 and apt
  inside reaches the mirror). Options that matter:
    - ``--register=no --keep-unit``: the host need not run systemd (or systemd-machined); the
      container stays in the cgroup the test runs in. When the host does run systemd as PID 1 the
      command is wrapped in ``systemd-run --scope -p Delegate=yes`` so that cgroup is delegated.
    - ``--console=read-only``: there is no terminal in CI (stdin is /dev/null); the boot messages
      go to a log file that failures quote.
    - ``systemd.firstboot=off``: nothing may ask questions on a console nobody reads.
    - cgroups: nspawn follows the host. On a cgroup v1 "hybrid" host (/sys/fs/cgroup/{systemd,
      unified,cpu,...}, as here) the container is hybrid as well and boots fine; the "Failed to create
      symlink /sys/fs/cgroup/cpu: File exists" lines nspawn prints there are harmless.
      SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 boots it on a pure cgroup v2 hierarchy instead (cgroup2 on
      /sys/fs/cgroup, without controllers: they stay with the host's v1 hierarchies), as a stock
      Debian 12 host has. (=0 would mean *legacy*, not hybrid: leave it unset for hybrid.)
      cgroup_modes() lists what this host can give: both on a hybrid host, so the daemon's
      control-group walk is proven on both layouts; PERFHUD_E2E_CGROUP=hybrid|unified picks one.
* Commands run inside with ``nsenter -t LEADER -a`` (LEADER: the container's PID 1 as the host sees
  it) and a clean environment; files are read and written through ``/proc/LEADER/root``, which
  also shows the container's own /proc (PIDs as the container sees them).
* Shut down: SIGTERM to nspawn (which powers the container off cleanly), SIGKILL to the
  container's PID 1 and to nspawn when that takes too long, then the copy is removed: on every
  exit path (the fixture's finalizer, and atexit as a backstop).
"""
import atexit
import fcntl
import glob
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time

SUITE = "bookworm"
INCLUDE = ["systemd", "systemd-sysv", "dbus", "libnss-systemd", "python3"]
CACHE = pathlib.Path(os.environ.get("PERFHUD_E2E_CACHE", "/var/cache/perfhud-e2e"))
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class HarnessError(Exception):
    """The machine cannot run the container: the message says what is missing."""


def host_cgroup_layout(mount_table="/proc/self/mounts"):
    """unified (cgroup2 on /sys/fs/cgroup), hybrid (v1 plus cgroup2 on …/unified) or legacy."""
    root = "/sys/fs/cgroup"
    with open(mount_table) as mounts:
        table = {fields[1]: fields[2] for fields in (line.split() for line in mounts)}
    if table.get(root) == "cgroup2":
        return "unified"
    return "hybrid" if table.get(root + "/unified") == "cgroup2" else "legacy"


def cgroup_modes():
    """The cgroup layouts to boot containers with on this host (PERFHUD_E2E_CGROUP picks one)."""
    if os.environ.get("PERFHUD_E2E_CGROUP"):
        return [os.environ["PERFHUD_E2E_CGROUP"]]
    host = host_cgroup_layout()
    return [host, "unified"] if host != "unified" else ["unified"]


def missing_tools():
    """What the harness needs from the host and is not there, as Debian package names."""
    wanted = {"debootstrap": "debootstrap", "systemd-nspawn": "systemd-container", "nsenter": "util-linux"}
    return sorted({package for tool, package in wanted.items() if not shutil.which(tool)})


# --- the mirror --------------------------------------------------------------------------------

def _apt_sources():
    """(types, uris, suites) for every entry of apt's sources, one-line and deb822 alike."""
    entries = []
    one_line = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
    for path in one_line:
        try:
            lines = pathlib.Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            line = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(line) >= 3:
                entries.append(([line[0]], [line[1]], [line[2]]))
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        try:
            text = pathlib.Path(path).read_text()
        except OSError:
            continue
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.split()
            if fields.get("enabled", ["yes"])[0].lower() == "no":
                continue
            entries.append((fields.get("types", []), fields.get("uris", []), fields.get("suites", [])))
    return entries


def mirror():
    """The Debian mirror apt on this host uses for the suite (not its security or updates one)."""
    if os.environ.get("PERFHUD_E2E_MIRROR"):
        return os.environ["PERFHUD_E2E_MIRROR"]
    for types, uris, suites in _apt_sources():
        if "deb" in types and SUITE in suites:
            for uri in uris:
                if "security" not in uri and uri.startswith(("http://", "https://")):
                    return uri
    raise HarnessError(f"no Debian {SUITE} mirror in apt's sources (/etc/apt/sources.list*); set PERFHUD_E2E_MIRROR")


# --- the cached root file system ------------------------------------------------------------------

def base_tree(log=print):
    """The debootstrapped tree, made once and cached; returns its path."""
    if os.geteuid() != 0:
        raise HarnessError("needs root (debootstrap, systemd-nspawn)")
    missing = missing_tools()
    if missing:
        raise HarnessError("missing on this machine: " + " ".join(missing) + " (apt-get install "
                           + " ".join(missing) + "; `make deps` does it)")
    key = hashlib.sha256(" ".join([SUITE, "minbase", *INCLUDE]).encode()).hexdigest()[:12]
    tree = CACHE / f"{SUITE}-{key}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)            # two sessions at once: one debootstraps
        _remove_stale_copies()
        if (tree / ".perfhud-complete").exists():
            return tree
        source = mirror()
        partial = CACHE / f"{tree.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        log(f"debootstrap {SUITE} from {source} into {tree} (once; cached)")
        started = time.monotonic()
        result = subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(INCLUDE), SUITE,
                                 str(partial), source], capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            raise HarnessError(f"debootstrap failed ({result.returncode}): {(result.stdout + result.stderr)[-2000:]}")
        # An empty machine-id: systemd makes one at each boot, so copies do not share one.
        (partial / "etc/machine-id").write_text("")
        (partial / ".perfhud-complete").write_text(f"{source} {time.monotonic() - started:.0f}s\n")
        shutil.rmtree(tree, ignore_errors=True)
        partial.rename(tree)
        return tree


def _remove_stale_copies():
    """Copies left by sessions that were killed before they could clean up, with their containers."""
    for copy in CACHE.glob("run-*"):
        match = re.match(r"run-(\d+)-", copy.name)
        if not match or _alive(int(match.group(1))):
            continue
        for pid in _processes_mentioning(str(copy / "root")):     # that session's systemd-nspawn
            _end(pid)
        shutil.rmtree(copy, ignore_errors=True)


def _alive(pid):
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"             # a zombie nobody reaped yet is gone too


def _processes_mentioning(text):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                arguments = pathlib.Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if text.encode() in arguments:
                found.append(int(entry))
    return found


def _end(pid, grace=20):
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- the running container -------------------------------------------------------------------------

class Container:
    """A booted copy of the base tree. Use as a context manager, or call close()."""

    def __init__(self, base, cgroup=None, boot_timeout=90):
        """Boots a copy of base; cgroup: "unified", or None for the host's own layout."""
        self.nspawn = None
        self.leader = None
        self.copy = pathlib.Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=base.parent))
        atexit.register(self.close)
        try:
            self.root = self.copy / "root"
            subprocess.run(["cp", "-a", "--reflink=auto", str(base), str(self.root)], check=True)
            self.name = "perfhud-e2e-" + self.copy.name.rsplit("-", 1)[-1].lower().replace("_", "")
            self.console = self.copy / "console.log"
            self._boot(boot_timeout, cgroup)
        except BaseException:
            self.close()
            raise

    def _boot(self, timeout, cgroup):
        # bpf(2) let through nspawn's system call filter: systemd's IP accounting (IPAccounting=yes,
        # issue 33) and IP firewall (IPAddressDeny=, which perfhud's own units set) attach cgroup BPF
        # programs, as on a booted host; without it systemd says "[no data]" and filters nothing.
        command = ["systemd-nspawn", "--register=no", "--keep-unit", "--console=read-only", "--quiet", "--system-call-filter=bpf",
                   f"--machine={self.name}", "-D", str(self.root), "--boot", "systemd.firstboot=off"]
        if os.path.isdir("/run/systemd/system"):
            # The host runs systemd: give the container a delegated cgroup of its own.
            command = ["systemd-run", "--scope", "--quiet", "--property=Delegate=yes", f"--unit={self.name}", *command]
        environment = {"PATH": PATH, "LANG": "C.UTF-8"}
        if cgroup == "unified":
            environment["SYSTEMD_NSPAWN_UNIFIED_HIERARCHY"] = "1"
        elif cgroup not in (None, host_cgroup_layout()):
            raise HarnessError(f"cannot boot a {cgroup} cgroup layout on a {host_cgroup_layout()} host")
        with open(self.console, "wb") as console:
            self.nspawn = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                           env=environment, start_new_session=True)
        deadline = time.monotonic() + timeout
        while self.leader is None:
            if self.nspawn.poll() is not None:
                raise HarnessError(f"systemd-nspawn exited with {self.nspawn.returncode}:\n{self.console_text()}")
            if time.monotonic() > deadline:
                raise HarnessError("the container's systemd did not start:\n" + self.console_text())
            self.leader = self._find_leader()
            time.sleep(0.05)
        # PID 1 answers on its private socket once it is up; then wait for the boot to finish.
        state = ""
        while time.monotonic() < deadline:
            result = self.run(["systemctl", "is-system-running", "--wait"], check=False,
                              timeout=max(1, deadline - time.monotonic()))
            state = result.stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(0.2)
        else:
            raise HarnessError(f"boot did not finish (state {state!r}):\n{self.console_text()}")
        self.boot_state = state
        self.cgroup = host_cgroup_layout(f"/proc/{self.leader}/mounts")
        if cgroup and self.cgroup != cgroup:
            raise HarnessError(f"asked for a {cgroup} cgroup layout, the container has {self.cgroup}")
        self.failed_units = self.run(["systemctl", "--failed", "--plain", "--no-legend"], check=False).stdout.strip()

    def _find_leader(self):
        """The container's PID 1 as the host sees it: nspawn's child once it runs systemd."""
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            parent = int(stat[stat.rindex(")") + 2:].split()[1])
            if parent == self.nspawn.pid and comm == "systemd":
                return int(entry)
        return None

    def console_text(self, last=4000):
        try:
            return self.console.read_text(errors="replace")[-last:]
        except OSError:
            return ""

    # -- inside ---------------------------------------------------------------------------------

    def run(self, argv, check=True, timeout=60, input=None, env=None):
        """Runs argv (a list, or a string for /bin/sh -c) inside, with a clean environment."""
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        environment = ["PATH=" + PATH, "LANG=C.UTF-8", "TERM=dumb", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0",
                       "DEBIAN_FRONTEND=noninteractive", "HOME=/root"]
        environment += [f"{key}={value}" for key, value in (env or {}).items()]
        result = subprocess.run(["nsenter", "-t", str(self.leader), "-a", "--", "/usr/bin/env", "-i", *environment, *argv],
                                capture_output=True, text=True, timeout=timeout, input=input, stdin=None if input else subprocess.DEVNULL)
        if check and result.returncode != 0:
            raise AssertionError(f"inside the container: {' '.join(argv)} exited {result.returncode}\n"
                                 f"stdout: {result.stdout[-3000:]}\nstderr: {result.stderr[-3000:]}")
        return result

    def path(self, inside):
        """The host's path to a file inside the running container (its /run and /proc too)."""
        return pathlib.Path(f"/proc/{self.leader}/root") / inside.lstrip("/")

    def read(self, inside):
        return self.path(inside).read_text()

    def write(self, inside, text, mode=0o644):
        target = self.path(inside)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        os.chmod(target, mode)

    def systemctl(self, *args, check=True, timeout=60):
        return self.run(["systemctl", *args], check=check, timeout=timeout)

    def show(self, unit, prop):
        return self.run(["systemctl", "show", "-p", prop, "--value", unit]).stdout.strip()

    def unit_pids(self, unit):
        """PIDs (as the container sees them) in the unit's control group, whichever the hierarchy."""
        group = self.show(unit, "ControlGroup")
        if not group:
            return []
        for hierarchy in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup"):
            result = self.run(["cat", f"{hierarchy}{group}/cgroup.procs"], check=False)
            if result.returncode == 0:
                return sorted(int(pid) for pid in result.stdout.split())
        return []

    def journal(self, *args):
        """Journal entries (dicts) for journalctl args, e.g. ("-u", "x.service", "--after-cursor", c)."""
        result = self.run(["journalctl", "--no-pager", "-o", "json", *args], check=False)
        entries = []
        for line in result.stdout.splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass
        return entries

    def cursor(self):
        """The journal's current end: entries after it are new."""
        entries = self.journal("-n", "1")
        return entries[-1]["__CURSOR"] if entries else None

    # -- end ------------------------------------------------------------------------------------

    def close(self):
        if self.nspawn is not None and self.nspawn.poll() is None:
            self.nspawn.send_signal(signal.SIGTERM)        # nspawn powers the container off
            try:
                self.nspawn.wait(timeout=20)
            except subprocess.TimeoutExpired:
                if self.leader:
                    try:
                        os.kill(self.leader, signal.SIGKILL)   # ends the container's PID namespace
                    except ProcessLookupError:
                        pass
                self.nspawn.kill()
                self.nspawn.wait(timeout=20)
        if self.copy is not None and self.copy.exists():
            shutil.rmtree(self.copy, ignore_errors=True)
            shutil.rmtree(f"/run/systemd/nspawn/propagate/{self.name}", ignore_errors=True) if hasattr(self, "name") else None
        self.copy = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
