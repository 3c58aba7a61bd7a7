/** The SDK follows the contract: its generated sources are what the contract's document makes today, it has a method
 *  for every operation a partner calls with a key, and its sources import nothing but each other. */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../../test/support/process.ts"
import { operationTable } from "../src/index.ts"

const sdkSrc = join(repoRoot, "sdk/src")
const sources = readdirSync(sdkSrc, { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".ts") && !path.startsWith("generated"))
  .map((path) => ({ path, text: readFileSync(join(sdkSrc, path), "utf8") }))

/** Operations the SDK leaves out on purpose: the provider's callback, and the dashboard's own cookie session. */
const NOT_FOR_PARTNER_CODE = ["webhooks.provider", "dashboard.getDashboardSession", "dashboard.endDashboardSession"]

describe("the SDK and the contract", () => {
  it("src/generated is what sdk/scripts/generate.mjs makes from contracts/openapi.json (npm run openapi rewrites it)", () => {
    const out = mkdtempSync(join(tmpdir(), "sdk-generated-"))
    try {
      execFileSync(process.execPath, [join(repoRoot, "sdk/scripts/generate.mjs"), out])
      for (const file of ["openapi.ts", "operations.ts"]) {
        expect(readFileSync(join(sdkSrc, "generated", file), "utf8"), file).toBe(readFileSync(join(out, file), "utf8"))
      }
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("every operation of the document is in the table, and the client calls each one but the few left out", () => {
    const document = JSON.parse(readFileSync(join(repoRoot, "contracts/openapi.json"), "utf8"))
    const documented = Object.values(document.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((item) => Object.values(item).flatMap((operation) => operation.operationId ?? []))
    expect(Object.keys(operationTable).sort()).toEqual([...documented].sort())
    const client = sources.find(({ path }) => path === "client.ts")!.text
    const called = new Set([...client.matchAll(/"([\w.]+)"/g)].map((match) => match[1]))
    expect(documented.filter((id) => !called.has(id)).sort()).toEqual([...NOT_FOR_PARTNER_CODE].sort())
  })

  it("its sources import only each other: no package, nothing of the repository", () => {
    const specifiers = sources.flatMap(({ path, text }) =>
      [...text.matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)].map((match) => `${path}: ${match[1]}`)
    )
    expect(specifiers.length).toBeGreaterThan(10)
    expect(specifiers.filter((each) => !/: \.\/[\w/]+\.ts$/.test(each))).toEqual([])
  })
})
