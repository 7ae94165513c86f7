"""Benchmark: what the diagnosis costs, this checkout against an earlier commit, in one run.

Two workloads, each the grader's own path:
- **by hand**: the corpus of realistic wrong answers (`evaluation/corpus.py`) judged with
  the numbers of `--learners` learners (reading, the formula diagnosis, fresh draws);
- **classes**: for every classic bug of the capstone's `Value` class, the numbers a class
  with that bug gives on each operation's drawn graphs, judged (`answers.value_graphs.judge`:
  PyTorch's numbers, which bug explains them, whether it hides another operation's).

Each workload runs in a fresh interpreter of this checkout and of `--against` (a git
worktree of that commit, made for the run and removed after), the two alternating,
`--rounds` times. It prints the best time of each and their ratio. The verdicts' texts
are compared too: a cheaper diagnosis that says something else is a regression, not a
speed-up.

    python benchmarks/diagnosis_cost.py [--against HEAD~1] [--learners 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Run in the checkout under test (its folder first on sys.path): one workload's seconds and
# a digest of every verdict it gave, as JSON.
WORKLOAD = """
import hashlib, json, random, sys, time
sys.path.insert(0, sys.argv[1])
which, learners = sys.argv[2], int(sys.argv[3])

def by_hand():
    from evaluation.corpus import outcomes
    import autograder
    assert autograder.__file__.startswith(sys.argv[1]), autograder.__file__
    outcomes(["warm-up"])  # imports, specs, references: not the diagnosis
    start = time.process_time()
    found = outcomes([f"learner-{i}" for i in range(learners)])
    spent = time.process_time() - start
    return spent, [(o.exercise, o.lines, o.learner, o.reason, o.message) for o in found]

def classes():
    from autograder.answers import value_bugs, value_graphs
    value_graphs.judge(value_graphs.draw_unit(random.Random(0), "add", 4), [None] * 4, "add")
    cases = []
    for unit in value_bugs.UNITS:
        graphs = value_graphs.draw_unit(random.Random(unit), unit, 40)
        for key in sorted(value_bugs.BUGS):
            variant = value_bugs.Variant(bugs=frozenset({key}))
            try:
                simulated = [value_bugs.simulate(graph, variant) for graph in graphs]
            except (OverflowError, ZeroDivisionError, ValueError):
                continue
            results = [  # as a learner's class reports them to the check
                {"error": "TypeError: unsupported operand"} if found is None
                else {"output": found[0], "grads": found[1]}
                for found in simulated
            ]
            cases.append((unit, key, graphs, results))
    start = time.process_time()
    verdicts = [(u, k, value_graphs.judge(g, r, u).text) for u, k, g, r in cases]
    return time.process_time() - start, verdicts

spent, said = {"by hand": by_hand, "classes": classes}[which]()
digest = hashlib.sha256(json.dumps(said).encode()).hexdigest()[:16]
print(json.dumps({"seconds": spent, "verdicts": len(said), "digest": digest}))
"""


def measure(checkout: Path, which: str, learners: int) -> dict[str, float | int | str]:
    done = subprocess.run(
        [sys.executable, "-c", WORKLOAD, str(checkout), which, str(learners)],
        capture_output=True, text=True, cwd=checkout,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the {which} workload failed in {checkout}:\n{done.stderr[-3000:]}")
    measured: dict[str, float | int | str] = json.loads(done.stdout.splitlines()[-1])
    return measured


def worktree(commit: str, folder: Path) -> Path:
    """A checkout of `commit` in `folder` (its own git worktree)."""
    place = folder / "before"
    added = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(place), commit],
        capture_output=True, text=True,
    )  # fmt: skip
    if added.returncode != 0:
        raise SystemExit(f"cannot check out {commit!r}: {added.stderr.strip()}")
    return place


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD~1", help="the commit to compare with")
    parser.add_argument("--learners", type=int, default=4, help="learners' numbers (by hand)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side; best kept")
    args = parser.parse_args()
    if args.learners < 1 or args.rounds < 1:
        parser.error("--learners and --rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="diagnosis-cost-") as folder:
        before = worktree(args.against, Path(folder))
        differ = []
        try:
            sides = {"this checkout": REPO, args.against: before}
            print(f"{'workload':<10} {'side':<16} {'CPU-s':>7} {'verdicts':>9}  digest")
            for which in ("by hand", "classes"):
                best: dict[str, float] = {}
                digests: dict[str, str] = {}
                for round_ in range(args.rounds):
                    for side, checkout in sides.items():
                        got = measure(checkout, which, args.learners)
                        best[side] = min(best.get(side, float("inf")), float(got["seconds"]))
                        digests[side] = str(got["digest"])
                        if round_ == args.rounds - 1:
                            print(f"{which:<10} {side:<16} {best[side]:7.2f} "
                                  f"{got['verdicts']:>9}  {got['digest']}")  # fmt: skip
                mine, theirs = best["this checkout"], best[args.against]
                same = len(set(digests.values())) == 1
                if not same:
                    differ.append(which)
                print(
                    f"{which:<10} ratio {mine / theirs:.2f} (this / {args.against}), "
                    f"{'the same verdicts' if same else 'OTHER VERDICTS'}\n"
                )
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)],
                capture_output=True,
            )  # fmt: skip
    if differ:
        print(f"the verdicts differ ({', '.join(differ)}): a regression, not a speed-up")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
