"""`fixloop check` through the real entry point, as CI runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml
from tests.checker.conftest import FIXTURES, copy_pack
from tests.checker.test_report import SARIF_SUBSET
from tests.conftest import REPO_ROOT
from tests.helpers import cli


def fixloop(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return cli.fixloop("check", *args, cwd=cwd, timeout=120)


def test_the_bundled_pack_is_clean_and_sarif_is_valid() -> None:
    plain = fixloop()
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "contracts: ok" in plain.stderr
    sarif = fixloop("--format", "sarif")
    assert sarif.returncode == 0
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, SARIF_SUBSET)
    rules = {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {"sentinel-written-after-worktree-add", "commit-before-completed"} <= rules


def test_violations_exit_1_with_one_located_line_each(tmp_path: Path) -> None:
    result = fixloop(str(FIXTURES / "defects"), cwd=FIXTURES)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("defects/workflows/report-paths.md:22:55: unexported-env: ")
    assert all(line.count(":") >= 4 for line in lines)
    data = json.loads(fixloop(str(FIXTURES / "defects"), "--format", "json").stdout)
    assert data["ok"] is False and len(data["items"]) == len(lines)
    first = data["items"][0]
    assert first["id"] == f"{first['path']}:{first['line']}:{first['col']}"
    assert data["exit_code"] == 1 and data["counts"]["error"] >= 1


def test_removing_ff_only_exits_1(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    protocol = pack / "workflows" / "git-protocol.md"
    text = protocol.read_text(encoding="utf-8")
    protocol.write_text(text.replace("merge --ff-only --quiet", "merge --quiet"), encoding="utf-8")
    result = fixloop(str(pack), cwd=pack)
    assert result.returncode == 1
    assert "workflows/git-protocol.md:" in result.stdout
    assert ": exactly-one-ff-only-merge: " in result.stdout


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    missing = fixloop(str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "nowhere:1:1: usage: no such file or directory"
    bad = fixloop("--format", "xml")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_events_show_what_the_checker_sees() -> None:
    result = fixloop(str(FIXTURES / "foreign" / "agents" / "code-fixer.md"), "--events")
    events = json.loads(result.stdout)
    merge = next(e for e in events if e["argv"][:4] == ["git", "-C", '"$main_repo"', "merge"])
    assert merge["step"] == "finish" and merge["context"] == ["finally", "if-condition"]


def _command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_with_no_path_the_pack_of_the_current_directory_is_checked(tmp_path: Path) -> None:
    team = tmp_path / "team"
    (team / ".claude-plugin").mkdir(parents=True)
    (team / ".claude-plugin" / "plugin.json").write_text('{"name": "team"}\n')
    (team / "agents").mkdir()
    (team / "agents" / "fixer.md").write_text(
        "---\nname: fixer\ndescription: Fixes.\n---\n\n```bash\nif true; then\n```\n"
    )
    (team / "agents" / "broken.md").write_text("---\nname: x\ndescription: d\n  - y: [\n---\n")
    for command in ("check", "validate"):
        inside = _command(command, cwd=team / "agents")
        assert inside.returncode == 1, (command, inside.stdout, inside.stderr)
    checked = _command("check", cwd=team)
    assert "agents/fixer.md:7:14: bash-syntax: bash cannot parse this block" in checked.stdout
    assert "agents/broken.md:4:6: frontmatter: invalid YAML" in checked.stdout
    bundled = _command("check", "--bundled", cwd=tmp_path)
    assert bundled.returncode == 0, bundled.stdout + bundled.stderr
    nowhere = _command("check", cwd=tmp_path)
    assert nowhere.returncode == 2
    assert "no pack here or above" in nowhere.stderr and "Traceback" not in nowhere.stderr


def test_a_renamed_sidecar_is_an_error_naming_it(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    sidecar = pack / "workflows" / "fix-findings.contracts.yaml"
    sidecar.rename(sidecar.with_name("fix-finding.contracts.yaml"))
    for command in ("check", "validate"):
        result = _command(command, cwd=pack)
        assert result.returncode == 1
        output = result.stdout + result.stderr
        assert "workflows/fix-finding.contracts.yaml:1:1: orphan-sidecar:" in output
        assert "fix-finding.md, which is not next to it" in output


def test_one_format_flag_and_its_json_alias(tmp_path: Path) -> None:
    for command in ("check", "validate"):
        spelled = json.loads(_command(command, "--format", "json", cwd=REPO_ROOT).stdout)
        alias = json.loads(_command(command, "--json", cwd=REPO_ROOT).stdout)
        assert spelled == alias and spelled["ok"] is True
        sarif = json.loads(_command(command, "--format", "sarif", cwd=REPO_ROOT).stdout)
        jsonschema.validate(sarif, SARIF_SUBSET)


def test_the_verdict_does_not_depend_on_how_the_path_is_spelt(tmp_path: Path) -> None:
    pack = tmp_path / "team"  # no manifest: the pack is named after its folder
    (pack / "agents").mkdir(parents=True)
    (pack / "agents" / "a.md").write_text(
        '---\nname: a\ndescription: d\n---\n\nUse grep "[[:space:]]" here.\n', encoding="utf-8"
    )
    for command in ("check", "validate"):
        spellings = {
            spelt: _command(command, spelt, cwd=cwd)
            for spelt, cwd in ((".", pack), (str(pack), pack), ("..", pack / "agents"))
        }
        for spelt, done in spellings.items():
            assert done.returncode == 0, (command, spelt, done.stdout + done.stderr)
            assert "unknown-reference" not in done.stdout + done.stderr


def test_an_empty_folder_is_an_error_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for command in ("check", "validate"):
        done = _command(command, "empty", cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout + done.stderr)
        assert "empty:1:1: usage:" in done.stderr and "not a pack" in done.stderr


def test_a_pack_check_reads_the_reference_documents_of_its_skills(tmp_path: Path) -> None:
    skill = tmp_path / "pack" / "skills" / "tidy"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: d\n---\nx\n", encoding="utf-8")
    reference = "# How\n\n```bash\nif true; then\n```\n"
    (skill / "references" / "how.md").write_text(reference, encoding="utf-8")
    done = fixloop("pack", cwd=tmp_path)
    assert done.returncode == 1
    assert "pack/skills/tidy/references/how.md:4:14: bash-syntax:" in done.stdout


def test_the_pre_commit_hook_checks_the_pack_of_a_changed_brief(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    fixer = pack / "agents" / "fixer.md"
    fixer.write_text(fixer.read_text() + "\n```bash\ngit stash\n```\n", encoding="utf-8")
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "fixloop-check")
    assert re.search(hook["files"], "agents/fixer.md")
    command, *options = hook["entry"].split()
    assert command == "fixloop" and hook.get("pass_filenames", True)
    # What pre-commit runs: the entry, then the changed files.
    done = _command(*options, "agents/fixer.md", cwd=pack)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "agents/fixer.md:" in done.stdout and "fix-briefs-forbid-tree-wide-git" in done.stdout
    alone = _command("check", "agents/fixer.md", cwd=pack)
    assert "fix-briefs-forbid-tree-wide-git" not in alone.stdout  # why the hook needs the pack


def test_select_ignore_exit_zero_and_rule_explanations(tmp_path: Path) -> None:
    defects = ("check", "defects", "--select", "unexported-env,bash-syntax", "--ignore")
    done = _command(*defects, "bash-syntax", cwd=FIXTURES)
    assert done.returncode == 1
    assert [line.split(": ")[1] for line in done.stdout.splitlines()] == ["unexported-env"]
    zero = _command("check", "defects", "--exit-zero", cwd=FIXTURES)
    assert zero.returncode == 0 and "error(s)" in zero.stderr
    misspelt = _command("check", "defects", "--ignore", "undefined-variabl", cwd=FIXTURES)
    assert "(did you mean 'undefined-variable'?)" in misspelt.stdout
    assert misspelt.returncode == 1  # the defects are still errors; the misspelt ignore warns
    # A check narrowed to a misspelt id would report nothing and pass: that is an error.
    narrowed = _command("check", "defects", "--select", "bash-syntx", cwd=FIXTURES)
    assert narrowed.returncode == 1, narrowed.stdout + narrowed.stderr
    assert narrowed.stdout.splitlines() == [
        "command line:1:1: config: 'bash-syntx' is neither a rule fixloop reports nor a contract"
        " id it checked (did you mean 'bash-syntax'?)"
    ]
    explained = _command("rule", "unexported-env", cwd=tmp_path)
    assert explained.returncode == 0 and "environment variable" in explained.stdout
    unknown = _command("rule", "unexported-envv", cwd=tmp_path)
    assert unknown.returncode == 2 and "did you mean 'unexported-env'?" in unknown.stderr


def test_the_action_uploads_sarif_and_splices_no_value_into_its_shell(tmp_path: Path) -> None:
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = action["runs"]["steps"]
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "fixloop.sarif" and upload["if"] == "always()"
    scripts = [s["run"] for s in steps if "run" in s]
    for script in scripts:
        assert "${{" not in script  # inputs reach the shell as environment variables only
        assert subprocess.run(["bash", "-n"], input=script, text=True, check=False).returncode == 0
    check = next(s for s in steps if s.get("id") == "check")
    (tmp_path / "out").touch()
    environment = {"PACK_PATH": str(FIXTURES / "defects"), "GITHUB_OUTPUT": str(tmp_path / "out")}
    bin_dir = Path(sys.executable).parent
    run = subprocess.run(
        ["bash", "-e", "-c", check["run"]],
        cwd=tmp_path,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **environment},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out").read_text() == "status=1\n"
    sarif = json.loads((tmp_path / "fixloop.sarif").read_text())
    assert sarif["runs"][0]["results"][0]["partialFingerprints"]
