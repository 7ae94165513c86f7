"""Hand-ins as the exchange collector takes them: honest times, a roster, nothing lost.

Real inbound folders (made as `nbgrader submit` makes them, as the student a test runs as)
in a real course with an nbgrader gradebook, collected by `ExchangeCollector`:
- the submission time is when the folder arrived (the filesystem's ctime), not what its
  name and timestamp.txt claim; a claim far from the arrival is refused;
- with a roster (`c.Autograde.create_student = False`: the gradebook's students), anyone
  else's hand-in is refused and never reaches submitted/;
- a hand-in that cannot be graded (misnamed, corrupt) never replaces the last good one, is
  kept with its reason in the course's private state, and its student gets a feedback page
  where `nbgrader fetch_feedback` looks, saying what was wrong and which hand-in stands.
"""

from __future__ import annotations

import datetime
import os
import pwd
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash, parse_utc

from autograder.authoring.sample_class import SAMPLE_CLASS, make_course
from autograder.core.givens import COURSE_ID
from autograder.sandbox.workers import load_config
from autograder.service.collect import ExchangeCollector

pytestmark = pytest.mark.nbgrader

ASSIGNMENT = "03_a_neuron_by_hand"
NOTEBOOK = SAMPLE_CLASS / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
ME = pwd.getpwuid(os.getuid()).pw_name
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f UTC"


@dataclass
class Class:
    course: Path
    exchange: Path

    @property
    def inbound(self) -> Path:
        return self.exchange / COURSE_ID / "inbound"

    @property
    def submitted(self) -> Path:
        return self.course / "submitted" / ME / ASSIGNMENT

    def collector(self, rostered: bool = False) -> ExchangeCollector:
        config = load_config(self.course)
        if rostered:
            config.Autograde.create_student = False
        return ExchangeCollector(config, lambda: {ASSIGNMENT})

    def hand_in(
        self, tag: str, claimed: datetime.datetime | None = None, name: str = ASSIGNMENT
    ) -> HandIn:
        """A complete hand-in, claiming `claimed` (default: now), as `nbgrader submit`
        leaves it; it arrives in inbound/ whole, now."""
        stamp = f"{claimed or datetime.datetime.now(datetime.UTC):{NBGRADER_TIME}}"
        staging = self.exchange / f"staging-{tag}"
        staging.mkdir()
        shutil.copy(NOTEBOOK, staging / f"{name}.ipynb")
        (staging / "timestamp.txt").write_text(stamp)
        secret = f"{tag:0>128}"[-128:]
        (staging / "submission_secret.txt").write_text(secret)
        folder = self.inbound / f"{ME}+{ASSIGNMENT}+{stamp}+{tag}"
        return HandIn(staging, folder, secret)


@dataclass
class HandIn:
    staging: Path  # where the test shapes it
    folder: Path  # where it arrives
    secret: str

    def arrive(self) -> None:
        self.staging.rename(self.folder)


def settle(collector: ExchangeCollector) -> list[str]:
    """Every line the collector says until what arrived is decided (two looks suffice for
    complete folders: one to see it, one to find it unchanged)."""
    return [line for _ in range(3) for line in collector.look()]


@pytest.fixture
def klass(tmp_path: Path) -> Iterator[Class]:
    exchange = tmp_path / "exchange"
    (exchange / COURSE_ID / "inbound").mkdir(parents=True)
    course = make_course(
        tmp_path / "course", [ASSIGNMENT], f"c.Exchange.root = {str(exchange)!r}\n"
    )
    yield Class(course, exchange)


def kept_reason(klass: Class, hand_in: HandIn) -> str:
    kept = klass.course / ".autograder" / "refused" / hand_in.folder.name
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    return (kept / "reason.txt").read_text()


def test_the_submission_time_is_the_arrival_and_forged_claims_are_refused(klass: Class) -> None:
    collector = klass.collector()
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    # nbgrader submit stamps its start; the copy arrives later: the arrival is recorded.
    honest = klass.hand_in("honest", claimed=now - datetime.timedelta(seconds=100))
    honest.arrive()
    lines = settle(collector)
    assert any(line.startswith(f"collected {ME}/{ASSIGNMENT} arrived") for line in lines), lines
    recorded = parse_utc((klass.submitted / "timestamp.txt").read_text())
    assert abs((recorded - now).total_seconds()) < 60, recorded  # not the claim, 100 s before
    assert (recorded - now).total_seconds() > -5
    good = (klass.submitted / f"{ASSIGNMENT}.ipynb").read_bytes()
    # Named and stamped 2020, arriving now: refused, kept with the reason, nothing replaced.
    for year in (2020, 2099):
        forged = klass.hand_in(f"forged{year}", claimed=datetime.datetime(year, 1, 1))
        forged.arrive()
        lines = settle(collector)
        refused = [line for line in lines if line.startswith(f"REFUSED {ME}/{ASSIGNMENT}")]
        assert refused and f"named and stamped {year}-01-01 00:00:00 UTC but arrived" in refused[0]
        assert "named and stamped" in kept_reason(klass, forged)
        assert parse_utc((klass.submitted / "timestamp.txt").read_text()) == recorded
    assert (klass.submitted / f"{ASSIGNMENT}.ipynb").read_bytes() == good


def test_a_hand_in_after_the_due_date_is_said_late(klass: Class) -> None:
    due = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(hours=2)
    with Gradebook(f"sqlite:///{klass.course / 'gradebook.db'}", COURSE_ID) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    klass.hand_in("late").arrive()
    lines = settle(klass.collector())
    collected = [line for line in lines if line.startswith(f"collected {ME}/")]
    assert collected and ", LATE by 2 h 00 min (due " in collected[0], lines


def test_only_the_roster_may_hand_in(klass: Class) -> None:
    with Gradebook(f"sqlite:///{klass.course / 'gradebook.db'}", COURSE_ID) as gb:
        gb.add_student("someone-else")
    stranger = klass.hand_in("stranger")
    stranger.arrive()
    lines = settle(klass.collector(rostered=True))
    refused = [line for line in lines if line.startswith(f"REFUSED {ME}/{ASSIGNMENT}")]
    assert refused and f"{ME} is not on the class roster" in refused[0], lines
    assert not klass.submitted.exists()
    assert "not on the class roster" in kept_reason(klass, stranger)
    with Gradebook(f"sqlite:///{klass.course / 'gradebook.db'}", COURSE_ID) as gb:
        assert [s.id for s in gb.students] == ["someone-else"]  # never entered the gradebook
        gb.add_student(ME)
    klass.hand_in("enrolled").arrive()
    lines = settle(klass.collector(rostered=True))
    assert any(line.startswith(f"collected {ME}/{ASSIGNMENT}") for line in lines), lines


def test_an_ungradable_hand_in_never_replaces_the_good_one(klass: Class) -> None:
    collector = klass.collector()
    klass.hand_in("good").arrive()
    settle(collector)
    good = (klass.submitted / f"{ASSIGNMENT}.ipynb").read_bytes()
    standing = parse_utc((klass.submitted / "timestamp.txt").read_text())
    feedback = klass.exchange / COURSE_ID / "feedback"
    # Misnamed: refused, kept (with the copy), the student told which hand-in stands.
    misnamed = klass.hand_in("misnamed", name="Untitled")
    misnamed.arrive()
    lines = settle(collector)
    refused = [line for line in lines if line.startswith(f"REFUSED {ME}/{ASSIGNMENT}")]
    assert refused and f"{ASSIGNMENT}.ipynb is missing (found Untitled.ipynb" in refused[0]
    assert (klass.submitted / f"{ASSIGNMENT}.ipynb").read_bytes() == good
    kept = klass.course / ".autograder" / "refused" / misnamed.folder.name
    assert (kept / "handin" / "Untitled.ipynb").read_bytes() == NOTEBOOK.read_bytes()
    assert "cannot be graded" in kept_reason(klass, misnamed)
    page = feedback / f"{notebook_hash(secret=misnamed.secret, notebook_id='Untitled')}.html"
    text = page.read_text()
    assert "was not graded" in text and f"{ASSIGNMENT}.ipynb is missing" in text
    assert f"arrived {standing:%Y-%m-%d %H:%M:%S} UTC stands" in text
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
    # Corrupt, under the right name: the same.
    corrupt = klass.hand_in("corrupt")
    (corrupt.staging / f"{ASSIGNMENT}.ipynb").write_text("{not json")
    corrupt.arrive()
    lines = settle(collector)
    refused = [line for line in lines if line.startswith(f"REFUSED {ME}/{ASSIGNMENT}")]
    assert refused and "is not valid JSON" in refused[0], lines
    assert (klass.submitted / f"{ASSIGNMENT}.ipynb").read_bytes() == good
    page = feedback / f"{notebook_hash(secret=corrupt.secret, notebook_id=ASSIGNMENT)}.html"
    assert "is not valid JSON" in page.read_text()
    # A good one after them is collected as usual.
    klass.hand_in("again").arrive()
    lines = settle(collector)
    assert any(line.startswith(f"collected {ME}/{ASSIGNMENT}") for line in lines), lines
