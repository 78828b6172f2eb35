# fixloop's shared step library: the helpers every workflow step would otherwise paste.
#
# A step's bash block that needs it starts with exactly
#
#     . "$FIXLOOP_LIB/fixloop.sh"
#
# The runtime sets FIXLOOP_LIB (this folder) and FIXLOOP_PYTHON (its own interpreter) for every
# step. Following a workflow by hand inside Claude Code, set it first:
#
#     export FIXLOOP_LIB="${CLAUDE_PLUGIN_ROOT}/workflows/lib"
#
# Sourcing defines functions and nothing else. A function reports a problem on stderr, starting
# "fixloop: ", and returns non-zero; under the runner's `set -euo pipefail` the step then stops.
# None of them relies on `set -e` inside itself, so each also behaves inside `if` and `||`.
# Needs bash 4.3 or later (namerefs).
#
#   fixloop_refuse_unsafe_path PATH     refuse a path that could reach outside the repository
#   fixloop_read_paths NAME FILE        read a NUL-separated path list into the array NAME
#   fixloop_output NAME VALUE           hand a value back to the runtime ($FIXLOOP_OUTPUT)
#   fixloop_index_from_head INDEX [LIST]
#                                       a temporary index: HEAD plus exactly the listed paths
#   fixloop_sandboxed CMD ARG...        run a verification command in the run's sandbox
#   fixloop_worktrees_dir [--create] [COMMON_DIR]
#                                       the folder that holds the runs' worktrees
#   fixloop_worktree_listed PATH        whether git lists PATH as a worktree of the repository
#   fixloop_write_config FILE NAME VALUE...
#                                       write a `git config` format file in one go
#   fixloop_read_config NAME FILE [KEY]...
#                                       read such a file at once into an associative array

# fixloop_refuse_unsafe_path PATH
#
# Returns 0 when PATH may name a file of the repository: `$WORKTREE` when it is set, else the
# repository of the current directory. Refused, with the reason on stderr: an empty path; a NUL
# or newline; an absolute path; a `..` component; a `.git` component at any depth, in any letter
# case; a directory on the way that is a symbolic link; and a last component that is a symbolic
# link whose target, followed the same way (at most 40 links deep), is refused or leads outside
# the repository. A link whose target is a fine repository path is data: git stores the link,
# nothing follows it. A leading `-` is allowed (a user's `-notes.txt` is a file like any other):
# pass paths after `--`, as `./$path`, or through `--pathspec-from-file`.
#
# This is the rule `fixloop.steps.paths` applies in Python; tests/steps/safe_path_cases.yaml holds
# the cases both must decide alike.
fixloop_refuse_unsafe_path() {
  local raw=$1 root=${WORKTREE:-} path reason="" depth=0 link="" prefix="" target
  local part logical physical
  local -a parts stack
  if [ -z "$root" ]; then
    root=$(git rev-parse --show-toplevel) || return 1
  fi
  path=$raw
  while [ -z "$reason" ]; do
    case $path in
      "") reason="empty" ;;
      *$'\n'*) reason="holds a NUL or newline character" ;;
      /*) reason="absolute paths are refused; name files relative to the repository" ;;
    esac
    [ -z "$reason" ] || break
    stack=()
    IFS=/ read -r -a parts <<< "$path"
    for part in "${parts[@]}"; do
      case $part in
        "" | .) ;;
        ..) reason="'..' could leave the repository"; break ;;
        [.][Gg][Ii][Tt]) reason="paths inside .git are refused"; break ;;
        *) stack+=("$part") ;;
      esac
    done
    [ -z "$reason" ] || break
    if [ "${#stack[@]}" -eq 0 ]; then
      reason="names the repository itself, not a file"
      break
    fi
    prefix=""
    for part in "${stack[@]:0:${#stack[@]}-1}"; do
      prefix+="$part"
      if [ -L "$root/$prefix" ]; then
        reason="passes through the symbolic link $prefix"
        break
      fi
      prefix+=/
    done
    [ -z "$reason" ] || break
    printf -v path '%s/' "${stack[@]}"
    path=${path%/}
    [ -L "$root/$path" ] || break
    # The last component is a symbolic link: judge its target as a path of its own.
    link=yes
    if [ "$depth" -ge 40 ]; then
      reason="too many levels of symbolic links"
      break
    fi
    depth=$((depth + 1))
    # `x` keeps a target's own trailing newlines from the command substitution.
    target=$(readlink -- "$root/$path" && printf x) || return 1
    target=${target%$'\n'x}
    case $target in
      *$'\n'*) reason="holds a NUL or newline character"; break ;;
    esac
    case $target in
      /*)
        logical=$root
        case $logical in /*) ;; *) logical=$PWD/$logical ;; esac
        logical=${logical%/}
        physical=$(cd -P -- "$root" && pwd -P) || return 1
        if [ "$target" = "$logical" ] || [ "$target" = "$physical" ]; then
          reason="a symbolic link to the repository itself"
          break
        elif [ "${target#"$logical"/}" != "$target" ]; then
          target=${target#"$logical"/}
        elif [ "${target#"$physical"/}" != "$target" ]; then
          target=${target#"$physical"/}
        else
          reason="a symbolic link that leads outside the repository"
          break
        fi
        IFS=/ read -r -a parts <<< "$target"
        ;;
      *)
        IFS=/ read -r -a parts <<< "$target"
        parts=("${stack[@]:0:${#stack[@]}-1}" "${parts[@]}")
        ;;
    esac
    # Normalise `..` against the components before it; a component it steps back over must not
    # be a symbolic link (its `..` would be its target's parent, not this folder).
    stack=()
    for part in "${parts[@]}"; do
      case $part in
        "" | .) ;;
        ..)
          if [ "${#stack[@]}" -eq 0 ]; then
            reason="a symbolic link that leads outside the repository"
            break
          fi
          printf -v prefix '%s/' "${stack[@]}"
          if [ -L "$root/${prefix%/}" ]; then
            reason="passes through the symbolic link ${prefix%/}"
            break
          fi
          unset 'stack[${#stack[@]}-1]'
          ;;
        *) stack+=("$part") ;;
      esac
    done
    [ -z "$reason" ] || break
    if [ "${#stack[@]}" -eq 0 ]; then
      reason="a symbolic link to the repository itself"
      break
    fi
    printf -v path '%s/' "${stack[@]}"
    path=${path%/}
  done
  [ -n "$reason" ] || return 0
  case $reason in
    "a symbolic link"*) ;;
    *) if [ -n "$link" ]; then reason="a symbolic link to a refused path ($reason)"; fi ;;
  esac
  printf "fixloop: refusing a path: '%s': %s\n" "$raw" "$reason" >&2
  return 1
}

# fixloop_read_paths NAME FILE
#
# Reads FILE, paths each ended by a NUL byte (`printf '%s\0' …`, `git … -z`), into the array
# NAME, like `mapfile -d ''` (which bash before 4.4 lacks). A last path without its NUL is kept,
# not dropped. Nothing is checked here: pair it with fixloop_refuse_unsafe_path where the paths
# come from outside.
fixloop_read_paths() {
  if ! [[ ${1-} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [ "$#" -ne 2 ]; then
    echo "fixloop: usage: fixloop_read_paths NAME FILE" >&2
    return 2
  fi
  local -n __fixloop_paths=$1
  local __fixloop_path=""
  __fixloop_paths=()
  if [ ! -r "$2" ]; then
    echo "fixloop: cannot read the path list $2" >&2
    return 1
  fi
  while IFS= read -r -d '' __fixloop_path || [ -n "$__fixloop_path" ]; do
    __fixloop_paths+=("$__fixloop_path")
  done < "$2"
}

# fixloop_output NAME VALUE
#
# Appends NAME=VALUE to $FIXLOOP_OUTPUT, or, when VALUE holds a newline,
#     NAME<<FIXLOOP_EOF
#     VALUE
#     FIXLOOP_EOF
# so the runtime reads back exactly VALUE. A VALUE holding the line FIXLOOP_EOF is refused: it
# would end the value early and forge the lines after it.
fixloop_output() {
  if [ "$#" -ne 2 ] || ! [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
    echo "fixloop: usage: fixloop_output NAME VALUE (NAME a shell identifier)" >&2
    return 2
  fi
  if [ -z "${FIXLOOP_OUTPUT:-}" ]; then
    echo "fixloop: FIXLOOP_OUTPUT is not set (export FIXLOOP_OUTPUT=\"\$(mktemp)\" first)" >&2
    return 1
  fi
  case $2 in
    *$'\n'*)
      if [[ $'\n'$2$'\n' == *$'\n'FIXLOOP_EOF$'\n'* ]]; then
        echo "fixloop: output $1 holds the line FIXLOOP_EOF, which would end it early" >&2
        return 1
      fi
      printf '%s<<FIXLOOP_EOF\n%s\nFIXLOOP_EOF\n' "$1" "$2" >> "$FIXLOOP_OUTPUT"
      ;;
    *) printf '%s=%s\n' "$1" "$2" >> "$FIXLOOP_OUTPUT" ;;
  esac
}

# fixloop_index_from_head INDEX [LIST]
#
# (Re)builds the index file INDEX from HEAD's tree, then adds the current tree's state (new,
# changed, deleted, mode changes) of exactly the paths in LIST (NUL-separated, read literally:
# `*.py` is that file); without LIST, of every path. An empty LIST adds nothing. The tree's own
# index is never read or written. Run it in the work tree; remove INDEX when done.
fixloop_index_from_head() {
  # One test, not three: each command here is a kill point of the crash matrices.
  if [[ $# -lt 1 || $# -gt 2 || -z $1 ]]; then
    echo "fixloop: usage: fixloop_index_from_head INDEX [LIST]" >&2
    return 2
  fi
  rm -f -- "$1" || return 1
  GIT_INDEX_FILE="$1" git read-tree HEAD || return 1
  if [ "$#" -eq 1 ]; then
    GIT_INDEX_FILE="$1" git add --all || return 1
  elif [ -s "$2" ]; then
    GIT_INDEX_FILE="$1" git --literal-pathspecs add --all \
      --pathspec-from-file="$2" --pathspec-file-nul || return 1
  fi
}
# Traced: the runner's trace (and its crash switch, FIXLOOP_CRASH_AT) sees the git commands this
# helper runs one by one, as if they were written in the step.
declare -ft fixloop_index_from_head

# fixloop_sandboxed CMD ARG...
#
# Runs the argv CMD ARG... (words, never shell text) in the sandbox the run chose, confined to
# the git working tree holding the current directory, and returns its exit status (127: not
# found there; 137: killed, also when it ran too long). Every verification command of a workflow
# (tests, builds, syntax checks) goes through it. The runtime sets FIXLOOP_SANDBOX (the run's
# launcher, <run dir>/sandbox/run) for every step of a run that chose a sandbox; where nothing
# set it (a workflow followed by hand inside Claude Code, whose own sandbox confines Bash) the
# argv runs directly. See docs/sandboxes.md.
fixloop_sandboxed() {
  if [ "$#" -eq 0 ]; then
    echo "fixloop: fixloop_sandboxed: no command given" >&2
    return 2
  fi
  if [ -n "${FIXLOOP_SANDBOX:-}" ]; then
    "$FIXLOOP_SANDBOX" "$@"
  else
    "$@"
  fi
}

# fixloop_worktrees_dir [--create] [COMMON_DIR]
#
# Prints the folder that holds the repository's run worktrees: `.fixloop/worktrees` at the top of
# the main working tree, beside its `.git` folder. Not inside `.git/`: Claude Code refuses every
# edit under a `.git` folder as a sensitive file, whatever the permission rules say, so a subagent
# could not fix anything in a worktree there (docs/claude-code.md). The folder is hidden from the
# user's own tools: its name starts with a dot (test runners and type checkers skip those) and
# --create, which also makes the folder, adds `/.fixloop/` to the repository's `info/exclude`
# once, so `git status`, linters that honour git's ignore files and ripgrep never list it. A
# repository whose git folder is not its working tree's `.git` (a submodule, `--separate-git-dir`)
# keeps them in `<git common dir>/fixloop/worktrees`, the place every run used before. Python's
# twin: `fixloop.hostgit.run_worktree_folders`; both must name the same folder.
# COMMON_DIR is the repository's git common dir as `git rev-parse --path-format=absolute
# --git-common-dir` prints it, for a step that has asked already (one git process less);
# without it the helper asks git itself. The folder and `info/exclude` are looked at first and
# only changed when they need it, so a repository that has them costs no process.
fixloop_worktrees_dir() {
  local create="" common="" folder exclude line
  if [ "${1-}" = --create ]; then
    create=yes
    shift
  fi
  if [ "$#" -gt 1 ] || [ "${1-}" = --create ] || [[ ${1-} == -* ]]; then
    echo "fixloop: usage: fixloop_worktrees_dir [--create] [COMMON_DIR]" >&2
    return 2
  fi
  common=${1-}
  if [ -z "$common" ]; then
    common=$(git rev-parse --path-format=absolute --git-common-dir) || return 1
  fi
  if [ "${common##*/}" = .git ] && [ -d "$common" ]; then
    folder="${common%/*}/.fixloop/worktrees"
  else
    folder="$common/fixloop/worktrees"
  fi
  if [ -n "$create" ]; then
    if [ ! -d "$folder" ]; then
      mkdir -p -- "$folder" || return 1
    fi
    exclude="$common/info/exclude"
    if [ "$folder" != "$common/fixloop/worktrees" ]; then
      # Read by bash, not grep: the same whole-line match, without a process per step.
      line=""
      if [ -f "$exclude" ]; then
        while IFS= read -r line || [ -n "$line" ]; do
          [ "$line" != /.fixloop/ ] || break
          line=""
        done < "$exclude"
      fi
      if [ "$line" != /.fixloop/ ]; then
        mkdir -p -- "$common/info" || return 1
        if [ -s "$exclude" ] && [ -n "$(tail -c 1 -- "$exclude")" ]; then
          printf '\n' >> "$exclude" || return 1
        fi
        printf '%s\n' /.fixloop/ >> "$exclude" || return 1
      fi
    fi
  fi
  printf '%s\n' "$folder"
}

# __fixloop_records NAME CMD ARG...
#
# Runs the argv CMD ARG..., whose output is records each ended by a NUL byte (`git … -z`), reads
# them into the array NAME and returns the command's own exit status. A command substitution
# would drop the NUL bytes, and a process substitution's status is lost: the status travels as
# one last record after the output, where a record of the command cannot be mistaken for it
# (every record of the command is ended by its NUL before it). `set +e` there: a failed command
# must not end the subshell before its status is written.
__fixloop_records() {
  local -n __fixloop_into=$1
  local __fixloop_record="" __fixloop_status=""
  shift
  __fixloop_into=()
  while IFS= read -r -d '' __fixloop_record; do
    __fixloop_into+=("$__fixloop_record")
  done < <(set +e; "$@"; printf '%s\0' "$?")
  if [ "${#__fixloop_into[@]}" -gt 0 ]; then
    __fixloop_status=${__fixloop_into[${#__fixloop_into[@]}-1]}
    unset '__fixloop_into[${#__fixloop_into[@]}-1]'
  fi
  # No status record: the subshell itself died.
  [[ $__fixloop_status =~ ^[0-9]+$ ]] || __fixloop_status=1
  return "$__fixloop_status"
}

# fixloop_worktree_listed PATH
#
# Returns 0 when `git worktree list` names PATH (exactly) as a working tree of the repository of
# the current directory, 1 when it does not, 2 when git could not list them (said on stderr).
# Paths are compared as git prints them (absolute, as the worktree was added), read with `-z`,
# so a path holding a newline is matched whole. Bash compares: no `grep` process.
fixloop_worktree_listed() {
  local -a records
  local record status=0
  if [ "$#" -ne 1 ] || [ -z "$1" ]; then
    echo "fixloop: usage: fixloop_worktree_listed PATH" >&2
    return 2
  fi
  __fixloop_records records git worktree list --porcelain -z || status=$?
  if [ "$status" -ne 0 ]; then
    echo "fixloop: git worktree list failed (status $status)" >&2
    return 2
  fi
  for record in "${records[@]}"; do
    [ "$record" != "worktree $1" ] || return 0
  done
  return 1
}

# fixloop_write_config FILE NAME VALUE [NAME VALUE]...
#
# Writes FILE, replacing it, as a file in `git config` format holding exactly these values, in
# this order: what `git config --file FILE NAME VALUE`, once per pair, leaves in a new file (the
# same bytes: a value is quoted and escaped as git writes it), in one write and no process. NAME
# is `section.key`, lower case. Write a temporary file, then `mv -f` it into place: a reader then
# sees the whole file or none of it.
fixloop_write_config() {
  local file=${1-} text="" section="" name value quote bs='\' dq='"'
  if [ "$#" -lt 3 ] || [ $(($# % 2)) -ne 1 ] || [ -z "$file" ]; then
    echo "fixloop: usage: fixloop_write_config FILE NAME VALUE [NAME VALUE]..." >&2
    return 2
  fi
  shift
  while [ "$#" -gt 0 ]; do
    name=$1 value=$2
    shift 2
    if ! [[ $name =~ ^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$ ]]; then
      echo "fixloop: fixloop_write_config: '$name' is not a lower-case section.key" >&2
      return 2
    fi
    if [ "${name%%.*}" != "$section" ]; then
      section=${name%%.*}
      text+="[$section]"$'\n'
    fi
    # git quotes a value that starts or ends with a blank or holds a comment character (or a
    # carriage return, which an unquoted value would lose before its newline), and escapes
    # backslashes, quotes, newlines and tabs always.
    quote=""
    case $value in
      " "* | *" " | *[\;#$'\r']*) quote=$dq ;;
    esac
    value=${value//"$bs"/"$bs$bs"}
    value=${value//"$dq"/"$bs$dq"}
    value=${value//$'\n'/"${bs}n"}
    value=${value//$'\t'/"${bs}t"}
    text+=$'\t'"${name#*.} = $quote$value$quote"$'\n'
  done
  printf '%s' "$text" > "$file" || return 1
}

# fixloop_read_config NAME FILE [KEY]...
#
# Reads FILE (in `git config` format) with one `git config --list` into the associative array
# NAME (made global when the step has not declared it), each value under its `section.key` in
# lower case (the last one of a key the file holds several times, as `git config --get` answers;
# a key written without `=` is empty). Each KEY listed must be in the file, else it is an error
# naming it; so is a file git cannot read or parse. Read a value the file may lack with a
# default, `${NAME[section.key]-}`: under `set -u` a missing one stops the step.
fixloop_read_config() {
  local -a __fixloop_entries
  local __fixloop_entry __fixloop_key __fixloop_status=0
  if [ "$#" -lt 2 ] || ! [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || [[ $1 == __fixloop_* ]] \
    || [ -z "$2" ]; then
    echo "fixloop: usage: fixloop_read_config NAME FILE [KEY]..." >&2
    return 2
  fi
  declare -gA "$1"
  local -n __fixloop_values=$1
  __fixloop_values=()
  __fixloop_records __fixloop_entries git config --file "$2" --null --list \
    || __fixloop_status=$?
  if [ "$__fixloop_status" -ne 0 ]; then
    echo "fixloop: cannot read $2 (git config: status $__fixloop_status)" >&2
    return 1
  fi
  # Each entry is `key<newline>value`; a key written without `=` has no newline.
  for __fixloop_entry in "${__fixloop_entries[@]}"; do
    if [[ $__fixloop_entry == *$'\n'* ]]; then
      __fixloop_values[${__fixloop_entry%%$'\n'*}]=${__fixloop_entry#*$'\n'}
    else
      __fixloop_values[$__fixloop_entry]=""
    fi
  done
  for __fixloop_key in "${@:3}"; do
    if [ -z "${__fixloop_values[$__fixloop_key]+set}" ]; then
      echo "fixloop: $2 holds no $__fixloop_key" >&2
      return 1
    fi
  done
}
