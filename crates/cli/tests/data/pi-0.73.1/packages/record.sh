#!/bin/bash
# Records pi 0.73.1's answers to steps.txt into transcript.txt (see ../README.md, "Packages").
# Usage: record.sh <pi 0.73.1's dist/cli.js> [node]
set -u
CLI=$1
NODE=${2:-node}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(mktemp -d)
mkdir -p "$ROOT/home/.pi/agent" "$ROOT/project" "$ROOT/npm-prefix" "$ROOT/fixtures" "$ROOT/repos/user"
cp -r "$HERE/local-pkg" "$ROOT/fixtures/local-pkg"
(cd "$ROOT/fixtures" && npm pack ./local-pkg >/dev/null 2>&1)
cp -r "$HERE/local-pkg" "$ROOT/repos/user/demo"
G="git -c user.name=pi -c user.email=pi@example.invalid -c init.defaultBranch=main"
(cd "$ROOT/repos/user/demo" && $G init -q && $G add -A && $G commit -qm one && $G tag v1)
run() {
  (cd "$ROOT/project" && env -i PATH="$PATH" HOME="$ROOT/home" \
    npm_config_prefix="$ROOT/npm-prefix" npm_config_cache="$ROOT/npm-cache" npm_config_offline=true \
    npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
    GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_COUNT=2 \
    GIT_CONFIG_KEY_0="url.file://$ROOT/repos/.insteadOf" GIT_CONFIG_VALUE_0=https://git.test/ \
    GIT_CONFIG_KEY_1=advice.detachedHead GIT_CONFIG_VALUE_1=false \
    "$@")
}
OUT="$HERE/transcript.txt"
: > "$OUT"
while IFS= read -r step; do
  step=${step//<root>/$ROOT}
  echo "\$ ${step//$ROOT/<root>}" >> "$OUT"
  read -r -a words <<< "$step"
  case ${words[0]} in
    pi)
      run "$NODE" "$CLI" "${words[@]:1}" > "$ROOT/stdout" 2> "$ROOT/stderr"
      code=$?
      echo "[stdout]" >> "$OUT"; sed "s#$ROOT#<root>#g" "$ROOT/stdout" >> "$OUT"
      echo "[stderr]" >> "$OUT"; sed "s#$ROOT#<root>#g" "$ROOT/stderr" >> "$OUT"
      echo "[exit $code]" >> "$OUT";;
    cat) sed "s#$ROOT#<root>#g" "$ROOT/${words[1]}" >> "$OUT"; echo >> "$OUT";;
    ls) ls -A "$ROOT/${words[1]}" >> "$OUT";;
    commit)
      (cd "$ROOT/repos/user/demo" && echo 'Say bye' > prompts/bye.md && $G add -A && $G commit -qm two);;
  esac
done < "$HERE/steps.txt"
rm -rf "$ROOT"
