"""Whose numbers: per installation (course id, secret), stable within one, public offline.

Two installations give a learner different numbers, the same installation the same ones;
the public seed (the repository's course id, no secret) is the one self-study and the
sample class use; with a secret, the grader, `nbgrader autograde` on the instructor's side
and a learner holding their own key agree, and the secret is private: mode 0600, never in
release/, unreadable in the grading sandbox.
"""

from __future__ import annotations

import hashlib
import os
import random
import stat
from pathlib import Path

import pytest

from autograder.authoring.sample_class import make_course
from autograder.core.givens import (
    COURSE_ID,
    PUBLIC,
    SECRET_FILE,
    Site,
    create_secret,
    draw,
    read_secret,
)
from autograder.grading.trusted import course_site, givens_for
from autograder.learner.identity import KEY_VARIABLE, learner_site
from autograder.sandbox.workers import Sandbox, Worker, check_sandbox, load_config
from autograder.specs import SPECS, exercise_spec, learner_givens

EXERCISE = "03_a_neuron_by_hand"
LEARNERS = [f"learner{i}" for i in range(20)]


def numbers(site: Site, key: str | None = None) -> list[dict[str, float]]:
    return [learner_givens(EXERCISE, learner, site, key) for learner in LEARNERS]


def test_two_installations_give_a_learner_different_numbers() -> None:
    here, there = Site("backward-autumn-2026"), Site("backward-spring-2027")
    differ = [a != b for a, b in zip(numbers(here), numbers(there), strict=True)]
    assert sum(differ) >= len(LEARNERS) - 2  # a draw may coincide now and then
    secret_a, secret_b = Site(here.course_id, "a" * 64), Site(here.course_id, "b" * 64)
    differ = [a != b for a, b in zip(numbers(secret_a), numbers(secret_b), strict=True)]
    assert sum(differ) >= len(LEARNERS) - 2
    differ = [a != b for a, b in zip(numbers(here), numbers(secret_a), strict=True)]
    assert sum(differ) >= len(LEARNERS) - 2


def test_the_same_installation_gives_the_same_numbers() -> None:
    for site in (PUBLIC, Site("backward-autumn-2026"), Site("x", "c" * 64)):
        assert numbers(site) == numbers(Site(site.course_id, site.secret))


def test_the_public_seed_is_the_repositorys_course_id_and_login() -> None:
    """Self-study and the sample class's expected grades rest on it: unchanged."""
    for learner in LEARNERS:
        text = f"{COURSE_ID}\0{EXERCISE}\0{learner}".encode()
        seed = int.from_bytes(hashlib.sha256(text).digest()[:8], "big")
        assert learner_givens(EXERCISE, learner) == draw(SPECS[EXERCISE], random.Random(seed))


def test_a_learner_key_gives_their_numbers_and_no_one_elses() -> None:
    site = Site("backward-autumn-2026", "d" * 64)
    key = site.learner_key("ada")
    assert key is not None and site.secret not in key
    assert learner_givens(EXERCISE, "ada", Site(site.course_id), key) == learner_givens(
        EXERCISE, "ada", site
    )
    assert site.learner_key("ben") != key
    assert Site(site.course_id).learner_key("ada") is None  # no secret, no key


def test_the_kernel_uses_a_key_only_for_its_own_learner(tmp_path: Path) -> None:
    site = Site(COURSE_ID, "e" * 64)
    env = {KEY_VARIABLE: f"ada:{site.learner_key('ada')}"}
    mine, key = learner_site("ada", env, tmp_path)
    assert learner_givens(EXERCISE, "ada", mine, key) == learner_givens(EXERCISE, "ada", site)
    assert learner_site("ben", env, tmp_path) == (PUBLIC, None)  # ada's key is not ben's


def test_the_kernel_reads_the_course_id_from_nbgrader_config(tmp_path: Path) -> None:
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'backward-autumn-2026'\n"
    )
    assert learner_site("ada", {}, tmp_path) == (Site("backward-autumn-2026"), None)


@pytest.fixture(scope="module")
def secret_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = make_course(
        tmp_path_factory.mktemp("site") / "course",
        [EXERCISE],
        "c.CourseDirectory.course_id = 'backward-autumn-2026'\n",
    )
    create_secret(course)
    return course


@pytest.mark.processes
def test_the_secret_is_private_and_made_once(secret_course: Path) -> None:
    path = secret_course / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert len(read_secret(secret_course)) == 64
    with pytest.raises(FileExistsError):
        create_secret(secret_course)
    secret = read_secret(secret_course)
    # What learners get: the generated release (exercises/, copied to release/ by nbgrader).
    released = [
        p for folder in ("exercises", "release") for p in (secret_course / folder).rglob("*")
    ]
    released = [p for p in released if p.is_file()]
    assert released, "make_course generated nothing"
    assert not [p for p in released if secret in p.read_text(errors="replace")]
    assert not [p for p in released if p.name == SECRET_FILE.name]


@pytest.mark.processes
def test_grader_and_autograde_kernel_agree_on_the_instructor_side(secret_course: Path) -> None:
    """What `nbgrader autograde` runs in autograded/<student>/<assignment>/ reads the
    course's secret, as the grader does: the same numbers."""
    from nbgrader.coursedir import CourseDirectory

    site = course_site(CourseDirectory(config=load_config(secret_course)))
    assert site == Site("backward-autumn-2026", read_secret(secret_course))
    graded = secret_course / "autograded" / "ada" / EXERCISE
    graded.mkdir(parents=True)
    kernel_site, key = learner_site("ada", {"NBGRADER_EXECUTION": "autograde"}, graded)
    assert kernel_site == site and key is None
    assert learner_givens(EXERCISE, "ada", kernel_site) == givens_for(EXERCISE, "ada", site)
    assert givens_for(EXERCISE, "ada", site) != givens_for(EXERCISE, "ada", PUBLIC)
    # The learner's own server, with the key the hub gives them, agrees too.
    env = {KEY_VARIABLE: f"ada:{site.learner_key('ada')}"}
    learner_side, key = learner_site("ada", env, secret_course.parent)
    assert learner_givens(EXERCISE, "ada", learner_side, key) == givens_for(EXERCISE, "ada", site)


@pytest.mark.processes
def test_the_check_service_gives_the_graders_numbers(secret_course: Path) -> None:
    """Where checks run on the instructor's side (the class's check service), the numbers
    a learner is given are the grader's: the course's id and secret."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.checks.judging import Judging

    site = course_site(CourseDirectory(config=load_config(secret_course)))
    answer = Judging(b"seal", site).exercise("ada", {"exercise": EXERCISE})
    assert answer["givens"] == givens_for(EXERCISE, "ada", site)
    assert answer["givens"] != givens_for(EXERCISE, "ada", PUBLIC)


@pytest.mark.sandbox
def test_the_sandbox_cannot_read_the_secret(secret_course: Path) -> None:
    sandbox = Sandbox(config=load_config(secret_course))
    check_sandbox(sandbox)
    worker = Worker(sandbox, secret_course / ".autograder" / "logs")
    path = secret_course / SECRET_FILE
    probe = (
        "import os\n"
        f"try:\n    print('READ', open({str(path)!r}).read())\n"
        "except OSError as e:\n    print('REFUSED', type(e).__name__)\n"
        f"print('ENV', sorted(k for k in os.environ if 'KEY' in k or 'SECRET' in k))\n"
    )
    try:
        result = worker.execute([probe], givens=givens_for(EXERCISE, "ada", PUBLIC), learner="ada")
    finally:
        worker.stop(now=True)
    assert result.executed, result
    text = repr(result.cells)
    assert "REFUSED" in text and "READ" not in text, text
    assert read_secret(secret_course) not in text
    assert os.stat(path).st_mode & 0o077 == 0
    assert exercise_spec(EXERCISE)  # the course still grades this exercise
