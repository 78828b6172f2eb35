"""The checker sees through the step library a document's blocks source ($FIXLOOP_LIB).

The fixture pack `fixtures/library/` has a small library of its own (`workflows/lib/fixloop.sh`):
a helper that writes the sentinel through a second helper, one that fills an array named by its
caller, one that sets a global, and two that no step should call (`git stash`, `git reset`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.checker.checking import check_paths
from fixloop.checker.library import load_library
from fixloop.checker.syntax import parse_bash
from fixloop.checker.tree import Function
from fixloop.documents.files import read_text

from .conftest import FIXTURES

DOCUMENT = "workflows/deploy.md"


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "library", tmp_path / "library")
    return tmp_path / "library"


def found(pack: Path) -> list[tuple[str, str, int]]:
    return [(d.path, d.rule, d.line) for d in check_paths([pack], base=pack).diagnostics]


def edit(pack: Path, old: str, new: str) -> None:
    path = pack / DOCUMENT
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_helpers_a_step_calls_are_its_commands_and_the_rest_are_not(pack: Path) -> None:
    result = check_paths([pack], base=pack)
    assert result.diagnostics == []  # lib_shelve and lib_start_over are never called
    events = [(e.path, e.line, e.name) for d in result.documents for e in d.events]
    assert ("workflows/lib/fixloop.sh", 15, ">") in events  # two helpers deep
    assert not [e for e in events if e[2] == "git" and e[1] in (25, 30)]


def test_a_forbidden_command_inside_a_called_helper_is_reported_there(pack: Path) -> None:
    edit(pack, "lib_write_sentinel\n", "lib_write_sentinel\nlib_shelve\n")
    assert found(pack) == [("workflows/lib/fixloop.sh", "nothing-is-shelved", 25)]


def test_the_path_analysis_follows_the_call(pack: Path) -> None:
    edit(
        pack,
        'git worktree add "$WORKTREE"\nlib_write_sentinel',
        'lib_write_sentinel\ngit worktree add "$WORKTREE"',
    )
    assert found(pack) == [("workflows/lib/fixloop.sh", "sentinel-after-worktree-add", 15)]


def test_what_a_helper_sets_is_set_and_without_the_library_it_is_not(pack: Path) -> None:
    edit(pack, '. "$FIXLOOP_LIB/fixloop.sh"\nlib_read_list', "lib_read_list")
    assert found(pack) == [
        ("workflows/deploy.md", "undefined-variable", 24),  # "${paths[@]}"
        ("workflows/deploy.md", "undefined-variable", 26),  # "$LAST_SEEN"
    ]


def test_a_library_that_is_not_in_the_pack_is_an_error(pack: Path) -> None:
    edit(
        pack,
        '. "$FIXLOOP_LIB/fixloop.sh"\ngit worktree',
        '. "$FIXLOOP_LIB/fixloop-v2.sh"\ngit worktree',
    )
    problems = check_paths([pack], base=pack).diagnostics
    (missing,) = [d for d in problems if d.rule == "source-not-found"]
    assert (missing.line, missing.col) == (33, 3)
    assert "names fixloop-v2.sh, which is not in the pack" in missing.message


CHECKED = """\
lib_checked() {
  lib_probe
}

lib_probe() {
  true
}
"""
CLEANUP = """---
name: {name}
description: A workflow calling a helper between a worktree and its removal.
inputs:
  WORKTREE: {{type: string}}
contracts:
  - id: worktree-removed
    cleanup: git worktree remove $WORKTREE
    after: git worktree add $WORKTREE
    when: success
---

# {name}

## Work {{#work}}

```bash
. "$FIXLOOP_LIB/fixloop.sh"
{defines}git worktree add "$WORKTREE"
lib_checked
git worktree remove "$WORKTREE"
```
"""


def test_a_helpers_summary_kept_by_its_library_is_not_used_where_a_run_redefines_what_it_calls(
    pack: Path,
) -> None:
    # The helper's summary (it always ends normally) is kept by the library for the workflows
    # that call it as the library defines it; the second workflow's own `lib_probe` exits, so
    # there the call can end the run with the worktree left behind.
    library = pack / "workflows" / "lib" / "fixloop.sh"
    library.write_text(library.read_text(encoding="utf-8") + CHECKED, encoding="utf-8")
    for name, defines in (("a-plain", ""), ("b-redefined", "lib_probe() { exit 1; }\n")):
        text = CLEANUP.format(name=name, defines=defines)
        (pack / "workflows" / f"{name}.md").write_text(text, encoding="utf-8")
    expected = [("workflows/b-redefined.md", "worktree-removed", 20)]
    assert [f for f in found(pack) if f[1] == "worktree-removed"] == expected
    alone = check_paths([pack / "workflows" / "b-redefined.md"], base=pack).diagnostics
    assert [(d.path, d.rule, d.line) for d in alone if d.rule == "worktree-removed"] == expected


def test_only_the_helpers_a_document_reaches_are_converted(pack: Path) -> None:
    # lib_write_sentinel reaches lib_sentinel_line; lib_shelve and lib_start_over are never
    # called, so their syntax trees are never made (yet a call to one would be followed).
    result = check_paths([pack], base=pack)
    assert result.diagnostics == []
    (library,) = {
        id(lib): lib for d in result.documents for u in d.units for lib in u.libraries
    }.values()
    assert {"lib_shelve", "lib_start_over"} <= set(library.sources)
    converted = set(library._helpers)
    assert {"lib_write_sentinel", "lib_sentinel_line"} <= converted
    assert not converted & {"lib_shelve", "lib_start_over"}


def test_a_helper_nested_too_deep_hides_no_other_helper(pack: Path) -> None:
    # Past the checker's nesting limit a helper is followed as doing nothing; the helpers
    # around it are read as before (the sentinel is still written two helpers deep).
    library = pack / "workflows" / "lib" / "fixloop.sh"
    deep = "lib_deep() {\n" + "{ " * 80 + "true" + "; }" * 80 + "\n}\n"
    library.write_text(deep + library.read_text(encoding="utf-8"), encoding="utf-8")
    edit(pack, "lib_write_sentinel\n", "lib_write_sentinel\nlib_deep\n")
    result = check_paths([pack], base=pack)
    assert result.diagnostics == []
    events = [(e.path, e.line, e.name) for d in result.documents for e in d.events]
    assert ("workflows/lib/fixloop.sh", 18, ">") in events  # three lines lower than before


def test_a_library_line_run_into_the_next_is_read_as_bash_reads_it(pack: Path) -> None:
    # tree-sitter-bash joins `a=1 b=2` and the next line into one command; the helper is
    # built from the text parsed again with a `;` there, as a block is.
    library = pack / "workflows" / "lib" / "fixloop.sh"
    joined = "lib_joined() {\n  a=1 b=2\n  git stash push\n}\n"
    library.write_text(library.read_text(encoding="utf-8") + joined, encoding="utf-8")
    edit(pack, "lib_write_sentinel\n", "lib_write_sentinel\nlib_joined\n")
    assert found(pack) == [("workflows/lib/fixloop.sh", "nothing-is-shelved", 34)]


@pytest.mark.parametrize(
    "path",
    [
        REPO_ROOT / "workflows" / "lib" / "fixloop.sh",
        FIXTURES / "library/workflows/lib/fixloop.sh",
    ],
)
def test_a_helper_converted_alone_is_what_the_whole_files_parse_makes(path: Path) -> None:
    library = load_library(path, None)
    assert library is not None
    whole = {n.name: n for n in parse_bash(read_text(path)).body.items if isinstance(n, Function)}
    assert list(library.sources) == list(whole)
    for name, function in whole.items():
        assert repr(library.function(name)) == repr(function)


# Libraries whose `name() {` … `}` lines are not all functions of their own: each helper is still
# what the whole file's parse makes of it.
_WRITTEN_AROUND = {
    "a heredoc's lines": "note() {\n  cat <<EOF\nlater() {\n  git stash\n}\nEOF\n}\n",
    "a string's lines": 'x="\nlater() {\n  git stash\n}\n"\nreal() {\n  echo hi\n}\n',
    "a `}` line in a heredoc": "f() {\n  cat <<EOF\n}\nEOF\n  git stash\n}\ng() {\n  true\n}\n",
    "a continued line": "true &&\nf() {\n  git stash\n}\ng() {\n  true\n}\n",
    "defined twice": "f() {\n  echo one\n}\nf() {\n  git stash\n}\n",
    "nested": "outer() {\n  inner() {\n    git stash\n  }\n}\n",
    "other forms": "function f {\n  git stash\n}\ng () {\n  true\n}\nh() { true; }\n",
    "a line run into the next": "f() {\n  a=1 b=2\n  git stash push\n}\ng() {\n  true\n}\n",
    "statements between": "set -u\nf() {\n  git stash\n}\nreadonly X=1\ng() {\n  f\n}\n",
    "a heredoc of another function": "function f {\n  bash <<EOF\ng() {\n  git stash\n}\nEOF\n}\n",
    "an error inside": "f() {\n  x=$((1+\n}\ng() {\n  git stash\n}\n",
    "a string closed on a comment-like line": 'x="\n# y"\nf() {\n  git stash\n}\n',
    "a heredoc ended by a comment-like line": "cat <<'#'\nx\n#\nf() {\n  git stash\n}\n",
    "comments above": "# one\n\n  # two\nf() {\n  # in\n  git stash\n}\n# three\ng() {\n  f\n}\n",
}


# The cases with a function that does not parse cleanly on its own: read from the whole file's
# parse, never alone (a `}` line cut them short, or an error is inside).
_READ_WHOLE = {"a heredoc's lines", "a `}` line in a heredoc", "an error inside"}


@pytest.mark.parametrize("case", list(_WRITTEN_AROUND))
def test_a_function_parsed_on_its_own_is_what_the_whole_files_parse_makes(
    tmp_path: Path, case: str
) -> None:
    text = _WRITTEN_AROUND[case]
    path = tmp_path / "lib.sh"
    path.write_text(text, encoding="utf-8")
    library = load_library(path, None)
    assert library is not None
    whole = {n.name: n for n in parse_bash(text).body.items if isinstance(n, Function)}
    assert set(library.sources) == set(whole)
    for name, function in whole.items():
        assert repr(library.function(name)) == repr(function), name
    assert (library._whole is not None) == (case in _READ_WHOLE)


def test_a_function_no_document_reaches_is_not_even_parsed(pack: Path) -> None:
    path = pack / "workflows" / "lib" / "fixloop.sh"
    library = load_library(path, pack)
    assert library is not None
    assert library.function("lib_remember") is not None
    # Each function stood in for by one line while the file was parsed: no `git` in what was.
    parsed = repr(library.sources["lib_shelve"]) + repr(library.sources["lib_start_over"])
    assert "git stash" in parsed and "git reset" in parsed  # their own texts, kept for later
    assert not [h for h in ("lib_shelve", "lib_start_over") if h in library._helpers]


def test_a_syntax_error_in_one_function_hides_no_other(tmp_path: Path) -> None:
    # The whole file's parse runs the unclosed quote to the end of the file: neither `f` nor `g`
    # is a function there. bash refuses such a library; `f` is followed as doing nothing (what
    # the whole parse makes of it), `g`'s own lines are still followed.
    path = tmp_path / "lib.sh"
    path.write_text('f() {\n  echo "unclosed\n}\ng() {\n  git stash\n}\n', encoding="utf-8")
    library = load_library(path, None)
    assert library is not None
    assert list(library.sources) == ["f", "g"]
    whole = parse_bash(path.read_text(encoding="utf-8"))
    assert whole.errors and not [n for n in whole.body.items if isinstance(n, Function)]
    assert library.helper("f").events == []
    assert [(e.line, e.name) for e in library.helper("g").events] == [(5, "git")]
