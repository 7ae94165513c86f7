"""tools/venv_cache.py: the kept copy of a freshly installed venv, taken only for the same
inputs, made whole or not at all, and restored with its own path in it.

The copies here are small real venvs (`python -m venv --without-pip`, one console script);
`make test` on a fresh clone restores the course's real one (tools/setup_venv.sh).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import venv_cache  # noqa: E402


def inputs_copy(into: Path) -> Path:
    for name in venv_cache.INPUTS:
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, into / name)
    return into


def test_the_key_changes_with_each_input_and_only_with_them(tmp_path: Path) -> None:
    repo = inputs_copy(tmp_path)
    first = venv_cache.key(repo)
    assert venv_cache.key(repo) == first
    (repo / "README.md").write_text("not an input")
    assert venv_cache.key(repo) == first
    seen = {first}
    for name in venv_cache.INPUTS:
        path = repo / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n# changed\n")
        seen.add(venv_cache.key(repo))
        path.write_bytes(original)
    assert len(seen) == len(venv_cache.INPUTS) + 1
    assert venv_cache.key(repo) == first


def small_venv(path: Path) -> Path:
    """A real venv with a console script naming its python, as pip writes them."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    script = path / "bin" / "hello"
    script.write_text(f"#!{path}/bin/python\nimport sys\nprint('hello from', sys.prefix)\n")
    script.chmod(0o755)
    site = next((path / "lib").glob("python*/site-packages"))
    (site / "module.py").write_text("ANSWER = 42\n")
    return path


@pytest.mark.processes
def test_a_restored_venv_names_its_own_path_and_runs(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    original = small_venv(tmp_path / "first" / ".venv")
    kept = venv_cache.save(original, root, "k1")
    assert kept is not None and (kept / venv_cache.COPY / "bin" / "hello").is_file()
    assert venv_cache.save(original, root, "k1") is None  # one copy a key

    assert venv_cache.restore(tmp_path / "second" / ".venv", root, "other") is False
    restored = tmp_path / "second" / ".venv"
    restored.parent.mkdir()
    assert venv_cache.restore(restored, root, "k1") is True
    assert str(original) not in (restored / "bin" / "hello").read_text()
    assert str(original) not in (restored / "pyvenv.cfg").read_text()
    ran = subprocess.run([str(restored / "bin" / "hello")], capture_output=True, text=True)
    assert ran.stdout.strip() == f"hello from {restored}", ran
    # the files are the kept copy's own (hard-linked); the kept copy and the venv it came
    # from are untouched by the rewrite
    module = next(restored.glob("lib/python*/site-packages/module.py"))
    kept_module = next(kept.glob(f"{venv_cache.COPY}/lib/python*/site-packages/module.py"))
    assert module.stat().st_ino == kept_module.stat().st_ino
    assert str(original) in (kept / venv_cache.COPY / "bin" / "hello").read_text()
    assert str(original) in (original / "bin" / "hello").read_text()
    # an existing venv is never overwritten
    assert venv_cache.restore(restored, root, "k1") is False


def copy_then_fail(source: Path, target: Path) -> None:
    """A copy that stops part way (a full disk, say)."""
    target.mkdir(parents=True)
    (target / "part").write_text("half")
    raise OSError(28, "No space left on device")


@pytest.mark.processes
def test_a_copy_that_fails_leaves_nothing_half_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "cache"
    original = small_venv(tmp_path / "first")
    assert venv_cache.save(original, root, "k1") is not None
    monkeypatch.setattr(venv_cache, "copy_tree", copy_then_fail)
    target = tmp_path / "second"
    with pytest.raises(OSError):
        venv_cache.restore(target, root, "k1")
    assert not target.exists()
    with pytest.raises(OSError):
        venv_cache.save(original, root, "k2")
    assert sorted(p.name for p in root.iterdir()) == ["venv-k1"]
    # as the set-up script runs it: restore says why and installs; save never fails it
    monkeypatch.setattr(venv_cache, "cache_root", lambda: root)
    monkeypatch.setattr(venv_cache, "key", lambda: "k1")
    assert venv_cache.main(["restore", str(target)]) == 1
    assert "could not copy the kept venv" in capsys.readouterr().err
    monkeypatch.setattr(venv_cache, "key", lambda: "k3")
    assert venv_cache.main(["save", str(original)]) == 0
    assert "could not keep a copy" in capsys.readouterr().err
    assert not target.exists() and sorted(p.name for p in root.iterdir()) == ["venv-k1"]
    # an incomplete copy (no bin/python) is never taken
    shutil.rmtree(root / "venv-k1" / venv_cache.COPY / "bin")
    assert venv_cache.restore(target, root, "k1") is False and not target.exists()


@pytest.mark.processes
def test_only_the_newest_copies_stay_and_abandoned_ones_go(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    original = small_venv(tmp_path / "first")
    for age, name in enumerate(["old", "middle", "new"]):
        kept = venv_cache.save(original, root, name)
        assert kept is not None
        os.utime(kept, (1000 + age, 1000 + age))
    venv_cache.prune(root)
    assert sorted(p.name for p in root.glob("venv-*")) == ["venv-middle", "venv-new"]
    abandoned = root / f".making-x-{2**22 + 1}"  # above Linux's pid_max default: no such pid
    abandoned.mkdir()
    mine = root / f".making-y-{os.getpid()}"
    mine.mkdir()
    removed = venv_cache.prune(root)
    assert abandoned in removed and not abandoned.exists() and mine.exists()
