"""`build_environment`, under `--sandbox docker` only: the fixer's own Dockerfile becomes the image
its tests run in.

The model writes a Dockerfile starting `FROM` an image the daemon already has (the run's
`--image`, typically); fixloop checks every base is local and builds it with no network, no
pull and an empty context (`sandboxes.build`). The answer holds the build log (bounded,
masked), the exit code and the image id; after a build that succeeded, every `run_tests` of the
run (and the check of each attempt) runs in containers of that image, with the same limits as
before. A base that is not local is refused in one line, and nothing is built.

Acceptance does not use it: the patch is judged on a clean checkout in the user's `--image`,
since a Dockerfile the model wrote could change what the tests mean (a patched test runner in
the image, say). Each Dockerfile and its log are kept in the run folder (`environment/`); the
images are removed when the run's sandbox closes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from fixloop.agents.toolbox import ToolReply, ToolSpec
from fixloop.masking import mask_text
from fixloop.sandboxes.build import base_problem, build_image, remove_image
from fixloop.sandboxes.daemon import connect
from fixloop.workflows.fix_issue.plan import SandboxOpener
from fixloop.workflows.fix_issue.suite import Suite
from fixloop.workflows.fix_issue.tools import Handler, refused, reply

FOLDER = "environment"
IMAGE_REPOSITORY = "fixloop-env"


class BuildArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dockerfile: Annotated[
        str,
        Field(min_length=1, description="The Dockerfile; FROM a local image (see the task)."),
    ]


SPEC = ToolSpec(
    "build_environment",
    "Build a Dockerfile (FROM a local image; no network, nothing pulled, an empty context) and "
    "run the tests in that image from now on. Returns the build log, exit code and image id.",
    BuildArgs.model_json_schema(),
)


@dataclass
class EnvironmentTool:
    """`build_environment` for one run: builds, switches the suite's sandbox, cleans up."""

    suite: Suite
    opener: SandboxOpener
    run_id: str
    run_dir: Path
    reports: Path
    image: str  # what the tests run in now: the user's --image, then the last image built
    built: list[str] = field(default_factory=list)  # the images that were built
    builds: int = 0  # builds tried (a failed one too: its Dockerfile and log are kept)
    _stack: ExitStack = field(default_factory=ExitStack)

    def specs(self) -> Sequence[ToolSpec]:
        return [SPEC]

    def handlers(self) -> Mapping[str, Handler]:
        return {"build_environment": (BuildArgs, self.build_environment)}

    def build_environment(self, args: BuildArgs) -> ToolReply:
        client = connect()
        try:
            problem = base_problem(client, args.dockerfile)
        finally:
            client.close()
        if problem is not None:
            return refused("not_local", problem, image=self.image)
        self.builds += 1
        number = self.builds
        tag = f"{IMAGE_REPOSITORY}:{self.run_id.lower()}-{number}"
        built = build_image(args.dockerfile, run_id=self.run_id, tag=tag)
        self._keep(number, args.dockerfile, built.log)
        if built.exit_code != 0:
            return refused(
                "build_failed",
                f"the build failed; run_tests still runs in {self.image}",
                exit_code=built.exit_code,
                log=built.log,
                truncated=built.truncated,
                image=self.image,
            )
        self.built.append(tag)
        sandbox = self._stack.enter_context(
            self.opener(
                "docker",
                worktree=self.suite.worktree,
                image=tag,
                run_id=self.run_id,
                writable=(self.reports,),
            )
        )
        self.suite.use(sandbox)
        self.image = tag
        return reply(
            True,
            exit_code=0,
            image_id=built.image_id,
            image=tag,
            bases=list(built.bases),
            log=built.log,
            truncated=built.truncated,
            message=f"run_tests now runs in {tag}",
        )

    def _keep(self, number: int, dockerfile: str, log: str) -> None:
        folder = self.run_dir / FOLDER
        folder.mkdir(exist_ok=True)
        (folder / f"Dockerfile-{number}").write_text(mask_text(dockerfile), encoding="utf-8")
        (folder / f"build-{number}.log").write_text(log, encoding="utf-8")

    def close(self) -> None:
        """Close the sandboxes of built images, then remove the images."""
        self._stack.close()
        for tag in self.built:
            remove_image(tag)


__all__ = ["SPEC", "EnvironmentTool"]
