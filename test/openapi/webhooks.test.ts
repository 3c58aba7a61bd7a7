/**
 * The document's `webhooks` say what a partner's endpoint receives. Every event type has an entry; its body schema
 * (Ajv, JSON Schema 2020-12, strict) accepts the real bodies of that type, as delivered to a receiver and as
 * `GET events` lists them, and refuses a body of another type; its header parameters match the delivered
 * Standard Webhooks headers, which `standardwebhooks` verifies. The events come from a running server driven the
 * way a partner's sandbox is: payouts, KYC, swaps, the test helpers and a ping (the swap's revert from a chain
 * stand-in, since mock mode has no reverting chain).
 */
import { Event, EVENT_OBJECT_STATUSES, EventType } from "@cop-integrations/contracts"
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { Effect, Exit, Layer, Schema } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, vi } from "vitest"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { Chain, DepositNotVerified } from "../../src/chain/Chain.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { httpTest } from "../support/fixture.ts"
import { expirePayoutWindow, newTxHash, type Partner, sql } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"
import { type Delivery, type Receiver, startReceiver } from "../support/webhookReceiver.ts"

const API = "/api/integrations"

/** The one hash the chain stand-in reports as a reverted transaction (the user's swap failed onchain). */
const REVERTED_TX = newTxHash()
const RevertingChain = Layer.effect(
  Chain,
  Effect.map(Chain, (mock) =>
    Chain.of({
      ...mock,
      verifyTransfer: (check) =>
        check.txHash === REVERTED_TX
          ? Effect.fail(new DepositNotVerified({ kind: "reverted", reason: "status 0" }))
          : mock.verifyTransfer(check)
    }))
).pipe(Layer.provide(ChainMock))

type JsonObject = Record<string, any>

const it = httpTest({
  // outcomes come from the test helpers, not the mock lifecycle
  env: { MOCK_LIFECYCLE_DELAY_MS: "3600000", WEBHOOK_RETRY_BASE_MS: "20" },
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, RevertingChain) })
  }
})

let receiver: Receiver
let secret: string
let document: JsonObject

it.beforeAll(async ({ server, partner }) => {
  document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json())
  receiver = await startReceiver()
  const endpoint = await partner.post(`${API}/webhook-endpoints`, { url: receiver.url })
  expect(endpoint.status, endpoint.text).toBe(201)
  secret = (endpoint.json as { secret: string }).secret
})
it.afterAll(() => receiver?.close())

const expectStatus = async (wire: Promise<{ status: number; text: string; json: unknown }>, status: number) => {
  const answer = await wire
  expect(answer.status, answer.text).toBe(status)
  return answer.json as JsonObject
}

const advance = (partner: Partner, payoutId: string, to: string) =>
  expectStatus(partner.post(`${API}/test-helpers/payouts/${payoutId}/advance`, { to }), 200)

const prepareSwap = async (partner: Partner, userAddress: string) =>
  (await expectStatus(
    partner.post(`${API}/swaps`, { userAddress, fromToken: "USDC", toToken: "COPm", amountIn: "10" }),
    201
  ))["intentId"] as string

/** Every event type, produced through the API as a partner's sandbox produces it. */
const produceEveryEventType = async (server: TestServer, partner: Partner) => {
  // not the fixture's user: its kyc.approved, one of the event types, must come after the endpoint is registered
  const user = await partner.approvedUser() // kyc.approved
  const completed = await partner.payout(user) // payout.created
  await expectStatus(partner.confirm(completed.payoutId, { txHash: newTxHash() }), 200) // payout.deposit_confirmed
  await advance(partner, completed.payoutId, "processing")
  await advance(partner, completed.payoutId, "completed")
  const refunded = await partner.payout(user)
  await advance(partner, refunded.payoutId, "failed")
  await advance(partner, refunded.payoutId, "refunded")
  const expired = await partner.payout(user)
  await expirePayoutWindow(server, expired.payoutId) // the expiry sweep writes payout.expired
  const delayed = await partner.payout(user)
  await expectStatus(partner.confirm(delayed.payoutId, { txHash: newTxHash() }), 200)
  await sql(
    server,
    (q) => q`UPDATE payouts SET updated_at = now() - interval '1 day' WHERE id = ${delayed.payoutId} RETURNING id`
  ) // unchanged for a day: the delay sweep writes payout.delayed

  const confirmedSwap = await prepareSwap(partner, user)
  await expectStatus(partner.post(`${API}/swaps/${confirmedSwap}/confirm`, { txHash: newTxHash() }), 200)
  const failedSwap = await prepareSwap(partner, user)
  await expectStatus(partner.post(`${API}/swaps/${failedSwap}/confirm`, { txHash: REVERTED_TX }), 200)
  const expiredSwap = await prepareSwap(partner, user)
  await sql(
    server,
    (q) => q`UPDATE swap_intents SET expires_at = now() - interval '1 minute' WHERE id = ${expiredSwap} RETURNING id`
  )

  const batch = await expectStatus(
    partner.post(`${API}/breb/payout-batches`, {
      userAddress: user,
      items: [{ destinationCop: "250000", breBKey: "@batch2024", accountOwnerName: "Ana Gomez", reference: "inv-1" }]
    }),
    201
  )
  await expectStatus(
    partner.post(`${API}/breb/payout-batches/${batch["batchId"]}/confirm`, { txHash: newTxHash() }),
    200
  ) // payout_batch.confirmed
  await advance(partner, batch["items"][0]["payout"]["payoutId"], "completed") // payout_batch.finished

  // endpoint.disabled: a second endpoint whose receiver answers 410 Gone to its ping
  const gone = await startReceiver()
  gone.answer = () => 410
  let goneEndpointId: string
  try {
    const goneEndpoint = await expectStatus(
      partner.post(`${API}/webhook-endpoints`, { url: gone.url, events: ["endpoint.ping"] }),
      201
    )
    goneEndpointId = goneEndpoint["endpointId"]
    await expectStatus(partner.post(`${API}/webhook-endpoints/${goneEndpointId}/ping`, {}), 202)
    await vi.waitFor(async () => {
      const read = await expectStatus(partner.get(`${API}/webhook-endpoints/${goneEndpoint["endpointId"]}`), 200)
      if (read["status"] !== "disabled") throw new Error("the 410 has not disabled it yet")
    }, { timeout: 20_000, interval: 20 })
  } finally {
    await gone.close()
  }

  await expectStatus(partner.post(`${API}/test-helpers/kyc/${user}/reject`, {}), 200) // kyc.rejected
  const [endpoint] = (await expectStatus(partner.get(`${API}/webhook-endpoints`), 200))["items"]
  await expectStatus(partner.post(`${API}/webhook-endpoints/${endpoint.endpointId}/ping`, {}), 202)
  return { goneEndpointId }
}

/** One Ajv validator for a schema of the document, its component references made local. */
const validatorFor = (schema: unknown) => {
  const local = (node: unknown) => JSON.parse(JSON.stringify(node).replaceAll("#/components/schemas/", "#/$defs/"))
  // Both are CommonJS modules whose `default` is the export (what an ES module import of them sees first).
  const ajv = new Ajv2020.default({ strict: true, allErrors: true })
  addFormats.default(ajv)
  return ajv.compile({ ...local(schema), $defs: local(document["components"]["schemas"]) })
}

/** The status an event's object is at: a payout's, a swap's or an endpoint's `status`, a customer's `kycStatus`. */
const objectStatusOf = (event: JsonObject): unknown =>
  event["data"]["object"]["status"] ?? event["data"]["object"]["kycStatus"]

/** A payout's events so far, read from its timeline: one per status change and one per `delayed` report. */
const PAYOUT_EVENT_HOPS = new Set([
  "created",
  "deposit_confirmed",
  "processing",
  "completed",
  "failed",
  "refunded",
  "expired",
  "delayed"
])
const payoutEventsSoFar = (payout: JsonObject): number =>
  (payout["timeline"] as Array<JsonObject>).filter((hop) =>
    PAYOUT_EVENT_HOPS.has(hop["status"]) && hop["refundStatus"] === undefined
  ).length

const exampleOf = (type: string): JsonObject | undefined =>
  document["webhooks"]?.[type]?.post?.requestBody?.content?.["application/json"]?.example

const bodySchemaOf = (type: string) =>
  document["webhooks"]?.[type]?.post?.requestBody?.content?.["application/json"]
    ?.schema

describe("the document's webhooks", () => {
  let listed: Array<JsonObject>
  let delivered: Array<Delivery>

  it.beforeAll(async ({ server, partner }) => {
    const { goneEndpointId } = await produceEveryEventType(server, partner)
    listed = await vi.waitFor(async () => {
      const page = await expectStatus(partner.get(`${API}/events`, { limit: "500" }), 200)
      const items = page["items"] as Array<JsonObject>
      const missing = EventType.literals.filter((type) => !items.some((event) => event["type"] === type))
      if (missing.length > 0) throw new Error(`no event yet of ${missing.join(", ")}`)
      return items
    }, { timeout: 15_000, interval: 20 })
    // every event reaches the receiver but the ping of the endpoint that answered 410 (sent to that one alone)
    const forReceiver = listed.filter((event) =>
      event["data"]["object"]["endpointId"] !== goneEndpointId || event["type"] !== "endpoint.ping"
    )
    delivered = [...await receiver.count((d) => d.answered === 200, forReceiver.length)]
  })

  it("has one entry per event type, and no other", () => {
    expect(Object.keys(document["webhooks"] ?? {}).sort()).toEqual([...EventType.literals].sort())
  })

  it.each(EventType.literals)("%s: its body schema accepts the bodies delivered and listed, and refuses other types", (
    type
  ) => {
    const schema = bodySchemaOf(type)
    expect(schema, `webhooks.${type} has a JSON body schema`).toBeDefined()
    const validate = validatorFor(schema)
    const bodies = [
      ...delivered.filter((d) => d.event.type === type).map((d) => JSON.parse(d.body)),
      ...listed.filter((event) => event["type"] === type)
    ]
    expect(bodies.length).toBeGreaterThanOrEqual(2) // at least one delivered and one listed
    for (const body of bodies) expect(validate(body), JSON.stringify(validate.errors)).toBe(true)
    const other = listed.find((event) => event["type"] !== type)!
    expect(validate(other)).toBe(false)
  })

  it.each(EventType.literals)("%s: the delivered headers are the documented ones and verify", (type) => {
    const parameters = (document["webhooks"]?.[type]?.post?.parameters ?? []) as Array<JsonObject>
    expect(parameters.map((p) => `${p["in"]} ${p["name"]} ${p["required"]}`)).toEqual([
      "header webhook-id true",
      "header webhook-timestamp true",
      "header webhook-signature true"
    ])
    for (const delivery of delivered.filter((d) => d.event.type === type)) {
      for (const parameter of parameters) {
        const validate = validatorFor(parameter["schema"])
        const value = delivery.headers[parameter["name"]]
        expect(validate(value), `${parameter["name"]}: ${value}`).toBe(true)
      }
      expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toMatchObject({ id: delivery.id, type })
    }
  })

  it.each(EventType.literals)(
    "%s: its example is a body of that type, its object at a status the event reports, its sequence its place",
    (type) => {
      const example = exampleOf(type)
      expect(example, `webhooks.${type} has an example body`).toBeDefined()
      const validate = validatorFor(bodySchemaOf(type))
      expect(validate(example), JSON.stringify(validate.errors)).toBe(true)
      expect(Exit.isSuccess(Schema.decodeUnknownExit(Event)(example)), "decodes as the contract's Event").toBe(true)
      expect(example!["type"]).toBe(type)
      expect(EVENT_OBJECT_STATUSES[type]).toContain(objectStatusOf(example!))
      if (type.startsWith("payout.")) {
        expect(example!["sequence"], "a payout's sequence counts its events so far").toBe(
          payoutEventsSoFar(example!["data"]["object"])
        )
      } else if (type === "payout_batch.finished") {
        expect(example!["sequence"], "a batch confirmed, then finished").toBe(2)
      } else {
        expect(example!["sequence"]).toBe(1)
      }
    }
  )

  it("the examples' ids are distinct, as events' are", () => {
    const ids = EventType.literals.map((type) => exampleOf(type)?.["id"])
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("the events delivered and listed carry their object at a status EVENT_OBJECT_STATUSES gives their type, and a payout's sequence counts its events", () => {
    for (const event of [...listed, ...delivered.map((d) => JSON.parse(d.body) as JsonObject)]) {
      const type = event["type"] as EventType
      expect(EVENT_OBJECT_STATUSES[type], `${type} ${event["id"]}`).toContain(objectStatusOf(event))
      if (type.startsWith("payout.")) {
        expect(event["sequence"], `${type} ${event["id"]}`).toBe(payoutEventsSoFar(event["data"]["object"]))
      }
    }
  })

  it("says how a delivery is answered: a 2xx within 10 s, anything else retried for 3 days", () => {
    for (const type of EventType.literals) {
      const responses = document["webhooks"]?.[type]?.post?.responses ?? {}
      expect(Object.keys(responses)).toEqual(["2XX", "default"])
      expect(responses["2XX"].description).toMatch(/10 seconds/)
      expect(responses["default"].description).toMatch(/5 s, 10 s, 20 s … capped at 6 hours\) for 3 days/)
    }
  })
})
