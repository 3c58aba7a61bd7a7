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
  ["base", "money", "db", "idempotency"],
  ["auth", "market", "outbox", "background"],
  ["config"],
  ["chain", "provider", "partnerEvents", "dashboard"],
  ["kyc", "router"],
  ["destinations", "pricing"],
  ["quotes", "reports", "requestLogs"],
  ["payouts", "swaps"],
  ["providerWebhooks", "testHelpers", "worker"],
  ["http"],
  ["."]
]

const srcDir = join(repoRoot, "src")
const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((folder) => [folder, floor] as const)))
/** A file's folder: the first path segment under src/ (migrations belong to db). */
const folderOf = (path: string) => (path.includes("/") ? path.split("/")[0]! : ".")

/** The TypeScript files under `dir`, their paths relative to it. */
const sourcesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => ({ path, text: readFileSync(join(dir, path), "utf8") }))

const sources = sourcesUnder(srcDir)

interface Import {
  readonly from: string
  readonly to: string
  readonly line: number
}

/** `import … from`, `export … from`, a bare `import "…"` and a dynamic `import("…")`, type-only ones included. */
const IMPORT =
  /(?:^|\s)(?:import|export)\s[^"';]*?from\s+["'](\.{1,2}\/[^"']+)["']|(?:^|\s)import\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g

const importsOf = (dir: string) => ({ path, text }: { path: string; text: string }): ReadonlyArray<Import> =>
  [...text.matchAll(IMPORT)].map((match) => ({
    from: path,
    to: relative(dir, resolve(dir, dirname(path), (match[1] ?? match[2])!)),
    line: text.slice(0, match.index).split("\n").length
  }))

const imports = sources.flatMap(importsOf(srcDir))

/** Every import between folders that does not go down a floor, as `file:line -> target (floor a -> floor b)`. */
const backUpImports = (all: ReadonlyArray<Import>) =>
  all.flatMap(({ from, line, to }) => {
    const [source, target] = [folderOf(from), folderOf(to)]
    if (source === target) return []
    const [up, down] = [floorOf.get(source), floorOf.get(target)]
    if (up !== undefined && down !== undefined && down < up) return []
    return [`src/${from}:${line} -> src/${to} (${source} on floor ${up} -> ${target} on floor ${down})`]
  })

/**
 * Folders that stand higher than they must, as `folder: floor a, its imports allow b`: a folder stands one floor above
 * the highest folder it imports (floor 0 when it imports none), so the floors stay as few as the imports need.
 */
const needlesslyHigh = (all: ReadonlyArray<Import>) => {
  const importedFloors = new Map<string, Array<number>>()
  for (const { from, to } of all) {
    const [source, target] = [folderOf(from), folderOf(to)]
    if (source === target) continue
    importedFloors.set(source, [...(importedFloors.get(source) ?? []), floorOf.get(target) ?? -1])
  }
  return [...floorOf].flatMap(([folder, floor]) => {
    const lowest = Math.max(-1, ...(importedFloors.get(folder) ?? [])) + 1
    return floor > lowest ? [`${folder}: floor ${floor}, its imports allow ${lowest}`] : []
  })
}

/** Every circle of files importing each other (Tarjan's strongly connected components), each as its sorted files. */
const circles = (all: ReadonlyArray<Import>): ReadonlyArray<ReadonlyArray<string>> => {
  const next = new Map<string, Array<string>>()
  for (const { from, to } of all) next.set(from, [...(next.get(from) ?? []), to])
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const found: Array<ReadonlyArray<string>> = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    for (const target of next.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component = stack.splice(stack.indexOf(file))
    if (component.length > 1) found.push(component.sort())
  }
  for (const file of next.keys()) if (!index.has(file)) visit(file)
  return found
}

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

  it("every folder stands on the lowest floor its imports allow", () => {
    expect(needlesslyHigh(imports)).toEqual([])
  })

  it("the check catches a folder standing higher than its imports need", () => {
    const withoutHttp = imports.filter(({ from }) => folderOf(from) !== "http")
    expect(needlesslyHigh(withoutHttp)).toEqual(["http: floor 9, its imports allow 0"])
  })

  it("the check catches an import that runs back up, and one between siblings", () => {
    expect(backUpImports([
      { from: "outbox/Outbox.ts", to: "payouts/PayoutRepo.ts", line: 3 },
      { from: "payouts/PayoutService.ts", to: "swaps/SwapRouter.ts", line: 7 },
      { from: "payouts/PayoutService.ts", to: "quotes/QuoteService.ts", line: 9 }
    ])).toEqual([
      "src/outbox/Outbox.ts:3 -> src/payouts/PayoutRepo.ts (outbox on floor 1 -> payouts on floor 7)",
      "src/payouts/PayoutService.ts:7 -> src/swaps/SwapRouter.ts (payouts on floor 7 -> swaps on floor 7)"
    ])
  })
})

describe("no circles of imports", () => {
  const folders = {
    src: srcDir,
    contracts: join(repoRoot, "contracts/src"),
    testkit: join(repoRoot, "testkit/src"),
    sdk: join(repoRoot, "sdk/src")
  }

  it.each(Object.entries(folders))("among the files of %s", (_name, dir) => {
    expect(circles(sourcesUnder(dir).flatMap(importsOf(dir)))).toEqual([])
  })

  it("the check finds a circle, and only its files", () => {
    expect(circles([
      { from: "a.ts", to: "b.ts", line: 1 },
      { from: "b.ts", to: "c.ts", line: 1 },
      { from: "c.ts", to: "a.ts", line: 1 },
      { from: "c.ts", to: "d.ts", line: 1 }
    ])).toEqual([["a.ts", "b.ts", "c.ts"]])
  })
})

describe("test/ mirrors src/", () => {
  /** Folders of test/ that are kinds of test rather than floors (ARCHITECTURE.md, "Tests"). */
  const KINDS = ["live", "process", "openapi", "simulators", "soak", "browser", "support"]
  const testFolders = readdirSync(join(repoRoot, "test"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)

  it("every folder of test/ is a folder of src/ or a kind of test", () => {
    expect(testFolders.length).toBeGreaterThan(KINDS.length)
    expect(testFolders.filter((folder) => !floorOf.has(folder) && !KINDS.includes(folder))).toEqual([])
  })
})
