/**
 * Fresh in-memory PGlite instances for tests, fast.
 *
 * `PGlite.create("memory://")` runs initdb in WebAssembly (~3 s). The freshly
 * initialised data directory is cached once on disk (keyed by the PGlite
 * version) and later instances load it (~0.7 s).
 */
import { PGlite } from "@electric-sql/pglite"
import { randomBytes } from "node:crypto"
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const pgliteVersion = async (): Promise<string> => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const pkg: unknown = JSON.parse(await readFile(join(dirname(entry), "..", "package.json"), "utf8"))
  const version = typeof pkg === "object" && pkg !== null && "version" in pkg ? pkg.version : undefined
  if (typeof version !== "string") throw new Error("cannot read the @electric-sql/pglite version")
  return version
}

const cacheFile = async (): Promise<string> =>
  fileURLToPath(new URL(`../../node_modules/.cache/test-db/pglite-${await pgliteVersion()}-datadir.tar`, import.meta.url))

const readCache = async (file: string): Promise<Buffer | undefined> => {
  try {
    return await readFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

/** Atomic, so parallel test workers never read a half-written file. */
const writeCache = async (file: string, contents: Uint8Array): Promise<void> => {
  await mkdir(dirname(file), { recursive: true })
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
  await writeFile(temporary, contents)
  await rename(temporary, file)
}

export const createMemoryPglite = async (): Promise<PGlite> => {
  const file = await cacheFile()
  const cached = await readCache(file)
  if (cached !== undefined) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([new Uint8Array(cached)]) })
    } catch (error) {
      process.stderr.write(`[test-db] ignoring unusable PGlite cache ${file}: ${String(error)}\n`)
    }
  }
  const db = await PGlite.create("memory://")
  const dump = await db.dumpDataDir("none") // still pristine: nothing has run yet
  await writeCache(file, new Uint8Array(await dump.arrayBuffer()))
  return db
}
