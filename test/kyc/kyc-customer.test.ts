/**
 * Issue #29 part 5, mock mode over real HTTP: `GET breb/kyc/customers/{userAddress}` answers this integration's
 * customer (status, masked e-mail, timestamps), 404 for an address no OTP was sent to and for another integration's
 * customer, 400 naming `userAddress` for an address that is not EIP-55; the typed client decodes it.
 */
import { KycCustomerRecord, NotFound, UserAddress } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectErrorBody, failureOf, newAddress, withBadChecksum } from "../support/http.ts"
import { clientExit, type TestServer, withClient } from "../support/server.ts"

const it = httpTest()

const customer = (server: TestServer, key: string, userAddress: string) =>
  call(server, `${BREB}/kyc/customers/${userAddress}`, { apiKey: key })

const send = (server: TestServer, key: string, userAddress: string, email: string) =>
  call(server, `${BREB}/kyc/otp/send`, { apiKey: key, body: { email, userAddress } })

const verify = (server: TestServer, key: string, userAddress: string, code: string) =>
  call(server, `${BREB}/kyc/otp/verify`, { apiKey: key, body: { userAddress, code } })

const decoded = (answer: Awaited<ReturnType<typeof customer>>) => {
  expect(answer.status, answer.text).toBe(200)
  expect(Object.keys(answer.body).sort()).toEqual(
    ["createdAt", "email", "kycStatus", "kycUrl", "updatedAt", "userAddress"]
  )
  return Schema.decodeUnknownSync(KycCustomerRecord)(answer.body)
}

describe("GET kyc/customers/{userAddress}", () => {
  it("answers not_started after the send, approved after the verify, with the e-mail masked", async ({ server, partner }) => {
    const userAddress = newAddress()
    const sent = await send(server, partner.apiKey, userAddress, "juliana.rojas@example.com")
    expect(sent.status, sent.text).toBe(200)

    const before = await customer(server, partner.apiKey, userAddress)
    const started = decoded(before)
    expect(started).toMatchObject({
      userAddress,
      kycStatus: "not_started",
      kycUrl: null,
      email: "j***@example.com"
    })
    expect(before.text).not.toContain("juliana")

    const verified = await verify(server, partner.apiKey, userAddress, sent.body.debugCode)
    expect(verified.status, verified.text).toBe(200)
    const after = await customer(server, partner.apiKey, userAddress)
    const approved = decoded(after)
    expect(approved).toMatchObject({ userAddress, kycStatus: "approved", email: "j***@example.com" })
    expect(approved.createdAt).toBe(started.createdAt)
    expect(Date.parse(approved.updatedAt)).toBeGreaterThanOrEqual(Date.parse(started.updatedAt))
    expect(after.text).not.toContain("juliana")
  })

  it("answers rejected once the provider rejected the customer (sandbox helper)", async ({ server, partner }) => {
    const userAddress = newAddress()
    const sent = await send(server, partner.apiKey, userAddress, "ana@example.com")
    expect((await verify(server, partner.apiKey, userAddress, sent.body.debugCode)).status).toBe(200)
    const rejected = await call(server, `/api/integrations/test-helpers/kyc/${userAddress}/reject`, {
      apiKey: partner.apiKey,
      body: {}
    })
    expect(rejected.status, rejected.text).toBe(200)
    expect(decoded(await customer(server, partner.apiKey, userAddress))).toMatchObject({
      kycStatus: "rejected",
      email: "a***@example.com"
    })
  })

  it("answers 404 ErrorBody for an address no OTP was sent to", async ({ server, partner }) => {
    const userAddress = newAddress()
    const error = expectErrorBody(await customer(server, partner.apiKey, userAddress), 404)
    expect(error.error).toContain(userAddress)
  })

  it("answers 404 for another integration's customer, whatever its status", async ({ server, partner }) => {
    const { apiKey: otherKey } = await server.newIntegration()
    const pending = newAddress()
    expect((await send(server, otherKey, pending, "ana@example.com")).status).toBe(200)
    const approved = newAddress()
    const sent = await send(server, otherKey, approved, "ana@example.com")
    expect((await verify(server, otherKey, approved, sent.body.debugCode)).status).toBe(200)

    for (const userAddress of [pending, approved]) {
      expect(decoded(await customer(server, otherKey, userAddress)).userAddress).toBe(userAddress)
      expectErrorBody(await customer(server, partner.apiKey, userAddress), 404)
    }
  })

  it("answers 400 naming userAddress for an address that is not EIP-55 checksummed or not an address", async ({ server, partner }) => {
    const good = newAddress()
    expect((await send(server, partner.apiKey, good, "ana@example.com")).status).toBe(200)
    for (const bad of [good.toLowerCase(), withBadChecksum(good), "0x1234", "not-an-address"]) {
      const error = expectErrorBody(await customer(server, partner.apiKey, bad), 400)
      expect(error.error, bad).toContain("userAddress")
    }
  })

  it("gives the typed client the customer, and NotFound for an unknown address", async ({ server, partner }) => {
    const userAddress = newAddress()
    const sent = await send(server, partner.apiKey, userAddress, "ana@example.com")
    expect((await verify(server, partner.apiKey, userAddress, sent.body.debugCode)).status).toBe(200)
    const found = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.getKycCustomer({ params: { userAddress: UserAddress.make(userAddress) } })
    )
    expect(found).toMatchObject({ userAddress, kycStatus: "approved", email: "a***@example.com" })
    const exit = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.getKycCustomer({ params: { userAddress: UserAddress.make(newAddress()) } })
    )
    expect(failureOf(exit)).toBeInstanceOf(NotFound)
  })
})
