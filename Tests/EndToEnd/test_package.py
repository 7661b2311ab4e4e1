"""The Debian package `make package` writes: what a user installing dist/perfhud_VERSION_ARCH.deb gets.

Installing it for real (and purging it) under systemd is the container test's job; these tests read
the .deb: its file list, its control fields, lintian's verdict, and the files it carries, extracted.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

DIST = ROOT / "dist"
VERSION = re.search(r'^let perfhudVersion = "([^"]+)"', (ROOT / "Sources/perfhud/Version.swift").read_text(), re.M).group(1)

if not shutil.which("dpkg-deb"):
    pytest.skip("dpkg-deb (dpkg) is needed", allow_module_level=True)


def run(*args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 120)
    return subprocess.run(list(args), **kwargs)


@pytest.fixture(scope="module")
def deb():
    architecture = run("dpkg", "--print-architecture").stdout.strip()
    path = DIST / f"perfhud_{VERSION}_{architecture}.deb"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make package` (make test does)")
    return path


@pytest.fixture(scope="module")
def tree(deb, tmp_path_factory):
    """The package's files, extracted as dpkg would place them."""
    root = tmp_path_factory.mktemp("deb") / "root"
    result = run("dpkg-deb", "-x", str(deb), str(root))
    assert result.returncode == 0, result.stderr
    return root


def field(deb, name):
    return run("dpkg-deb", "-f", str(deb), name).stdout.strip()


EXPECTED_FILES = [
    "usr/bin/perfhud",
    "usr/bin/perfhud-demo",
    "usr/lib/perfhud/libperfhud-gl.so",
    "usr/lib/perfhud/libperfhud-vulkan.so",
    "usr/lib/perfhud/perfhud_vulkan_layer.json",
    "lib/systemd/system/perfhud.service",
    "lib/systemd/system/perfhud@.service",
    "etc/default/perfhud",
    "etc/perfhud/targets.conf",
    "usr/share/man/man1/perfhud.1.gz",
    "usr/share/man/man1/perfhud-demo.1.gz",
    "usr/share/bash-completion/completions/perfhud",
    "usr/share/zsh/vendor-completions/_perfhud",
    "usr/share/fish/vendor_completions.d/perfhud.fish",
    "usr/share/perfhud/grafana-dashboard.json",
    "usr/share/perfhud/prometheus-alerts.yml",
    "usr/share/doc/perfhud/README.md",
    "usr/share/doc/perfhud/docs/daemon.md",
    "usr/share/doc/perfhud/docs/figures.md",
    "usr/share/doc/perfhud/changelog.gz",
    "usr/share/doc/perfhud/copyright",
]
UNITS = ["lib/systemd/system/perfhud.service", "lib/systemd/system/perfhud@.service"]
SUBCOMMANDS = ["attach", "run", "demo", "daemon", "emit", "report", "export"]


def test_the_changelog_and_perfhud_version_agree():
    """`make package` takes the package's version from the changelog: it must be perfhud's own."""
    if not shutil.which("dpkg-parsechangelog"):
        pytest.skip("dpkg-parsechangelog (dpkg-dev)")
    changelog = run("dpkg-parsechangelog", "-l", str(ROOT / "Packaging/debian/changelog"), "-SVersion").stdout.strip()
    assert changelog == VERSION, f"Packaging/debian/changelog says {changelog}, Sources/perfhud/Version.swift {VERSION}"


def test_dist_holds_exactly_one_deb_named_for_version_and_architecture(deb):
    debs = sorted(path.name for path in DIST.glob("*.deb")) + sorted(path.name for path in DIST.glob("*.ddeb"))
    assert debs == [deb.name]
    assert field(deb, "Package") == "perfhud"
    assert field(deb, "Version") == VERSION


def test_the_package_lists_every_file_a_user_needs(deb):
    listing = run("dpkg-deb", "-c", str(deb)).stdout
    paths = {line.split()[-1].removeprefix("./") for line in listing.splitlines() if line and not line.startswith("d")}
    missing = [path for path in EXPECTED_FILES if path not in paths]
    assert not missing, listing
    modes = {line.split()[-1].removeprefix("./"): line.split()[0] for line in listing.splitlines() if line}
    assert modes["usr/bin/perfhud"] == modes["usr/bin/perfhud-demo"] == "-rwxr-xr-x", listing
    assert all(" root/root " in line for line in listing.splitlines() if line), "files belong to root"
    assert not any(path.startswith("usr/local/") for path in paths), "a Debian package never writes to /usr/local"


def test_etc_default_perfhud_is_a_conffile_so_upgrades_keep_the_administrators_edits(deb, tmp_path):
    result = run("dpkg-deb", "-e", str(deb), str(tmp_path / "control"))
    assert result.returncode == 0, result.stderr
    conffiles = (tmp_path / "control" / "conffiles").read_text().split()
    assert "/etc/default/perfhud" in conffiles and "/etc/perfhud/targets.conf" in conffiles


def test_depends_is_computed_from_the_shared_libraries_and_needs_no_swift_toolchain(deb):
    depends = field(deb, "Depends")
    names = [item.strip().split()[0] for item in depends.split(",") if item.strip()]
    assert "libproc2-0" in names, depends
    assert "libc6" in names, depends
    assert not [name for name in names if "swift" in name.lower() or "foundation" in name.lower()], depends
    # The documentation's list of what the package needs is the package's own (issue 19, point 12).
    documented = (ROOT / "docs/daemon.md").read_text()
    assert not [name for name in names if f"`{name}`" not in documented], (depends, "docs/daemon.md")


@pytest.mark.parametrize("program", ["usr/bin/perfhud", "usr/bin/perfhud-demo"])
def test_binaries_load_nothing_from_a_swift_toolchain_and_carry_no_rpath(tree, program):
    binary = tree / program
    ldd = run("ldd", str(binary))
    assert ldd.returncode == 0, ldd.stderr
    assert "/opt/swift" not in ldd.stdout and "libswift" not in ldd.stdout and "not found" not in ldd.stdout, ldd.stdout
    for line in ldd.stdout.splitlines():
        resolved = line.split("=>")[-1].split("(")[0].strip()
        if resolved.startswith("/"):
            assert resolved.startswith(("/lib", "/usr/lib")), line
    dynamic = run("readelf", "-d", str(binary)).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, dynamic


def test_the_frame_hooks_are_installed_together_and_need_only_libc(deb, tree):
    """/usr/lib/perfhud: the OpenGL preload library, the Vulkan layer and its manifest, whose
    library_path (relative to the manifest) names the layer next to it."""
    listing = run("dpkg-deb", "-c", str(deb)).stdout
    modes = {line.split()[-1].removeprefix("./"): line.split()[0] for line in listing.splitlines() if line}
    directory = tree / "usr/lib/perfhud"
    for name in ("libperfhud-gl.so", "libperfhud-vulkan.so", "perfhud_vulkan_layer.json"):
        assert modes[f"usr/lib/perfhud/{name}"] == "-rw-r--r--", listing
    manifest = json.loads((directory / "perfhud_vulkan_layer.json").read_text())
    layer = manifest["layer"]
    assert layer["name"] == "VK_LAYER_PERFHUD_frames"
    assert (directory / layer["library_path"]).resolve() == (directory / "libperfhud-vulkan.so").resolve()
    assert layer["enable_environment"] == {"PERFHUD_VULKAN": "1"}
    assert layer["disable_environment"] == {"PERFHUD_VULKAN_DISABLE": "1"}
    assert VERSION in layer["description"]
    for library, exported in (("libperfhud-gl.so", {"glXSwapBuffers", "eglSwapBuffers", "eglSwapBuffersWithDamageEXT",
                                                    "eglSwapBuffersWithDamageKHR", "glXGetProcAddress", "glXGetProcAddressARB",
                                                    "eglGetProcAddress", "execve", "execv", "execvp", "execvpe", "execl",
                                                    "execlp", "execle", "dlsym", "SDL_GL_SwapWindow", "SDL_RenderPresent",
                                                    "SDL_UpdateWindowSurface", "SDL_UpdateWindowSurfaceRects"}),
                              ("libperfhud-vulkan.so", {"perfhud_vkNegotiateLoaderLayerInterfaceVersion"})):
        dynamic = run("readelf", "-d", str(directory / library)).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic))
        assert needed <= {"libc.so.6", "libdl.so.2", "libpthread.so.0"}, needed
        symbols = run("nm", "-D", "--defined-only", str(directory / library)).stdout
        assert {line.split()[-1] for line in symbols.splitlines() if line.strip()} == exported, symbols
    # Preloaded into a program with no GL and no PERFHUD_SOCKET, the hook changes nothing.
    result = run("sh", "-c", "echo preloaded", env={"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(directory / "libperfhud-gl.so")})
    assert result.returncode == 0 and result.stdout == "preloaded\n" and not result.stderr, result


def test_packaged_perfhud_runs_without_the_toolchain_and_says_the_package_version(deb, tree):
    environment = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ""}
    result = run(str(tree / "usr/bin/perfhud"), "--version", env=environment)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == field(deb, "Version") == VERSION


def test_units_start_the_packaged_binary_and_name_documentation_the_package_has(tree):
    for unit in UNITS:
        text = (tree / unit).read_text()
        exec_starts = re.findall(r"^ExecStart=(\S+)", text, re.M)
        assert exec_starts == ["/usr/bin/perfhud"], (unit, exec_starts)
        assert "/usr/local" not in text, unit
        documentation = " ".join(re.findall(r"^Documentation=(.*)$", text, re.M)).split()
        assert documentation, unit
        for link in documentation:
            if link.startswith("file://"):
                assert (tree / link.removeprefix("file:///")).is_file(), (unit, link)
            elif link.startswith("man:"):
                page = re.fullmatch(r"man:([^(]+)\((\d)\)", link)
                assert page and (tree / f"usr/share/man/man{page[2]}/{page[1]}.{page[2]}.gz").is_file(), (unit, link)
        if "EnvironmentFile=/etc/default/perfhud" in text:
            assert (tree / "etc/default/perfhud").is_file()
        if "/etc/perfhud/targets.conf" in text:
            assert (tree / "etc/perfhud/targets.conf").is_file()


def test_lintian_reports_no_errors(deb):
    if not shutil.which("lintian"):
        pytest.skip("lintian is installed by make test")
    result = run("lintian", str(deb), timeout=300)
    errors = [line for line in result.stdout.splitlines() if line.startswith("E:")]
    assert not errors, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_man_page_renders_and_covers_the_subcommands(tree):
    if not shutil.which("man"):
        pytest.skip("man (man-db) is installed by make test")
    result = run("man", "-l", str(tree / "usr/share/man/man1/perfhud.1.gz"), env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="100"))
    assert result.returncode == 0, result.stderr
    # Overstrikes out; groff's UTF-8 hyphen and minus read as the ASCII they were written as.
    text = re.sub(r".\x08", "", result.stdout).replace("\u2010", "-").replace("\u2212", "-")
    assert "perfhud" in text and "SYNOPSIS" in text
    for subcommand in SUBCOMMANDS:
        assert re.search(rf"^\s+{subcommand}\s", text, re.M), f"{subcommand} missing from perfhud(1):\n{text[:2000]}"
    assert "benchmark-sampler" not in text, "hidden subcommands stay out of the manual"
    assert "--metrics-listen" in text
    # Issue 19, point 12: as complete as the reference on keys, exit statuses, environment and
    # files (generated from docs/, one source), and no character of the help dropped.
    sections = {name: re.search(rf"^{name}\n(.*?)(?=^[A-Z][A-Z ]+\n|\Z)", text, re.M | re.S) for name in
                ["KEYS", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"]}
    assert all(sections.values()), [name for name, found in sections.items() if not found]
    docs = ROOT / "docs"
    for name, page in [("KEYS", "keys.md"), ("EXIT STATUS", "exit-status.md"), ("ENVIRONMENT", "environment.md"), ("FILES", "files.md")]:
        body = sections[name][1]
        terms = re.findall(r"^- `([^`]+)`", (docs / page).read_text(), re.M)
        assert terms, page
        for term in terms:
            assert term in body, f"{term!r} of docs/{page} missing from {name} in perfhud(1):\n{body}"
    for status in ["64", "65", "66", "69", "73", "77", "126", "127", "128+N"]:
        assert re.search(rf"^\s+{re.escape(status)}\s", sections["EXIT STATUS"][1], re.M), status
    assert "0 on success" not in text, "generate-manual's own EXIT STATUS is replaced"
    assert "<-/-> seek" in text and "+/- speed" in text, "replay's keys as its help says them"
    demo = run("man", "-l", str(tree / "usr/share/man/man1/perfhud-demo.1.gz"), env=dict(os.environ, MANPAGER="cat", PAGER="cat"))
    assert demo.returncode == 0 and "perfhud demo" in re.sub(r".\x08", "", demo.stdout)


def test_bash_completion_is_valid_and_completes_the_subcommands(tree):
    script = tree / "usr/share/bash-completion/completions/perfhud"
    assert run("bash", "-n", str(script)).returncode == 0
    assert not script.read_text().startswith("#!"), "bash-completion scripts are sourced, not run"
    probe = f"""
        shopt -s extglob
        source {script}
        function=$(complete -p perfhud | sed -E 's/.*-F ([^ ]+) .*/\\1/')
        COMP_WORDS=(perfhud ""); COMP_CWORD=1; COMP_LINE="perfhud "; COMP_POINT=8
        "$function" perfhud "" perfhud
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    result = run("bash", "--norc", "-c", probe)
    assert result.returncode == 0, result.stderr
    offered = result.stdout.split()
    assert all(subcommand in offered for subcommand in SUBCOMMANDS), offered


def test_zsh_completion_is_valid_and_lists_the_subcommands(tree):
    script = tree / "usr/share/zsh/vendor-completions/_perfhud"
    text = script.read_text()
    assert text.startswith("#compdef perfhud"), text[:80]
    if shutil.which("zsh"):
        result = run("zsh", "-n", str(script))
        assert result.returncode == 0, result.stderr
    for subcommand in SUBCOMMANDS:
        assert re.search(rf"'{subcommand}:[^']+'", text), subcommand


def test_fish_completion_is_valid_and_completes_the_subcommands(tree):
    if not shutil.which("fish"):
        pytest.skip("fish is installed by make test")
    script = tree / "usr/share/fish/vendor_completions.d/perfhud.fish"
    assert run("fish", "-n", str(script)).returncode == 0
    result = run("fish", "--no-config", "-c", f"source {script}; complete -C 'perfhud '")
    assert result.returncode == 0, result.stderr
    offered = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert all(subcommand in offered for subcommand in SUBCOMMANDS), offered


def test_dashboard_and_alert_rules_are_the_shipped_ones(tree):
    dashboard = tree / "usr/share/perfhud/grafana-dashboard.json"
    assert json.loads(dashboard.read_text()) == json.loads((ROOT / "Dashboards/perfhud.json").read_text())
    assert (tree / "usr/share/perfhud/prometheus-alerts.yml").read_text() == (ROOT / "Dashboards/perfhud-alerts.yml").read_text()


def test_copyright_is_machine_readable_and_names_what_is_linked_in(tree):
    text = (tree / "usr/share/doc/perfhud/copyright").read_text()
    assert text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert "Runtime Library Exception" in text and "Swift runtime" in text
    resolved = ROOT / "Package.resolved"
    if resolved.exists():
        pins = [pin["identity"] for pin in json.loads(resolved.read_text()).get("pins", [])]
        assert pins
        missing = [identity for identity in pins if identity not in text]
        assert not missing, f"debian/copyright does not name {missing} (a new Swift package dependency?)"


def test_packaged_binaries_run_with_the_swift_toolchain_out_of_sight(tree):
    """What a Debian 12 without Swift sees: the toolchain's directory hidden under an empty tmpfs."""
    swift = shutil.which("swift")
    if os.geteuid() != 0 or not shutil.which("unshare") or not swift:
        pytest.skip("needs root, unshare and a Swift toolchain to hide")
    toolchain = pathlib.Path(swift).resolve().parents[2]  # /opt/swift from /opt/swift/usr/bin/swift
    if toolchain == pathlib.Path("/") or str(toolchain).startswith("/usr"):
        pytest.skip(f"the toolchain lives in {toolchain}, which cannot be hidden alone")
    script = (f"mount -t tmpfs none {toolchain} && {tree}/usr/bin/perfhud --version"
              f" && {tree}/usr/bin/perfhud emit --help >/dev/null")
    result = run("unshare", "--mount", "sh", "-c", script)
    if result.returncode != 0 and "mount" in result.stderr and "perfhud" not in result.stderr:
        pytest.skip(f"cannot mount here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == VERSION
