/**
 * `compat` (issue #35, part 4): the contract held to the README's versioning rules. Planted on a copy of this
 * repository's contracts/openapi.json, each breaking change is found and named (exit 1), and each additive one passes
 * (exit 0); the contract against itself has no change.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { compareContracts } from "../src/compat.ts"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
const CONTRACT = fileURLToPath(new URL("../../contracts/openapi.json", import.meta.url))

type Document = Record<string, any>
const contract = (): Document => JSON.parse(readFileSync(CONTRACT, "utf8"))
const schemas = (document: Document) => document["components"]["schemas"]

const dir = mkdtempSync(join(tmpdir(), "compat-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const cli = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number; readonly stdout: string }>((resolve) => {
    execFile(process.execPath, ["--import", "tsx", CLI, "compat", ...args], (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout })
    })
  })

const written = (name: string, document: Document) => {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(document))
  return file
}

const BREAKING: ReadonlyArray<readonly [string, (document: Document) => void, RegExp]> = [
  ["a response field removed", (d) => {
    delete schemas(d)["Payout"]["properties"]["feeTxHash"]
    schemas(d)["Payout"]["required"] = schemas(d)["Payout"]["required"].filter((f: string) => f !== "feeTxHash")
  }, /\.feeTxHash: removed$/],
  ["a new required input", (d) => {
    schemas(d)["CreatePayoutRequest"]["properties"]["purpose"] = { type: "string" }
    schemas(d)["CreatePayoutRequest"]["required"].push("purpose")
  }, /body\.purpose: a new required input$/],
  ["a new value of a closed set", (d) => {
    schemas(d)["PayoutStatus"]["enum"].push("on_hold")
  }, /new value\(s\) "on_hold" of a closed set \(PayoutStatus\)$/],
  ["a new field in ErrorBody", (d) => {
    schemas(d)["ErrorBody"]["properties"]["hint"] = { type: "string" }
  }, /\.hint: a new field in ErrorBody$/],
  ["an operation removed", (d) => {
    delete d["paths"]["/api/integrations/swaps"]["get"]
  }, /^GET \/api\/integrations\/swaps: operation removed$/]
]

const ADDITIVE: ReadonlyArray<readonly [string, (document: Document) => void]> = [
  ["a new operation", (d) => {
    d["paths"]["/api/integrations/new-thing"] = { get: { responses: { "200": { description: "ok" } } } }
  }],
  ["a new optional input", (d) => {
    schemas(d)["CreatePayoutRequest"]["properties"]["note"] = { type: "string" }
  }],
  ["a new response field", (d) => {
    schemas(d)["Payout"]["properties"]["settledAt"] = { type: "string" }
  }],
  ["a new event type", (d) => {
    schemas(d)["EventType"]["enum"].push("payout.on_hold")
    d["webhooks"]["payout.on_hold"] = d["webhooks"]["payout.completed"]
  }]
]

describe("compat", () => {
  it("finds no change between the contract and itself", async () => {
    expect(compareContracts(contract(), contract())).toEqual([])
    const same = await cli([CONTRACT, CONTRACT])
    expect(same.code).toBe(0)
  })

  for (const [name, plant, expected] of BREAKING) {
    it(`names ${name} as breaking, exit 1`, async () => {
      const changed = contract()
      plant(changed)
      const breaking = compareContracts(contract(), changed).filter((change) => change.kind === "breaking")
      expect(
        breaking.map((change) => `${change.where}: ${change.what}`).some((text) => expected.test(text)),
        JSON.stringify(breaking)
      )
        .toBe(true)
      const run = await cli([CONTRACT, written(name.replaceAll(" ", "-"), changed)])
      expect(run.code).toBe(1)
      expect(run.stdout).toMatch(/^BREAKING {2}/)
    })
  }

  for (const [name, plant] of ADDITIVE) {
    it(`passes ${name} as additive, exit 0`, async () => {
      const changed = contract()
      plant(changed)
      const changes = compareContracts(contract(), changed)
      expect(changes.filter((change) => change.kind === "breaking")).toEqual([])
      expect(changes.length).toBeGreaterThan(0)
      const run = await cli([CONTRACT, written(name.replaceAll(" ", "-"), changed)])
      expect(run.code, run.stdout).toBe(0)
    })
  }

  it("an acknowledged breaking change passes with its why; another, or a stale acknowledgment, fails; a bad list is 2", async () => {
    const changed = contract()
    delete schemas(changed)["Payout"]["properties"]["feeTxHash"]
    schemas(changed)["Payout"]["required"] = schemas(changed)["Payout"]["required"].filter((f: string) =>
      f !== "feeTxHash"
    )
    const [removal] = compareContracts(contract(), changed).filter((change) => change.kind === "breaking")
    const next = written("acknowledged-removal", changed)
    const acknowledgment = { where: removal!.where, what: removal!.what, why: "no client ever read it" }
    const accepted = await cli([CONTRACT, next, "--acknowledged", written("acks", [acknowledgment])])
    expect(accepted.code, accepted.stdout).toBe(0)
    expect(accepted.stdout).toContain(
      `acknowledged  ${removal!.where}: ${removal!.what}\n    why: no client ever read it`
    )
    expect(accepted.stdout).toMatch(/compat: 0 breaking, 1 acknowledged, 0 additive/)

    schemas(changed)["PayoutStatus"]["enum"].push("on_hold")
    const another = await cli([
      CONTRACT,
      written("two-breaking", changed),
      "--acknowledged",
      written("acks", [acknowledgment])
    ])
    expect(another.code).toBe(1)
    expect(another.stdout).toMatch(/^BREAKING {2}.*on_hold/m)

    const stale = { where: "GET /nowhere", what: "nothing", why: "left over" }
    const leftOver = await cli([CONTRACT, next, "--acknowledged", written("stale", [acknowledgment, stale])])
    expect(leftOver.code).toBe(1)
    expect(leftOver.stdout).toContain("STALE ACKNOWLEDGMENT  GET /nowhere: nothing (no such change: remove it)")

    const unreadable = await cli([CONTRACT, next, "--acknowledged", written("bad", [{ where: "x" }])])
    expect(unreadable.code).toBe(2)
  })

  it("this repository's contract against 0.1.0 as released: no breaking change but the acknowledged ones", async () => {
    const baseline = fileURLToPath(new URL("../../contracts/compat-baseline.openapi.json", import.meta.url))
    const acknowledged = fileURLToPath(new URL("../../contracts/compat-acknowledged.json", import.meta.url))
    const run = await cli([baseline, CONTRACT, "--acknowledged", acknowledged])
    expect(run.code, run.stdout).toBe(0)
    expect(run.stdout).toMatch(/compat: 0 breaking, \d+ acknowledged, \d+ additive change\(s\)/)
  })

  it("refuses a file that is not an OpenAPI document: exit 2", async () => {
    const run = await cli([CONTRACT, written("not-openapi", { hello: "world" })])
    expect(run.code).toBe(2)
  })
})
