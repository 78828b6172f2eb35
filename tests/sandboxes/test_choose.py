"""`auto` picks the strongest sandbox that works here and says why; bad choices are one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.sandboxes.support import NEEDS_BWRAP, NEEDS_DOCKER

from fixloop.diagnostics import FixloopError
from fixloop.sandboxes import choose_sandbox, open_sandbox

NOT_ISOLATED = "not isolation: commands can write outside the worktree and use the network"


def _no_daemon(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    address = f"unix://{tmp_path}/no-daemon.sock"
    monkeypatch.setenv("DOCKER_HOST", address)
    return address


def _no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@NEEDS_DOCKER
def test_docker_when_a_daemon_answers_and_an_image_is_given(docker_image: str) -> None:
    choice = choose_sandbox("auto", image=docker_image)
    assert choice.kind == "docker"
    assert choice.reason.startswith(f"image {docker_image} on the Docker daemon at unix://")


@NEEDS_BWRAP
def test_bwrap_when_no_image_is_given() -> None:
    choice = choose_sandbox("auto")
    assert str(choice) == "sandbox: bwrap (no --image given for docker; bubblewrap works here)"


@NEEDS_BWRAP
def test_bwrap_when_no_daemon_answers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    address = _no_daemon(monkeypatch, tmp_path)
    choice = choose_sandbox("auto", image="some-image:1")
    assert choice.kind == "bwrap"
    assert choice.reason.startswith(f"no Docker daemon answers at {address}: ")
    assert choice.reason.endswith("; bubblewrap works here")
    assert "\n" not in str(choice)


def test_local_when_nothing_confining_works_and_it_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, worktree: Path
) -> None:
    _no_daemon(monkeypatch, tmp_path)
    _no_bwrap(monkeypatch, tmp_path)
    choice = choose_sandbox("auto", image="some-image:1")
    assert choice.kind == "local"
    assert "no Docker daemon answers" in choice.reason
    assert "bubblewrap is not installed (no `bwrap` on PATH; apt-get install bubblewrap)" in (
        choice.reason
    )
    assert choice.reason.endswith(NOT_ISOLATED)
    with open_sandbox("auto", worktree=worktree) as sandbox:
        assert sandbox.choice.kind == "local"


@NEEDS_DOCKER
def test_an_image_that_does_not_exist_is_an_error_not_a_fallback(docker_client: object) -> None:
    with pytest.raises(FixloopError) as error:
        choose_sandbox("auto", image="fixloop-no-such-image:1")
    assert error.value.exit_code == 2
    assert "--image fixloop-no-such-image:1: no such image" in str(error.value)


@pytest.mark.parametrize(
    ("kind", "image", "message"),
    [
        ("chroot", None, "unknown sandbox 'chroot'; choose one of auto, local, bwrap, docker"),
        ("bwrap", "img:1", "--image applies to the docker sandbox, not to --sandbox bwrap"),
        ("local", "img:1", "--image applies to the docker sandbox, not to --sandbox local"),
    ],
)
def test_bad_choices_are_one_line_exit_2(kind: str, image: str | None, message: str) -> None:
    with pytest.raises(FixloopError) as error:
        choose_sandbox(kind, image=image)
    assert error.value.exit_code == 2
    assert str(error.value) == f"--sandbox:1:1: sandbox: {message}"


def test_bwrap_asked_for_but_not_installed_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, worktree: Path
) -> None:
    _no_bwrap(monkeypatch, tmp_path)
    with pytest.raises(FixloopError) as error:
        open_sandbox("bwrap", worktree=worktree)
    assert error.value.exit_code == 2
    assert str(error.value) == (
        "--sandbox:1:1: sandbox: --sandbox bwrap: bubblewrap is not installed "
        "(no `bwrap` on PATH; apt-get install bubblewrap)"
    )
