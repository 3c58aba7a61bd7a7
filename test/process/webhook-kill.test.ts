/**
 * A replica killed (SIGKILL) in the middle of sending a webhook loses nothing: the delivery's lease runs out and
 * another replica (here: the restarted service on the same database) sends it again, with the same `webhook-id`
 * and the same bytes, so the receiver can dedupe.
 */
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { type StartedProcess, startServiceProcess } from "../support/process.ts"
import { type Delivery, type Receiver, startReceiver } from "../support/webhookReceiver.ts"

const API = "/api/integrations"
const TIMEOUT_MS = 500

describe("a service killed mid-delivery", () => {
  let database: TestDatabase
  let receiver: Receiver
  const services: Array<StartedProcess> = []

  beforeAll(async () => {
    database = await acquireTestDatabase()
    receiver = await startReceiver()
  })
  afterAll(async () => {
    for (const service of services) await service.stop("SIGKILL")
    await receiver?.close()
    await database?.release()
  })

  it("redelivers after the lease ends: same webhook-id, same body, verified", async () => {
    const env = { DATABASE_URL: database.url, WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_BASE_MS: "50" }
    const first = await startServiceProcess(env)
    services.push(first)
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(first.stdout())?.[1]
    expect(key, first.stdout()).toBeDefined()
    const api = (service: StartedProcess, path: string, body?: unknown) =>
      fetch(`${service.baseUrl}${API}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then(async (response) => ({
        status: response.status,
        json: (await response.json()) as Record<string, unknown>
      }))

    const endpoint = await api(first, "/webhook-endpoints", { url: receiver.url })
    expect(endpoint.status).toBe(201)
    const secret = endpoint.json["secret"] as string

    // the first attempt reaches the receiver, which holds it while the service is killed
    const killedMidSend = new Promise<Delivery>((resolve) => receiver.onHeld(resolve))
    receiver.answer = (_delivery, seen) => (seen === 0 && services.length === 1 ? "hold" : 200)
    const ping = await api(first, `/webhook-endpoints/${endpoint.json["endpointId"] as string}/ping`, {})
    expect(ping.status).toBe(202)
    const heldDelivery = await killedMidSend
    expect(await first.stop("SIGKILL")).toBeNull()

    const second = await startServiceProcess(env)
    services.push(second)
    const delivered = await receiver.next((d) => d.id === ping.json["id"] && d.answered === 200, 20_000)

    expect(delivered.id).toBe(heldDelivery.id)
    expect(delivered.body).toBe(heldDelivery.body)
    expect(new Webhook(secret).verify(delivered.body, {
      "webhook-id": delivered.id,
      "webhook-timestamp": delivered.timestamp,
      "webhook-signature": delivered.signature
    })).toMatchObject({ id: ping.json["id"], type: "endpoint.ping" })
  })
})
