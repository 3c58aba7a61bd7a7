/**
 * The floor plan of src/ (ARCHITECTURE.md): folders form layers, and a file imports only from its own folder or from
 * a folder on a lower floor. Folders on the same floor are siblings and never import each other. Read from the
 * sources, so a new import that runs back up (or sideways) fails here, naming the file, the line and both floors.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support/process.ts"

/** Bottom first. Each entry is one floor; a floor may hold sibling folders. `.` is src/ itself (App.ts, main.ts). */
const FLOORS: ReadonlyArray<ReadonlyArray<string>> = [
  ["base"],
  ["money"],
  ["db"],
  ["idempotency"],
  ["outbox", "work"],
  ["market"],
  ["config"],
  ["auth", "chain", "provider", "mailer"],
  ["integrations", "router"],
  ["pricing", "kyc"],
  ["quotes", "destinations"],
  ["partnerEvents"],
  ["payouts", "swaps"],
  ["providerWebhooks", "testHelpers", "worker"],
  ["http"],
  ["."]
]

const srcDir = join(repoRoot, "src")
const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((folder) => [folder, floor] as const)))
/** A file's folder: the first path segment under src/ (migrations belong to db). */
const folderOf = (path: string) => (path.includes("/") ? path.split("/")[0]! : ".")

const sources = readdirSync(srcDir, { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".ts"))
  .map((path) => ({ path, text: readFileSync(join(srcDir, path), "utf8") }))

interface Import {
  readonly from: string
  readonly to: string
  readonly line: number
}

/** `import … from`, `export … from`, a bare `import "…"` and a dynamic `import("…")`, type-only ones included. */
const IMPORT =
  /(?:^|\s)(?:import|export)\s[^"';]*?from\s+["'](\.{1,2}\/[^"']+)["']|(?:^|\s)import\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g

const importsOf = ({ path, text }: { path: string; text: string }): ReadonlyArray<Import> =>
  [...text.matchAll(IMPORT)].map((match) => ({
    from: path,
    to: relative(srcDir, resolve(srcDir, dirname(path), (match[1] ?? match[2])!)),
    line: text.slice(0, match.index).split("\n").length
  }))

const imports = sources.flatMap(importsOf)

/** Every import between folders that does not go down a floor, as `file:line -> target (floor a -> floor b)`. */
const backUpImports = (all: ReadonlyArray<Import>) =>
  all.flatMap(({ from, line, to }) => {
    const [source, target] = [folderOf(from), folderOf(to)]
    if (source === target) return []
    const [up, down] = [floorOf.get(source), floorOf.get(target)]
    if (up !== undefined && down !== undefined && down < up) return []
    return [`src/${from}:${line} -> src/${to} (${source} on floor ${up} -> ${target} on floor ${down})`]
  })

describe("the layers of src/", () => {
  it("reads the sources and their imports", () => {
    expect(imports.length).toBeGreaterThan(300)
    expect(imports).toContainEqual(expect.objectContaining({ from: "payouts/PayoutRepo.ts", to: "outbox/Outbox.ts" }))
  })

  it("every folder of src/ has a floor", () => {
    const folders = [...new Set(sources.map(({ path }) => folderOf(path)))]
    expect(folders.filter((folder) => !floorOf.has(folder))).toEqual([])
  })

  it("no import runs back up a floor or sideways to a sibling", () => {
    expect(backUpImports(imports)).toEqual([])
  })

  it("the check catches an import that runs back up, and one between siblings", () => {
    expect(backUpImports([
      { from: "outbox/Outbox.ts", to: "payouts/PayoutRepo.ts", line: 3 },
      { from: "payouts/PayoutService.ts", to: "swaps/SwapRouter.ts", line: 7 },
      { from: "payouts/PayoutService.ts", to: "quotes/QuoteService.ts", line: 9 }
    ])).toEqual([
      "src/outbox/Outbox.ts:3 -> src/payouts/PayoutRepo.ts (outbox on floor 4 -> payouts on floor 12)",
      "src/payouts/PayoutService.ts:7 -> src/swaps/SwapRouter.ts (payouts on floor 12 -> swaps on floor 12)"
    ])
  })
})
