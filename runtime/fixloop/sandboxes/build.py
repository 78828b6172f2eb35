"""An image built from a Dockerfile someone else wrote (a model's), with nothing fetched.

    problem = base_problem(client, dockerfile)     # None, or one line: what is not local
    built = build_image(dockerfile, run_id=run.id, tag="fixloop-env/<run>:1")

The Dockerfile is untrusted, so the build is held to what the docker sandbox allows a command:
- every `FROM` (and every `--from=` of `COPY` or `RUN --mount`) names an image the daemon already
  has, or an earlier stage of the same file, or `scratch`; a name in a variable (`FROM $BASE`)
  cannot be checked and is refused, and so is anything else, in one line, before the build
  starts. The build never pulls (`pull=False`): no registry is needed, none is reached.
- the build has no network (`network_mode="none"`): a `RUN` can use what the base image holds,
  never download more; an `ADD` of a URL (which the daemon itself would fetch) is refused;
- the build context is an empty folder holding the Dockerfile alone: nothing of the repository
  (its `.env` say) can be copied into an image layer;
- the image and its intermediate containers carry the labels every sandbox container carries
  (`fixloop.sandbox=docker`, `fixloop.run-id=<run>`); `remove_image` removes it when the run is
  over.

The log is the daemon's build output, bounded (its head, its tail, and the lines that look like
errors in between, so a long download's progress does not hide the cause) and masked.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.masking import mask_text
from fixloop.sandboxes.daemon import LABEL_RUN_ID, LABEL_SANDBOX, connect, image_problem, one_line

BUILD_TIMEOUT_S = 900
LOG_HEAD_CHARS = 2000
LOG_TAIL_CHARS = 6000
MAX_ERROR_LINES = 20
MAX_DOCKERFILE_BYTES = 64 * 1024
_ERRORISH = re.compile(r"error|failed|not found|no such|denied|cannot|unable", re.IGNORECASE)
_FROM = re.compile(r"^\s*FROM\s+(?P<rest>.+)$", re.IGNORECASE)
_FROM_FLAG = re.compile(r"--from=(\S+)", re.IGNORECASE)
_ADD_URL = re.compile(r"^\s*ADD\s+.*(://|git@)", re.IGNORECASE)


@dataclass(frozen=True)
class Built:
    exit_code: int  # 0: built; 1: the build failed (the log says why)
    image_id: str  # "" when it failed
    log: str  # bounded and masked
    truncated: bool
    bases: tuple[str, ...]  # the local images it was built from


def _logical_lines(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    lines: list[str] = []
    pending = ""
    for raw in dockerfile.splitlines():
        if not pending and raw.lstrip().startswith("#"):
            continue
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return [line for line in lines if line.strip()]


def bases_of(dockerfile: str) -> tuple[list[str], list[str]]:
    """(the images it names, the problems of names that cannot be checked), stages left out."""
    stages: set[str] = set()
    images: list[str] = []
    problems: list[str] = []
    seen_from = 0
    for line in _logical_lines(dockerfile):
        if _ADD_URL.match(line):
            problems.append("ADD of a URL would download it: the build fetches nothing")
        match = _FROM.match(line)
        named: list[str] = []
        if match:
            words = [w for w in match.group("rest").split() if not w.startswith("--")]
            if not words:
                problems.append("a FROM names no image")
                continue
            named.append(words[0])
            if len(words) >= 3 and words[1].lower() == "as":
                stages.add(words[2].lower())
            seen_from += 1
        named += _FROM_FLAG.findall(line)
        for name in named:
            if name.lower() in stages or name.lower() == "scratch" or name.isdigit():
                continue
            if "$" in name:
                problems.append(f"{name}: an image named by a variable cannot be checked")
            else:
                images.append(name)
    if seen_from == 0:
        problems.append("the Dockerfile has no FROM")
    return images, problems


def base_problem(client: Any, dockerfile: str) -> str | None:
    """None when every base is local, else one line saying what is not (nothing is pulled)."""
    if len(dockerfile.encode("utf-8")) > MAX_DOCKERFILE_BYTES:
        return f"the Dockerfile is larger than {MAX_DOCKERFILE_BYTES} bytes"
    images, problems = bases_of(dockerfile)
    if problems:
        return problems[0]
    for image in images:
        if image_problem(client, image) is not None:
            return (
                f"FROM {image}: no such image on this Docker daemon; a build may only start "
                "from a local image (nothing is pulled from a registry)"
            )
    return None


def bounded_log(text: str) -> tuple[str, bool]:
    """The head and tail of a build log, with the error-looking lines between; masked."""
    text = mask_text(text)
    if len(text) <= LOG_HEAD_CHARS + LOG_TAIL_CHARS:
        return text, False
    head, middle, tail = (
        text[:LOG_HEAD_CHARS],
        text[LOG_HEAD_CHARS:-LOG_TAIL_CHARS],
        text[-LOG_TAIL_CHARS:],
    )
    errors = [line for line in middle.splitlines() if _ERRORISH.search(line)][:MAX_ERROR_LINES]
    cut = f"\n[… {len(middle)} characters left out; lines that look like errors:]\n"
    return head + cut + "\n".join(errors) + "\n[…]\n" + tail, True


def build_image(dockerfile: str, *, run_id: str, tag: str) -> Built:
    """Build `dockerfile` (checked with `base_problem` first) with no network and no pull."""
    import docker

    client = connect(BUILD_TIMEOUT_S)
    chunks: list[str] = []
    image_id = ""
    failed = False
    try:
        images, _ = bases_of(dockerfile)
        with tempfile.TemporaryDirectory(prefix="fixloop-build-") as context:
            (Path(context) / "Dockerfile").write_text(dockerfile, encoding="utf-8")
            stream = client.api.build(
                path=context,
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                network_mode="none",
                decode=True,
                labels={LABEL_SANDBOX: "docker", LABEL_RUN_ID: run_id},
            )
            for chunk in stream:
                if "stream" in chunk:
                    chunks.append(str(chunk["stream"]))
                if "error" in chunk:
                    failed = True
                    chunks.append(f"\n{chunk['error']}\n")
                aux = chunk.get("aux")
                if isinstance(aux, dict) and aux.get("ID"):
                    image_id = str(aux["ID"])
    except (docker.errors.DockerException, OSError) as exc:
        failed = True
        chunks.append(f"\nthe Docker daemon failed: {one_line(exc)}\n")
    finally:
        client.close()
    log, truncated = bounded_log("".join(chunks))
    if failed or not image_id:
        return Built(1, "", log, truncated, tuple(images))
    return Built(0, image_id, log, truncated, tuple(images))


def remove_image(image: str) -> None:
    """Remove an image a run built (an image still used by a container stays; no error)."""
    import docker

    client = connect()
    try:
        client.images.remove(image, force=False, noprune=False)
    except docker.errors.DockerException:
        pass  # in use, or gone already: nothing to do
    finally:
        client.close()


__all__ = ["Built", "base_problem", "bases_of", "bounded_log", "build_image", "remove_image"]
