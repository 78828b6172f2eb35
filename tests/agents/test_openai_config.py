"""Where `--backend openai` gets its server, model and key: flags, environment, project settings.

The promises: presets answer for DeepSeek, OpenAI, Gemini, Qwen; OPENAI_API_KEY and
OPENAI_BASE_URL work as the SDK's users expect; a preset's key goes only to its own server unless
the user names another; the project's settings cannot say where the key goes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import REVIEW_REL, finding, review_text, write_review

from fixloop.agents.openai_config import PRESETS, OpenAIFlags, resolve_target
from fixloop.agents.registry import load_backend
from fixloop.diagnostics import FixloopError
from fixloop.documents.config import OpenAISettings, find_config
from fixloop.documents.plain_models import built

KEY = "sk-test-0123456789abcdefghijkl"


def test_each_preset_names_its_server_model_and_key() -> None:
    for name, variable, url in (
        ("openai", "OPENAI_API_KEY", "https://api.openai.com/v1"),
        ("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com/v1"),
        ("gemini", "GEMINI_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai"),
        ("qwen", "DASHSCOPE_API_KEY", "https://dashscope.aliyuncs.com/compatible-mode/v1"),
    ):
        target = resolve_target(OpenAIFlags(provider=name), {variable: KEY}, None)
        assert (target.base_url, target.key_variable) == (url, variable)
        assert target.model == PRESETS[name].model and target.api_key({variable: KEY}) == KEY


def test_the_sdk_variables_work_as_users_expect() -> None:
    environ = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/",
        "OPENAI_MODEL": "qwen2.5-coder",
    }
    target = resolve_target(OpenAIFlags(), environ, None)
    assert (target.provider, target.base_url, target.model) == (
        "openai",
        "http://127.0.0.1:8000/v1",
        "qwen2.5-coder",
    )
    flags = OpenAIFlags(model="m", base_url="http://localhost:11434/v1")
    assert resolve_target(flags, environ, None).base_url == "http://localhost:11434/v1"


def test_a_preset_s_key_goes_to_its_server_only() -> None:
    # DeepSeek's preset never reads OPENAI_*: an OpenAI key must not be sent to DeepSeek.
    environ = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "https://example.test/v1"}
    with pytest.raises(FixloopError, match="no API key: set DEEPSEEK_API_KEY") as caught:
        resolve_target(OpenAIFlags(provider="deepseek"), environ, None)
    assert caught.value.exit_code == 2
    both = {**environ, "DEEPSEEK_API_KEY": KEY}
    target = resolve_target(OpenAIFlags(provider="deepseek"), both, None)
    assert target.base_url == "https://api.deepseek.com/v1"


def test_a_local_server_needs_no_key_but_a_public_one_does() -> None:
    local = OpenAIFlags(provider="custom", base_url="http://gpu-box:8000/v1", model="llama")
    target = resolve_target(local, {}, None)
    assert target.key_variable is None and target.api_key({}) == "no-key"
    with pytest.raises(FixloopError, match="no API key: set OPENAI_API_KEY"):
        resolve_target(OpenAIFlags(), {}, None)


@pytest.mark.parametrize(
    ("flags", "environ", "says"),
    [
        (OpenAIFlags(provider="mistral"), {}, "unknown provider 'mistral'"),
        (OpenAIFlags(provider="custom", model="m"), {}, "custom provider needs a base URL"),
        (
            OpenAIFlags(provider="custom", base_url="http://127.0.0.1:1/v1"),
            {},
            "custom provider needs a model",
        ),
        (OpenAIFlags(base_url="ftp://host/v1"), {"OPENAI_API_KEY": KEY}, "expected http(s)"),
        (
            OpenAIFlags(base_url="http://api.example.com/v1"),
            {"OPENAI_API_KEY": KEY},
            "plain http sends the key in the clear",
        ),
        (OpenAIFlags(api_key_env="MY_LLM"), {"MY_LLM": KEY}, "looks like a key's"),
        (OpenAIFlags(api_key_env="MY_LLM_KEY"), {}, "MY_LLM_KEY: the variable is not set"),
    ],
)
def test_a_wrong_choice_is_one_line(flags: OpenAIFlags, environ: dict[str, str], says: str) -> None:
    with pytest.raises(FixloopError) as caught:
        resolve_target(flags, environ, None)
    problem = str(caught.value)
    assert says in problem and "\n" not in problem and KEY not in problem
    assert caught.value.exit_code == 2


def test_the_project_chooses_provider_model_and_prices_but_flags_win() -> None:
    project = built(
        OpenAISettings,
        {"provider": "qwen", "model": "qwen-max", "price-input": 0.4, "price-output": 1.2},
    )
    environ = {"DASHSCOPE_API_KEY": KEY}
    target = resolve_target(OpenAIFlags(), environ, project)
    assert (target.provider, target.model, target.priced) == ("qwen", "qwen-max", True)
    assert target.cost(1_000_000, 1_000_000) == pytest.approx(1.6)
    assert resolve_target(OpenAIFlags(model="qwen-plus"), environ, project).model == "qwen-plus"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('base-url = "https://collector.example/v1"', "openai.base-url: where your key goes"),
        ('api-key-env = "AWS_SECRET_ACCESS_KEY"', "openai.api-key-env: where your key goes"),
        (f'api-key = "{KEY}"', "openai.api-key: a key in a settings file is committed"),
    ],
)
def test_a_project_cannot_say_where_the_key_goes(tmp_path: Path, line: str, says: str) -> None:
    (tmp_path / "fixloop.toml").write_text(f'[openai]\nprovider = "openai"\n{line}\n')
    with pytest.raises(FixloopError) as caught:
        find_config(tmp_path)
    problem = str(caught.value)
    assert problem.startswith(f"{tmp_path / 'fixloop.toml'}:3:1: config: ") or ":3:1:" in problem
    assert says in problem and KEY not in problem


def test_openai_flags_are_for_the_openai_backend_only() -> None:
    with pytest.raises(FixloopError, match="--model, --base-url: for --backend openai"):
        load_backend("claude", openai=OpenAIFlags(model="m", base_url="http://127.0.0.1/v1"))


def test_without_a_key_the_command_is_one_line_and_nothing_changes(user_repo: UserRepo) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    before, tip = user_repo.user_work(), user_repo.head()
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(user_repo.path.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "review-fix", REVIEW_REL, "--backend", "openai"],
        cwd=user_repo.path,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "backend:1:1: backend: openai: no API key: set OPENAI_API_KEY (or name the variable "
        "with --api-key-env); --backend scripted --script FILE runs offline"
    )
    assert user_repo.user_work() == before and user_repo.head() == tip
    assert user_repo.branches() == ["main"] and user_repo.worktrees() == [str(user_repo.path)]


def test_a_role_s_model_alias_may_name_its_own_model() -> None:
    project = built(
        OpenAISettings,
        {
            "provider": "deepseek",
            "models": {"sonnet": "deepseek-chat", "opus": "deepseek-reasoner"},
        },
    )
    environ = {"DEEPSEEK_API_KEY": KEY}
    target = resolve_target(OpenAIFlags(), environ, project)
    assert (target.model_for("sonnet"), target.model_for("opus")) == (
        "deepseek-chat",
        "deepseek-reasoner",
    )
    assert target.model_for("inherit") == "deepseek-chat"  # the preset's, for any other
    named = resolve_target(OpenAIFlags(model="deepseek-chat"), environ, project)
    assert named.model_for("opus") == "deepseek-chat", "--model names every role's model"
