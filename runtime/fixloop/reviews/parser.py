"""Reading a GSD-format REVIEW.md into a `Review`.

markdown-it-py finds the headings and the fenced code blocks, so a `### CR-02: …` line inside a
fenced code example is code, not a new finding. Inside a finding, lines outside fences that start
with `**File:**`, `**Issue:**` or `**Fix:**` open a field; `**Fix:**` runs to the next heading
of level 3 or higher (or the end of the file). Every problem names the file and line and, inside a
finding, the finding id.
"""

from __future__ import annotations

import re
import stat
import unicodedata
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.blocks import Heading, MarkdownDocument, parse_markdown
from fixloop.documents.source import SourceDocument, parse_document
from fixloop.reviews.model import PREFIXES, REVIEW_STATUSES, Review, ReviewFinding
from fixloop.steps.paths import lexical_problem

_FINDING_HEADING = re.compile(r"^(?P<prefix>[A-Za-z]+)-(?P<number>\d+)\s*:\s*(?P<title>.*)$")
# `### CR-1 Title`, `### WR-02 - Title`, `### CR‑01: Title` (a non-breaking hyphen), `#### CR-01:`:
# meant as findings. Skipping them silently is worse than refusing the review.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_ALMOST_FINDING = re.compile(rf"^[A-Z]{{2}}\s*(?P<dash>[-{_DASHES}])\s*\d+\b")
# `**Fix:** ```python`: markdown opens no fence there, so the fence's closing line opens one that
# swallows the next findings.
_FENCE_ON_LABEL = re.compile(r"^\s*(?:[-*]\s+)?\*\*[A-Za-z][A-Za-z ]*?(?::\*\*|\*\*:)\s*(```|~~~)")
MAX_REVIEW_BYTES = 4 << 20
# `**File:** x`, `**File**: x`, optionally as a list item `- **File:** x`.
_LABEL = re.compile(
    r"^\s*(?:[-*]\s+)?\*\*(?P<label>[A-Za-z][A-Za-z ]*?)(?::\*\*|\*\*:)\s?(?P<rest>.*)$"
)
_LOCATION = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)(?:\s*[-–]\s*\d+)?)?$")
_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|jsx|ts|tsx|json|ya?ml|toml|ini|cfg|sh|bash|md|go|rs|java|kt|rb|php|c|h|"
    "cc|cpp|hpp|cs|swift|css|scss|html|sql"
)
# A file named in prose: one or more path segments ending in a known source extension.
_PROSE_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXTENSIONS}))(?![\w/-])")
_FIELDS = {"file": "file", "files": "files", "issue": "issue", "fix": "fix"}


def _fail(source: SourceDocument, line: int, rule: str, message: str) -> FixloopError:
    return FixloopError(Diagnostic(source.display, line, 1, rule, message))


def path_problem(path: str) -> str | None:
    """Why `path` cannot name a file inside a repository, judged by its text alone (or None).

    A REVIEW.md names files in prose, so a path written the Windows way, with a `~` or with
    spaces around it is not one; the rest is the one safe-path rule (`steps.paths`) without its
    file-system part, which the plan applies once the repository is known."""
    if path != path.strip() or "\r" in path:
        return "is not a relative POSIX path (spaces around it, or a carriage return)"
    if path.startswith("~") or re.match(r"^[A-Za-z]:[\\/]", path) or "\\" in path:
        return "is absolute or not a relative POSIX path"
    reason = lexical_problem(path)
    return None if reason is None else f"is refused: {reason}"


def _raw_scalar(source: SourceDocument, key: str) -> str:
    """A top-level frontmatter value as written (`phase: 02` stays "02", not the integer 2)."""
    if key not in source.metadata or source.metadata[key] is None:
        return ""
    line = source.text.splitlines()[source.line_of(key) - 1]
    match = re.match(rf"^{re.escape(key)}\s*:\s*(?P<value>.*?)\s*(?:#.*)?$", line)
    value = match["value"] if match else str(source.metadata[key])
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class _Section:
    """The lines of one finding, sorted into fields."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}
        self.field_lines: dict[str, int] = {}
        self.current: str | None = None

    def open(self, name: str, line: int, rest: str) -> None:
        self.current = name
        self.fields.setdefault(name, [])
        self.field_lines.setdefault(name, line)
        if rest.strip():
            self.fields[name].append(rest)

    def add(self, text: str) -> None:
        if self.current is not None:
            self.fields[self.current].append(text)

    def text(self, name: str) -> str:
        return "\n".join(self.fields.get(name, [])).strip()


def _section(lines: list[str], start: int, end: int, fence_lines: set[int]) -> _Section:
    section = _Section()
    for number in range(start, end + 1):
        text = lines[number - 1] if number - 1 < len(lines) else ""
        if section.current == "fix" or number in fence_lines:
            section.add(text)
            continue
        label = _LABEL.match(text)
        if label:
            name = _FIELDS.get(label["label"].strip().lower(), "other")
            section.open(name, number, label["rest"])
        else:
            section.add(text)
    return section


def _location(
    source: SourceDocument, finding_id: str, text: str, line: int
) -> tuple[str, int | None]:
    cleaned = text.strip().strip("`").strip()
    match = _LOCATION.match(cleaned)
    path = match["path"].strip().strip("`") if match else cleaned
    problem = path_problem(path)
    if problem:
        raise _fail(source, line, "review-path", f"finding {finding_id}: path {path!r} {problem}")
    return path, int(match["line"]) if match and match["line"] else None


def _split_paths(text: str) -> list[str]:
    return [part for part in re.split(r"[,\n]", text) if part.strip().strip("`").strip()]


def _prose_paths(fence_free: str) -> list[str]:
    found: list[str] = []
    for match in _PROSE_PATH.finditer(fence_free):
        path = match.group(1)
        if path_problem(path) is None and path not in found:
            found.append(path)
    return found


def _heading_text(heading: Heading) -> str:
    """The heading as written: blocks.py strips a trailing `{#id}`; here it is title text."""
    return heading.title if heading.anchor is None else f"{heading.title} {{#{heading.anchor}}}"


def _finding(
    source: SourceDocument,
    heading: Heading,
    end: int,
    lines: list[str],
    fence_lines: set[int],
) -> ReviewFinding:
    match = _FINDING_HEADING.match(_heading_text(heading))
    assert match is not None  # the caller only passes finding headings
    finding_id = f"{match['prefix']}-{match['number']}"
    severity = PREFIXES.get(match["prefix"].upper())
    if severity is None:
        known = ", ".join(f"{p}-" for p in PREFIXES)
        raise _fail(
            source,
            heading.line,
            "review-severity",
            f"finding {finding_id}: unknown severity prefix {match['prefix']!r} (expected {known})",
        )
    title = match["title"].strip()
    if not title:
        raise _fail(source, heading.line, "review-finding", f"finding {finding_id} has no title")
    for number in range(heading.line + 1, end + 1):
        text = lines[number - 1] if number - 1 < len(lines) else ""
        if number not in fence_lines and _FENCE_ON_LABEL.match(text):
            raise _fail(
                source,
                number,
                "review-fence",
                f"finding {finding_id}: a code fence opened on the **"
                f"{text.split('**')[1].rstrip(':')}:** line; start it on a line of its own",
            )
    section = _section(lines, heading.line + 1, end, fence_lines)
    if "file" not in section.fields and "files" not in section.fields:
        raise _fail(
            source, heading.line, "review-file", f"finding {finding_id} has no **File:** line"
        )
    located: list[tuple[str, int | None]] = []
    for name in ("file", "files"):
        for part in _split_paths(section.text(name)):
            located.append(_location(source, finding_id, part, section.field_lines[name]))
    if not located:
        line = section.field_lines.get("file", section.field_lines.get("files", heading.line))
        raise _fail(source, line, "review-file", f"finding {finding_id}: **File:** names no path")
    files = [path for path, _ in located]
    fix = section.text("fix")
    fix_start = section.field_lines.get("fix")
    fence_free = ""
    if fix_start is not None:
        fence_free = "\n".join(
            lines[n - 1] for n in range(fix_start, end + 1) if n not in fence_lines
        )
    mentioned = [path for path in _prose_paths(fence_free) if path not in files]
    return ReviewFinding(
        id=finding_id,
        severity=severity,
        title=title,
        file=located[0][0],
        line=located[0][1],
        files=tuple(dict.fromkeys(files)),
        mentioned=tuple(mentioned),
        issue=section.text("issue"),
        fix=fix,
        heading_line=heading.line,
    )


def _check_finding_like(source: SourceDocument, heading: Heading) -> None:
    """A heading meant as a finding that would not be read as one is an error, never a skip."""
    text = _heading_text(heading)
    almost = _ALMOST_FINDING.match(text)
    if almost is None:
        return
    dash = almost["dash"]
    if dash != "-":
        name = unicodedata.name(dash, "a dash")
        why = f"its id holds U+{ord(dash):04X} ({name}) where an ASCII hyphen '-' belongs"
    elif heading.level != 3:
        why = f"it is a level {heading.level} heading; findings are level 3 (`### ID: Title`)"
    elif not _FINDING_HEADING.match(text):
        why = "it is not `### ID: Title`"
    else:
        return
    raise _fail(
        source, heading.line, "review-finding", f"heading {text!r} looks like a finding but {why}"
    )


def _findings(source: SourceDocument, markdown: MarkdownDocument) -> tuple[ReviewFinding, ...]:
    lines = source.text.splitlines()
    fence_lines = {
        number
        for block in markdown.blocks
        for number in range(block.fence_line, block.end_line + 1)
    }
    boundaries = [h for h in markdown.headings if h.level <= 3]
    last_line = max(len(lines), 1)
    findings: list[ReviewFinding] = []
    seen: dict[str, int] = {}
    for heading in markdown.headings:
        _check_finding_like(source, heading)
    for index, heading in enumerate(boundaries):
        text = _heading_text(heading)
        if heading.level != 3 or not _FINDING_HEADING.match(text):
            continue
        end = boundaries[index + 1].line - 1 if index + 1 < len(boundaries) else last_line
        finding = _finding(source, heading, end, lines, fence_lines)
        if finding.id in seen:
            raise _fail(
                source,
                heading.line,
                "review-finding",
                f"finding {finding.id} is defined twice (first at line {seen[finding.id]})",
            )
        seen[finding.id] = heading.line
        findings.append(finding)
    return tuple(findings)


def _check_total(source: SourceDocument, parsed: int) -> None:
    """The frontmatter's `findings.total`, when given, must count the findings the body holds."""
    counts = source.metadata.get("findings")
    total = counts.get("total") if isinstance(counts, dict) else None
    if isinstance(total, int) and total != parsed:
        raise _fail(
            source,
            source.line_of("findings", "total"),
            "review-count",
            f"findings.total is {total} but the body holds {parsed} `### ID: Title` finding(s)",
        )


def parse_review(text: str, path: Path, base: Path | None = None) -> Review:
    """Parse REVIEW.md text; raise FixloopError naming file, line and finding on bad input."""
    return review_from_source(parse_document(text, path, base))


def load_review(path: Path, base: Path | None = None) -> Review:
    return parse_review(read_review_text(path, base), path, base)


def read_review_text(path: Path, base: Path | None = None) -> str:
    """REVIEW.md's text as its LF form: a UTF-8 BOM dropped, CRLF line ends made LF.

    Only a regular file is read (a FIFO would block forever, a device never end), and only up to
    MAX_REVIEW_BYTES: a review is a page of text, not a data dump."""
    shown = display_path(path, base)

    def refuse(problem: str) -> FixloopError:
        return FixloopError(Diagnostic(shown, 1, 1, "review-path", problem))

    try:
        info = path.stat()
    except FileNotFoundError:
        raise refuse("no such file") from None
    except OSError as exc:
        raise refuse(exc.strerror or str(exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise refuse("not a regular file")
    if info.st_size > MAX_REVIEW_BYTES:
        raise refuse(f"{info.st_size} bytes; a review may hold at most {MAX_REVIEW_BYTES}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise refuse(exc.strerror or str(exc)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FixloopError(
            Diagnostic(shown, 1, 1, "encoding", f"not UTF-8 text: {exc.reason}")
        ) from None
    return text.replace("\r\n", "\n")


def review_from_source(source: SourceDocument) -> Review:
    markdown = parse_markdown(source)
    for block in markdown.blocks:
        if not block.closed:
            raise _fail(
                source,
                block.fence_line,
                "review-fence",
                "code fence is never closed; the rest of the file would be read as code",
            )
    title = next((h.title for h in markdown.headings if h.level == 1), "")
    status = str(source.metadata.get("status", "unknown"))
    listed = source.metadata.get("files_reviewed_list") or []
    if not isinstance(listed, list):
        raise _fail(
            source,
            source.line_of("files_reviewed_list"),
            "review-frontmatter",
            "files_reviewed_list must be a list of paths",
        )
    findings = _findings(source, markdown)
    _check_total(source, len(findings))
    return Review(
        phase=_raw_scalar(source, "phase"),
        status=status if status in REVIEW_STATUSES else "unknown",
        reviewed=str(source.metadata.get("reviewed", "") or ""),
        depth=str(source.metadata.get("depth", "standard") or "standard"),
        files_reviewed_list=tuple(str(item) for item in listed),
        findings=findings,
        title=title,
    )
