/**
 * The provider simulator (scripts/simulators/provider) over real HTTP on loopback: Bridge's auth and
 * idempotency rules, KYC with signed webhooks, Bre-B external accounts, transfers funded by a real ERC-20
 * deposit on anvil, and the fault switches. Waits are bounded polls on conditions, never sleeps.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto"
import { connect } from "node:net"
import { networkInterfaces } from "node:os"
import { erc20Abi, getAddress, parseEther } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type ProviderSimulator, startProviderSimulator } from "../../scripts/simulators/provider/server.ts"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import {
  type Receiver,
  request,
  signatureTimestamp,
  simEvents,
  startReceiver,
  verifyBridgeSignature,
  waitUntil
} from "./support.ts"

const API_KEY = "sk-test-provider-sim"
/** One signing key for every simulator in this file (skips an RSA key generation per test). */
const privateKeyPem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
  .export({ type: "pkcs8", format: "pem" })
  .toString()

const FAST = {
  apiKey: API_KEY,
  privateKeyPem,
  stepDelayMs: 30,
  pollIntervalMs: 50,
  webhookMaxAttempts: 3,
  webhookBackoffMs: [20],
  hangTimeoutMs: 5000
} as const

const newKey = () => `idem-${randomUUID()}`
const from = privateKeyToAddress(generatePrivateKey())

const createCustomer = async (sim: ProviderSimulator, options: { readonly approve?: boolean } = {}) => {
  const link = await request(sim, "/v0/kyc_links", {
    body: { full_name: "Ana María Pérez", email: `ana+${randomUUID()}@example.com`, type: "individual" },
    idempotencyKey: newKey()
  })
  expect(link.status).toBe(201)
  const customerId: string = link.body.customer_id
  if (options.approve !== false) {
    expect((await request(sim, `/__sim/customers/${customerId}/approve`, { method: "POST" })).status).toBe(200)
  }
  return { link: link.body, customerId }
}

const createAccount = async (sim: ProviderSimulator, customerId: string, ownerName = "Ana María Pérez") =>
  request(sim, `/v0/customers/${customerId}/external_accounts`, {
    body: {
      currency: "cop",
      account_owner_name: ownerName,
      account_owner_type: "individual",
      breb: { key: "@anaperez" }
    },
    idempotencyKey: newKey()
  })

const transferBody = (customerId: string, externalAccountId: string, amount: string, fromAddress: string = from) => ({
  amount,
  on_behalf_of: customerId,
  developer_fee_percent: "0.5",
  source: { payment_rail: "celo", currency: "usdc", from_address: fromAddress },
  destination: { payment_rail: "breb", currency: "cop", external_account_id: externalAccountId },
  client_reference_id: `payout_${randomUUID()}`
})

/** An approved customer, a Bre-B account and a transfer awaiting funds. */
const createTransfer = async (sim: ProviderSimulator, amount = "63.448900", fromAddress: string = from) => {
  const { customerId } = await createCustomer(sim)
  const account = await createAccount(sim, customerId)
  expect(account.status).toBe(201)
  const transfer = await request(sim, "/v0/transfers", {
    body: transferBody(customerId, account.body.id, amount, fromAddress),
    idempotencyKey: newKey()
  })
  expect(transfer.status).toBe(201)
  return transfer.body
}

const transferStates = (receiver: Receiver, transferId: string) =>
  receiver.about(transferId).map((d) => d.body.event_object.state as string)

describe("provider simulator: API rules, KYC, accounts and faults", () => {
  let sim: ProviderSimulator
  let receiver: Receiver

  beforeEach(async () => {
    sim = await startProviderSimulator({ ...FAST })
    receiver = await startReceiver(sim.publicKeyPem)
    const configured = await request(sim, "/__sim/config", { body: { webhook_url: receiver.url } })
    expect(configured.body.webhook_url).toBe(receiver.url)
  })
  afterEach(async () => {
    await sim?.close()
    await receiver?.close()
  })

  it("listens on 127.0.0.1 only", async () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const outward = Object.values(networkInterfaces()).flat().find((i) =>
      i !== undefined && !i.internal && i.family === "IPv4"
    )
    if (outward === undefined) return // no other interface on this machine to try
    const refused = await new Promise<string>((resolve) => {
      const socket = connect({ host: outward.address, port: sim.port })
      socket.once("connect", () => {
        socket.destroy()
        resolve("connected")
      })
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    })
    expect(refused).toBe("ECONNREFUSED")
  })

  it("answers 401 with a Bridge-style error for a missing or wrong Api-Key, and serves the configured rates", async () => {
    const missing = await request(sim, "/v0/exchange_rates?from=usd&to=cop", { apiKey: null })
    expect(missing.status).toBe(401)
    expect(missing.body).toMatchObject({ code: "unauthorized", message: expect.any(String) })
    const wrong = await request(sim, "/v0/exchange_rates?from=usd&to=cop", { apiKey: "sk-test-wrong" })
    expect(wrong.status).toBe(401)
    expect(wrong.body.code).toBe("unauthorized")
    const posted = await request(sim, "/v0/kyc_links", { apiKey: null, body: {}, idempotencyKey: newKey() })
    expect(posted.status).toBe(401)

    const rates = await request(sim, "/v0/exchange_rates?from=usd&to=cop")
    expect(rates.status).toBe(200)
    expect(rates.body).toEqual({ midmarket_rate: "4000.00", buy_rate: "4040.00", sell_rate: "3960.00" })
    await request(sim, "/__sim/config", { body: { rates: { sell_rate: "3901.25" } } })
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=cop")).body.sell_rate).toBe("3901.25")
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=eur")).status).toBe(400)
  })

  it("replays the first response for the same Idempotency-Key and body, 422 for another body, 400 without a key", async () => {
    const key = newKey()
    const body = { full_name: "Luis Gómez", email: "luis@example.com", type: "individual" }
    const first = await request(sim, "/v0/kyc_links", { body, idempotencyKey: key })
    expect(first.status).toBe(201)
    // same key, same body (keys in another order): the stored response, byte for byte
    const again = await request(sim, "/v0/kyc_links", {
      body: { type: "individual", email: "luis@example.com", full_name: "Luis Gómez" },
      idempotencyKey: key
    })
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    // a new key creates a new link and customer
    const other = await request(sim, "/v0/kyc_links", { body, idempotencyKey: newKey() })
    expect(other.body.customer_id).not.toBe(first.body.customer_id)

    const changed = await request(sim, "/v0/kyc_links", {
      body: { ...body, email: "otro@example.com" },
      idempotencyKey: key
    })
    expect(changed.status).toBe(422)
    expect(changed.body.code).toBe("idempotency_key_reused")
    const elsewhere = await request(sim, `/v0/customers/${first.body.customer_id}/external_accounts`, {
      body,
      idempotencyKey: key
    })
    expect(elsewhere.status).toBe(422)

    const missing = await request(sim, "/v0/kyc_links", { body })
    expect(missing.status).toBe(400)
    expect(missing.body.code).toBe("missing_idempotency_key")

    // errors are stored and replayed too
    const badKey = newKey()
    const bad = await request(sim, "/v0/kyc_links", {
      body: { full_name: "x", email: "not-an-email", type: "individual" },
      idempotencyKey: badKey
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ code: "invalid_parameters", source: { location: "body", key: "email" } })
    const badAgain = await request(sim, "/v0/kyc_links", {
      body: { full_name: "x", email: "not-an-email", type: "individual" },
      idempotencyKey: badKey
    })
    expect(badAgain.status).toBe(400)
    expect(badAgain.headers.get("idempotent-replayed")).toBe("true")
  })

  it("KYC: a link starts not_started/pending; approval sends a customer webhook signed with the exposed public key", async () => {
    const { link, customerId } = await createCustomer(sim, { approve: false })
    expect(link).toMatchObject({
      kyc_status: "not_started",
      tos_status: "pending",
      customer_id: customerId,
      type: "individual"
    })
    expect(link.kyc_link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/__sim\/kyc\//)
    expect((await request(sim, `/v0/kyc_links/${link.id}`)).body.kyc_status).toBe("not_started")
    expect((await request(sim, `/v0/customers/${customerId}`)).body).toMatchObject({
      id: customerId,
      status: "not_started"
    })

    const approved = await request(sim, `/__sim/customers/${customerId}/approve`, { method: "POST" })
    expect(approved.status).toBe(200)
    const [delivery] = await receiver.waitFor("the customer event", 1, (d) => d.body?.event_object_id === customerId)
    const exposed = await request(sim, "/__sim/public-key")
    expect(exposed.text).toBe(sim.publicKeyPem)
    expect(exposed.text).toContain("BEGIN PUBLIC KEY")

    const header = delivery!.headers["x-webhook-signature"] as string
    expect(header).toMatch(/^t=\d{13},v0=[A-Za-z0-9+/]+=*$/)
    expect(Math.abs(signatureTimestamp(header) - Date.now())).toBeLessThan(5000)
    expect(verifyBridgeSignature(exposed.text, header, delivery!.rawBody)).toBe(true)
    expect(verifyBridgeSignature(exposed.text, header, delivery!.rawBody.replace("approved", "rejected"))).toBe(false)
    expect(
      verifyBridgeSignature(
        exposed.text,
        header.replace(/^t=\d+/, `t=${signatureTimestamp(header) + 1}`),
        delivery!.rawBody
      )
    ).toBe(false)
    expect(delivery!.verdict).toBe("valid")
    expect(delivery!.answered).toBe(200)

    expect(delivery!.body).toMatchObject({
      event_id: expect.any(String),
      event_category: "customer",
      event_type: expect.any(String),
      event_object_id: customerId,
      event_object_status: "active",
      event_object: { id: customerId, kyc_status: "approved", tos_status: "approved", status: "active" },
      event_created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/)
    })
    expect((await request(sim, `/v0/kyc_links/${link.id}`)).body).toMatchObject({
      kyc_status: "approved",
      tos_status: "approved"
    })
    const [logged] = await simEvents(sim, customerId)
    expect(logged).toMatchObject({ event_id: delivery!.body.event_id, delivered: true, settled: true })
    expect(logged!.attempts.map((a) => a.status)).toEqual([200])
  })

  it("KYC: rejection sends a rejected customer event", async () => {
    const { customerId } = await createCustomer(sim, { approve: false })
    await request(sim, `/__sim/customers/${customerId}/reject`, { body: { reasons: ["document expired"] } })
    const [delivery] = await receiver.waitFor("the rejection", 1, (d) => d.body?.event_object_id === customerId)
    expect(delivery!.body.event_object).toMatchObject({
      kyc_status: "rejected",
      status: "rejected",
      rejection_reasons: [{ reason: "document expired" }]
    })
    expect((await request(sim, `/v0/customers/${customerId}`)).body.kyc_status).toBe("rejected")
  })

  it("external accounts: a Bre-B key is accepted; an owner name containing 'mismatch' is refused with 422", async () => {
    const { customerId } = await createCustomer(sim)
    const account = await createAccount(sim, customerId)
    expect(account.status).toBe(201)
    expect(account.body).toMatchObject({
      id: expect.any(String),
      customer_id: customerId,
      currency: "cop",
      account_owner_name: "Ana María Pérez",
      bank_name: expect.any(String),
      breb: { key_type: "alias", key_last_4: "erez" }
    })
    expect((await request(sim, `/v0/customers/${customerId}/external_accounts/${account.body.id}`)).body.id).toBe(
      account.body.id
    )

    const mismatch = await createAccount(sim, customerId, "Name MISMATCH Pérez")
    expect(mismatch.status).toBe(422)
    expect(mismatch.body).toMatchObject({ code: "account_owner_name_mismatch", source: { key: "account_owner_name" } })
    const usd = await request(sim, `/v0/customers/${customerId}/external_accounts`, {
      body: { currency: "usd", account_owner_name: "Ana", breb: { key: "@ana" } },
      idempotencyKey: newKey()
    })
    expect(usd.status).toBe(400)
    expect((await createAccount(sim, randomUUID())).status).toBe(404)
  })

  it("transfers: deposit instructions with a fresh address each; an unapproved customer is refused", async () => {
    const first = await createTransfer(sim)
    const second = await createTransfer(sim)
    expect(first).toMatchObject({
      state: "awaiting_funds",
      amount: "63.448900",
      developer_fee_percent: "0.5",
      source_deposit_instructions: { payment_rail: "celo", amount: "63.448900", currency: "usdc", from_address: from }
    })
    expect(getAddress(first.source_deposit_instructions.to_address)).toBe(first.source_deposit_instructions.to_address)
    expect(second.source_deposit_instructions.to_address).not.toBe(first.source_deposit_instructions.to_address)
    expect((await request(sim, `/v0/transfers/${first.id}`)).body).toEqual(first)
    expect((await request(sim, `/v0/transfers/${randomUUID()}`)).status).toBe(404)

    const { customerId } = await createCustomer(sim, { approve: false })
    const account = await createAccount(sim, customerId)
    const refused = await request(sim, "/v0/transfers", {
      body: transferBody(customerId, account.body.id, "10.00"),
      idempotencyKey: newKey()
    })
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe("customer_not_approved")
    const tooSmall = await createCustomer(sim)
    const smallAccount = await createAccount(sim, tooSmall.customerId)
    const small = await request(sim, "/v0/transfers", {
      body: transferBody(tooSmall.customerId, smallAccount.body.id, "1.00"),
      idempotencyKey: newKey()
    })
    expect(small.status).toBe(422)
    expect(small.body.code).toBe("amount_below_minimum")
  })

  it("5xx switch: the next N requests answer the chosen 5xx; a POST answered 5xx is not stored, so its retry creates", async () => {
    await request(sim, "/__sim/faults/errors", { body: { count: 2, status: 503 } })
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=cop")).status).toBe(503)
    const key = newKey()
    const body = { full_name: "Eva Ruiz", email: "eva@example.com", type: "individual" }
    const failed = await request(sim, "/v0/kyc_links", { body, idempotencyKey: key })
    expect(failed.status).toBe(503)
    expect(failed.body.code).toBe("internal_server_error")
    const retried = await request(sim, "/v0/kyc_links", { body, idempotencyKey: key })
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=cop")).status).toBe(200)
    const log = (await request(sim, "/__sim/requests")).body.data
    expect(log.map((r: any) => [r.status, r.fault])).toEqual([[503, "error"], [503, "error"], [201, null], [200, null]])
  })

  it("timeout switch: the request hangs until the client gives up, or until the simulator's own bound (504)", async () => {
    await request(sim, "/__sim/faults/timeouts", { body: { count: 1 } })
    await expect(request(sim, "/v0/exchange_rates?from=usd&to=cop", { signal: AbortSignal.timeout(200) })).rejects
      .toThrow()
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=cop")).status).toBe(200)

    await request(sim, "/__sim/faults/timeouts", { body: { count: 1, hang_ms: 150 } })
    const started = Date.now()
    const bounded = await request(sim, "/v0/exchange_rates?from=usd&to=cop")
    expect(bounded.status).toBe(504)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
  })

  it("timeout switch with after_processing: the POST is carried out, its answer lost; the retry with the same key replays it", async () => {
    await request(sim, "/__sim/faults/timeouts", { body: { count: 1, after_processing: true } })
    const key = newKey()
    const body = { full_name: "Eva Ruiz", email: "eva@example.com", type: "individual" }
    await expect(request(sim, "/v0/kyc_links", { body, idempotencyKey: key, signal: AbortSignal.timeout(200) })).rejects
      .toThrow()
    const retried = await request(sim, "/v0/kyc_links", { body, idempotencyKey: key })
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBe("true")
  })

  it("timeout switch for one path: only POST /v0/transfers hangs; the transfer it made is listed for counting", async () => {
    const { customerId } = await createCustomer(sim)
    const account = await createAccount(sim, customerId)
    await request(sim, "/__sim/faults/timeouts", { body: { count: 1, after_processing: true, path: "/v0/transfers" } })
    expect((await request(sim, "/v0/exchange_rates?from=usd&to=cop")).status).toBe(200)
    const body = transferBody(customerId, account.body.id, "63.448900")
    const key = newKey()
    await expect(request(sim, "/v0/transfers", { body, idempotencyKey: key, signal: AbortSignal.timeout(200) })).rejects
      .toThrow()
    const listed = await request(sim, `/__sim/transfers?on_behalf_of=${customerId}`)
    expect(listed.body).toMatchObject({
      count: 1,
      data: [{ client_reference_id: body.client_reference_id, on_behalf_of: customerId }]
    })
    const retried = await request(sim, "/v0/transfers", { body, idempotencyKey: key })
    expect(retried.headers.get("idempotent-replayed")).toBe("true")
    expect(retried.body.id).toBe(listed.body.data[0].id)
    expect((await request(sim, `/__sim/transfers?client_reference_id=${body.client_reference_id}`)).body.count).toBe(1)
    expect((await request(sim, "/__sim/faults/timeouts", { body: { count: 1, path: "/transfers" } })).status).toBe(400)
  })

  it("duplicate switch: the next event is delivered twice with the same event_id, both validly signed", async () => {
    await request(sim, "/__sim/faults/duplicates", { body: { count: 1 } })
    const { customerId } = await createCustomer(sim)
    const twice = await receiver.waitFor("the duplicated event", 2, (d) => d.body?.event_object_id === customerId)
    expect(twice[0]!.body.event_id).toBe(twice[1]!.body.event_id)
    expect(twice.map((d) => d.verdict)).toEqual(["valid", "valid"])
    expect((await simEvents(sim, customerId)).map((e) => e.reason)).toEqual(["state_change", "duplicate"])

    const next = await createCustomer(sim)
    await receiver.waitFor("the next event", 1, (d) => d.body?.event_object_id === next.customerId)
    expect(await simEvents(sim, next.customerId)).toHaveLength(1)
    const resent = await request(sim, `/__sim/events/${twice[0]!.body.event_id}/resend`, { method: "POST" })
    expect(resent.status).toBe(202)
    await receiver.waitFor("the resent event", 3, (d) => d.body?.event_object_id === customerId)
  })

  it("out-of-order switch: the next N events are held and released newest first", async () => {
    const transfer = await createTransfer(sim)
    await request(sim, "/__sim/faults/out-of-order", { body: { count: 2 } })
    await request(sim, `/__sim/transfers/${transfer.id}/state`, { body: { state: "in_review" } })
    await waitUntil("the first event held", async () => (await simEvents(sim, transfer.id)).some((e) => e.held))
    expect(receiver.about(transfer.id)).toHaveLength(0)
    await request(sim, `/__sim/transfers/${transfer.id}/state`, { body: { state: "undeliverable" } })
    await receiver.waitFor("both events", 2, (d) => d.body?.event_object_id === transfer.id)
    expect(transferStates(receiver, transfer.id)).toEqual(["undeliverable", "in_review"])
    expect(receiver.about(transfer.id).map((d) => d.body.event_object_changes.state)).toEqual([
      ["in_review", "undeliverable"],
      ["awaiting_funds", "in_review"]
    ])
  })

  it("stale switch: every attempt of the next event carries an 11-minute-old timestamp, which the service's verifier rejects", async () => {
    await request(sim, "/__sim/faults/stale", { body: { count: 1 } })
    const { customerId } = await createCustomer(sim)
    const [event] = await waitUntil("the stale event to settle", async () => {
      const events = await simEvents(sim, customerId)
      return events.length === 1 && events[0]!.settled ? events : undefined
    })
    expect(event!.stale).toBe(true)
    expect(event!.delivered).toBe(false)
    expect(event!.attempts.map((a) => a.status)).toEqual([401, 401, 401])
    for (const attempt of event!.attempts) expect(Date.now() - attempt.timestamp_ms).toBeGreaterThan(10 * 60 * 1000)
    const seen = receiver.about(customerId)
    expect(seen.map((d) => d.verdict)).toEqual(Array(3).fill("stale webhook timestamp"))
    // the signature itself is fine: only its age is wrong
    expect(verifyBridgeSignature(sim.publicKeyPem, seen[0]!.headers["x-webhook-signature"] as string, seen[0]!.rawBody))
      .toBe(true)

    // a fresh resend of the same event goes through
    await request(sim, `/__sim/events/${event!.event_id}/resend`, { method: "POST" })
    await receiver.waitFor("the fresh resend", 1, (d) => d.body?.event_object_id === customerId && d.answered === 200)
  })

  it("retries: a non-2xx answer is retried with a fresh timestamp and signature", async () => {
    receiver.setResponder((_, index) => (index === 0 ? 500 : 200))
    const { customerId } = await createCustomer(sim)
    const [first, second] = await receiver.waitFor("the retry", 2, (d) => d.body?.event_object_id === customerId)
    expect(second!.body.event_id).toBe(first!.body.event_id)
    expect(second!.rawBody).toBe(first!.rawBody)
    expect(second!.headers["x-webhook-signature"]).not.toBe(first!.headers["x-webhook-signature"])
    expect(signatureTimestamp(second!.headers["x-webhook-signature"] as string)).toBeGreaterThan(
      signatureTimestamp(first!.headers["x-webhook-signature"] as string)
    )
    expect([first!.verdict, second!.verdict]).toEqual(["valid", "valid"])
    const [event] = await waitUntil("the event delivered", async () => {
      const events = await simEvents(sim, customerId)
      return events[0]?.delivered ? events : undefined
    })
    expect(event!.attempts.map((a) => a.status)).toEqual([500, 200])
  })

  it.each(["undeliverable", "returned", "refunded"] as const)(
    "forced state %s: the transfer shows it and a transfer event carries it",
    async (state) => {
      const transfer = await createTransfer(sim)
      const forced = await request(sim, `/__sim/transfers/${transfer.id}/state`, { body: { state } })
      expect(forced.status).toBe(200)
      const [delivery] = await receiver.waitFor(`the ${state} event`, 1, (d) => d.body?.event_object_id === transfer.id)
      expect(delivery!.body).toMatchObject({
        event_category: "transfer",
        event_object_status: state,
        event_object: { id: transfer.id, state }
      })
      expect((await request(sim, `/v0/transfers/${transfer.id}`)).body.state).toBe(state)
    }
  )

  it("a forced failing state can carry the return reason and the refund, on the transfer and its event", async () => {
    const transfer = await createTransfer(sim)
    const txHash = `0x${"ab".repeat(32)}`
    const forced = await request(sim, `/__sim/transfers/${transfer.id}/state`, {
      body: {
        state: "refunded",
        return_details: { reason: "account_closed" },
        refund: { amount: "63.4489", tx_hash: txHash }
      }
    })
    expect(forced.status).toBe(200)
    const [delivery] = await receiver.waitFor("the refunded event", 1, (d) => d.body?.event_object_id === transfer.id)
    // the amount as Bridge writes token amounts: to the token's decimals (6 for the test USDC)
    const carried = {
      return_details: { reason: "account_closed" },
      refund: { amount: "63.448900", currency: "usdc", tx_hash: txHash }
    }
    expect(delivery!.body.event_object).toMatchObject({ state: "refunded", ...carried })
    expect((await request(sim, `/v0/transfers/${transfer.id}`)).body).toMatchObject(carried)

    for (
      const [body, message] of [
        [{ state: "returned", return_details: { reason: 7 } }, "return_details"],
        [{ state: "refunded", refund: { amount: "x" } }, "refund.amount"],
        [{ state: "refunded", refund: { amount: "1", tx_hash: "0x12" } }, "refund.tx_hash"]
      ] as const
    ) {
      const refused = await request(sim, `/__sim/transfers/${transfer.id}/state`, { body })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toContain(message)
    }
  })

  it("emit: a past state can be sent without moving the transfer (a late event)", async () => {
    const transfer = await createTransfer(sim)
    await request(sim, `/__sim/transfers/${transfer.id}/state`, { body: { state: "refunded" } })
    await request(sim, `/__sim/transfers/${transfer.id}/emit`, { body: { state: "payment_submitted" } })
    await receiver.waitFor("both events", 2, (d) => d.body?.event_object_id === transfer.id)
    expect(transferStates(receiver, transfer.id)).toEqual(["refunded", "payment_submitted"])
    expect((await request(sim, `/v0/transfers/${transfer.id}`)).body.state).toBe("refunded")
  })

  it("an off-chain deposit (control API) runs the same path to payment_processed", async () => {
    const transfer = await createTransfer(sim)
    await request(sim, `/__sim/transfers/${transfer.id}/deposit`, { method: "POST" })
    await receiver.waitFor("three transfer events", 3, (d) => d.body?.event_object_id === transfer.id)
    expect(transferStates(receiver, transfer.id)).toEqual(["funds_received", "payment_submitted", "payment_processed"])
  })
})

describe("provider simulator: deposits on anvil", () => {
  let anvil: Anvil
  let token: `0x${string}`
  let sim: ProviderSimulator
  let receiver: Receiver

  beforeAll(async () => {
    anvil = await startAnvil()
    token = await anvil.deploy(testUsdArtifact())
    sim = await startProviderSimulator({ ...FAST, rpcUrl: anvil.rpcUrl, tokenAddress: token })
    receiver = await startReceiver(sim.publicKeyPem)
    sim.setWebhookUrl(receiver.url)
  })
  afterAll(async () => {
    await sim?.close()
    await receiver?.close()
    await anvil?.close()
  })

  const scannedPast = (block: bigint) =>
    waitUntil(`the watcher to scan block ${block}`, async () => {
      const status = (await request(sim, "/__sim/watcher")).body
      return status.scanned_to_block !== null && BigInt(status.scanned_to_block) >= block
    })

  it("reads the token's decimals onchain", () => {
    expect(sim.tokenDecimals).toBe(6)
  })

  it("a deposit mined on anvil moves the transfer to funds_received, payment_submitted, payment_processed, one webhook each, in order", async () => {
    const userKey = generatePrivateKey()
    const user = privateKeyToAddress(userKey)
    await anvil.client.setBalance({ address: user, value: parseEther("1") })
    await anvil.mintTestUsd(token, user, 200_000_000n)
    const wallet = anvil.walletOf(userKey)
    const send = async (to: `0x${string}`, units: bigint) => {
      const hash = await wallet.writeContract({
        address: token,
        abi: erc20Abi,
        functionName: "transfer",
        args: [to, units]
      })
      const receipt = await anvil.client.waitForTransactionReceipt({ hash })
      expect(receipt.status).toBe("success")
      return receipt
    }

    const transfer = await createTransfer(sim, "63.448900", user)
    const bystander = await createTransfer(sim, "63.448900", user)
    const depositAddress = transfer.source_deposit_instructions.to_address as `0x${string}`

    // short by one unit: still awaiting funds once the watcher has seen the block
    const partial = await send(depositAddress, 63_448_899n)
    await scannedPast(partial.blockNumber)
    expect((await request(sim, `/v0/transfers/${transfer.id}`)).body.state).toBe("awaiting_funds")
    expect(receiver.about(transfer.id)).toHaveLength(0)

    const rest = await send(depositAddress, 1n)
    const deliveries = await receiver.waitFor(
      "three transfer events",
      3,
      (d) => d.body?.event_object_id === transfer.id
    )
    expect(deliveries.map((d) => d.body.event_object.state)).toEqual([
      "funds_received",
      "payment_submitted",
      "payment_processed"
    ])
    expect(deliveries.map((d) => d.verdict)).toEqual(["valid", "valid", "valid"])
    expect(deliveries.map((d) => d.body.event_category)).toEqual(["transfer", "transfer", "transfer"])
    expect(new Set(deliveries.map((d) => d.body.event_id)).size).toBe(3)

    // 63.448900 received, 0.5% developer fee 0.317245, 63.131655 converted at 3960.00 = 250001.35 COP (rounded down)
    const done = await request(sim, `/v0/transfers/${transfer.id}`)
    expect(done.body).toMatchObject({
      state: "payment_processed",
      receipt: {
        initial_amount: "63.448900",
        developer_fee: "0.317245",
        subtotal_amount: "63.131655",
        exchange_rate: "3960.00",
        final_amount: "250001.35",
        destination_currency: "cop"
      }
    })
    expect(deliveries[2]!.body.event_object.receipt.final_amount).toBe("250001.35")

    // the other transfer's address got nothing
    await scannedPast(rest.blockNumber)
    expect((await request(sim, `/v0/transfers/${bystander.id}`)).body.state).toBe("awaiting_funds")
  })
})
