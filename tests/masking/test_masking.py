"""`fixloop.masking`: which names and shapes count as secrets, placeholders, JSON, the snapshot."""

from __future__ import annotations

import io
import json
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.masking import (
    Masker,
    MaskingStream,
    current_masker,
    dumps_masked,
    is_secret_name,
    is_secret_value,
    mask_json,
    mask_text,
)

_ALNUM = string.ascii_letters + string.digits


def _random(length: int, alphabet: str = _ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "CLIENT_SECRET",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD_PASS",
        "AUTH",
        "NPM_AUTH",
        "GOOGLE_CREDENTIALS",
        "APIKEY",
        "slack_bot_token",
        "SSH_PASSPHRASE",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "SESSION_COOKIE",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",
        "OLDPWD",
        "GIT_AUTHOR_NAME",
        "XAUTHORITY",
        "KEYBOARD_LAYOUT",
        "SSH_AUTH_SOCK",
        "GOOGLE_CREDENTIALS_FILE",
        "AUTH_DIR",
        "LANG",
        "TERM",
        "FIXLOOP_RUN_ID",
    ],
)
def test_names_that_hold_no_secret(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "value", ["", "short", "true", "FALSE", "disabled", "********", "aaaaaaaa"]
)
def test_values_too_short_or_common_to_be_secrets(value: str) -> None:
    assert not is_secret_value(value)


def test_environment_values_become_their_variable_name() -> None:
    token, password = _random(40), "correct horse battery"
    masker = Masker(
        {
            "DEPLOY_TOKEN": token,
            "DB_PASSWORD": password,
            "USER": "somebody-long",
            "FEATURE_TOKEN": "true",
            "PATH": "/usr/bin:/bin",
        }
    )
    assert masker.variable_names == ["DB_PASSWORD", "DEPLOY_TOKEN"]
    text = f"token={token}; pw '{password}' by somebody-long; flag true in /usr/bin"
    assert masker.mask_text(text) == (
        "token=«masked:DEPLOY_TOKEN»; pw '«masked:DB_PASSWORD»' by somebody-long; "
        "flag true in /usr/bin"
    )


def test_a_secret_containing_another_is_masked_whole() -> None:
    inner = _random(12)
    outer = inner + _random(12)
    masker = Masker({"INNER_TOKEN": inner, "OUTER_TOKEN": outer})
    assert masker.mask_text(f"{outer} {inner}") == "«masked:OUTER_TOKEN» «masked:INNER_TOKEN»"


SHAPES = [
    ("anthropic-key", "sk-ant-api03-" + _random(80)),
    ("openai-key", "sk-proj-" + _random(60)),
    ("openai-key", "sk-" + _random(48)),
    ("github-token", "ghp_" + _random(36)),
    ("github-token", "gho_" + _random(36)),
    ("github-token", "ghs_" + _random(36)),
    ("github-token", "github_pat_11" + _random(20) + "_" + _random(59)),
    ("aws-access-key-id", "AKIA" + _random(16, string.ascii_uppercase + string.digits)),
    ("aws-access-key-id", "ASIA" + _random(16, string.ascii_uppercase + string.digits)),
    ("slack-token", "xoxb-123456789012-" + _random(24)),
    ("slack-token", "xapp-1-" + _random(24)),
    ("google-api-key", "AIza" + _random(35)),
    ("stripe-key", "sk_live_" + _random(24)),
    ("stripe-key", "rk_test_" + _random(24)),
    ("npm-token", "npm_" + _random(36)),
    ("huggingface-token", "hf_" + _random(34)),
]


@pytest.mark.parametrize(("kind", "secret"), SHAPES, ids=[kind for kind, _ in SHAPES])
def test_well_known_key_shapes(kind: str, secret: str) -> None:
    masker = Masker({})
    assert masker.mask_text(f"key: {secret}\n") == f"key: «masked:{kind}»\n"
    assert masker.mask_text(f'"{secret}"') == f'"«masked:{kind}»"'


def test_private_key_blocks_whole_or_cut_short() -> None:
    body = "\n".join(_random(64) for _ in range(3))
    block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    masker = Masker({})
    assert masker.mask_text(f"before\n{block}\nafter") == "before\n«masked:private-key»\nafter"
    # A stderr tail cut in the middle of a block: everything from BEGIN on goes.
    cut = block[: len(block) // 2]
    assert masker.mask_text(f"before {cut}") == "before «masked:private-key»"
    public = "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"
    assert masker.mask_text(public) == public


def test_aws_secret_keys_next_to_their_id_or_name_but_not_git_ids() -> None:
    key_id = "AKIA" + _random(16, string.ascii_uppercase + string.digits)
    secret = _random(30) + "/+" + _random(8)
    commit = secrets.token_hex(20)
    masker = Masker({})
    assert masker.mask_text(f"{key_id} {secret}") == (
        "«masked:aws-access-key-id» «masked:aws-secret-access-key»"
    )
    assert masker.mask_text(f"aws_secret_access_key = {secret}") == (
        "aws_secret_access_key = «masked:aws-secret-access-key»"
    )
    assert masker.mask_text(f"{key_id} at {commit}") == f"«masked:aws-access-key-id» at {commit}"
    alone = f"checksum {_random(40)}"  # 40 characters with no AWS context: no reason to mask
    assert masker.mask_text(alone) == alone


def test_credentials_known_by_where_they_stand() -> None:
    token = _random(24)
    masker = Masker({})
    assert masker.mask_text(f"Authorization: Bearer {token}") == (
        "Authorization: Bearer «masked:bearer-token»"
    )
    assert masker.mask_text(f'{{"authorization": "token {token}"}}') == (
        '{"authorization": "token «masked:bearer-token»"}'
    )
    assert masker.mask_text(f"curl -H 'x-api-key: {token}'") == (
        "curl -H 'x-api-key: «masked:bearer-token»'"
    )
    assert masker.mask_text(f"bearer {token}") == "bearer «masked:bearer-token»"
    assert masker.mask_text(f"git clone https://me:{token}@example.com/r.git") == (
        "git clone https://me:«masked:url-password»@example.com/r.git"
    )


@pytest.mark.parametrize(
    "text",
    [
        "the bearer of basic token expiration news",
        f"commit {'0123456789abcdef' * 2}01234567",
        "branch fixloop/task-implement-the-login-form-page",
        "20260101T000000Z-1234-abcdef",
        "run ./tools/run.sh with GIT_AUTHOR_NAME",
        "https://example.com/a:b/path",
        "through the night, high and right",
        "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Masker({}).mask_text(text) == text


def test_masking_twice_changes_nothing_more() -> None:
    token = _random(24)
    masker = Masker({"DEPLOY_TOKEN": token})
    once = masker.mask_text(f"{token} {SHAPES[0][1]} Authorization: Bearer {_random(20)}")
    assert masker.mask_text(once) == once


def test_mask_json_keeps_keys_and_other_values() -> None:
    token = _random(24)
    masker = Masker({"DEPLOY_TOKEN": token})
    data = {"a": [token, 1, None, True, {"b": f"x {token}"}], token: 2.5, "t": (token,)}
    assert masker.mask_json(data) == {
        "a": ["«masked:DEPLOY_TOKEN»", 1, None, True, {"b": "x «masked:DEPLOY_TOKEN»"}],
        token: 2.5,
        "t": ["«masked:DEPLOY_TOKEN»"],
    }
    clean = {"a": ["nothing", "to", "hide"], "n": 1}
    assert masker.mask_json(clean) is clean  # no copy when there is nothing to mask


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_dumps_masks_values_json_would_escape(ensure_ascii: bool) -> None:
    secret = 'p"ss\\wörd\n' + _random(8)
    masker = Masker({"DB_PASSWORD": secret})
    text = masker.dumps({"stderr": f"login with {secret} failed"}, ensure_ascii=ensure_ascii)
    assert json.loads(text) == {"stderr": "login with «masked:DB_PASSWORD» failed"}
    plain = {"stderr": "nothing secret", "code": 1}
    assert masker.dumps(plain, sort_keys=True) == json.dumps(plain, sort_keys=True)


def test_dumps_masks_what_its_default_turns_into_text() -> None:
    token = _random(24)
    masker = Masker({"DEPLOY_TOKEN": token})
    text = masker.dumps({"where": Path(f"/tmp/{token}/x")}, default=str)
    assert json.loads(text) == {"where": "/tmp/«masked:DEPLOY_TOKEN»/x"}


def test_the_process_masker_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    token = _random(24)
    monkeypatch.delenv("MASKING_TEST_TOKEN", raising=False)
    assert mask_text(f"t {token}") == f"t {token}"
    first = current_masker()
    assert current_masker() is first  # one snapshot while nothing changes
    monkeypatch.setenv("MASKING_TEST_TOKEN", token)
    assert mask_text(f"t {token}") == "t «masked:MASKING_TEST_TOKEN»"
    assert mask_json({"k": [token]}) == {"k": ["«masked:MASKING_TEST_TOKEN»"]}
    assert json.loads(dumps_masked({"k": token})) == {"k": "«masked:MASKING_TEST_TOKEN»"}
    replaced = _random(24)
    monkeypatch.setenv("MASKING_TEST_TOKEN", replaced)
    assert mask_text(f"{token} {replaced}") == f"{token} «masked:MASKING_TEST_TOKEN»"


_VALUE = "7f3aK9sLq2ZxW8vB4nM1cT6y"  # fixed (it names test ids); a value may start with digits


@pytest.mark.parametrize(
    ("written", "name"),
    [
        (f"AWS_SECRET_ACCESS_KEY={_VALUE}", "AWS_SECRET_ACCESS_KEY"),
        (f"export GH_TOKEN={_VALUE}", "GH_TOKEN"),
        (f"export API_TOKEN='{_VALUE}'", "API_TOKEN"),
        (f'OPENAI_API_KEY="{_VALUE}"', "OPENAI_API_KEY"),
        (f"DB_PASSWORD: {_VALUE}", "DB_PASSWORD"),
        (f"NPM_AUTH={_VALUE}", "NPM_AUTH"),
        (f"  password: {_VALUE}", "password"),
        (f'{{"client_secret": "{_VALUE}"}}', "client_secret"),
    ],
    ids=lambda value: "written" if _VALUE in value else value,  # the value is random: no id
)
def test_a_value_assigned_to_a_secret_name_is_masked(written: str, name: str) -> None:
    masked = Masker({}).mask_text(written)
    assert _VALUE not in masked
    assert f"«masked:{name}»" in masked


@pytest.mark.parametrize(
    "written",
    [
        "key: fixer/CR-01/iteration-1",  # a lower-case name without a strong part
        '"input_tokens": 123456789',  # a number
        "DB_PASS=${DB_PASS}",  # a reference
        "file: '/etc/passwd': absolute paths are refused",  # a path, not a name
        "API_TOKEN=«masked:API_TOKEN»",  # masked already
        "SSH_AUTH_SOCK=/tmp/ssh-abc/agent.1",  # where a secret is, not one
        "GIT_AUTHOR_NAME=someone-long",
        "file: '/etc/passwd': absolute paths are refused",  # a path, not a name
    ],
)
def test_assignments_that_hold_no_secret_are_left_alone(written: str) -> None:
    assert Masker({}).mask_text(written) == written


def test_the_terminal_stream_masks_a_line_printed_in_pieces_and_what_is_flushed() -> None:
    written = io.StringIO()
    stream = MaskingStream(written)
    print("export GH_TOKEN=", end="", file=stream)
    print(_VALUE, "and more", file=stream)  # three writes, one line
    stream.write(f"progress: DB_PASSWORD={_VALUE}")  # no newline yet
    assert _VALUE not in written.getvalue()
    stream.flush()
    assert _VALUE not in written.getvalue()
    assert written.getvalue().count("«masked:") == 2


def test_the_rewriting_patterns_are_compiled_only_for_a_text_that_may_hold_a_secret() -> None:
    # In a fresh interpreter: this one compiled them long ago.
    probe = (
        "from fixloop import masking\n"
        "plain = masking.mask_text('checked 1 documents, 14 contracts: ok\\n')\n"
        "before = masking._rewriting.cache_info().currsize\n"
        "masked = masking.mask_text('GH_TOKEN=ghp_' + 'a' * 36)\n"
        "print(before, masking._rewriting.cache_info().currsize, plain == 'checked 1 documents, '\n"
        "      '14 contracts: ok\\n', masked)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "1", "True", "GH_TOKEN=«masked:github-token»"]
