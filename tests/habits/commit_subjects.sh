#!/usr/bin/env bash
# habits.commit_subjects: commit subjects are at most 72 characters and read
# `area: what` (the why goes in the body).
#
# The rule holds from the commit that formatted the tree (BASE below) on:
# checked are the commits reachable from HEAD but not from BASE that were
# committed after it. Older history (median subject: 185 characters) and
# branches started before the rule (committed before it, merged later) are
# left as they are; a commit rewritten since (amend, rebase, cherry-pick)
# gets a new commit date and is checked. Merge commits and reverts keep
# git's own subjects: only their length is checked.
#
# usage: commit_subjects.sh SOURCE_DIR
# Exit: 0 all good, 1 some subject breaks the rule, 77 not a git checkout.
set -uo pipefail
src=$1
base=ddc612c90afbc363db7ff56e4e559f4ee1d4314a # style: format the product tree ...
base_time=1796161419                          # its commit date (%ct)
max=72
# `area: what`: an area of up to 40 characters (a path, a name, a list of
# them: "agent, target", "ptxsim's parser"), a colon, a space, the what.
area_chars="-A-Za-z0-9_./*{},+'"
area_re="^[$area_chars]([$area_chars ]{0,38}[$area_chars])?: [^ ]"

if ! command -v git >/dev/null 2>&1; then
  echo "SKIP: git is not installed"
  exit 77
fi
if ! git -C "$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "SKIP: $src is not a git checkout (or has no commits)"
  exit 77
fi
cd "$src" || exit 1
# (A tree unpacked inside some other checkout is not a checkout of its own.)
if [[ $(git rev-parse --show-toplevel 2>/dev/null) != "$(pwd -P)" ]]; then
  echo "SKIP: $src is not the top of a git checkout"
  exit 77
fi

range=(HEAD)
if git cat-file -e "$base^{commit}" 2>/dev/null; then
  range=(HEAD "^$base")
fi # (else a shallow clone without BASE: the commit dates alone decide)

checked=0
bad=()
while IFS=$'\x1f' read -r hash ctime parents subject; do
  ((ctime > base_time)) || continue
  checked=$((checked + 1))
  why=()
  if ((${#subject} > max)); then
    why+=("${#subject} characters (at most $max)")
  fi
  # Merges (two parents or more) and reverts keep git's wording.
  if [[ $parents != *" "* && $subject != "Revert \""* ]] &&
     ! [[ $subject =~ $area_re ]]; then
    why+=("not \`area: what\`")
  fi
  if ((${#why[@]})); then
    bad+=("${hash:0:12} ${subject}")
    bad+=("             ^ $(IFS=';'; echo "${why[*]}" | sed 's/;/; /g')")
  fi
done < <(git log --format='%H%x1f%ct%x1f%P%x1f%s' "${range[@]}")

if ((${#bad[@]})); then
  echo "FAIL: $((${#bad[@]} / 2)) of $checked commit subjects since ${base:0:12} break the rule:"
  printf '  %s\n' "${bad[@]}"
  echo "fix: git rebase -i (reword); subjects are \`area: what\`, <= $max characters"
  exit 1
fi
echo "PASS: $checked commit subjects since ${base:0:12} are \`area: what\`, <= $max characters"
