# Helpers shared by infra/deploy.sh and infra/add-project.sh (sourced, not run): running a command
# or, under --dry-run (DRY_RUN=true), printing it as the plan, in a form a shell could run again.
# The caller sets DRY_RUN and SCRIPT (the name its messages start with).

die() {
  echo "$SCRIPT: $*" >&2
  exit 1
}

# gcloud must never wait for an answer: CI has no stdin.
export CLOUDSDK_CORE_DISABLE_PROMPTS=1

quote() {
  local out=() a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_@%+=:,./-]+$ ]]; then out+=("$a"); else out+=("'${a//\'/\'\\\'\'}'"); fi
  done
  printf '%s\n' "${out[*]}"
}

# Runs a command that changes something.
run() {
  if $DRY_RUN; then quote "$@"; else "$@"; fi
}

# The same, for commands that echo the whole resulting policy: only the plan line is worth showing.
run_q() {
  if $DRY_RUN; then quote "$@"; else "$@" >/dev/null; fi
}

# A read-only probe ("does it exist?"). Under --dry-run it is printed and answers "no", so that the
# plan shows every create.
exists() {
  if $DRY_RUN; then
    printf '# if missing: '
    quote "$@"
    return 1
  fi
  "$@" >/dev/null 2>&1
}

# A read-only command whose output the script needs; under --dry-run a placeholder stands for it.
capture() {
  local placeholder=$1
  shift
  if $DRY_RUN; then
    printf '# %s := ' "$placeholder" >&2
    quote "$@" >&2
    printf '<%s>' "$placeholder"
  else
    "$@"
  fi
}

# Runs a create that may find its object already there (and so is done).
run_create() {
  if $DRY_RUN; then
    quote "$@"
    return 0
  fi
  local err
  if ! err=$("$@" 2>&1 >/dev/null); then
    if grep -qiE 'already exists|ALREADY_EXISTS' <<<"$err"; then
      echo "  (already there)"
    else
      echo "$err" >&2
      return 1
    fi
  fi
}

step() { echo "# == $* =="; }

# Prints a file the plan refers to (a URL map to import), each line a comment, so that the plan
# shows what would be sent.
show_file() {
  if $DRY_RUN; then
    echo "# $1 ($2):"
    sed 's/^/#   /' "$2"
  fi
}
