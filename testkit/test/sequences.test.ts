/**
 * SEQ-001 (R-SEQ-1), stateful sequences: against the real mock service random sequences of payout operations keep
 * the state rules; against one that lets a second payout claim a confirmed payout's hash (the proxy turns that 409
 * `tx_hash_reused` into 200 with the payout), the scenario fails on the hash rule and reports the sequence shrunk to
 * the four steps that show it, the same sequence for the same seed.
 */
import { describe, expect, it } from "vitest"
import { runConformance } from "../src/index.ts"
import { jsonOf, type Proxy, urlParts } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

const service = serviceBehindProxies()

const seq001 = async (baseUrl: string, seed?: number) => {
  const report = await runConformance({
    baseUrl,
    apiKey: service.apiKey,
    grep: ["SEQ-001"],
    timeoutMs: 90_000,
    sequences: 60,
    ...(seed === undefined ? {} : { seed })
  })
  return report.scenarios[0]!
}

/** A deployment where a hash already used by one payout confirms another too. */
const hashReusable = (): Promise<Proxy> =>
  service.through({
    response: async (request, response, proxy) => {
      const confirm = /^\/api\/integrations\/breb\/payouts\/(po_\w+)\/confirm$/.exec(urlParts(request.url).path)
      const body = response.status === 409 ? (jsonOf(response.body) as { errorCode?: string }) : undefined
      if (confirm === null || body?.errorCode !== "tx_hash_reused") return response
      return proxy.forward({
        ...request,
        method: "GET",
        url: `/api/integrations/breb/payouts/${confirm[1]}`,
        body: Buffer.alloc(0)
      })
    }
  })

/** The commands of a reported sequence (fast-check adds the replay path as a comment). */
const commandsOf = (sequence: unknown) => String(sequence).replace(/\s*\/\*.*\*\/\s*$/, "").split(/,(?![^(]*\))/)

describe("SEQ-001: stateful sequences", () => {
  it("the real mock service keeps the rules through every generated sequence", async () => {
    const result = await seq001(service.server.baseUrl)
    expect(result.status, JSON.stringify(result.failure)).toBe("passed")
    const noted = result.details?.["sequences"] as { tried: number; ran: Record<string, number> }
    expect(noted.tried).toBeGreaterThan(0)
    // every kind of step ran against the service, the hash of another payout included
    expect(Object.keys(noted.ran).sort()).toEqual([
      "advance",
      "cancel",
      "confirm",
      "create",
      "get",
      "list",
      "reuse hash"
    ])
  }, 120_000)

  it(
    "a reused hash accepted: fails on the hash rule, shrunk to create, create, confirm, the other's hash; seeded",
    async () => {
      const proxy = await hashReusable()
      const first = await seq001(proxy.baseUrl, 7)
      expect(first.status, JSON.stringify(first.details)).toBe("failed")
      expect(first.failure?.message).toBe(
        "a txHash confirms one payout: another payout's hash is 409 tx_hash_reused (R-SEQ-1)"
      )
      const sequence = commandsOf(first.failure?.details?.["sequence"])
      expect(sequence, String(first.failure?.details?.["sequence"])).toHaveLength(4)
      expect(sequence.slice(0, 2)).toEqual(["create", "create"])
      expect(sequence[2]).toMatch(/^confirm\(#\d, fresh hash\)$/)
      expect(sequence[3]).toMatch(/^confirm\(#\d, another payout's hash\)$/)
      expect(first.failure?.details?.["reproduce"]).toBe("--seed 7 --grep SEQ-001")

      const again = await seq001(proxy.baseUrl, 7)
      expect(again.failure?.details?.["sequence"]).toBe(first.failure?.details?.["sequence"])
    },
    180_000
  )
})
