"""A local Docker image for the docker sandbox's tests, built without any registry.

Nothing can be pulled here, so the image is imported (`docker import`, through the SDK) from a
root file system assembled from the host:
- a static busybox as `/bin/sh` and the usual tools, and the host's bash (commands a model or a
  workflow step runs are `bash -c …`);
- the host's python3 (the Debian one when present) with the shared libraries it and its
  extension modules load (found by `ldd`), and its standard library (tests and GUI kits left out);
- pytest and what it requires, copied from the running interpreter's installation into
  `/opt/fixloop-tests/site-packages` (on `PYTHONPATH`);
- `/etc/passwd` and `/etc/group` naming root and nobody, and an empty `/tmp`.

The image is tagged with a hash of everything it holds, so a daemon that already has it (a
second test session) does not import it again; a lock keeps two sessions from importing it at
once. Building takes a few seconds (about 60 MB).

`docker_client` and `docker_image` are fixtures for tests marked `@pytest.mark.needs("docker")`
(skipped without a daemon here, failed under `CI=true`; see `tests/helpers/tools.py`).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from packaging.requirements import Requirement

from fixloop.sandboxes.daemon import connect

REPOSITORY = "fixloop-test-python"
SITE_PACKAGES = PurePosixPath("/opt/fixloop-tests/site-packages")
TEST_TOOLS = ("pytest",)
_SKIPPED_STDLIB = frozenset(
    {
        "test",
        "tests",
        "idle_test",
        "idlelib",
        "tkinter",
        "turtledemo",
        "ensurepip",
        "site-packages",
        "dist-packages",
        "__phello__",
    }
)
_ETC = {
    "etc/passwd": "root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
}


@dataclass(frozen=True)
class Entry:
    """One member of the root file system: a host file copied, a symlink, or literal text."""

    name: str  # path inside the image, without the leading slash
    source: Path | None = None
    link: str | None = None
    text: str | None = None


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    client = connect()
    yield client
    client.close()


def container_exists(name: str) -> bool:
    """Whether the daemon still has a container of this name (a test's leftover check)."""
    import docker

    client = connect()
    try:
        client.containers.get(name)
    except docker.errors.NotFound:
        return False
    finally:
        client.close()
    return True


@pytest.fixture(scope="session")
def docker_image(docker_client: Any) -> str:
    return python_image(docker_client)


def python_image(client: Any) -> str:
    """The tag of an image that runs `python3 -m pytest` (built and imported when missing)."""
    entries = sorted(_root_file_system(), key=lambda entry: entry.name)
    tag = f"{REPOSITORY}:{_content_hash(entries)[:16]}"
    lock = Path(tempfile.gettempdir()) / f"{tag.replace(':', '-')}.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # one import per tag, also across pytest-xdist workers
        if not client.images.list(name=tag):
            with tempfile.TemporaryDirectory(prefix="fixloop-image-") as scratch:
                archive = Path(scratch) / "rootfs.tar"
                _write_archive(archive, entries)
                repository, version = tag.split(":")
                client.api.import_image_from_file(
                    str(archive),
                    repository=repository,
                    tag=version,
                    changes=[f"ENV PYTHONPATH={SITE_PACKAGES}", "ENV PYTHONDONTWRITEBYTECODE=1"],
                )
    return tag


def _root_file_system() -> Iterator[Entry]:
    yield from _busybox()
    yield from _python_and_bash()
    for name in TEST_TOOLS:
        yield from _distribution_files(name)
    for name, text in _ETC.items():
        yield Entry(name, text=text)


def _busybox() -> Iterator[Entry]:
    busybox = shutil.which("busybox")
    if busybox is None:
        raise RuntimeError("busybox is not installed (apt-get install busybox-static)")
    yield Entry("bin/busybox", source=Path(busybox))
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True)
    for applet in applets.stdout.split():
        if applet not in ("busybox", "bash"):
            yield Entry(f"bin/{applet}", link="busybox")


def _python_and_bash() -> Iterator[Entry]:
    system = Path("/usr/bin/python3")
    binary = (system if system.exists() else Path(sys.base_prefix) / "bin/python3").resolve()
    prefix = binary.parent.parent
    stdlib = prefix / "lib" / binary.name  # e.g. /usr/lib/python3.11
    bash = Path(shutil.which("bash") or "/bin/bash").resolve()
    for program in (binary, bash):
        yield Entry(_inside(program), source=program)
    if _inside(binary) != "usr/bin/python3":
        yield Entry("usr/bin/python3", link=f"/{_inside(binary)}")
    if _inside(bash) != "bin/bash":
        yield Entry("bin/bash", link=f"/{_inside(bash)}")
    extensions = sorted((stdlib / "lib-dynload").glob("*.so"))
    for library in _shared_libraries([binary, bash, *extensions]):
        yield Entry(_inside(library), source=library.resolve())
    for path in _walk(stdlib):
        yield Entry(_inside(path), source=path)


def _shared_libraries(binaries: list[Path]) -> set[Path]:
    done = subprocess.run(["ldd", *map(str, binaries)], capture_output=True, text=True, check=False)
    found: set[Path] = set()
    for line in done.stdout.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1:
            target = words[words.index("=>") + 1]
            if target.startswith("/"):
                found.add(Path(target))
        elif words and words[0].startswith("/") and not words[0].endswith(":"):
            found.add(Path(words[0]))  # the dynamic loader
    return found


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in _SKIPPED_STDLIB and not d.startswith("config-")
        )
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_file():
                yield path


def _distribution_files(name: str, seen: set[str] | None = None) -> Iterator[Entry]:
    seen = set() if seen is None else seen
    key = name.lower().replace("_", "-")
    if key in seen:
        return
    seen.add(key)
    distribution = metadata.distribution(name)
    for file in distribution.files or ():
        source = Path(str(distribution.locate_file(file)))
        relative = PurePosixPath(str(file))
        if ".." in relative.parts or not source.is_file():
            continue  # scripts installed outside site-packages
        yield Entry(str(SITE_PACKAGES / relative).lstrip("/"), source=source)
    for text in distribution.requires or ():
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            yield from _distribution_files(requirement.name, seen)


def _inside(path: Path) -> str:
    return str(path).lstrip("/")


def _content_hash(entries: list[Entry]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(entry.name.encode() + b"\0")
        if entry.source is not None:
            digest.update(entry.source.read_bytes())
        else:
            digest.update((entry.link or entry.text or "").encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _write_archive(archive: Path, entries: list[Entry]) -> None:
    folders: set[str] = {"tmp"}
    for entry in entries:
        parent = PurePosixPath(entry.name).parent
        folders |= {str(p) for p in (parent, *parent.parents) if str(p) != "."}
    with tarfile.open(archive, "w", dereference=True) as tar:
        for folder in sorted(folders):
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if folder == "tmp" else 0o755
            tar.addfile(info)
        for entry in entries:
            if entry.source is not None:
                tar.add(str(entry.source), arcname=entry.name, recursive=False)
            elif entry.link is not None:
                info = tarfile.TarInfo(entry.name)
                info.type = tarfile.SYMTYPE
                info.linkname = entry.link
                tar.addfile(info)
            else:
                data = (entry.text or "").encode()
                info = tarfile.TarInfo(entry.name)
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
