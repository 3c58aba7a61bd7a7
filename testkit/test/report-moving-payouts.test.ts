/**
 * REPORT-001 compares the payouts report's JSON Lines with its CSV, read one after the other. Other scenarios'
 * payouts in the same range move in between (SEQ-001 and the lifecycle scenarios confirm payouts that the mock
 * provider then completes): seen once, an offline CI run failed REPORT-001 on a CSV row that was `processing` where its
 * JSON line had said `deposit_confirmed`. A proxy adds such a payout to both answers, as it was at each read: moved on
 * (a status ahead of the JSON line's), REPORT-001 passes; another amount, or a status that is not ahead, fails it.
 */
import { describe, expect, it } from "vitest"
import { runConformance } from "../src/index.ts"
import { urlParts } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

const service = serviceBehindProxies()
const OTHER = "po_zzzzzzzzzzzzzzzzzzzzzz"

/** The report with one more payout, a copy of its last row under OTHER; in the CSV, `column` set to `value`. */
const withAnotherPayout = (column: string, value: string) =>
  service.through({
    response: (request, response) => {
      const { path, query } = urlParts(request.url)
      if (path !== "/api/integrations/reports/payouts" || response.status !== 200) return response
      const text = response.body.toString("utf8")
      if (query.get("format") === "jsonl") {
        const last = text.split("\n").filter((line) => line !== "").at(-1)
        const copy = { ...JSON.parse(last!), payoutId: OTHER }
        return { ...response, body: Buffer.from(`${text}${JSON.stringify(copy)}\n`) }
      }
      const lines = text.split("\r\n").filter((line) => line !== "")
      const header = lines[0]!.split(",")
      const cells = lines.at(-1)!.split(",")
      cells[0] = OTHER
      cells[header.indexOf(column)] = value
      return {
        ...response,
        body: Buffer.from(`${lines.join("\r\n")}\r\n${cells.join(",")}\r\n`)
      }
    }
  })

const report001 = async (baseUrl: string) => {
  const report = await runConformance({ baseUrl, apiKey: service.apiKey, grep: ["REPORT-001"] })
  return report.scenarios[0]!
}

describe("REPORT-001 beside payouts that move", () => {
  it(
    "another payout that moved on between the two reads (awaiting_deposit, then processing) is no difference",
    async () => {
      const proxy = await withAnotherPayout("status", "processing")
      const result = await report001(proxy.baseUrl)
      expect(result.status, JSON.stringify(result.failure)).toBe("passed")
    },
    60_000
  )

  it("a row whose amount differs between the formats still fails; so does one whose status went back", async () => {
    const proxy = await withAnotherPayout("sourceAmount", "1.00")
    const result = await report001(proxy.baseUrl)
    expect(result.status).toBe("failed")
    expect(result.failure?.expected).toContain(`${OTHER}'s CSV row with the JSON line's values`)
    const backwards = await report001((await withAnotherPayout("status", "nonesuch")).baseUrl)
    expect(backwards.status).toBe("failed")
  }, 60_000)
})
