/**
 * `node scripts/run-bundled.mjs <name> [args…]` runs `scripts/<name>.ts` from an esbuild bundle of it, in this node
 * process, with `args` as its command line: the keys CLI answers in a fraction of a second, where starting it through
 * tsx (compiling every imported source on the fly) took 3–10 s. The bundle is cached in
 * node_modules/.cache/cop-integrations/ and rebuilt only when one of its inputs (each source file esbuild read, the
 * dependencies' included), this script or scripts/build.mjs (the shared esbuild options) changed size or modification
 * time.
 * Plain JavaScript, so it needs no TypeScript loader.
 */
import { build } from "esbuild"
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { NODE_BUNDLE } from "./build.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const cacheDir = join(root, "node_modules", ".cache", "cop-integrations")
const self = fileURLToPath(import.meta.url)

const stamp = (file) => {
  try {
    const stat = statSync(file)
    return `${stat.size} ${stat.mtimeMs}`
  } catch {
    return "missing"
  }
}

/** Each input file (relative to the repository) with its size and modification time, this script included. */
const stampsOf = (inputs) =>
  Object.fromEntries(
    [...inputs, relative(root, self), "scripts/build.mjs"].map((file) => [file, stamp(join(root, file))])
  )

const upToDate = (bundle, stampsFile) => {
  if (!existsSync(bundle) || !existsSync(stampsFile)) return false
  const recorded = JSON.parse(readFileSync(stampsFile, "utf8"))
  return Object.entries(recorded).every(([file, recordedStamp]) => stamp(join(root, file)) === recordedStamp)
}

/** The bundle of `scripts/<name>.ts`, built first when missing or stale; its path. */
export const bundleOf = async (name) => {
  const entry = join(root, "scripts", `${name}.ts`)
  if (!/^[a-z][a-z0-9-]*$/.test(name) || !existsSync(entry)) throw new Error(`no script scripts/${name}.ts`)
  const bundle = join(cacheDir, `${name}.mjs`)
  const stampsFile = join(cacheDir, `${name}.inputs.json`)
  if (upToDate(bundle, stampsFile)) return bundle
  mkdirSync(cacheDir, { recursive: true })
  // Written beside and renamed into place, so a concurrent run never loads half a file.
  const partial = `${bundle}.${process.pid}.tmp.mjs`
  const result = await build({
    ...NODE_BUNDLE,
    entryPoints: [entry],
    outfile: partial,
    metafile: true,
    // esbuild names its inputs relative to its working directory: the repository.
    absWorkingDir: root
  })
  renameSync(partial, bundle)
  writeFileSync(stampsFile, JSON.stringify(stampsOf(Object.keys(result.metafile.inputs))))
  return bundle
}

if (process.argv[1] === self) {
  const [name] = process.argv.splice(2, 1)
  if (name === undefined) {
    process.stderr.write("usage: node scripts/run-bundled.mjs <script name> [args…]\n")
    process.exit(2)
  }
  const bundle = await bundleOf(name)
  await import(pathToFileURL(bundle).href)
}
