"""Settings in fixloop.toml or [tool.fixloop]: found upwards, validated, applied to diagnostics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.config import Profile, find_config


def test_nearest_settings_win_and_fixloop_toml_before_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fixloop]\nprofile = "fixloop"\n')
    inner = tmp_path / "pack" / "agents"
    inner.mkdir(parents=True)
    assert find_config(inner).profile() is Profile.FIXLOOP
    (tmp_path / "pack" / "fixloop.toml").write_text('profile = "claude"\npack = "."\n')
    config = find_config(inner)
    assert config.profile() is Profile.CLAUDE
    assert config.pack == (tmp_path / "pack").resolve()
    assert config.profile(Profile.FIXLOOP) is Profile.FIXLOOP  # the command line wins


def test_settings_read_again_are_read_as_they_are_now(tmp_path: Path) -> None:
    settings = tmp_path / "fixloop.toml"
    settings.write_text('profile = "fixloop"\n')
    assert find_config(tmp_path).profile() is Profile.FIXLOOP
    assert find_config(tmp_path / "sub.md") == find_config(tmp_path)
    settings.write_text('profile = "claude"\n')  # an edit between two reads counts
    assert find_config(tmp_path).profile() is Profile.CLAUDE
    settings.write_text('profile = "strict"\n')
    with pytest.raises(FixloopError):
        find_config(tmp_path)
    with pytest.raises(FixloopError):  # refused again, not remembered as the last good one
        find_config(tmp_path)


def test_tomllib_is_imported_only_for_settings_past_the_plain_kind(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from fixloop.documents.config import find_config\n"
        "profile = find_config(Path(sys.argv[1])).profile()\n"
        "print(profile, 'tomllib' in sys.modules)\n"
    )
    settings = {
        "none": None,
        "plain": 'profile = "fixloop"\n',
        "multi-line": 'profile = "fixloop"\nselect = [\n  "undefined-variable",\n]\n',
    }
    for folder, text in settings.items():
        (tmp_path / folder).mkdir()
        if text is not None:
            (tmp_path / folder / "fixloop.toml").write_text(text)
    seen = [
        subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path / folder)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for folder in settings
    ]
    assert seen == [["claude", "False"], ["fixloop", "False"], ["fixloop", "True"]]


def test_a_pyproject_without_the_table_is_not_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert find_config(tmp_path).path is None
    assert find_config(tmp_path).profile() is Profile.CLAUDE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('profile = "strict"\n', "fixloop.toml:1:1: config: profile: unknown value 'strict'"),
        ('\nignor = ["x"]\n', "fixloop.toml:2:1: config: unknown key 'ignor' (did you mean"),
        ("select = [\n", "fixloop.toml:2:1: config: invalid TOML"),
    ],
)
def test_bad_settings_are_one_located_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixloop.toml").write_text(text)
    with pytest.raises(FixloopError) as caught:
        find_config(tmp_path)
    assert caught.value.diagnostics[0].format().startswith(expected)


def test_select_ignore_and_per_file_ignores(tmp_path: Path) -> None:
    (tmp_path / "fixloop.toml").write_text(
        'ignore = ["rm-rf-empty-var"]\n'
        '[per-file-ignores]\n"workflows/legacy-*.md" = ["undefined-variable"]\n'
    )
    config = find_config(tmp_path)

    def wanted(path: str, rule: str) -> bool:
        return config.wanted(Diagnostic(path, 1, 1, rule, "m"), tmp_path)

    assert not wanted("workflows/a.md", "rm-rf-empty-var")
    assert not wanted("workflows/legacy-1.md", "undefined-variable")
    assert wanted("workflows/a.md", "undefined-variable")
    assert wanted("workflows/legacy-1.md", "bash-syntax")
    (tmp_path / "fixloop.toml").write_text('select = ["bash-syntax"]\n')
    config = find_config(tmp_path)
    assert wanted("a.md", "bash-syntax") and not wanted("a.md", "undefined-variable")
