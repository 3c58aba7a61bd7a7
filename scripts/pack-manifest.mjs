#!/usr/bin/env node
/**
 * The workspace packages (contracts/, testkit/) export their TypeScript sources, so the repo runs them
 * with tsx and vitest without a build. A published package must export the built JavaScript instead:
 *
 *   prepack:  node ../scripts/pack-manifest.mjs publish   (package.json exports ./src/x.ts → ./dist/x.js + .d.ts,
 *                                                         without the workspace's scripts and devDependencies;
 *                                                         the repository's LICENSE copied in beside it)
 *   postpack: node ../scripts/pack-manifest.mjs restore   (the workspace package.json back, the copied LICENSE gone)
 *
 * Plain JavaScript, so it runs wherever npm pack runs. Run from the package's directory.
 */
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"

const MANIFEST = "package.json"
const BACKUP = ".package.workspace.json"
/** One licence for the repository: ../LICENSE goes into each package while it is packed (npm packs only the package's own directory). */
const LICENSE = "LICENSE"
const REPO_LICENSE = "../LICENSE"
/** Present while a LICENSE copied by "publish" is in the package directory, so "restore" removes only that copy. */
const LICENSE_COPIED = ".package.license-copied"

const built = (target) => {
  const match = /^\.\/src\/(.+)\.ts$/.exec(target)
  return match === null ? target : { types: `./dist/${match[1]}.d.ts`, default: `./dist/${match[1]}.js` }
}

const publishExports = (exports) =>
  typeof exports === "string"
    ? built(exports)
    : Object.fromEntries(
      Object.entries(exports).map(([subpath, target]) => [subpath, typeof target === "string" ? built(target) : target])
    )

const [command] = process.argv.slice(2)
if (command === "publish") {
  if (existsSync(BACKUP)) throw new Error(`${BACKUP} exists: a previous pack did not finish; run "restore" first`)
  const copyLicense = !existsSync(LICENSE)
  if (copyLicense && !existsSync(REPO_LICENSE)) {
    throw new Error(`no ${LICENSE} here and no ${REPO_LICENSE}: a package is never packed without its licence`)
  }
  // Workspace-only fields (the build scripts, dev dependencies) do not travel with the package.
  const { devDependencies: _dev, scripts: _scripts, ...manifest } = JSON.parse(readFileSync(MANIFEST, "utf8"))
  renameSync(MANIFEST, BACKUP)
  writeFileSync(MANIFEST, `${JSON.stringify({ ...manifest, exports: publishExports(manifest.exports) }, null, 2)}\n`)
  if (copyLicense) {
    copyFileSync(REPO_LICENSE, LICENSE)
    writeFileSync(LICENSE_COPIED, "")
  }
} else if (command === "restore") {
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST)
  if (existsSync(LICENSE_COPIED)) {
    rmSync(LICENSE, { force: true })
    rmSync(LICENSE_COPIED)
  }
} else {
  throw new Error("usage: pack-manifest.mjs publish|restore")
}
