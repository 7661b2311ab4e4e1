"""perfhud on Kubernetes (issue 45, item 5): the manifests of Packaging/kubernetes checked offline
against Kubernetes' own schemas (PyPI's kubernetes-validate carries them), and the DaemonSet's pod
run for real on this machine, from the image `make image` builds (the binary under test and the
libraries it links, FROM scratch), watching other containers by name and scraped over its port.

Kubernetes itself does not run here. `podman kube play` runs the pod spec as written, with this
machine's podman (4.3, Debian 12): it has no hostPID (podman #17157, added in 4.5), so the same
spec is also run with `podman run`, each of its settings given as podman's option, --pid host
among them: what the pod sees of the node's processes is tested there."""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess

import pytest
import yaml

from conftest import BIN, wait_until
from test_containers import IMAGE as BUSYBOX, RUN, containers, image, podman  # noqa: F401 (fixtures)

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "Packaging" / "kubernetes"
VERSION = re.search(r'^let perfhudVersion = "(.*)"', (ROOT / "Sources/perfhud/Version.swift").read_text(), re.M)[1]
# The oldest and the newest Kubernetes the manifests are checked against.
KUBERNETES = ["1.27.0", "1.34.0"]
needs_podman = pytest.mark.skipif(not shutil.which("podman") or os.geteuid() != 0, reason="rootful podman (installed by `make test`) and root")


def manifests():
    """The kustomization's resources, each file's objects, in its order."""
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    return kustomization, {name: list(yaml.safe_load_all((MANIFESTS / name).read_text())) for name in kustomization["resources"]}


def daemonset():
    return manifests()[1]["daemonset.yaml"][0]


# What the PodMonitor may say: the fields of prometheus-operator's CRD (monitoring.coreos.com/v1,
# PodMonitor) that the manifest uses, written from its API reference. Not the CRD's whole schema
# (no copy of it is here): a field misspelt or misplaced at these levels is refused.
PODMONITOR = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "PodMonitor"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "additionalProperties": False, "required": ["selector", "podMetricsEndpoints"], "properties": {
            "selector": {"type": "object", "additionalProperties": False, "properties": {
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}, "matchExpressions": {"type": "array"}}},
            "namespaceSelector": {"type": "object"},
            "podMetricsEndpoints": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": False, "properties": {
                "port": {"type": "string"}, "path": {"type": "string"}, "interval": {"type": "string", "pattern": "^([0-9]+(ms|s|m|h))+$"},
                "scrapeTimeout": {"type": "string"}, "scheme": {"enum": ["http", "https"]},
                "relabelings": {"type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {
                    "sourceLabels": {"type": "array", "items": {"type": "string"}}, "targetLabel": {"type": "string"},
                    "action": {"type": "string"}, "regex": {"type": "string"}, "replacement": {"type": "string"}, "separator": {"type": "string"}}}},
            }}},
        }},
    },
}


@pytest.mark.parametrize("version", KUBERNETES)
def test_every_manifest_is_a_valid_object_of_kubernetes(version):
    import jsonschema
    import kubernetes_validate
    kustomization, files = manifests()
    assert sorted(kustomization["resources"] + ["kustomization.yaml"]) == sorted(p.name for p in MANIFESTS.glob("*.yaml")), \
        "every file is a resource of the kustomization"
    kinds = []
    for name, objects in files.items():
        for obj in objects:
            kinds.append(obj["kind"])
            if obj["kind"] == "PodMonitor":
                jsonschema.validate(obj, PODMONITOR)
            else:
                kubernetes_validate.validate(obj, version, strict=True)   # raises on any field the schema lacks
    assert sorted(kinds) == ["ConfigMap", "DaemonSet", "Namespace", "PodMonitor", "Service"]


def test_the_manifests_agree_with_each_other_and_with_perfhud():
    kustomization, files = manifests()
    spec = daemonset()["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    # The image the kustomization names is the one `make image` builds, at this version.
    assert kustomization["images"] == [{"name": container["image"], "newName": "localhost/perfhud", "newTag": VERSION}]
    # The ConfigMap the pod mounts is the kustomization's, its file the one the daemon reads.
    configmap = files["configmap.yaml"][0]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert volumes[mounts["/etc/perfhud"]["name"]]["configMap"]["name"] == configmap["metadata"]["name"]
    assert container["args"][container["args"].index("--config") + 1] == "/etc/perfhud/" + next(iter(configmap["data"]))
    # Read-only, but for the event sockets' directory; the fewest capabilities: one.
    assert [path for path, m in mounts.items() if not m.get("readOnly")] == ["/run/perfhud"]
    security = container["securityContext"]
    assert security["capabilities"] == {"drop": ["ALL"], "add": ["SYS_PTRACE"]} and security["readOnlyRootFilesystem"]
    # The Service and the PodMonitor select the pods by the labels they have, on the port they name.
    labels = daemonset()["spec"]["template"]["metadata"]["labels"]
    service, monitor = files["service.yaml"][0], files["podmonitor.yaml"][0]
    assert service["spec"]["selector"].items() <= labels.items() and monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    port = container["ports"][0]
    assert port["name"] == service["spec"]["ports"][0]["targetPort"] == monitor["spec"]["podMetricsEndpoints"][0]["port"]
    assert f"0.0.0.0:{port['containerPort']}" in container["args"]
    # The daemon takes the ConfigMap's targets.conf as it is: its first line says what it watches.
    directory = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"targets-{os.getpid()}"
    directory.mkdir(exist_ok=True)
    (directory / "targets.conf").write_text(next(iter(configmap["data"].values())))
    daemon = subprocess.Popen([str(BIN / "perfhud"), "daemon", "--config", str(directory / "targets.conf"), "--listen", f"127.0.0.1:{free_port()}",
                               "--events", str(directory / "events")], stderr=subprocess.PIPE, text=True)
    try:
        first = daemon.stderr.readline()
        assert re.match(r"perfhud: notice: watching 0 targets; containers \*; metrics on ", first), first
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def perfhud_image(tmp_path_factory):
    """The image `make image` builds, of the binary under test (its libraries as it links them)."""
    staging = tmp_path_factory.mktemp("image")
    staged = subprocess.run([str(ROOT / "Packaging/image/stage-rootfs"), str(BIN / "perfhud"), str(staging)], capture_output=True, text=True)
    assert staged.returncode == 0, staged.stderr
    tag = f"localhost/perfhud:test-{os.getpid()}"
    built = subprocess.run(["podman", "build", "-q", "-t", tag, "-f", str(ROOT / "Packaging/image/Containerfile"), str(staging)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    yield tag
    subprocess.run(["podman", "rmi", "-f", tag], capture_output=True)


def pod_of_the_daemonset(image_tag, port):
    """The DaemonSet's pod template as a Pod, its image the one built, its port one free here.
    Left out, for podman 4.3: `ports` (it refuses port mappings on the host's network, which
    Kubernetes takes as documentation) and the probes (podman runs an HTTP probe with curl inside
    the container, and the image has none)."""
    template = daemonset()["spec"]["template"]
    spec = json.loads(json.dumps(template["spec"]))
    container = spec["containers"][0]
    container["image"] = image_tag
    container["args"] = [f"127.0.0.1:{port}" if a.startswith("0.0.0.0:") else a for a in container["args"]]
    for key in ("ports", "readinessProbe", "livenessProbe"):
        container.pop(key)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"perfhud-{os.getpid()}", "labels": template["metadata"]["labels"]}, "spec": spec}


def podman_settings(tmp_path):
    """This machine's podman (the issue's notes): runc, and explicit descriptor and process limits."""
    conf = tmp_path / "containers.conf"
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n')
    return dict(os.environ, CONTAINERS_CONF=str(conf))


def metrics(port):
    import urllib.request
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    except OSError:
        return ""


def value(text, series):
    match = re.search("^" + re.escape(series) + r" (\S+)$", text, re.M)
    return float(match[1]) if match else None


@needs_podman
def test_the_daemonsets_pod_runs_under_podman_kube_play(perfhud_image, containers, tmp_path):
    watched = f"ph-{os.getpid()}-kube"
    containers(watched, "sleep 1000")
    port = free_port()
    pod = pod_of_the_daemonset(perfhud_image, port)
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    env = podman_settings(tmp_path)
    played = subprocess.run(["podman", "kube", "play", "--configmap", str(MANIFESTS / "configmap.yaml"), str(tmp_path / "pod.yaml")],
                            capture_output=True, text=True, env=env, timeout=120)
    name = pod["metadata"]["name"]
    try:
        assert played.returncode == 0, played.stderr
        # Its own container is one the ConfigMap's `--containers *` finds (this podman gives it no
        # other PID namespace's processes: see the module's note), named from podman's records.
        own = f"{name}-perfhud"
        assert wait_until(lambda: f'perfhud_target_info{{target="{own}"' in metrics(port), timeout=30), \
            subprocess.run(["podman", "logs", own], capture_output=True, text=True).stderr
        text = metrics(port)
        info = next(line for line in text.splitlines() if line.startswith(f'perfhud_target_info{{target="{own}"'))
        assert f'image="{perfhud_image}"' in info and 'runtime="podman"' in info, info
        assert value(text, f'perfhud_target_group_memory_bytes{{target="{own}"}}') > 1 << 20
        # The other container is found by its name from the records the pod mounts read-only.
        assert f'target="{watched}"' in text
        inspect = json.loads(subprocess.run(["podman", "inspect", own], capture_output=True, text=True, check=True).stdout)[0]["HostConfig"]
        assert inspect["ReadonlyRootfs"] and inspect["CapAdd"] == ["CAP_SYS_PTRACE"] and inspect["NetworkMode"] == "host", inspect
    finally:
        subprocess.run(["podman", "kube", "down", str(tmp_path / "pod.yaml")], capture_output=True, env=env, timeout=120)


def run_options(pod, tmp_path):
    """`podman run`'s options for the pod spec's settings, one for each (the test fails on a
    setting it does not know how to give)."""
    spec = pod["spec"]
    (container,) = spec["containers"]
    tmp_path.mkdir(exist_ok=True)
    options = ["--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]
    known = {"hostPID", "hostNetwork", "dnsPolicy", "automountServiceAccountToken", "tolerations", "containers", "volumes"}
    assert set(spec) <= known, set(spec) - known
    options += ["--pid", "host"] if spec["hostPID"] else []
    options += ["--network", "host"] if spec["hostNetwork"] else []
    security = container["securityContext"]
    options += ["--user", str(security["runAsUser"]), "--cap-drop", "all"] + [a for cap in security["capabilities"]["add"] for a in ("--cap-add", cap)]
    options += ["--read-only"] if security["readOnlyRootFilesystem"] else []
    options += ["--security-opt", "no-new-privileges"] if not security["allowPrivilegeEscalation"] else []
    options += ["--memory", container["resources"]["limits"]["memory"].replace("Mi", "m")]
    volumes = {v["name"]: v for v in spec["volumes"]}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "configMap" in volume:
            directory = tmp_path / mount["name"]
            directory.mkdir()
            for key, text in manifests()[1]["configmap.yaml"][0]["data"].items():
                (directory / key).write_text(text)
            source = str(directory)
        else:
            source = volume["hostPath"]["path"]
            os.makedirs(source, exist_ok=True)   # DirectoryOrCreate
        options += ["-v", f"{source}:{mount['mountPath']}" + (":ro" if mount.get("readOnly") else "")]
    return options + [pod["spec"]["containers"][0]["image"]] + container["args"]


@needs_podman
def test_the_pod_specs_settings_watch_other_containers_by_name(perfhud_image, containers, tmp_path):
    # A container under a quarter of a core and 64 MiB: what the pod reports of it, from the
    # node's processes and groups, with one capability and a read-only root.
    watched = f"ph-{os.getpid()}-node"
    containers(watched, "while :; do :; done", "--cpus", "0.25", "--memory", "64m")
    port = free_port()
    pod = pod_of_the_daemonset(perfhud_image, port)
    name = f"perfhud-node-{os.getpid()}"
    started = subprocess.run(["podman", "run", "-d", "--name", name] + run_options(pod, tmp_path), capture_output=True, text=True, timeout=120)
    try:
        assert started.returncode == 0, started.stderr
        labels = f'{{target="{watched}"}}'
        assert wait_until(lambda: value(metrics(port), f"perfhud_target_cpu_ratio{labels}") is not None, timeout=30), \
            subprocess.run(["podman", "logs", name], capture_output=True, text=True).stderr
        assert wait_until(lambda: 0.15 < (value(metrics(port), f"perfhud_target_cpu_ratio{labels}") or 0) < 0.3, timeout=20), metrics(port)
        text = metrics(port)
        assert value(text, f"perfhud_target_cpu_limit_cores{labels}") == 0.25
        assert value(text, f"perfhud_target_memory_limit_bytes{labels}") == 64 << 20
        assert value(text, f"perfhud_target_group_memory_bytes{labels}") > 0
        # Read with SYS_PTRACE alone: another container's PSS (smaps_rollup) is there, not null.
        assert value(text, f"perfhud_target_proportional_memory_bytes{labels}") > 0, text
        info = next(line for line in text.splitlines() if line.startswith(f"perfhud_target_info{labels[:-1]}"))
        assert f'image="{BUSYBOX}"' in info and 'comm="sh"' in info, info
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True, timeout=60)
    # The one capability is needed: without it the PSS is unknown (absent), the CPU still read.
    options = run_options(pod, tmp_path / "again")
    at = options.index("--cap-add")
    del options[at:at + 2]
    started = subprocess.run(["podman", "run", "-d", "--name", name] + options, capture_output=True, text=True, timeout=120)
    try:
        assert started.returncode == 0, started.stderr
        assert wait_until(lambda: value(metrics(port), f"perfhud_target_cpu_ratio{labels}") is not None, timeout=30)
        assert value(metrics(port), f"perfhud_target_proportional_memory_bytes{labels}") is None
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True, timeout=60)
