"""Hostile patches through `bench efficacy --patches`, in every sandbox: none may be graded
resolved, and the real fixes still are (tests/helpers/cheats.py holds the set)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.extras.efficacy.conftest import CORPUS
from tests.helpers.cheats import CHANGES, PYTEST_TASK, Change, make_pytest_corpus, patch_of

from fixloop.documents.pack import Pack
from fixloop.extras.efficacy import BenchOptions, export_tasks, freeze, run_bench
from fixloop.extras.efficacy.outcome import TaskOutcome


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("corpora")
    made = make_pytest_corpus(folder / "pytest")
    freeze(made)
    return {"pytest": made, "unittest": CORPUS}


def _score(
    change: Change, corpora: dict[str, Path], pack: Pack, tmp_path: Path, **sandbox: str
) -> TaskOutcome:
    corpus = corpora["pytest" if change.task == PYTEST_TASK else "unittest"]
    [folder] = export_tasks(corpus, tmp_path / "exported", (change.task,))
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / f"{change.task}.patch").write_text(patch_of(folder / "repo", change))
    shutil.rmtree(folder)
    options = BenchOptions(corpus=corpus, patches=patches, tasks=(change.task,), **sandbox)  # type: ignore[arg-type]
    [outcome] = run_bench(options, pack).outcomes
    return outcome


def _judged(change: Change, outcome: TaskOutcome) -> None:
    if change.honest:
        assert outcome.status == "resolved", outcome.reason
    else:
        assert outcome.status == "rejected", outcome.reason
        assert outcome.reason, "a rejection says why"


IDS = [f"{change.task}: {change.name}" for change in CHANGES]


@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_local(change: Change, corpora: dict[str, Path], pack: Pack, tmp_path: Path) -> None:
    _judged(change, _score(change, corpora, pack, tmp_path, sandbox="local"))


@pytest.mark.needs("bwrap")
@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_bwrap(change: Change, corpora: dict[str, Path], pack: Pack, tmp_path: Path) -> None:
    _judged(change, _score(change, corpora, pack, tmp_path, sandbox="bwrap"))


@pytest.mark.needs("docker")
@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_docker(
    change: Change, corpora: dict[str, Path], pack: Pack, tmp_path: Path, docker_image: str
) -> None:
    outcome = _score(change, corpora, pack, tmp_path, sandbox="docker", image=docker_image)
    _judged(change, outcome)
