#!/usr/bin/env bash
# Builds the source folder that `gcloud functions deploy --source` uploads, for every function of
# the platform: the compiled lib/, domain/, functions/ and orchestrator/, a package.json of the runtime
# dependencies, the repository's lockfile pruned to them (same versions), and one index.js that
# loads only the module of the function an instance serves (FUNCTION_TARGET, the entry point).
#
#   bash infra/stage-source.sh <empty or new folder>
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SOURCE=${1:?usage: stage-source.sh <folder>}

die() {
  echo "stage-source: $*" >&2
  exit 1
}

[ ! -e "$SOURCE" ] || [ -z "$(ls -A "$SOURCE")" ] || die "$SOURCE is not empty"
[ -x "$REPO/node_modules/.bin/tsc" ] || die "run 'npm ci' first"

(cd "$REPO" && npm run build --silent) || die "'npm run build' failed"
for module in lib domain functions orchestrator; do
  [ -d "$REPO/dist/$module" ] || die "dist/$module is missing after 'npm run build'"
done

mkdir -p "$SOURCE/dist"
cp -R "$REPO/dist/lib" "$REPO/dist/domain" "$REPO/dist/functions" "$REPO/dist/orchestrator" "$SOURCE/dist/"
cp "$REPO/package-lock.json" "$SOURCE/package-lock.json"
node -e '
  const root = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  // engines.node names the deployed runtime major version only: the Node.js buildpack of Google installs the newest
  // Node.js engines.node admits and advises against ">" ranges, which would admit a newer major than the runtime.
  const major = /^nodejs(\d+)$/.exec(root.config.functionsRuntime)?.[1]
  if (!major) throw new Error(`package.json config.functionsRuntime ${root.config.functionsRuntime} is not nodejs<major>`)
  const pkg = { name: root.name, version: root.version, private: true, type: "module", engines: { node: `${major}.x` }, main: "index.js", dependencies: root.dependencies }
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n")' "$REPO/package.json" >"$SOURCE/package.json"

ORCHESTRATOR=$("$REPO/node_modules/.bin/tsx" "$REPO/scripts/functions.ts" | awk '$1 == "orchestrator" { printf "%s\"%s\"", (n++ ? ", " : ""), $2 }')
[ -n "$ORCHESTRATOR" ] || die "no orchestrator function found in orchestrator/functions.ts"
cat >"$SOURCE/index.js" <<JS
// Every function of the platform from one source; the entry point (FUNCTION_TARGET) picks the module.
const ORCHESTRATOR = [$ORCHESTRATOR]
await import(ORCHESTRATOR.includes(process.env.FUNCTION_TARGET ?? '') ? './dist/orchestrator/index.js' : './dist/functions/index.js')
JS

# Cloud Build runs `npm ci`, which needs a lockfile in step with package.json.
npm install --prefix "$SOURCE" --package-lock-only --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --silent
