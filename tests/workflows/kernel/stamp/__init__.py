"""stamp: a workflow that exists only in the tests, to show that adding a workflow takes its
package (this file), its document (`stamp.md`, copied into a pack) and one registry row: the
command line `fixloop stamp` is built from the row and `StampOptions`, with no code of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from fixloop.steps.paths import check_path
from fixloop.steps.result import required_count
from fixloop.workflows.kernel.options import option, positive, repo_option
from fixloop.workflows.kernel.result import Result
from fixloop.workflows.kernel.workflow import Workflow, implements

DOCUMENT = Path(__file__).with_name("stamp.md")


@dataclass(frozen=True)
class StampOptions:
    note: Path = option(type=Path, metavar="NOTE", help="the note whose words are counted")
    repo: Path = repo_option()
    min_words: int = option(
        "--min-words",
        type=positive,
        default=1,
        metavar="N",
        help="a note with fewer words falls short (default: 1)",
    )


class NoteStatus(StrEnum):
    COUNTED = "counted"
    TOO_SHORT = "too-short"


@dataclass
class Note:
    id: str
    words: int
    status: NoteStatus

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": str(self.status), "words": self.words}


@dataclass
class StampResult(Result):
    notes: list[Note] = field(default_factory=list)

    def work_items(self) -> list[Note]:
        return self.notes

    def short(self, item: Note) -> bool:
        return item.status is NoteStatus.TOO_SHORT


@dataclass(frozen=True)
class StampPlan:
    repo: Path
    note: str


class Stamp(Workflow[StampOptions, StampPlan, StampResult]):
    name = "stamp"

    def plan(self) -> StampPlan:
        repo = self.options.repo.resolve()
        note = check_path(repo, str(self.options.note), where="note")
        return StampPlan(repo, note)

    def new_result(self, plan: StampPlan) -> StampResult:
        return StampResult()

    def work(self, plan: StampPlan) -> None:
        words = self.count_words(plan)
        enough = words >= self.options.min_words
        status = NoteStatus.COUNTED if enough else NoteStatus.TOO_SHORT
        self.result.notes.append(Note(plan.note, words, status))

    @implements("count-words")
    def count_words(self, plan: StampPlan) -> int:
        return required_count(self.step("count-words", plan.repo, NOTE=plan.note), "WORDS")


__all__ = ["DOCUMENT", "Stamp", "StampOptions", "StampResult"]
