/**
 * Issue #29 part 5, live through the provider simulator with its webhooks switched off: the provider approves a
 * customer and no callback tells the service. `GET kyc/customers/{userAddress}` reads the provider (`GET
 * /v0/customers/{id}`) and says approved, recording it with one `kyc.approved`; the verify repeated with the used code
 * answers 200 with the customer instead of `otp_invalid`; while the provider fails, the read answers what is stored;
 * another integration's key gets 404.
 */
import { Duration, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ProviderKycReads } from "../../src/kyc/CustomerKyc.ts"
import { BREB, call, expectError } from "../support/flows.ts"
import { type LiveStack, newWalletUser, simCall, startLiveStack } from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({
    // every read asks the provider (nothing remembered), so the test needs no wait for a remembered answer to lapse
    server: {
      overrides: Layer.succeed(ProviderKycReads, { rememberFor: Duration.zero, waitAtMost: Duration.seconds(2) })
    }
  })
  stack.sim.setWebhookUrl(null)
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const get = (path: string, key = apiKey) => call(stack.server.baseUrl, key, "GET", path)
const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })

/** OTP by e-mail and verify: the customer handed to the provider, pending. */
const pendingCustomer = async () => {
  const user = await newWalletUser(stack)
  const email = `read-${user.address.slice(2, 10).toLowerCase()}@example.com`
  const sent = await post(`${BREB}/kyc/otp/send`, { email, userAddress: user.address })
  expect(sent.status, sent.text).toBe(200)
  const message = await stack.mail.waitFor((m) => m.to.includes(email), 5000)
  const code = /\b([0-9]{6})\b/.exec(message.text ?? "")![1]!
  const verified = await post(`${BREB}/kyc/otp/verify`, { userAddress: user.address, code })
  expect(verified.status, verified.text).toBe(200)
  expect(verified.json).toMatchObject({ kycStatus: "pending" })
  const { kycUrl } = verified.json as { kycUrl: string }
  const link = await fetch(`${stack.sim.url}/v0/kyc_links/${kycUrl.split("/").pop()}`, {
    headers: { "api-key": stack.sim.apiKey }
  })
  const { customer_id: customerId } = (await link.json()) as { customer_id: string }
  return { userAddress: user.address, email, code, kycUrl, customerId }
}

const customerReads = async (customerId: string): Promise<number> =>
  ((await simCall(stack, "/__sim/requests")).data as ReadonlyArray<{ method: string; path: string }>)
    .filter((request) => request.method === "GET" && request.path === `/v0/customers/${customerId}`).length

const kycEvents = async (userAddress: string) =>
  ((await get("/api/integrations/events", apiKey)).json as {
    items: ReadonlyArray<{ type: string; data: { object: { userAddress?: string } } }>
  }).items.filter((event) => event.data.object.userAddress === userAddress).map((event) => event.type)

describe("a customer the provider approved without a webhook", () => {
  it("reads approved from the provider, and a repeated verify answers 200 with the customer", async () => {
    const customer = await pendingCustomer()
    const path = `${BREB}/kyc/customers/${customer.userAddress}`

    const before = await get(path)
    expect(before.status, before.text).toBe(200)
    expect(before.json).toMatchObject({
      userAddress: customer.userAddress,
      kycStatus: "pending",
      kycUrl: customer.kycUrl,
      email: `r***@example.com`
    })
    expect(await customerReads(customer.customerId)).toBe(1)

    const approved = await simCall(stack, `/__sim/customers/${customer.customerId}/approve`, {})
    expect(approved.kyc_status).toBe("approved")
    const events = await simCall(stack, `/__sim/events?event_category=customer&event_object_id=${customer.customerId}`)
    expect(events.data.every((event: { delivered: boolean }) => !event.delivered)).toBe(true)

    const after = await get(path)
    expect(after.status, after.text).toBe(200)
    expect(after.json).toMatchObject({ userAddress: customer.userAddress, kycStatus: "approved" })

    const again = await post(`${BREB}/kyc/otp/verify`, { userAddress: customer.userAddress, code: customer.code })
    expect(again.status, again.text).toBe(200)
    expect(again.json).toEqual({ userAddress: customer.userAddress, kycStatus: "approved", kycUrl: customer.kycUrl })
    expect(await kycEvents(customer.userAddress)).toEqual(["kyc.approved"])
    // decided: the verify and later reads answer the stored decision without asking again
    expect(await customerReads(customer.customerId)).toBe(2)
  }, 60_000)

  it(
    "a payout for a customer the provider approved without a webhook is created: the create reads the provider",
    async () => {
      const customer = await pendingCustomer()
      await simCall(stack, `/__sim/customers/${customer.customerId}/approve`, {})
      const created = await post(`${BREB}/payouts`, {
        userAddress: customer.userAddress,
        destinationCop: "250000",
        breBKey: "@camila2024",
        accountOwnerName: "Camila Rojas"
      })
      expect(created.status, created.text).toBe(201)
      expect((await kycEvents(customer.userAddress)).filter((type) => type.startsWith("kyc."))).toEqual([
        "kyc.approved"
      ])
    },
    60_000
  )

  it("answers the stored status while the provider fails, and another integration gets 404", async () => {
    const customer = await pendingCustomer()
    await simCall(stack, `/__sim/customers/${customer.customerId}/approve`, {})
    // every try of the read (PROVIDER_RETRIES 2: three) meets a 500
    await simCall(stack, "/__sim/faults/errors", { count: 3, status: 500 })
    try {
      const during = await get(`${BREB}/kyc/customers/${customer.userAddress}`)
      expect(during.status, during.text).toBe(200)
      expect(during.json).toMatchObject({ kycStatus: "pending" })
    } finally {
      await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })
    }
    const otherKey = await stack.newLiveKey()
    expectError(await get(`${BREB}/kyc/customers/${customer.userAddress}`, otherKey), 404)
    const after = await get(`${BREB}/kyc/customers/${customer.userAddress}`)
    expect(after.json).toMatchObject({ kycStatus: "approved" })
  }, 60_000)
})
