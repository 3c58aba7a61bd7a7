#!/usr/bin/env node
/**
 * The workspace packages (contracts/, testkit/) export their TypeScript sources, so the repo runs them
 * with tsx and vitest without a build. A published package must export the built JavaScript instead:
 *
 *   prepack:  node ../scripts/pack-manifest.mjs publish   (package.json exports ./src/x.ts → ./dist/x.js + .d.ts,
 *                                                         without the workspace's scripts and devDependencies)
 *   postpack: node ../scripts/pack-manifest.mjs restore   (the workspace package.json back)
 *
 * Plain JavaScript, so it runs wherever npm pack runs. Run from the package's directory.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"

const MANIFEST = "package.json"
const BACKUP = ".package.workspace.json"

const built = (target) => {
  const match = /^\.\/src\/(.+)\.ts$/.exec(target)
  return match === null ? target : { types: `./dist/${match[1]}.d.ts`, default: `./dist/${match[1]}.js` }
}

const publishExports = (exports) =>
  typeof exports === "string"
    ? built(exports)
    : Object.fromEntries(Object.entries(exports).map(([subpath, target]) => [subpath, typeof target === "string" ? built(target) : target]))

const [command] = process.argv.slice(2)
if (command === "publish") {
  if (existsSync(BACKUP)) throw new Error(`${BACKUP} exists: a previous pack did not finish; run "restore" first`)
  // Workspace-only fields (the build scripts, dev dependencies) do not travel with the package.
  const { devDependencies: _dev, scripts: _scripts, ...manifest } = JSON.parse(readFileSync(MANIFEST, "utf8"))
  renameSync(MANIFEST, BACKUP)
  writeFileSync(MANIFEST, `${JSON.stringify({ ...manifest, exports: publishExports(manifest.exports) }, null, 2)}\n`)
} else if (command === "restore") {
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST)
} else {
  throw new Error("usage: pack-manifest.mjs publish|restore")
}
