"""deploy/kubernetes: what can be checked without a cluster or a Docker engine.

- the Zero to JupyterHub values, merged over the chart's defaults as Helm merges them,
  validate against the chart's own JSON schema at the pinned chart version (and broken
  copies do not);
- the profiles keep the course folder and the gradebook out of a student's pod, and the
  hub offers each user only their role's profile (the values' own Python, run here);
- the manifests parse, have what Kubernetes requires, and name only claims, config maps
  and secrets that are defined; the grading Job runs `autograder grade` on the course;
- every version pinned in the image recipe agrees with constraints.txt and pyproject.toml,
  torch comes from the CPU index, the student stage copies nothing that knows an answer
  (its `autograder` is the answer-free one the learner stage writes);
- the check service's Deployment, Service and network, and the values that register it
  with the hub and point students' kernels at it, agree with `make class`'s;
- the exchange gate, on a real exchange folder, forwards truthful hand-ins, refuses the
  rest and delivers feedback that the real `nbgrader release_feedback` released.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import functools
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"
CHART_VERSION = "4.4.0"
CHART = DEPLOY / f"chart-{CHART_VERSION}"
COURSE_ID = "backward-course"
EXCHANGE_ROOT = "/srv/nbgrader/exchange"


def run_apart(coroutine: Any) -> Any:
    """`asyncio.run` in a thread of its own: a test before this one on the same worker may
    leave an event loop running in this thread (Playwright's sync API does)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def load_yaml(path: Path) -> Any:
    """The YAML file, parsed by libyaml (PyYAML's C parser: the chart's schema is 130 KB)."""
    return yaml.load(path.read_text(), Loader=yaml.CSafeLoader)


def manifests() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in sorted((DEPLOY / "manifests").glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            if doc is not None:
                docs.append((path.name, doc))
    return docs


VALUES = load_yaml(DEPLOY / "values.yaml")


# ---------------------------------------------------------------- the chart's schema


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_vendored_chart_files_are_the_tagged_ones() -> None:
    source = (CHART / "SOURCE.md").read_text()
    assert f"tag `{CHART_VERSION}`" in source
    recorded = dict(re.findall(r"^\| (values[.\w]*\.yaml) \| ([0-9a-f]{40}) \|$", source, re.M))
    assert set(recorded) == {"values.schema.yaml", "values.yaml"}
    for name, blob in recorded.items():
        assert git_blob_id((CHART / name).read_bytes()) == blob, name
    assert f"--version {CHART_VERSION}" in (DEPLOY / "values.yaml").read_text()


def helm_merge(defaults: Any, override: Any) -> Any:
    """Helm's coalescing of user values over chart defaults: maps merge, a null removes
    the key, anything else replaces."""
    if not (isinstance(defaults, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = copy.deepcopy(defaults)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif key in merged:
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@functools.cache
def chart_defaults() -> Any:
    """The chart's own values.yaml, read once (`chart_values` merges over a copy)."""
    return load_yaml(CHART / "values.yaml")


def chart_values(values: dict[str, Any]) -> Any:
    """The values as the chart sees them: merged over its defaults."""
    return helm_merge(chart_defaults(), values)


@functools.cache
def chart_schema() -> jsonschema.Draft7Validator:
    """The chart's values.schema.yaml, itself a valid Draft 7 schema, read once."""
    schema = load_yaml(CHART / "values.schema.yaml")
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_errors(values: dict[str, Any]) -> list[str]:
    errors = chart_schema().iter_errors(chart_values(values))
    return [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def test_values_validate_against_the_chart_schema() -> None:
    assert schema_errors(VALUES) == []


def _set(values: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    mutated = copy.deepcopy(values)
    *parents, last = path.split(".")
    node = mutated
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return mutated


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("singleuser.profilelist", []),  # a typo: unknown key
        ("singleuser.profileList", {"student": {}}),  # wrong type
        ("singleuser.uid", "1000"),  # a string where a number belongs
        ("hub.config", ["JupyterHub"]),
        ("gradebook", {"url": "postgresql://"}),  # not a key of the chart
        ("proxy.https.hosts", "backward.example.org"),
    ],
)
def test_schema_rejects_broken_values(path: str, value: Any) -> None:
    assert schema_errors(_set(VALUES, path, value)) != []


def test_helm_merge_follows_helm() -> None:
    merged = helm_merge({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"c": None, "d": 3}, "l": [3]})
    assert merged == {"a": {"b": 1, "d": 3}, "l": [3]}


# ---------------------------------------------------------------- who sees what


def profiles() -> dict[str, dict[str, Any]]:
    return {p["slug"]: p for p in VALUES["singleuser"]["profileList"]}


def student_nbgrader_config() -> Config:
    config = Config()
    code = (DEPLOY / "student" / "nbgrader_config.py").read_text()
    exec(compile(code, "nbgrader_config.py", "exec"), {"get_config": lambda: config})
    return config


def test_student_profile_mounts_only_its_own_exchange_views() -> None:
    student = profiles()["student"]
    assert student.get("default") is True
    text = yaml.safe_dump(student)
    for private in ("course-instructor", "gradebook-db", "course-config", "instructor-registry"):
        assert private not in text, private
    override = student["kubespawner_override"]
    # the one Secret a student's pod reads: its own entry of learner-keys
    assert _walk(student, "secretKeyRef") == [{"name": "learner-keys", "key": "{username}"}]
    claims = {v["persistentVolumeClaim"]["claimName"] for v in override["volumes"].values()}
    assert claims == {"nbgrader-exchange"}
    config = student_nbgrader_config()
    assert config.Exchange.root == EXCHANGE_ROOT
    assert config.CourseDirectory.course_id == VALUES["singleuser"]["extraEnv"]["COURSE_ID"]
    course = f"{EXCHANGE_ROOT}/{COURSE_ID}"
    mounts = {m["mountPath"]: m for m in override["volume_mounts"].values()}
    assert set(mounts) == {f"{course}/outbound", f"{course}/inbound", f"{course}/feedback"}
    assert mounts[f"{course}/outbound"]["subPath"] == f"{COURSE_ID}/outbound"
    assert mounts[f"{course}/outbound"].get("readOnly") is True
    assert mounts[f"{course}/inbound"]["subPath"] == f"{COURSE_ID}/by-user/{{username}}/inbound"
    assert mounts[f"{course}/feedback"]["subPath"] == f"{COURSE_ID}/by-user/{{username}}/feedback"
    assert mounts[f"{course}/feedback"].get("readOnly") is True


def test_what_every_pod_gets_holds_nothing_private() -> None:
    singleuser = {k: v for k, v in VALUES["singleuser"].items() if k != "profileList"}
    text = yaml.safe_dump(singleuser)
    for private in ("course-instructor", "gradebook-db", "nbgrader-exchange", "secretKeyRef"):
        assert private not in text, private
    assert VALUES["singleuser"]["networkPolicy"]["egressAllowRules"]["privateIPs"] is False


def test_instructor_profile_has_the_course_and_the_gradebook() -> None:
    override = profiles()["instructor"]["kubespawner_override"]
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for v in override["volumes"].values()
        if "persistentVolumeClaim" in v
    }
    assert claims == {"nbgrader-exchange", "course-instructor"}
    db = override["environment"]["NBGRADER_DB_URL"]["valueFrom"]["secretKeyRef"]
    assert db == {"name": "gradebook-db", "key": "url"}
    assert override["extra_labels"]["backward-course/role"] == "instructor"


def offered(groups: list[str]) -> list[str]:
    """Run the values' own hub.extraConfig and ask which profiles a user is offered."""
    config = Config()
    config.KubeSpawner.profile_list = copy.deepcopy(VALUES["singleuser"]["profileList"])
    for _, code in sorted(VALUES["hub"]["extraConfig"].items()):
        exec(compile(code, "extraConfig", "exec"), {"c": config})
    choose = config.KubeSpawner.profile_list
    user = SimpleNamespace(groups=[SimpleNamespace(name=g) for g in groups])
    return [p["slug"] for p in choose(SimpleNamespace(user=user))]


def test_each_user_is_offered_only_their_role() -> None:
    assert offered([]) == ["student"]
    assert offered(["other"]) == ["student"]
    assert offered(["instructors"]) == ["instructor"]


def test_roster_and_groups_agree() -> None:
    auth = VALUES["hub"]["config"]["Authenticator"]
    instructors = VALUES["hub"]["config"]["JupyterHub"]["load_groups"]["instructors"]["users"]
    assert set(instructors) <= set(auth["allowed_users"])
    config_map = next(d for _, d in manifests() if d["metadata"]["name"] == "course-config")
    roster = config_map["data"]["roster.txt"].split()
    assert set(roster) == set(auth["allowed_users"]) - set(instructors)


def test_username_pattern_is_the_gates() -> None:
    gate = load_gate()
    pattern = VALUES["hub"]["config"]["Authenticator"]["username_pattern"]
    assert pattern == gate.LOGIN.pattern
    for login in ("ada", "ben-2", "x9"):
        assert re.match(pattern, login), login
    for login in ("Ada", "a--b", "ada+x", "-ada", "ada-", "a", "ada.l", "1ada"):
        assert not re.match(pattern, login), login


# ---------------------------------------------------------------- manifests


def test_manifests_have_what_kubernetes_requires() -> None:
    docs = manifests()
    assert {d["kind"] for _, d in docs} >= {
        "PersistentVolumeClaim",
        "ConfigMap",
        "Secret",
        "NetworkPolicy",
        "Deployment",
        "Job",
    }
    for name, doc in docs:
        assert doc.get("apiVersion"), name
        assert doc.get("kind"), name
        meta = doc.get("metadata", {})
        assert meta.get("name") or meta.get("generateName"), name
        if doc["kind"] in ("Deployment", "Job"):
            spec = doc["spec"]["template"]["spec"]
            assert spec["containers"], name
            for container in spec["containers"]:
                assert container.get("name") and container.get("image"), name
                for mount in container.get("volumeMounts", []):
                    assert mount["name"] in {v["name"] for v in spec["volumes"]}, name
        if doc["kind"] == "Deployment":
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert doc["spec"]["selector"]["matchLabels"].items() <= labels.items()


def _walk(node: Any, key: str) -> list[Any]:
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append(v)
            found += _walk(v, key)
    elif isinstance(node, list):
        for item in node:
            found += _walk(item, key)
    return found


def readme_install_steps() -> list[str]:
    """The lines of the README's Kubernetes install block."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("Install (namespace `backward-course`", 1)[1].split("```bash\n", 1)[1]
    return block.split("```", 1)[0].splitlines()


def test_the_readme_installs_every_manifest_and_the_check_service_after_the_chart() -> None:
    """A manifest the install steps never apply would be missing from every class that
    follows them; the check service needs the chart's Secret `hub`, so it comes after helm."""
    steps = readme_install_steps()
    text = "\n".join(steps)
    for path in sorted((DEPLOY / "manifests").glob("*.yaml")):
        if path.name.endswith(".example.yaml"):
            continue  # a template for a Secret the steps create with kubectl
        assert f"deploy/kubernetes/manifests/{path.name}" in text, path.name
    helm = next(i for i, line in enumerate(steps) if line.startswith("helm upgrade"))
    checks = next(i for i, line in enumerate(steps) if "check-service.yaml" in line)
    assert checks > helm


def test_every_claim_config_map_and_secret_named_is_defined() -> None:
    docs = [d for _, d in manifests()]
    defined = {(d["kind"], d["metadata"].get("name")) for d in docs}
    everything = [VALUES, *docs]
    claims = {c["claimName"] for c in _walk(everything, "persistentVolumeClaim")}
    assert claims == {"nbgrader-exchange", "course-instructor"}
    for claim in claims:
        assert ("PersistentVolumeClaim", claim) in defined
    for ref in _walk(everything, "configMap"):
        assert ("ConfigMap", ref["name"]) in defined
    secrets = {ref["name"] for ref in _walk(everything, "secretKeyRef")}
    assert "gradebook-db" in secrets
    assert ("Secret", "gradebook-db") in defined
    # hub-oauth is made by hand and learner-keys by learner_keys.py (the README says how);
    # hub is the chart's own, which holds the API token the chart made for the check service
    assert secrets - {"gradebook-db"} == {"hub-oauth", "hub", "learner-keys"}
    pulls = {ref["name"] for refs in _walk(everything, "imagePullSecrets") for ref in refs}
    assert pulls == {"instructor-registry"}  # made by hand (README)


def test_grading_job_runs_autograder_grade_on_the_course() -> None:
    (job,) = [d for _, d in manifests() if d["kind"] == "Job"]
    assert job["apiVersion"] == "batch/v1"
    pod = job["spec"]["template"]
    assert pod["spec"]["restartPolicy"] in ("Never", "OnFailure")
    assert pod["metadata"]["labels"]["backward-course/role"] == "grader"
    (container,) = pod["spec"]["containers"]
    assert container["command"] == ["autograder", "grade"]
    assert "instructor" in container["image"]
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    course_mounts = [
        m["mountPath"]
        for m in container["volumeMounts"]
        if volumes[m["name"]].get("persistentVolumeClaim", {}).get("claimName")
        == "course-instructor"
    ]
    assert course_mounts == [container["workingDir"]]
    env = {e["name"]: e for e in container["env"]}
    assert env["NBGRADER_DB_URL"]["valueFrom"]["secretKeyRef"]["name"] == "gradebook-db"
    assert env["NBGRADER_SITE_CONFIG"]["value"].startswith("/etc/backward-course/")


def test_site_config_reads_the_gradebook_from_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    config_map = next(d for _, d in manifests() if d["metadata"]["name"] == "course-config")
    monkeypatch.setenv("NBGRADER_DB_URL", "postgresql://grader:pw@gradebook:5432/gradebook")
    config = Config()
    exec(
        compile(config_map["data"]["site_config.py"], "site_config.py", "exec"),
        {"get_config": lambda: config},
    )
    assert config.CourseDirectory.db_url == "postgresql://grader:pw@gradebook:5432/gradebook"
    assert config.Exchange.root == EXCHANGE_ROOT
    assert config.ExchangeCollect.check_owner is False


# ---------------------------------------------------------------- the image recipe

DOCKERFILE = (DEPLOY / "Dockerfile").read_text()
PIN = re.compile(r"(?<![\w.-])([A-Za-z0-9][A-Za-z0-9_.-]*)==([0-9][^\s\"'\\;]*)")


def expected_pins() -> tuple[dict[str, str], SpecifierSet]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        name, version = requirement.split("==")
        assert pins[canonicalize_name(name)] == version, f"{name}: pyproject vs constraints"
    return pins, SpecifierSet(project["requires-python"])


def recipe_problems(text: str) -> list[str]:
    """What in an image recipe disagrees with the course's pins (empty: nothing)."""
    pins, python_spec = expected_pins()
    problems = []
    found = {canonicalize_name(n): v for n, v in PIN.findall(text)}
    if "torch" not in found:
        problems.append("torch is not pinned")
    for name, version in sorted(found.items()):
        if name not in pins:
            problems.append(f"{name}=={version} is not in constraints.txt")
        elif pins[name] != version:
            problems.append(f"{name}=={version}, constraints.txt says {pins[name]}")
    python = re.search(r"^ARG PYTHON_VERSION=(\S+)$", text, re.M)
    if not python:
        problems.append("no ARG PYTHON_VERSION")
    elif python.group(1) not in python_spec:
        problems.append(f"Python {python.group(1)} is outside requires-python {python_spec}")
    index = re.search(r"^ARG TORCH_INDEX_URL=(\S+)$", text, re.M)
    if not index or not index.group(1).rstrip("/").endswith("/whl/cpu"):
        problems.append("torch does not come from PyTorch's CPU index")
    instructions = "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")
    )
    installs = re.findall(r"pip install ([^&\n]*)", instructions)
    if not installs:
        problems.append("no pip install")
    for args in installs:
        torch_alone = "--no-deps" in args and "torch==" in args and "TORCH_INDEX_URL" in args
        if not torch_alone and not re.search(r"-c \S*constraints\.txt", args):
            problems.append(f"pip install without -c constraints.txt: {args.strip()}")
    if "['project']['dependencies']" not in text:
        problems.append("the stack is not read from pyproject.toml's dependencies")
    return problems


def test_image_recipe_pins_agree_with_constraints() -> None:
    assert recipe_problems(DOCKERFILE) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("torch==2.13.0", "torch==2.12.0"),  # a different torch
        ("ARG PYTHON_VERSION=3.11.14", "ARG PYTHON_VERSION=3.12.8"),  # outside requires-python
        ("ARG PYTHON_VERSION=3.11.14", "ARG PYTHON_VERSION=3.11.1"),  # below requires-python
        ("whl/cpu", "whl/cu128"),  # the CUDA build
        ("-c /tmp/pins/constraints.txt ", ""),  # unconstrained install
        ("torch==2.13.0", "torch"),  # pin missing
        ("pip check", "pip install nbgrader==0.9.5 && pip check"),  # a pin not the course's
        ("pip check", "pip install -c /tmp/pins/constraints.txt rich==14.0.0 && pip check"),
    ],
)
def test_recipe_check_fails_on_a_wrong_pin(old: str, new: str) -> None:
    assert old in DOCKERFILE
    assert recipe_problems(DOCKERFILE.replace(old, new)) != []


def stages(text: str) -> dict[str, list[str]]:
    """Dockerfile stage name -> its instructions (continuation lines joined)."""
    joined = re.sub(r"\\\n", " ", text)
    result: dict[str, list[str]] = {}
    current = None
    for line in joined.splitlines():
        line = line.strip()
        start = re.match(r"FROM \S+ AS (\w+)$", line)
        if start:
            current = start.group(1)
            result[current] = []
        elif current and line and not line.startswith("#"):
            result[current].append(line)
    return result


STUDENT_MAY_COPY = {"course", "exercises", "deploy/kubernetes/student/"}
LEARNER_OUTPUT = "/opt/backward-course/lib"  # the learner stage's answer-free packages
LEARNER_MAY_COPY = {"autograder", "autograder_client", "autograd_lessons"}


def student_stage_problems(text: str) -> list[str]:
    problems = []
    student = stages(text).get("student")
    if student is None:
        return ["no student stage"]
    if not student_from_stack(text):
        problems.append("the student stage is not built FROM stack")
    for line in student:
        if line.startswith(("COPY", "ADD")):
            parts = [p for p in line.split()[1:] if not p.startswith("--")]
            allowed = STUDENT_MAY_COPY
            if "--from=learner" in line.split():  # only what learner_package wrote
                allowed = {LEARNER_OUTPUT}
            for source in parts[:-1]:
                if source not in allowed:
                    problems.append(f"student stage copies {source}")
    learner = stages(text).get("learner", [])
    writes = f"python -m autograder.checks.learner_package {LEARNER_OUTPUT}"
    if not any(line.startswith("RUN") and line.endswith(writes) for line in learner):
        problems.append("the learner stage does not write the answer-free packages")
    for line in learner:
        if line.startswith(("COPY", "ADD")):
            for source in [p for p in line.split()[1:] if not p.startswith("--")][:-1]:
                if source not in LEARNER_MAY_COPY:
                    problems.append(f"learner stage copies {source}")
    return problems


def student_from_stack(text: str) -> bool:
    return re.search(r"^FROM stack AS student$", text, re.M) is not None


def test_student_image_holds_no_answers() -> None:
    assert student_stage_problems(DOCKERFILE) == []
    assert set(stages(DOCKERFILE)) == {"stack", "learner", "student", "instructor"}
    for target in ("student", "instructor"):
        assert f"--target {target}" in DOCKERFILE
    assert (DEPLOY / "student" / "nbgrader_config.py").is_file()


@pytest.mark.parametrize(
    "line",
    [
        "COPY solutions /opt/x",
        "COPY . /opt/backward-course",
        "COPY autograder /opt/lib/autograder",
        "COPY --from=learner /src/autograder /opt/lib/autograder",
        "COPY --from=instructor /opt/backward-course /opt/x",
    ],
)
def test_student_check_fails_on_an_answer_in_the_image(line: str) -> None:
    mutated = DOCKERFILE.replace("COPY course ", f"{line}\nCOPY course ")
    assert student_stage_problems(mutated) != []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("COPY autograd_lessons /src/autograd_lessons", "COPY solutions /src/solutions"),
        ("python -m autograder.checks.learner_package", "true"),
    ],
)
def test_learner_check_fails_on_a_stage_that_could_hold_answers(old: str, new: str) -> None:
    assert old in DOCKERFILE
    assert student_stage_problems(DOCKERFILE.replace(old, new)) != []


def test_the_check_service_is_the_hubs_and_students_reach_it() -> None:
    """The check service's Deployment, Service and network, and the values that make the
    hub know it and the students' kernels use it, agree with what `make class` sets up
    (autograder/checks/hub.py)."""
    from autograder.checks.hub import ACCESS, SERVER_SCOPES, SERVICE, URL_VARIABLE

    docs = {d["kind"]: d for name, d in manifests() if name == "check-service.yaml"}
    deployment, service, policy = docs["Deployment"], docs["Service"], docs["NetworkPolicy"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:3] == ["python", "-m", "autograder.checks.server"]
    assert container["image"].endswith("backward-course-instructor:0.1.0")
    assert "--course-dir" in container["command"]  # the course's id and secret: its numbers
    env = {e["name"]: e for e in container["env"]}
    token = env["JUPYTERHUB_API_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert token == {"name": "hub", "key": f"hub.services.{SERVICE}.apiToken"}
    assert env["JUPYTERHUB_SERVICE_PREFIX"]["value"] == f"/services/{SERVICE}/"
    port = service["spec"]["ports"][0]["port"]
    assert env["JUPYTERHUB_SERVICE_URL"]["value"].endswith(f":{port}")
    url = VALUES["hub"]["services"][SERVICE]["url"]
    assert url == f"http://{service['metadata']['name']}:{port}"
    assert VALUES["singleuser"]["extraEnv"][URL_VARIABLE] == f"{url}/services/{SERVICE}/"
    assert VALUES["hub"]["config"]["KubeSpawner"]["server_token_scopes"] == SERVER_SCOPES
    assert ACCESS in VALUES["hub"]["loadRoles"]["user"]["scopes"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert labels["hub.jupyter.org/network-access-hub"] == "true"  # the chart's hub policy
    reach = [
        rule
        for rule in VALUES["singleuser"]["networkPolicy"]["egress"]
        if rule["to"][0]["podSelector"]["matchLabels"].items() <= labels.items()
    ]
    assert [r["ports"] for r in reach] == [[{"port": port, "protocol": "TCP"}]]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    admitted = [f["podSelector"]["matchLabels"] for f in policy["spec"]["ingress"][0]["from"]]
    student = profiles()["student"]["kubespawner_override"]["extra_labels"]
    assert student.items() <= {k: v for m in admitted for k, v in m.items()}.items()
    assert policy["spec"]["ingress"][0]["ports"] == [{"port": port, "protocol": "TCP"}]


def test_build_context_leaves_runtime_data_out() -> None:
    ignored = set((DEPLOY / "Dockerfile.dockerignore").read_text().split())
    for private in (
        ".git",
        ".venv",
        "site_config.py",
        "gradebook.db",
        "submitted",
        "autograded",
        "feedback",
        ".autograder",
        "release",
    ):
        assert private in ignored, private


# ---------------------------------------------------------------- the exchange gate


def load_gate() -> Any:
    spec = importlib.util.spec_from_file_location("exchange_gate", DEPLOY / "exchange_gate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["exchange_gate"] = module
    spec.loader.exec_module(module)
    return module


def hand_in(folder: Path, name: str, complete: bool = True) -> Path:
    entry = folder / name
    (entry).mkdir()
    (entry / "03_a_neuron_by_hand.ipynb").write_text("{}")
    if complete:
        (entry / "timestamp.txt").write_text(name.split("+")[2])
        (entry / "submission_secret.txt").write_text("secret")
    return entry


def test_gate_forwards_truthful_hand_ins_and_refuses_the_rest(tmp_path: Path) -> None:
    gate = load_gate()
    layout = gate.Layout(tmp_path / "exchange", COURSE_ID)
    assert gate.prepare(layout, ["ada", "ben", "Eve+1"]) != []  # the bad login is named
    assert layout.logins() == ["ada", "ben"]
    stamp = "2026-12-01 10:00:00.000000 UTC"
    ada, ben = layout.student_inbound("ada"), layout.student_inbound("ben")
    good = hand_in(ada, f"ada+03_a_neuron_by_hand+{stamp}+r1")
    impostor = hand_in(ben, f"ada+03_a_neuron_by_hand+{stamp}+r2")
    partial = hand_in(ada, f"ada+03_a_neuron_by_hand+{stamp}+r3", complete=False)
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    (ben / "link").symlink_to(secret)
    later = time.time() + 60
    lines = gate.forward_handins(layout, settle=2.0, now=later)
    assert sorted(p.name for p in layout.inbound.iterdir()) == [good.name]
    assert not good.exists() and partial.exists()
    assert sorted(p.name for p in (layout.refused / "ben").iterdir()) == sorted(
        ["link", impostor.name]
    )
    assert secret.read_text() == "not yours"
    assert any("REFUSED ben" in line and "'ada'" in line for line in lines)
    # nothing settles before nbgrader's last files have been quiet for `settle` seconds
    fresh = hand_in(ada, f"ada+03_a_neuron_by_hand+{stamp}+r4")
    assert gate.forward_handins(layout, settle=2.0, now=time.time()) == []
    assert fresh.exists()


@pytest.mark.processes
def test_gate_delivers_what_nbgrader_released_to_its_student_only(tmp_path: Path) -> None:
    gate = load_gate()
    exchange, course = tmp_path / "exchange", tmp_path / "course"
    layout = gate.Layout(exchange, COURSE_ID)
    gate.prepare(layout, ["ada", "ben"])
    for student, secret in (("ada", "s-ada"), ("ben", "s-ben")):
        folder = course / "feedback" / student / "03_a_neuron_by_hand"
        folder.mkdir(parents=True)
        (folder / "03_a_neuron_by_hand.html").write_text(f"<p>feedback of {student}</p>")
        (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
        (folder / "submission_secret.txt").write_text(secret)
    course.joinpath("nbgrader_config.py").write_text("")
    # the real release, for ada only
    subprocess.run(
        [
            str(Path(sys.executable).parent / "nbgrader"),
            "release_feedback",
            "03_a_neuron_by_hand",
            "--student=ada",
            f"--course={COURSE_ID}",
            f"--Exchange.root={exchange}",
            f"--CourseDirectory.root={course}",
        ],
        cwd=course,
        check=True,
        capture_output=True,
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter")},
    )
    (released,) = layout.feedback.iterdir()
    lines = gate.forward_feedback(layout, course / "feedback")
    assert lines == ["feedback ada/03_a_neuron_by_hand/03_a_neuron_by_hand"]
    delivered = layout.student_feedback("ada") / released.name
    assert delivered.read_text() == "<p>feedback of ada</p>"
    assert list(layout.student_feedback("ben").iterdir()) == []
    assert gate.forward_feedback(layout, course / "feedback") == []  # once


# ---------------------------------------------------------------- Kubernetes' own schemas

# Kubernetes' OpenAPI schemas as JSON schemas, strict (no field a version does not know),
# shipped by the kubernetes-validate package for each version. The grading Job needs 1.30
# (appArmorProfile, README); every version from there to the newest shipped is checked.
OLDEST_KUBERNETES = "1.30"
K8S_DEFINITIONS = "https://kubernetes.io/api/_definitions.json"


def kubernetes_versions() -> list[str]:
    from kubernetes_validate.utils import all_versions

    oldest = Version(OLDEST_KUBERNETES)
    return [v for v in all_versions() if Version(v) >= oldest]


@pytest.fixture(scope="module", autouse=True)
def kubernetes_schemas_read_once() -> Iterator[None]:
    """kubernetes_validate reads its bundled schema files again at every validation (its
    `_definitions.json` is megabytes of JSON): for this module each is read once. The
    files never change, and the validation stays the library's own."""
    import kubernetes_validate.utils as utils

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(utils, "schema_contents", functools.cache(utils.schema_contents))
        yield


def kubernetes_errors(doc: dict[str, Any], version: str) -> list[str]:
    """What Kubernetes `version` refuses in the object `doc` (strict), or []."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(map(str, error.path))}: {error.message}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [str(error)]
    return []


def definition_errors(fragment: Any, definition: str, version: str) -> list[str]:
    """What Kubernetes `version` refuses in a part of an object (`definition`, e.g.
    io.k8s.api.core.v1.EnvVar), strictly: for the pieces of pods the values hold."""
    from kubernetes_validate.utils import schema_contents
    from referencing import Registry, Resource

    folder = f"kubernetes-json-schema/v{version}-local-strict"
    definitions = schema_contents(f"{folder}/_definitions.json", version)
    registry = Resource.from_contents(definitions) @ Registry()
    schema = {"$ref": f"{K8S_DEFINITIONS}#/$defs/{definition}"}
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(fragment)
    ]


@pytest.mark.parametrize("version", kubernetes_versions())
def test_every_manifest_is_valid_for_kubernetes(version: str) -> None:
    assert len(kubernetes_versions()) >= 5  # several versions, the oldest and the newest
    for name, doc in manifests():
        assert kubernetes_errors(doc, version) == [], (name, doc["metadata"])


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("Job", ("spec", "template", "spec", "containers", 0, "imagePullSecret"), "x"),  # a typo
        ("Job", ("spec", "template", "spec", "hostUser"), False),
        ("Deployment", ("spec", "replica"), 1),
        (
            "Deployment",
            ("spec", "template", "spec", "containers", 0, "ports", 0, "containerPort"),
            "8090",
        ),
        ("PersistentVolumeClaim", ("spec", "accessModes"), "ReadWriteMany"),  # not a list
        ("NetworkPolicy", ("spec", "podSelector", "matchLabel"), {}),
        ("ConfigMap", ("data", "roster.txt"), 3),
    ],
)
def test_kubernetes_schemas_refuse_a_broken_manifest(
    kind: str, path: tuple[str | int, ...], value: Any
) -> None:
    doc = copy.deepcopy(next(d for _, d in manifests() if d["kind"] == kind))
    *parents, last = path
    node: Any = doc
    for key in parents:
        node = node[key]
    node[last] = value
    for version in (kubernetes_versions()[0], kubernetes_versions()[-1]):
        assert kubernetes_errors(doc, version) != [], (path, version)


def test_the_oldest_kubernetes_named_is_the_oldest_that_takes_the_grading_job() -> None:
    """The README's "Kubernetes 1.30 or later" is true: 1.29 refuses the grading Job."""
    (job,) = [d for _, d in manifests() if d["kind"] == "Job"]
    assert kubernetes_errors(job, "1.29") != []
    assert kubernetes_errors(job, OLDEST_KUBERNETES) == []
    assert f"Kubernetes {OLDEST_KUBERNETES} or later" in (ROOT / "README.md").read_text()


def kubernetes_pieces_of_values(values: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(where, the piece, its Kubernetes definition) for the objects the values hand to
    Kubernetes as they are (KubeSpawner's and the chart's own settings aside)."""
    core = "io.k8s.api.core.v1"
    pieces: list[tuple[str, Any, str]] = []

    def env(where: str, variables: dict[str, Any]) -> None:
        for name, value in variables.items():
            var = {"name": name, **value} if isinstance(value, dict) else {"name": name}
            if not isinstance(value, dict):
                var["value"] = value
            pieces.append((f"{where}.{name}", var, f"{core}.EnvVar"))

    env("hub.extraEnv", values["hub"]["extraEnv"])
    env("singleuser.extraEnv", values["singleuser"]["extraEnv"])
    for i, rule in enumerate(values["singleuser"]["networkPolicy"]["egress"]):
        where = f"singleuser.networkPolicy.egress.{i}"
        pieces.append((where, rule, "io.k8s.api.networking.v1.NetworkPolicyEgressRule"))
    for profile in values["singleuser"]["profileList"]:
        override = profile["kubespawner_override"]
        where = f"profile {profile['slug']}"
        for key, volume in override.get("volumes", {}).items():
            pieces.append((f"{where} volume {key}", volume, f"{core}.Volume"))
        for key, mount in override.get("volume_mounts", {}).items():
            pieces.append((f"{where} mount {key}", mount, f"{core}.VolumeMount"))
        for container in override.get("init_containers", []):
            pieces.append((f"{where} init container", container, f"{core}.Container"))
        if "lifecycle_hooks" in override:
            pieces.append((f"{where} lifecycle", override["lifecycle_hooks"], f"{core}.Lifecycle"))
        env(f"{where} environment", override.get("environment", {}))
    return pieces


@pytest.mark.parametrize("version", kubernetes_versions())
def test_the_kubernetes_objects_in_the_values_are_valid(version: str) -> None:
    pieces = kubernetes_pieces_of_values(VALUES)
    assert len(pieces) >= 20
    for where, piece, definition in pieces:
        assert definition_errors(piece, definition, version) == [], where


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("hub.extraEnv.OAUTH_CLIENT_ID", {"valueFrom": {"secretRef": {"name": "hub-oauth"}}}),
        ("singleuser.networkPolicy.egress", [{"to": [{"podSelector": {"matchLabel": {}}}]}]),
        ("singleuser.extraEnv.COURSE_ID", {"value": "backward-course", "valueFrom": 1}),
    ],
)
def test_broken_kubernetes_objects_in_the_values_are_refused(path: str, value: Any) -> None:
    broken = kubernetes_pieces_of_values(_set(VALUES, path, value))
    version = kubernetes_versions()[-1]
    assert any(definition_errors(p, d, version) for _, p, d in broken), path


def test_a_mistyped_mount_in_a_profile_is_refused() -> None:
    values = copy.deepcopy(VALUES)
    mounts = profiles_of(values)["student"]["kubespawner_override"]["volume_mounts"]
    mounts["exchange-outbound"]["readonly"] = True  # readOnly
    version = kubernetes_versions()[0]
    assert any(definition_errors(p, d, version) for _, p, d in kubernetes_pieces_of_values(values))


def profiles_of(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["slug"]: p for p in values["singleuser"]["profileList"]}


# ---------------------------------------------------------------- the pods KubeSpawner makes


def spawner_config(values: dict[str, Any]) -> Config:
    """The KubeSpawner settings the chart's hub makes of the values (the lines of the
    chart's files/hub/jupyterhub_config.py, tag 4.4.0, that the course's values reach),
    with hub.config over them and hub.extraConfig run last, as the chart does."""
    merged = chart_values(values)
    single = merged["singleuser"]
    config = Config()
    spawner = config.KubeSpawner
    for trait, key in (
        ("uid", "uid"),
        ("fs_gid", "fsGid"),
        ("extra_labels", "extraLabels"),
        ("lifecycle_hooks", "lifecycleHooks"),
        ("init_containers", "initContainers"),
        ("mem_limit", "memory.limit"),
        ("mem_guarantee", "memory.guarantee"),
        ("cpu_limit", "cpu.limit"),
        ("cpu_guarantee", "cpu.guarantee"),
        ("environment", "extraEnv"),
        ("profile_list", "profileList"),
    ):
        node: Any = single
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            spawner[trait] = copy.deepcopy(node)
    spawner.image = f"{single['image']['name']}:{single['image']['tag']}"
    home = single["storage"]["dynamic"]["volumeNameTemplate"]
    spawner.volumes = {home: {"name": home, "persistentVolumeClaim": {"claimName": "{pvc_name}"}}}
    spawner.volume_mounts = {home: {"mountPath": single["storage"]["homeMountPath"], "name": home}}
    config.Spawner.cmd = single["cmd"]
    config.Spawner.default_url = single["defaultUrl"]
    config.merge(Config(copy.deepcopy(values["hub"]["config"])))
    for _, code in sorted(values["hub"]["extraConfig"].items()):
        exec(compile(code, "extraConfig", "exec"), {"c": config})
    return config


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KubeSpawner loads a kube config when made; one naming no reachable cluster."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:9"}}],
                "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}],
                "current-context": "none",
                "users": [{"name": "none", "user": {}}],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))


def spawned_pod(login: str, groups: list[str], values: dict[str, Any] | None = None) -> Any:
    """The pod manifest the real KubeSpawner (the chart's hub's version) makes for `login`,
    with the profile the values offer them, as a plain dict."""
    from jupyterhub.objects import Hub, Server
    from kubernetes_asyncio.client import ApiClient
    from kubespawner import KubeSpawner

    user = SimpleNamespace(
        name=login,
        id=1,
        url=f"/user/{login}/",
        escaped_name=login,
        server=Server(),
        groups=[SimpleNamespace(name=g) for g in groups],
    )

    async def render() -> Any:
        config = spawner_config(VALUES if values is None else values)
        spawner = KubeSpawner(config=config, user=user, hub=Hub(), _mock=True)
        spawner.user_options = {}
        await spawner.load_user_options()
        pod = await spawner.get_pod_manifest()
        async with ApiClient() as client:
            return client.sanitize_for_serialization(pod)

    return run_apart(render())


def pod_env(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
def test_kubespawner_gives_a_student_pod_its_own_key_and_nothing_private() -> None:
    pod = spawned_pod("ada", [])
    env = pod_env(pod)
    key = env["AUTOGRADER_LEARNER_KEY"]["valueFrom"]["secretKeyRef"]
    assert key == {"name": "learner-keys", "key": "ada"}  # {username} filled in
    assert env["COURSE_ID"]["value"] == COURSE_ID  # singleuser.extraEnv kept beside it
    assert pod["spec"]["containers"][0]["image"] == "REGISTRY/backward-course-student:0.1.0"
    assert not pod["spec"].get("imagePullSecrets")
    mounts = {m["mountPath"]: m for m in pod["spec"]["containers"][0]["volumeMounts"]}
    inbound = mounts[f"{EXCHANGE_ROOT}/{COURSE_ID}/inbound"]
    assert inbound["subPath"] == f"{COURSE_ID}/by-user/ada/inbound"
    text = yaml.safe_dump(pod)
    for private in ("course-instructor", "gradebook-db", "course-config", "instructor-registry"):
        assert private not in text, private
    assert pod["metadata"]["labels"]["backward-course/role"] == "student"
    ben = pod_env(spawned_pod("ben", []))["AUTOGRADER_LEARNER_KEY"]
    assert ben["valueFrom"]["secretKeyRef"]["key"] == "ben"


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
def test_kubespawner_gives_the_instructor_pod_its_pull_secret() -> None:
    pod = spawned_pod("alice", ["instructors"])
    assert pod["spec"]["imagePullSecrets"] == [{"name": "instructor-registry"}]
    assert pod["spec"]["containers"][0]["image"] == "REGISTRY/backward-course-instructor:0.1.0"
    (seed,) = pod["spec"]["initContainers"]
    assert seed["image"] == pod["spec"]["containers"][0]["image"]  # same pod, same secret
    assert "AUTOGRADER_LEARNER_KEY" not in pod_env(pod)  # the instructor has the secret
    assert pod_env(pod)["NBGRADER_DB_URL"]["valueFrom"]["secretKeyRef"]["name"] == "gradebook-db"


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
@pytest.mark.parametrize("version", kubernetes_versions())
def test_the_pods_kubespawner_makes_are_valid_for_kubernetes(version: str) -> None:
    for login, groups in (("ada", []), ("alice", ["instructors"])):
        pod = {"apiVersion": "v1", "kind": "Pod", **spawned_pod(login, groups)}
        assert kubernetes_errors(pod, version) == [], login


def test_every_pod_of_the_instructor_image_has_its_pull_secret() -> None:
    for name, doc in manifests():
        if doc["kind"] not in ("Deployment", "Job"):
            continue
        spec = doc["spec"]["template"]["spec"]
        images = {c["image"] for c in spec["containers"] + spec.get("initContainers", [])}
        if any("backward-course-instructor" in image for image in images):
            assert spec.get("imagePullSecrets") == [{"name": "instructor-registry"}], name
    override = profiles()["instructor"]["kubespawner_override"]
    assert override["image_pull_secrets"] == ["instructor-registry"]
    assert "kubectl create secret docker-registry instructor-registry" in readme_text()


def readme_text() -> str:
    return (ROOT / "README.md").read_text()


# ---------------------------------------------------------------- what the nodes pre-pull


def prepulled_images(values: dict[str, Any]) -> set[str]:
    """The images the chart's image-puller pulls onto every node, as its template
    (templates/image-puller/_helpers-daemonset.tpl, tag 4.4.0) picks them: the default
    image, singleuser's init and extra containers, the profiles' images and their
    options' choices when pullProfileListImages, and prePuller.extraImages."""
    merged = chart_values(values)
    single, puller = merged["singleuser"], merged["prePuller"]
    images = {f"{single['image']['name']}:{single['image']['tag']}"}
    for container in (single.get("initContainers") or []) + (single.get("extraContainers") or []):
        images.add(container["image"])
    if puller["pullProfileListImages"]:
        for profile in single.get("profileList") or []:
            if profile.get("kubespawner_override", {}).get("image"):
                images.add(profile["kubespawner_override"]["image"])
            for option in (profile.get("profile_options") or {}).values():
                for choice in (option.get("choices") or {}).values():
                    if choice.get("kubespawner_override", {}).get("image"):
                        images.add(choice["kubespawner_override"]["image"])
    for image in (puller.get("extraImages") or {}).values():
        images.add(f"{image['name']}:{image['tag']}")
    return images


def test_the_nodes_prepull_what_students_run_and_not_the_instructor_image() -> None:
    student = profiles()["student"]["kubespawner_override"]["image"]
    assert prepulled_images(VALUES) == {student}
    # the chart's default would put the private image on every node
    pulled = prepulled_images(_set(VALUES, "prePuller.pullProfileListImages", True))
    assert "REGISTRY/backward-course-instructor:0.1.0" in pulled


# ---------------------------------------------------------------- hub.config


def hub_configurables(config: Config) -> dict[str, type]:
    """Every configurable class the chart's hub loads with `config`, by name: JupyterHub,
    the classes it lists, its authenticator (hub.config's authenticator_class, loaded as
    JupyterHub loads it) and the chart's spawner, KubeSpawner, with their bases."""
    from jupyterhub.app import JupyterHub
    from jupyterhub.auth import Authenticator
    from jupyterhub.proxy import Proxy
    from jupyterhub.spawner import Spawner
    from kubespawner import KubeSpawner

    hub = JupyterHub(config=config)
    plugins = (Authenticator, Spawner, Proxy)  # of these, only the ones configured
    loaded = [c for c in hub.classes if not issubclass(c, plugins)]
    found: dict[str, type] = {}
    for cls in [JupyterHub, *loaded, hub.authenticator_class, KubeSpawner, hub.proxy_class]:
        for base in cls.mro():
            if hasattr(base, "class_traits"):
                found.setdefault(base.__name__, base)
    return found


def hub_config_problems(values: dict[str, Any]) -> list[str]:
    """hub.config sections and settings that JupyterHub's own classes (as the chart's hub
    loads them) do not have, or values their traits refuse."""
    from kubespawner import KubeSpawner
    from traitlets import TraitError

    sections = values["hub"]["config"]
    config = Config(copy.deepcopy(sections))
    try:
        known = hub_configurables(config)
    except (TraitError, ImportError, ValueError, KeyError) as error:
        return [f"JupyterHub: {error}"]
    problems = []
    for section, settings in sections.items():
        cls = known.get(section)
        if cls is None:
            problems.append(f"{section}: not a class the hub loads")
            continue
        traits = cls.class_traits(config=True)
        problems += [
            f"{section}.{name}: not a setting of {cls.__name__}"
            for name in settings
            if name not in traits
        ]
    # the values themselves, as each class the hub makes takes its settings
    from jupyterhub.app import JupyterHub

    authenticator = JupyterHub(config=config).authenticator_class

    async def spawner() -> None:  # KubeSpawner is made in the hub's event loop
        KubeSpawner(config=config, _mock=True)

    for make in (lambda: authenticator(config=config), lambda: run_apart(spawner())):
        try:
            make()
        except TraitError as error:
            problems.append(str(error))
    return problems


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
def test_hub_config_names_only_jupyterhubs_own_settings() -> None:
    assert hub_config_problems(VALUES) == []


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("hub.config.JupyterHub.admin_acess", False),  # a typo inside hub.config
        ("hub.config.Authenticator.allowed_user", ["ada"]),
        ("hub.config.KubeSpawner.server_token_scope", ["self"]),
        ("hub.config.GenericOAuthenticator.username_clam", "sub"),
        ("hub.config.KubeSpawnr", {"uid": 1000}),  # no such class
        ("hub.config.GitHubOAuthenticator", {"allowed_organizations": ["x"]}),  # not loaded
        ("hub.config.JupyterHub.authenticator_class", "no-such-authenticator"),
        ("hub.config.Authenticator.admin_users", 3),  # a number, not a set
        ("hub.config.KubeSpawner.uid", "a thousand"),
        ("hub.config.JupyterHub.admin_access", "maybe"),
    ],
)
def test_hub_config_check_refuses_a_typo(path: str, value: Any) -> None:
    assert hub_config_problems(_set(VALUES, path, value)) != []


# ---------------------------------------------------------------- learner keys


def load_learner_keys() -> Any:
    load_gate()  # learner_keys imports the gate's login rule
    path = DEPLOY / "learner_keys.py"
    spec = importlib.util.spec_from_file_location("learner_keys", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def roster() -> list[str]:
    config_map = next(d for _, d in manifests() if d["metadata"]["name"] == "course-config")
    return list(config_map["data"]["roster.txt"].split())


def test_learner_keys_secret_holds_each_students_own_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Secret learner_keys.py writes is valid Kubernetes, has one entry per login of
    the roster, and each entry, in that student's pod, gives the key the grader computes
    from the course's secret (read as the kernel reads AUTOGRADER_LEARNER_KEY)."""
    from autograder.core.givens import Site, create_secret, read_secret
    from autograder.learner.identity import KEY_VARIABLE, learner_site

    keys = load_learner_keys()
    course = tmp_path / "course"
    course.mkdir()
    create_secret(course)
    roster_file = tmp_path / "roster.txt"
    roster_file.write_text("\n".join(roster()) + "\n")
    assert keys.main(["--course-dir", str(course), "--roster", str(roster_file)]) == 0
    secret = json.loads(capsys.readouterr().out)
    for version in kubernetes_versions():
        assert kubernetes_errors(secret, version) == []
    assert secret["metadata"]["name"] == "learner-keys"
    assert set(secret["stringData"]) == set(roster())
    site = Site(secret=read_secret(course))
    for login, value in secret["stringData"].items():
        _, key = learner_site(login, env={KEY_VARIABLE: value}, cwd=tmp_path)
        assert key == site.learner_key(login) is not None
        other = next(name for name in roster() if name != login)
        assert learner_site(other, env={KEY_VARIABLE: value}, cwd=tmp_path)[1] is None


def test_learner_keys_refuse_a_course_without_secret_and_a_bad_roster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = load_learner_keys()
    course = tmp_path / "course"
    course.mkdir()
    roster_file = tmp_path / "roster.txt"
    roster_file.write_text("ada\nben\n")
    arguments = ["--course-dir", str(course), "--roster", str(roster_file)]
    assert keys.main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "has no secret: run `autograder secret`" in captured.err
    (course / ".autograder").mkdir()
    (course / ".autograder" / "givens_secret").write_text("\n")
    assert keys.main(arguments) == 2
    assert "givens_secret is empty" in capsys.readouterr().err
    (course / ".autograder" / "givens_secret").write_text("0" * 64 + "\n")
    for bad in ("Eve\n", "ada+x\n", "# nobody\n"):
        roster_file.write_text(bad)
        assert keys.main(arguments) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith("error: roster:"), bad
    assert keys.main(["--course-dir", str(course), "--roster", str(tmp_path / "none")]) == 2
    assert "none: No such file or directory" in capsys.readouterr().err


@pytest.mark.processes  # loading JupyterHub's classes runs ldconfig (PAM's library)
@pytest.mark.usefixtures("no_cluster")
def test_the_readme_runs_learner_keys_where_the_course_and_roster_are() -> None:
    """The README's command execs into the instructor's pod by its KubeSpawner name, with
    the course folder and the roster where that pod mounts them, and the script is in the
    instructor image."""
    text = "\n".join(readme_install_steps())
    command = re.search(
        r"kubectl exec -n backward-course (\S+) -- \\\n(.*?)\| kubectl apply", text, re.S
    )
    assert command, "no kubectl exec of learner_keys.py"
    pod = spawned_pod("alice", ["instructors"])
    assert command.group(1) == pod["metadata"]["name"]
    arguments = command.group(2).split()
    assert arguments[1] == "/opt/backward-course/deploy/kubernetes/learner_keys.py"
    assert re.search(r"^COPY \. /opt/backward-course$", DOCKERFILE, re.M)
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert not {"deploy", "deploy/kubernetes"} & set(ignored)
    mounts = {m["mountPath"]: m["name"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    course = arguments[arguments.index("--course-dir") + 1]
    roster_path = Path(arguments[arguments.index("--roster") + 1])
    assert mounts[course] == "course"
    assert mounts[str(roster_path.parent)] == "course-config" and roster_path.name == "roster.txt"
    assert "autograder secret" in text


# ---------------------------------------------------------------- the comments


def test_the_recipe_restates_no_python_range_of_its_own() -> None:
    """A Python range written in the Dockerfile is pyproject.toml's own."""
    python_spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    bound = r"(?:>=|<=|~=|<|>)\s*3\.\d+(?:\.\d+)?"
    ranges = re.findall(rf"{bound}(?:\s*,\s*{bound})*", DOCKERFILE)
    for written in ranges:
        assert SpecifierSet(written) == SpecifierSet(python_spec), written
    stale = DOCKERFILE.replace("admits (tests", "admits (>=3.11.5,<3.12) (tests")
    assert re.findall(rf"{bound}(?:\s*,\s*{bound})*", stale) == [">=3.11.5,<3.12"]


def test_a_manifest_named_by_generate_name_is_created_never_applied() -> None:
    """`kubectl apply` refuses an object without a name (generateName): such a manifest
    says `kubectl create` in its own comment and the README creates it, never applies it."""
    steps = "\n".join(readme_install_steps())
    named_by_generate = [
        path
        for path in sorted((DEPLOY / "manifests").glob("*.yaml"))
        if any(
            "generateName" in d.get("metadata", {})
            for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader)
            if d
        )
    ]
    assert [p.name for p in named_by_generate] == ["grade-job.yaml"]
    for path in named_by_generate:
        target = f"deploy/kubernetes/manifests/{path.name}"
        comment = path.read_text().split("\napiVersion:", 1)[0]
        assert f"kubectl create -n backward-course -f {target}" in comment
        assert "generateName" in comment and "apply" in comment  # says why
        assert re.search(
            rf"^kubectl create -n backward-course -f {re.escape(target)}$", steps, re.M
        )
        for line in steps.splitlines():
            assert not (target in line and "apply" in line.split("#")[0]), line
