/**
 * The API reference's examples (what /docs pre-fills) work for every integration, not once per deployment (issue #29
 * part 7): each of two integrations sends the document's own request examples in a partner's order, OTP send and
 * verify, payout and its confirm, swap and its confirm, and each gets 2xx. In mock mode the example txHashes stand
 * for a transaction the mock chain mines for the payout or swap confirmed: each is recorded as a hash of its own
 * (derived from the example and the resource), so a hash still confirms one thing only; any other hash is recorded
 * as sent, and reusing it is still tx_hash_reused.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectError, newTxHash, PAYOUTS, type Wire } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const SWAPS = "/api/integrations/swaps"

type JsonObject = Record<string, any>

// The mock provider's lifecycle is held: the same confirm again must meet the payout where the first left it (at the
// suite's 150 ms a busy machine saw it completed in between, and the answers differed by the provider's hops).
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

let examples: Record<string, JsonObject>
let idempotencyKeys: Record<string, string>

it.beforeAll(async ({ server }) => {
  const document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as JsonObject
  const schemas = document["components"]["schemas"] as Record<string, JsonObject>
  examples = Object.fromEntries(
    Object.entries(schemas).flatMap(([name, schema]) =>
      schema["examples"] === undefined ? [] : [[name, schema["examples"][0]]]
    )
  )
  idempotencyKeys = Object.fromEntries(
    Object.values(document["paths"] as Record<string, Record<string, JsonObject>>)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) =>
        (operation["parameters"] as Array<JsonObject> | undefined ?? [])
          .filter((parameter) => parameter["name"] === "idempotency-key")
          .map((parameter) => [operation["operationId"], parameter["example"]])
      )
  )
})

/**
 * One integration sending the examples as pre-filled (the OTP steps left out once its customer is approved; other
 * Idempotency-Keys, for new resources): every answer, by step.
 */
const runExamples = async (
  server: TestServer,
  apiKey: string,
  options: { readonly kyc?: boolean; readonly keySuffix?: string } = {}
) => {
  const post = (path: string, body: unknown, headers?: Record<string, string>) =>
    call(server.baseUrl, apiKey, "POST", path, headers === undefined ? { body } : { body, headers })
  const keyOf = (operationId: string) => `${idempotencyKeys[operationId]!}${options.keySuffix ?? ""}`
  const answers: Record<string, Wire> = {}
  if (options.kyc !== false) {
    answers["otp send"] = await post(`${BREB}/kyc/otp/send`, examples["OtpSendRequest"])
    answers["otp verify"] = await post(`${BREB}/kyc/otp/verify`, examples["OtpVerifyRequest"])
  }
  answers["payout"] = await post(PAYOUTS, examples["CreatePayoutRequest"], {
    "idempotency-key": keyOf("breb.createPayout")
  })
  const payoutId = (answers["payout"].json as JsonObject)["payoutId"]
  answers["payout confirm"] = await post(`${PAYOUTS}/${payoutId}/confirm`, examples["ConfirmPayoutRequest"])
  answers["swap"] = await post(SWAPS, examples["PrepareSwapRequest"], { "idempotency-key": keyOf("swaps.prepareSwap") })
  const intentId = (answers["swap"].json as JsonObject)["intentId"]
  answers["swap confirm"] = await post(`${SWAPS}/${intentId}/confirm`, examples["ConfirmSwapRequest"])
  return answers
}

const statuses = (answers: Record<string, Wire>) =>
  Object.fromEntries(Object.entries(answers).map(([step, wire]) => [step, wire.status]))

const ALL_2XX = {
  "otp send": 200,
  "otp verify": 200,
  "payout": 201,
  "payout confirm": 200,
  "swap": 201,
  "swap confirm": 200
}

describe("the reference's examples, sent by every integration (mock mode)", () => {
  it("two integrations each run the examples: payout and swap created and confirmed, each with its own recorded hash", async ({ server }) => {
    const first = await runExamples(server, (await server.newIntegration()).apiKey)
    const second = await runExamples(server, (await server.newIntegration()).apiKey)
    expect(statuses(first), JSON.stringify(first["payout confirm"]?.text)).toEqual(ALL_2XX)
    expect(statuses(second), JSON.stringify(second["payout confirm"]?.text)).toEqual(ALL_2XX)
    const recorded = [first, second].flatMap((answers) => [
      (answers["payout confirm"]!.json as JsonObject)["txHash"],
      (answers["swap confirm"]!.json as JsonObject)["txHash"]
    ])
    expect(new Set(recorded).size).toBe(4)
    for (const hash of recorded) expect(hash).toMatch(/^0x[0-9a-f]{64}$/)
  })

  it("one integration runs them again, for a new payout and swap (other Idempotency-Keys): confirmed too; the same confirm again is the same answer", async ({ server }) => {
    const { apiKey } = await server.newIntegration()
    const once = await runExamples(server, apiKey)
    const again = await runExamples(server, apiKey, { kyc: false, keySuffix: "-again" })
    expect(statuses(once)).toEqual(ALL_2XX)
    const { ["otp send"]: _send, ["otp verify"]: _verify, ...withoutKyc } = ALL_2XX
    expect(statuses(again)).toEqual(withoutKyc)
    for (const [step, id] of [["payout confirm", "payoutId"], ["swap confirm", "intentId"]] as const) {
      const [first, second] = [once, again].map((answers) => answers[step]!.json as JsonObject)
      expect(second![id]).not.toBe(first![id])
      expect(second!["txHash"]).not.toBe(first!["txHash"])
    }
    const payout = again["payout confirm"]!.json as JsonObject
    const replay = await call(server.baseUrl, apiKey, "POST", `${PAYOUTS}/${payout["payoutId"]}/confirm`, {
      body: examples["ConfirmPayoutRequest"]
    })
    expect(replay.status, replay.text).toBe(200)
    expect(replay.json).toEqual(payout)
  })

  it("any other hash is recorded as sent, and confirms one thing only: tx_hash_reused on another integration's payout", async ({ server }) => {
    const [a, b] = [await server.newIntegration(), await server.newIntegration()]
    const fresh = await Promise.all([a, b].map(async ({ apiKey }) => {
      const answers = await runExamples(server, apiKey)
      expect(statuses(answers)).toEqual(ALL_2XX)
      // the example's payout is confirmed already: another one, for this hash
      const wire = await call(server.baseUrl, apiKey, "POST", PAYOUTS, { body: examples["CreatePayoutRequest"] })
      expect(wire.status, wire.text).toBe(201)
      return (wire.json as JsonObject)["payoutId"] as string
    }))
    const hash = newTxHash()
    const confirmed = await call(server.baseUrl, a.apiKey, "POST", `${PAYOUTS}/${fresh[0]}/confirm`, {
      body: { txHash: hash }
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect((confirmed.json as JsonObject)["txHash"]).toBe(hash)
    expectError(
      await call(server.baseUrl, b.apiKey, "POST", `${PAYOUTS}/${fresh[1]}/confirm`, { body: { txHash: hash } }),
      409,
      "tx_hash_reused"
    )
  })
})
