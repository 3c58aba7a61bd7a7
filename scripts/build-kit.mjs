#!/usr/bin/env node
/**
 * Builds the conformance kit as it is published: testkit/dist/ holds three entries bundled with esbuild, with effect and
 * @cop-integrations/contracts inside them, so the installed package has no runtime dependency (it installs in well under
 * 5 MB and never meets an integrator's own `effect`):
 *
 *   dist/cli.js      the `integrations-conformance` bin (src/bin.ts: the Node check, then the CLI)
 *   dist/index.js    the library (`@cop-integrations/testkit`)
 *   dist/vitest.js   the vitest entry (`@cop-integrations/testkit/vitest`); `vitest` stays an import of the integrator's
 *
 * Code the entries share is in dist/chunks/ (esbuild's code splitting), so effect is there once. The declarations are
 * tsc's, kept only for the modules the two exported entries reach (none of them imports effect or the contract: a test
 * holds it). The licences of the bundled packages go into dist/THIRD_PARTY_LICENSES.md.
 *
 * Run from testkit/ (its prepack does, after building the contract's declarations): node ../scripts/build-kit.mjs
 */
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const kit = process.cwd()
const dist = join(kit, "dist")
const manifest = JSON.parse(readFileSync(join(kit, "package.json"), "utf8"))
if (manifest.name !== "@cop-integrations/testkit") throw new Error("run build-kit.mjs from testkit/")

/** The lowest Node the bundle is compiled for: engines' minimum (src/nodeVersion.ts refuses older ones). */
const nodeTarget = `node${/(\d+\.\d+\.\d+)/.exec(manifest.engines.node)[1]}`

rmSync(dist, { recursive: true, force: true })

/**
 * effect/http-api loads the Scalar and Swagger documentation pages (5 MB of browser JavaScript) with a dynamic import
 * that esbuild bundles even though the kit never serves documentation: they are replaced by a module that says so.
 */
const withoutDocumentationPages = {
  name: "without-documentation-pages",
  setup(build) {
    build.onResolve({ filter: /\/internal\/httpApi(Scalar|Swagger)\.js$/ }, (args) => ({
      path: args.path,
      namespace: "not-in-the-kit"
    }))
    build.onLoad({ filter: /.*/, namespace: "not-in-the-kit" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not part of the conformance kit`)})`,
      loader: "js"
    }))
  }
}

const result = await build({
  absWorkingDir: kit,
  entryPoints: { cli: "src/bin.ts", index: "src/index.ts", vitest: "src/vitest.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: nodeTarget,
  // The integrator's vitest, never a copy of it.
  external: ["vitest"],
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  metafile: true,
  plugins: [withoutDocumentationPages],
  logLevel: "warning"
})

// --- declarations: tsc's, for the modules the exported entries reach ---------------------------------------------------
execFileSync(process.execPath, [join(kit, "../node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: kit,
  stdio: "inherit"
})
const reached = new Set()
const visit = (file) => {
  if (reached.has(file)) return
  reached.add(file)
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
    if (!specifier.startsWith(".")) continue
    const target = resolve(dirname(file), specifier.replace(/\.ts$/, ".d.ts").replace(/\.js$/, ".d.ts"))
    if (!existsSync(target)) throw new Error(`${relative(kit, file)} imports ${specifier}, which has no declaration`)
    visit(target)
  }
}
visit(join(dist, "index.d.ts"))
visit(join(dist, "vitest.d.ts"))
const declarations = readdirSync(dist, { recursive: true }).filter((name) => name.endsWith(".d.ts"))
for (const name of declarations) if (!reached.has(join(dist, name))) rmSync(join(dist, name))
for (const dir of readdirSync(dist, { withFileTypes: true })) {
  const path = join(dist, dir.name)
  if (dir.isDirectory() && readdirSync(path).length === 0) rmSync(path, { recursive: true })
}

// --- the licences of what the bundle carries ---------------------------------------------------------------------------
const packageRootOf = (input) => {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
  return match === null ? undefined : match[1]
}
const bundled = [
  ...new Set(Object.keys(result.metafile.inputs).map(packageRootOf).filter((root) => root !== undefined))
].sort()
const notices = bundled.map((root) => {
  const pkg = JSON.parse(readFileSync(join(kit, root, "package.json"), "utf8"))
  const licenceFile = readdirSync(join(kit, root)).find((name) => /^licen[cs]e/i.test(name))
  if (licenceFile === undefined) throw new Error(`${pkg.name} is bundled and ships no licence file`)
  return `## ${pkg.name} ${pkg.version} (${pkg.license})\n\n${
    readFileSync(join(kit, root, licenceFile), "utf8").trim()
  }\n`
})
writeFileSync(
  join(dist, "THIRD_PARTY_LICENSES.md"),
  `# Packages bundled into this package's dist/\n\n${notices.join("\n")}`
)

const size = (file) => readFileSync(file).length
const files = readdirSync(dist, { recursive: true }).filter((name) => name.endsWith(".js"))
process.stderr.write(
  `built testkit/dist (${nodeTarget}): ${files.length} files, ${
    (files.reduce((sum, name) => sum + size(join(dist, name)), 0) / 1024).toFixed(0)
  } KB of JavaScript; bundled: ${bundled.map((root) => root.split("node_modules/")[1]).join(", ")}\n`
)
