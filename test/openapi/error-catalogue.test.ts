/**
 * One catalogue of error answers (contracts/src/ErrorCatalogue.ts), shown in two places that must agree: the
 * document's description (what /docs renders) and the README's errors table, which `npm run openapi` writes from it
 * (this test compares, and names the command when they differ). It covers every errorCode and every error status an
 * operation of the document declares, each row with its stable anchor, and every link to a row points at one.
 */
import {
  ERROR_CATALOGUE,
  errorAnchor,
  ErrorCode,
  errorTableMarkdown,
  openApiDocument
} from "@cop-integrations/contracts"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { withErrorTable } from "../../scripts/openapi.ts"
import { repoRoot } from "../support/process.ts"

type JsonObject = Record<string, any>
const document = openApiDocument() as unknown as JsonObject
const description = String(document["info"]["description"])
const readme = readFileSync(join(repoRoot, "README.md"), "utf8")

const anchorOf = (entry: (typeof ERROR_CATALOGUE)[number]) =>
  entry.errorCode === undefined ? `error-${entry.status}` : `error-${entry.errorCode}`

/** Every response of the document's paths, with its status. */
const responses = Object.values(document["paths"] as Record<string, Record<string, JsonObject>>).flatMap((item) =>
  Object.values(item).flatMap((operation) =>
    Object.entries(operation["responses"] as Record<string, JsonObject>).map(([status, response]) => ({
      status,
      response
    }))
  )
)

describe("the error catalogue", () => {
  it("has a row for every errorCode, at the status the contract gives it", () => {
    const codes = ERROR_CATALOGUE.flatMap((entry) => entry.errorCode === undefined ? [] : [entry.errorCode])
    expect([...codes].sort()).toEqual([...ErrorCode.literals].sort())
    for (const response of responses) {
      for (const code of ErrorCode.literals) {
        if (!String(response.response["description"]).includes(`[\`${code}\`]`)) continue
        expect(ERROR_CATALOGUE.find((entry) => entry.errorCode === code)?.status, code).toBe(Number(response.status))
      }
    }
  })

  it("has a row for every error status an operation declares, and for what the HTTP edge answers (405, 408, 431)", () => {
    const declared = new Set(responses.map(({ status }) => Number(status)).filter((status) => status >= 400))
    const codeless = new Set(ERROR_CATALOGUE.filter((entry) => entry.errorCode === undefined).map((e) => e.status))
    expect([...declared].filter((status) => !codeless.has(status))).toEqual([])
    for (const status of [405, 408, 431]) expect(codeless.has(status), String(status)).toBe(true)
  })

  it("gives each row one stable anchor, error-<errorCode> or error-<status>", () => {
    const anchors = ERROR_CATALOGUE.map(anchorOf)
    expect(new Set(anchors).size).toBe(anchors.length)
    expect(ERROR_CATALOGUE.map((entry) => errorAnchor(entry.errorCode ?? entry.status as 400))).toEqual(anchors)
    for (const entry of ERROR_CATALOGUE) {
      expect(entry.when.length, anchorOf(entry)).toBeGreaterThan(10)
      expect(entry.next.length, anchorOf(entry)).toBeGreaterThan(10)
    }
  })

  it("is listed in the document's description (what /docs shows), each row with its anchor", () => {
    expect(description).toContain("## Errors and what to do next")
    expect(description).toContain(errorTableMarkdown())
    for (const entry of ERROR_CATALOGUE) expect(description).toContain(`<a id="${anchorOf(entry)}"></a>`)
  })

  it("every link to a row, in the description and the responses, names an anchor that exists", () => {
    const anchors = new Set(ERROR_CATALOGUE.map(anchorOf))
    const linked = [...JSON.stringify(document).matchAll(/\]\(#(error-[a-z0-9_]+)\)/g)].map((match) => match[1]!)
    expect(linked.length).toBeGreaterThan(40)
    expect(linked.filter((anchor) => !anchors.has(anchor))).toEqual([])
  })

  it("is the README's errors table, as `npm run openapi` writes it (run it when this fails)", () => {
    const section = /<!-- errors:start[^>]*-->\n([\s\S]*?)\n<!-- errors:end -->/.exec(readme)?.[1]
    expect(section, "README.md's errors table is stale: run npm run openapi").toBe(errorTableMarkdown())
    expect(withErrorTable(readme) === readme, "README.md's errors table is stale: run npm run openapi").toBe(true)
  })
})
