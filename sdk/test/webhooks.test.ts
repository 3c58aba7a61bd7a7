/**
 * `webhooks.verify` on real deliveries: the service signs, a loopback receiver takes the bytes and headers as they
 * arrived, and the SDK verifies them with Web Crypto, `v1` with the endpoint's secret and `v1a` with the published key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { type Receiver, startReceiver } from "../../test/support/webhookReceiver.ts"
import { IntegrationsClient, verifyWebhook, WebhookVerificationError } from "../src/index.ts"

let server: TestServer
let client: IntegrationsClient
let v1Receiver: Receiver
let v1aReceiver: Receiver
let secret: string
let publicKey: string

beforeAll(async () => {
  server = await startTestServer()
  const { apiKey } = await server.newIntegration()
  client = new IntegrationsClient({ apiKey, baseUrl: server.baseUrl })
  v1Receiver = await startReceiver()
  v1aReceiver = await startReceiver()
  secret = (await client.webhookEndpoints.create({ url: v1Receiver.url })).secret
  await client.webhookEndpoints.create({ url: v1aReceiver.url, signatureScheme: "v1a" })
  publicKey = (await client.webhooks.signingKey()).publicKey
})
afterAll(async () => {
  await v1Receiver.close()
  await v1aReceiver.close()
  await server.close()
})

const deliveryOf = async (receiver: Receiver, eventId: string) => receiver.next((delivery) => delivery.id === eventId)

const rejection = (promise: Promise<unknown>) => promise.then(() => "verified", (error: unknown) => error)

describe("webhooks.verify", () => {
  it("v1: the endpoint's whsec_ secret verifies a delivery and answers its event, typed by type", async () => {
    const { eventId } = await client.testHelpers.triggerEvent({ type: "payout.created" })
    const delivery = await deliveryOf(v1Receiver, eventId)
    expect(delivery.signature).toMatch(/^v1,/)
    const event = await client.webhooks.verify(delivery.body, delivery.headers, secret)
    expect(event.id).toBe(eventId)
    expect(event.type).toBe("payout.created")
    if (event.type === "payout.created") expect(event.data.object.status).toBe("awaiting_deposit")
    // the bytes as a Uint8Array, the headers as a Headers object
    const again = await verifyWebhook(new TextEncoder().encode(delivery.body), new Headers(delivery.headers), secret)
    expect(again.id).toBe(eventId)
  })

  it("v1a: the published whpk_ key verifies a delivery signed with ed25519", async () => {
    const { eventId } = await client.testHelpers.triggerEvent({ type: "kyc.approved" })
    const delivery = await deliveryOf(v1aReceiver, eventId)
    expect(delivery.signature).toMatch(/^v1a,/)
    expect((await client.webhooks.verify(delivery.body, delivery.headers, publicKey)).type).toBe("kyc.approved")
    // either key may be offered: the matching scheme's is used
    expect((await client.webhooks.verify(delivery.body, delivery.headers, [secret, publicKey])).id).toBe(eventId)
  })

  it("refuses a changed body, another key, the other scheme's key, and a timestamp past the tolerance", async () => {
    const { eventId } = await client.testHelpers.triggerEvent({ type: "payout.created" })
    const [v1, v1a] = await Promise.all([deliveryOf(v1Receiver, eventId), deliveryOf(v1aReceiver, eventId)])
    const changed = v1.body.replace("awaiting_deposit", "completed")
    expect(changed).not.toBe(v1.body)
    const otherSecret = `whsec_${btoa("another secret of 32 bytes......")}`
    const refusals = await Promise.all([
      rejection(client.webhooks.verify(changed, v1.headers, secret)),
      rejection(client.webhooks.verify(v1.body, v1.headers, otherSecret)),
      rejection(client.webhooks.verify(v1a.body.replace("awaiting_deposit", "completed"), v1a.headers, publicKey)),
      rejection(client.webhooks.verify(v1a.body, v1a.headers, secret)),
      rejection(client.webhooks.verify(v1.body, v1.headers, publicKey)),
      rejection(client.webhooks.verify(v1.body, v1.headers, secret, { now: Date.now() + 301_000 })),
      rejection(client.webhooks.verify(v1.body, { ...v1.headers, "webhook-id": "evt_other" }, secret)),
      rejection(client.webhooks.verify(v1.body, { "webhook-id": v1.id }, secret))
    ])
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(WebhookVerificationError)
    expect((refusals[5] as Error).message).toBe("webhook-timestamp is more than 300 s from now")
    expect((refusals[7] as Error).message).toContain("missing")
    // within the tolerance it verifies
    expect((await client.webhooks.verify(v1.body, v1.headers, secret, { now: Date.now() + 200_000 })).id).toBe(eventId)
  })

  it("after a rotation a delivery carries two signatures: the old secret and the new one each verify it", async () => {
    const endpoint = (await client.webhookEndpoints.list()).items.find((each) => each.url === v1Receiver.url)
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint?.endpointId ?? "")
    const { eventId } = await client.testHelpers.triggerEvent({ type: "payout.created" })
    const delivery = await deliveryOf(v1Receiver, eventId)
    expect(delivery.signature.split(" ")).toHaveLength(2)
    expect((await client.webhooks.verify(delivery.body, delivery.headers, secret)).id).toBe(eventId)
    expect((await client.webhooks.verify(delivery.body, delivery.headers, rotated.secret)).id).toBe(eventId)
  })
})
