/**
 * An integration has at most MAX_ENDPOINTS webhook endpoints, however many creates race: 40 at once against one
 * server, and 40 split over two app instances on one database (replicas). Exactly MAX_ENDPOINTS are created; the
 * rest get the documented 409.
 */
import { describe, expect } from "vitest"
import { MAX_ENDPOINTS } from "../../src/partnerEvents/WebhookEndpoints.ts"
import { httpTest } from "../support/fixture.ts"
import { call, expectError, newPartner, type Partner, sql, type Wire } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const CREATES = 40
const CAP_ERROR = `an integration has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`

// `server` and its `replica`: two app instances on one database
const it = httpTest()

/**
 * One create, sent again while it is answered 503 with Retry-After: on a busy machine 200 creates at once outwait the
 * pool (the documented "database unavailable; retry shortly"), and the cap is about what a partner ends up with.
 */
const create = (server: TestServer, partner: Partner, i: number): Promise<Wire> =>
  call(server.baseUrl, partner.apiKey, "POST", "/api/integrations/webhook-endpoints", {
    body: { url: `http://127.0.0.1:9/hooks/${i}` },
    resendAfter503: true
  })

const endpointsOf = async (server: TestServer, partner: Partner) => {
  const [row] = await sql<{ n: number }>(
    server,
    (q) =>
      q`SELECT count(*)::int AS n FROM webhook_endpoints WHERE integration_id = ${partner.integrationId} AND deleted_at IS NULL`
  )
  return row?.n
}

/** Each partner's creates, all at once; `serverFor(i)` picks the server of the partner's i-th create. */
const race = (partners: ReadonlyArray<Partner>, serverFor: (i: number) => TestServer) =>
  Promise.all(
    partners.map((partner) => Promise.all(Array.from({ length: CREATES }, (_, i) => create(serverFor(i), partner, i))))
  )

const expectCapHeld = async (
  server: TestServer,
  partners: ReadonlyArray<Partner>,
  responses: ReadonlyArray<ReadonlyArray<Wire>>
) => {
  const created = responses.map((of) => of.filter((r) => r.status === 201).length)
  const stored = await Promise.all(partners.map((partner) => endpointsOf(server, partner)))
  console.info(
    `${CREATES} concurrent creates per integration (cap ${MAX_ENDPOINTS}): created ${created.join(", ")}; stored ${
      stored.join(", ")
    }`
  )
  expect(created).toEqual(partners.map(() => MAX_ENDPOINTS))
  expect(stored).toEqual(partners.map(() => MAX_ENDPOINTS))
  for (const refused of responses.flat().filter((r) => r.status !== 201)) {
    expect(expectError(refused, 409)).toBe(CAP_ERROR)
  }
}

/** The race is run for several integrations at once: each is one chance for it to show. */
const INTEGRATIONS = 5

describe(`${CREATES} concurrent webhook endpoint creates of one integration (${INTEGRATIONS} integrations at once)`, () => {
  it("against one server: exactly the cap is created, the rest are 409", async ({ server: first }) => {
    const partners = await Promise.all(Array.from({ length: INTEGRATIONS }, () => newPartner(first)))
    await expectCapHeld(first, partners, await race(partners, () => first))
  })

  it("over two app instances on one database: exactly the cap is created, the rest are 409", async ({ server: first, replica: second }) => {
    const partners = await Promise.all(Array.from({ length: INTEGRATIONS }, () => newPartner(first)))
    await expectCapHeld(first, partners, await race(partners, (i) => (i % 2 === 0 ? first : second)))
  })

  it("a deleted endpoint frees its place", async ({ server: first, replica: second, partner }) => {
    const created = await Promise.all(Array.from({ length: MAX_ENDPOINTS }, (_, i) => create(first, partner, i)))
    expect(created.map((r) => r.status)).toEqual(Array(MAX_ENDPOINTS).fill(201))
    expectError(await create(second, partner, MAX_ENDPOINTS), 409)
    const endpointId = (created[0]!.json as { endpointId: string }).endpointId
    const removed = await fetch(`${first.baseUrl}/api/integrations/webhook-endpoints/${endpointId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${partner.apiKey}` }
    })
    expect(removed.status).toBe(204)
    expect((await create(second, partner, MAX_ENDPOINTS)).status).toBe(201)
  })
})
