"""Hostile patches through `bench efficacy --patches`, in every sandbox: none may be graded
resolved, and the real fixes still are (tests/helpers/cheats.py holds the set)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.extras.efficacy.conftest import CORPUS
from tests.helpers.cheats import CHANGES, PYTEST_TASK, Change, make_pytest_corpus, patch_of

from fixloop.documents.pack import Pack
from fixloop.extras.efficacy import BenchOptions, export_tasks, freeze, run_bench
from fixloop.extras.efficacy.outcome import TaskOutcome

Patches = Callable[[Change], str]  # a change's patch, made once
Score = Callable[..., TaskOutcome]  # a change scored in the sandbox its keywords name


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("corpora")
    made = make_pytest_corpus(folder / "pytest")
    freeze(made)
    return {"pytest": made, "unittest": CORPUS}


def _corpus(change: Change, corpora: dict[str, Path]) -> Path:
    return corpora["pytest" if change.task == PYTEST_TASK else "unittest"]


@pytest.fixture(scope="module")
def patches(corpora: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Patches:
    """Each change's patch, made on an exported task the first time a test asks for it: the
    same text whichever sandbox then scores it (a string: no test can change another's)."""
    made: dict[Change, str] = {}

    def patch(change: Change) -> str:
        if change not in made:
            exported = tmp_path_factory.mktemp("exported")
            [folder] = export_tasks(_corpus(change, corpora), exported, (change.task,))
            made[change] = patch_of(folder / "repo", change)
        return made[change]

    return patch


@pytest.fixture
def score(corpora: dict[str, Path], pack: Pack, patches: Patches, tmp_path: Path) -> Score:
    """`score(change, sandbox=..., image=...)`: the change's patch through `--patches`."""

    def scored(change: Change, **sandbox: str) -> TaskOutcome:
        folder = tmp_path / "patches"
        folder.mkdir()
        (folder / f"{change.task}.patch").write_text(patches(change))
        corpus = _corpus(change, corpora)
        options = BenchOptions(corpus=corpus, patches=folder, tasks=(change.task,), **sandbox)  # type: ignore[arg-type]
        [outcome] = run_bench(options, pack).outcomes
        return outcome

    return scored


def _judged(change: Change, outcome: TaskOutcome) -> None:
    if change.honest:
        assert outcome.status == "resolved", outcome.reason
    else:
        assert outcome.status == "rejected", outcome.reason
        assert outcome.reason, "a rejection says why"


IDS = [f"{change.task}: {change.name}" for change in CHANGES]


@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_local(change: Change, score: Score) -> None:
    _judged(change, score(change, sandbox="local"))


@pytest.mark.needs("bwrap")
@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_bwrap(change: Change, score: Score) -> None:
    _judged(change, score(change, sandbox="bwrap"))


@pytest.mark.needs("docker")
@pytest.mark.slow
@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_docker(change: Change, score: Score, docker_image: str) -> None:
    _judged(change, score(change, sandbox="docker", image=docker_image))
