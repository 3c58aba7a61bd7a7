/**
 * Issue #18 item 6, live through the provider simulator (which enforces Bridge's rule: the same Idempotency-Key with
 * another body is `idempotency_key_reused`): a user who verifies an OTP sent to another e-mail is not locked out.
 * - before approval: the verify answers the KYC link the user already has (the same provider customer), and a
 *   user whose first KYC start got no answer gets a working link for the new e-mail;
 * - once approved: the user stays approved, with no second provider customer, and can still be paid out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BREB, call, expectError, PAYOUTS, payoutBody, sql } from "../support/flows.ts"
import { eventsSettled, type LiveStack, newWalletUser, simCall, startLiveStack } from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack()
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })

const sim = (path: string, body?: unknown) => simCall(stack, path, body)

const customersWith = async (email: string): Promise<Array<{ id: string; email: string }>> =>
  (await sim(`/__sim/customers?email=${encodeURIComponent(email)}`)).data

/** Sends an OTP to `email` (past the resend cooldown of an earlier one) and verifies the code the e-mail carried. */
const verifyWith = async (userAddress: string, email: string) => {
  // the 30 s resend cooldown is the service's own policy, not what this test is about: the earlier send is moved back
  await sql(stack.server, (q) =>
    q`UPDATE otp_challenges SET created_at = created_at - interval '1 minute'
      WHERE user_address = ${userAddress.toLowerCase()} RETURNING id`)
  const sent = await post(`${BREB}/kyc/otp/send`, { email, userAddress })
  expect(sent.status, sent.text).toBe(200)
  const message = await stack.mail.waitFor((m) => m.to.includes(email), 5000)
  const code = /\b([0-9]{6})\b/.exec(message.text ?? "")![1]!
  return post(`${BREB}/kyc/otp/verify`, { userAddress, code })
}

const linkCustomer = async (kycUrl: string): Promise<string> => {
  const linkId = kycUrl.split("/").pop()
  const link = await fetch(`${stack.sim.url}/v0/kyc_links/${linkId}`, { headers: { "api-key": stack.sim.apiKey } })
  return ((await link.json()) as { customer_id: string }).customer_id
}

const email = (tag: string, address: string) => `${tag}-${address.slice(2, 10).toLowerCase()}@example.com`

describe("a new e-mail after a verified OTP", () => {
  it(
    "before approval: the verify answers the same KYC link and customer; after approval the user stays approved",
    async () => {
      const user = await newWalletUser(stack)
      const [first, second, third] = ["first", "second", "third"].map((tag) => email(tag, user.address))

      const started = await verifyWith(user.address, first!)
      expect(started.status, started.text).toBe(200)
      expect(started.json).toMatchObject({ kycStatus: "pending" })
      const { kycUrl } = started.json as { kycUrl: string }
      const customerId = await linkCustomer(kycUrl)

      const changed = await verifyWith(user.address, second!)
      expect(changed.status, changed.text).toBe(200)
      expect(changed.json).toEqual({ userAddress: user.address, kycStatus: "pending", kycUrl })
      expect(await customersWith(second!)).toEqual([])
      expect((await fetch(kycUrl)).status).toBe(200)

      await sim(`/__sim/customers/${customerId}/approve`, {})
      await eventsSettled(stack, "customer", customerId)
      const approved = await verifyWith(user.address, third!)
      expect(approved.status, approved.text).toBe(200)
      expect(approved.json).toMatchObject({ kycStatus: "approved" })
      expect(await customersWith(third!)).toEqual([])
      const created = await post(PAYOUTS, payoutBody(user.address))
      expect(created.status, created.text).toBe(201)
    },
    60_000
  )

  it("after a KYC start whose answer was lost: the new e-mail gets a working KYC link", async () => {
    const user = await newWalletUser(stack)
    const [lost, next] = ["lost", "next"].map((tag) => email(tag, user.address))
    // the provider creates the customer and its answer never arrives, on every try
    await sim("/__sim/faults/timeouts", { count: 10, after_processing: true, path: "/v0/kyc_links" })
    try {
      expectError(await verifyWith(user.address, lost!), 503)
    } finally {
      await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })
    }
    expect(await customersWith(lost!)).toHaveLength(1)

    const verified = await verifyWith(user.address, next!)
    expect(verified.status, verified.text).toBe(200)
    expect(verified.json).toMatchObject({ kycStatus: "pending" })
    const customers = await customersWith(next!)
    expect(customers).toHaveLength(1)
    expect(await linkCustomer((verified.json as { kycUrl: string }).kycUrl)).toBe(customers[0]!.id)
  }, 60_000)
})
