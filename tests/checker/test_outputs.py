"""Rule `undeclared-output`: a NAME written to "$FIXLOOP_OUTPUT" that `outputs:` does not list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import Golden

from fixloop.checker.checking import check_paths

from .conftest import FIXTURES, CheckText, copy_pack, rules, workflow

GOLDENS = Path(__file__).resolve().parent / "goldens"


def test_every_form_of_write_matches_its_golden(golden: Golden) -> None:
    result = check_paths([FIXTURES / "outputs"], base=FIXTURES)
    text = "".join(d.format() + "\n" for d in result.diagnostics)
    golden.check(GOLDENS / "outputs.txt", text)


def test_the_typo_is_reported_at_its_line_and_column(check_text: CheckText) -> None:
    text = workflow(
        {"report": "printf 'FIX_REPORT_PATH=%s\\n' x >> \"$FIXLOOP_OUTPUT\""},
        "outputs:\n  REVIEW_PATH: where the report is\n",
    )
    [found] = check_text(text)
    assert (found.rule, found.line, found.col) == ("undeclared-output", 13, 9)
    assert found.message == (
        "step 'report' writes output FIX_REPORT_PATH to $FIXLOOP_OUTPUT, but the document does "
        "not declare it under `outputs:` (declared: REVIEW_PATH)"
    )
    assert check_text(text.replace("FIX_REPORT_PATH", "REVIEW_PATH")) == []


def test_a_document_without_outputs_declares_none(check_text: CheckText) -> None:
    found = check_text(workflow({"s": 'echo "DONE=yes" >> "$FIXLOOP_OUTPUT"'}))
    assert rules(found) == [("undeclared-output", 11)]
    assert found[0].message.endswith("(declared: none)")


def test_writes_elsewhere_and_computed_names_are_not_reported(check_text: CheckText) -> None:
    steps = {
        "s": (
            "printf 'X=1\\n' >> \"$OTHER_FILE\"\n"
            "printf -v line 'X=%s' 1\n"
            'echo "$line"\n'
            "name=X\n"
            'printf \'%s=1\\n\' "$name" >> "$FIXLOOP_OUTPUT"\n'
            'echo "$name=1" >> "$FIXLOOP_OUTPUT"\n'
        )
    }
    assert check_text(workflow(steps, "inputs:\n  OTHER_FILE: {type: string}\n")) == []


@pytest.mark.parametrize("op", [">", ">>", ">|", "&>", "&>>"])
def test_every_redirection_to_the_file_counts(check_text: CheckText, op: str) -> None:
    text = workflow({"s": f"printf 'NOPE=1\\n' {op} \"$FIXLOOP_OUTPUT\""}, "outputs:\n  DONE: d\n")
    assert rules(check_text(text)) == [("undeclared-output", 13)]


# Mutation: in a copy of fixloop's own pack, put a typo into each literal output name a step
# writes; the rule must report the misspelt name at the line and column of the write.
_WRITE = re.compile(r"(?:'|\\n)(?P<name>[A-Z][A-Z0-9_]*)(?:=|<<)")
_HELPER_WRITE = re.compile(r"(?:^\s*|\)\s*)fixloop_output (?P<name>[A-Z][A-Z0-9_]*) ")


def _writes(text: str) -> list[tuple[int, int]]:
    """(line index, column of the name) of each literal output name a printf line writes."""
    found = []
    for index, line in enumerate(text.split("\n")):
        # Every printf with an upper-case NAME= in its format: the pack writes such lines only
        # to $FIXLOOP_OUTPUT (alone, in a `{ … }` group, or in a `case` arm).
        if line.lstrip().startswith("printf '") or (
            "FIXLOOP_OUTPUT" in line and "printf '" in line
        ):
            found += [(index, m.start("name")) for m in _WRITE.finditer(line)]
        # and every call of the step library's writer, `fixloop_output NAME VALUE`
        found += [(index, m.start("name")) for m in _HELPER_WRITE.finditer(line)]
    return found


def test_a_typo_in_any_output_the_pack_writes_is_reported(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    assert not [d for d in check_paths([pack]).diagnostics if d.rule == "undeclared-output"]
    tried = 0
    for path in sorted((pack / "workflows").glob("*.md")):
        original = path.read_text(encoding="utf-8")
        for index, col in _writes(original):
            lines = original.split("\n")
            lines[index] = lines[index][:col] + "TYPO_" + lines[index][col:]
            path.write_text("\n".join(lines), encoding="utf-8")
            try:
                found = [
                    (d.line, d.col, d.message.split(" writes output ")[1].split(" ")[0])
                    for d in check_paths([path]).diagnostics
                    if d.rule == "undeclared-output"
                ]
            finally:
                path.write_text(original, encoding="utf-8")
            name = re.match(r"TYPO_\w+", lines[index][col:])
            assert name is not None
            assert found == [(index + 1, col + 1, name.group())], f"{path.name}:{index + 1}"
            tried += 1
    assert tried >= 50, tried  # the pack writes 50-odd literal names (printf, fixloop_output)
