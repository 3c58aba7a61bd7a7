import type { Payout } from "@cop-integrations/contracts"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import {
  countPayouts,
  decodePayout,
  expectError,
  mixedHex,
  newPartner,
  newTxHash,
  type Partner,
  payoutBody,
  sql,
  upperHex
} from "../support/flows.ts"

const N = 50

const it = httpTest()

const times = <A>(n: number, f: (i: number) => Promise<A>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)))

/** N payouts of one approved user, created in parallel. */
const manyPayouts = async (partner: Partner): Promise<ReadonlyArray<Payout>> => {
  const user = await partner.approvedUser()
  return times(N, () => partner.payout(user))
}

const claimsOf = async (server: TestServer, hash: string) =>
  sql<{ resource_id: string }>(
    server,
    (q) => q`SELECT resource_id FROM tx_hash_claims WHERE tx_hash = ${hash.toLowerCase()}`
  )

describe("under concurrency (real HTTP, real database)", () => {
  it(`creates exactly one payout for ${N} parallel requests with one Idempotency-Key`, async ({ server }) => {
    const partner = await newPartner(server)
    const user = await partner.approvedUser()
    const body = payoutBody(user, { destinationCop: "123456.78" })
    const key = `concurrent-${crypto.randomUUID()}`

    const responses = await times(N, () => partner.createPayout(body, { "idempotency-key": key }))

    expect(responses.map((r) => r.status)).toEqual(Array(N).fill(201))
    expect(new Set(responses.map((r) => r.text)).size).toBe(1)
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await countPayouts(server, partner.integrationId)).toBe(1)
    const [row] = await sql<{ id: string }>(
      server,
      (q) => q`SELECT id FROM payouts WHERE integration_id = ${partner.integrationId}`
    )
    expect(decodePayout(responses[0]!.json).payoutId).toBe(row?.id)
  })

  it(`confirms exactly one of ${N} payouts racing for one txHash`, async ({ server }) => {
    const partner = await newPartner(server)
    const payouts = await manyPayouts(partner)
    const txHash = newTxHash()

    const responses = await times(N, (i) => partner.confirm(payouts[i]!.payoutId, { txHash }))

    const winners = responses.flatMap((r, i) => (r.status === 200 ? [i] : []))
    expect(winners).toHaveLength(1)
    for (const [i, response] of responses.entries()) {
      if (i !== winners[0]) expectError(response, 409, "tx_hash_reused")
    }
    const winner = payouts[winners[0]!]!
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: winner.payoutId }])
    const confirmed = await sql<{ id: string }>(server, (q) => q`SELECT id FROM payouts WHERE tx_hash = ${txHash}`)
    expect(confirmed).toEqual([{ id: winner.payoutId }])
    expect(await countConfirmed(server, partner)).toBe(1)
  })

  it(`still confirms exactly one when the racing hash comes in mixed and upper case`, async ({ server }) => {
    const partner = await newPartner(server)
    const payouts = await manyPayouts(partner)
    const txHash = newTxHash()
    const spelling = [txHash, upperHex(txHash), mixedHex(txHash)]

    const responses = await times(N, (i) => partner.confirm(payouts[i]!.payoutId, { txHash: spelling[i % 3]! }))

    expect(responses.filter((r) => r.status === 200)).toHaveLength(1)
    for (const response of responses.filter((r) => r.status !== 200)) expectError(response, 409, "tx_hash_reused")
    const winner = decodePayout(responses.find((r) => r.status === 200)!.json)
    expect(winner.txHash).toBe(txHash)
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: winner.payoutId }])
    expect(await countConfirmed(server, partner)).toBe(1)
  })

  it("confirms the same payout concurrently with the same hash: all 200, one confirmation", async ({ server }) => {
    const partner = await newPartner(server)
    const payout = await partner.payout(await partner.approvedUser())
    const txHash = newTxHash()
    const spelling = [txHash, upperHex(txHash)]

    const responses = await times(20, (i) => partner.confirm(payout.payoutId, { txHash: spelling[i % 2]! }))

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200))
    const bodies = responses.map((r) => decodePayout(r.json))
    for (const body of bodies) {
      expect(body.txHash).toBe(txHash)
      // the mock lifecycle may already be moving it forward
      expect(["deposit_confirmed", "processing", "completed"]).toContain(body.status)
    }
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: payout.payoutId }])
  })
})

const countConfirmed = async (server: TestServer, partner: Partner) => {
  const [row] = await sql<{ n: number }>(
    server,
    (q) =>
      q`SELECT count(*)::int AS n FROM payouts WHERE integration_id = ${partner.integrationId} AND tx_hash IS NOT NULL`
  )
  return row?.n ?? -1
}
