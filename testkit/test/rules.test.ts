/**
 * The rules partners can follow: every scenario cites rules by id, every rule says where the API reference states it
 * (a README section that exists, an operation of the contract at its /docs address), testkit/RULES.md is what
 * `npm run rules` writes, and no message of the kit points at documents partners do not have.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { endpoints } from "../src/contract.ts"
import { docsFragment } from "../src/docsAddress.ts"
import { RECEIVER_SCENARIOS } from "../src/receiverKit.ts"
import { README_URL, referenceText, RULES, ruleIds } from "../src/rules.ts"
import { renderRulesMarkdown } from "../src/rulesMarkdown.ts"
import { allScenarios } from "../src/scenarios/index.ts"

const kitRoot = fileURLToPath(new URL("..", import.meta.url))
const repoRoot = join(kitRoot, "..")

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
const githubAnchor = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")

const readmeAnchors = (): ReadonlySet<string> =>
  new Set(
    readFileSync(join(repoRoot, "README.md"), "utf8")
      .split("\n")
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => githubAnchor(line.replace(/^#+ /, "")))
  )

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [join(dir, entry.name)]
      : []
  )

/** The source without its comments: what remains can reach a report. */
const withoutComments = (source: string): string =>
  source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, "")).split("\n").map((line) =>
    line.replace(/^\s*\/\/.*$/, "")
  ).join("\n")

describe("rules and the scenarios that check them", () => {
  it("every scenario cites at least one known rule, and its rule text shows each with its references", () => {
    for (const scenario of allScenarios) {
      expect(scenario.rules.length, scenario.id).toBeGreaterThan(0)
      for (const id of scenario.rules) {
        expect(ruleIds, `${scenario.id} cites ${id}`).toContain(id)
        expect(scenario.rule).toContain(`${id}: ${RULES[id].statement} (`)
      }
    }
  })

  it("every rule is checked by at least one scenario", () => {
    const cited = new Set([...allScenarios, ...RECEIVER_SCENARIOS].flatMap((scenario) => scenario.rules))
    expect(ruleIds.filter((id) => !cited.has(id))).toEqual([])
  })

  it("ids read R-<TOPIC>-<n>, apart from scenario ids; a statement is one line", () => {
    for (const id of ruleIds) expect(id).toMatch(/^R-[A-Z]+-[1-9][0-9]*$/)
    for (const rule of Object.values(RULES)) expect(rule.statement).not.toMatch(/\n/)
  })

  it("every README section a rule cites exists in README.md", () => {
    const anchors = readmeAnchors()
    const cited = new Set(
      Object.values(RULES).flatMap((rule) => rule.see.filter((reference) => reference.startsWith("README#")))
    )
    for (const reference of cited) expect(anchors, reference).toContain(reference.slice("README#".length))
  })

  it("every endpoint's /docs address is its operation in the committed contracts/openapi.json, as Scalar names it", () => {
    const document = JSON.parse(readFileSync(join(repoRoot, "contracts", "openapi.json"), "utf8")) as {
      readonly paths: Record<string, Record<string, { readonly operationId: string; readonly tags: Array<string> }>>
    }
    // Scalar's address of an operation: tag/<tag, lower case, spaces as ->/<METHOD><path as the document writes it>.
    const addresses = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => [
        operation.operationId.split(".").at(-1),
        `tag/${operation.tags[0]!.toLowerCase().replace(/ /g, "-")}/${method.toUpperCase()}${path}`
      ])
    )
    expect([...endpoints.keys()].map((name) => [name, docsFragment(name)]).sort()).toEqual(addresses.sort())
    expect(docsFragment("cancelPayout")).toBe("tag/bre-b/POST/api/integrations/breb/payouts/{payoutId}/cancel")
    expect(docsFragment("readyz")).toBe("tag/health/GET/readyz")
    expect(referenceText("getPayout")).toBe("/docs#tag/bre-b/GET/api/integrations/breb/payouts/{payoutId}")
  })

  it("testkit/RULES.md is what `npm run rules` writes (run it after changing a rule or a scenario)", () => {
    expect(readFileSync(join(kitRoot, "RULES.md"), "utf8")).toBe(renderRulesMarkdown())
  })

  it("RULES.md lists every rule with its scenarios, and links README sections to the repository", () => {
    const markdown = renderRulesMarkdown()
    for (const id of ruleIds) expect(markdown).toContain(`\n## ${id}\n`)
    expect(markdown).toContain("- `PAYOUT-CONFIRM-003`: ")
    expect(markdown).toContain(`[README#errors](${README_URL}#errors)`)
  })

  it("RULES.md ships in the kit's package", () => {
    const manifest = JSON.parse(readFileSync(join(kitRoot, "package.json"), "utf8")) as { files: Array<string> }
    expect(manifest.files).toContain("RULES.md")
  })

  it("no message of the kit cites the specification's or the design's sections, which partners do not have", () => {
    const cited = sourceFiles(join(kitRoot, "src")).flatMap((file) =>
      withoutComments(readFileSync(file, "utf8"))
        .split("\n")
        .flatMap((line, index) =>
          /seed §|DESIGN §|issue #\d|REQ-INT-/.test(line) ? [`${file.slice(kitRoot.length)}:${index + 1}`] : []
        )
    )
    expect(cited).toEqual([])
  })
})
