import { SqlClient } from "effect/sql"
import { OtpInvalid, OtpSendResponse, OtpVerifyResponse, UserAddress } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectErrorBody, failureOf, newAddress, payoutBody, withBadChecksum } from "../support/http.ts"
import { clientExit, type TestServer } from "../support/server.ts"

const DEFAULT_DEBUG_CODE = "123456" // seed part 1: the default debugCode in mock mode
const OTP_TTL_MS = 10 * 60 * 1000 // DESIGN §3: valid 10 min
const RESEND_COOLDOWN_S = 30
const MAX_WRONG_ATTEMPTS = 5

const it = httpTest()
/** A server of its own for the operator-configured debug code (file-scoped fixtures are set up at the top level). */
const itWithDebugCode = httpTest({ env: { MOCK_OTP_DEBUG_CODE: "482913" } })

const send = (target: Pick<TestServer, "baseUrl">, key: string, userAddress: string) =>
  call(target, `${BREB}/kyc/otp/send`, { apiKey: key, body: { email: "ana@example.com", userAddress } })

const verify = (target: Pick<TestServer, "baseUrl">, key: string, userAddress: string, code: string) =>
  call(target, `${BREB}/kyc/otp/verify`, { apiKey: key, body: { userAddress, code } })

const expectApproved = async (answer: Awaited<ReturnType<typeof verify>>, userAddress: string) => {
  expect(answer.status, answer.text).toBe(200)
  const body = Schema.decodeUnknownSync(OtpVerifyResponse)(answer.body)
  expect(body.kycStatus).toBe("approved")
  expect(body.userAddress).toBe(userAddress)
}

/** A code that is 6 digits but not `code`. */
const wrongCode = (code: string, i = 0) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0")

const sql = <A extends object>(
  server: TestServer,
  f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>
) => server.run(Effect.flatMap(SqlClient.SqlClient, f))

describe("kyc/otp/send", () => {
  it("answers 200 with debugCode 123456 (a string) and expiresAt 10 minutes ahead", async ({ server, partner }) => {
    const userAddress = newAddress()
    const before = Date.now()
    const answer = await send(server, partner.apiKey, userAddress)
    const after = Date.now()
    expect(answer.status, answer.text).toBe(200)
    const body = Schema.decodeUnknownSync(OtpSendResponse)(answer.body)
    expect(answer.body.debugCode).toBe(DEFAULT_DEBUG_CODE)
    expect(body.userAddress).toBe(userAddress)
    const expiresAt = Date.parse(body.expiresAt)
    expect(expiresAt).toBeGreaterThanOrEqual(before + OTP_TTL_MS - 1000)
    expect(expiresAt).toBeLessThanOrEqual(after + OTP_TTL_MS + 1000)
  })

  it("answers 429 with Retry-After when the same user asks again within the cooldown", async ({ server, partner }) => {
    const userAddress = newAddress()
    expect((await send(server, partner.apiKey, userAddress)).status).toBe(200)
    const again = await send(server, partner.apiKey, userAddress)
    expectErrorBody(again, 429)
    const retryAfter = Number(again.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(RESEND_COOLDOWN_S)
    // the cooldown is per user: another address is not held back
    expect((await send(server, partner.apiKey, newAddress())).status).toBe(200)
  })

  it("answers 400 naming the field for an invalid e-mail or userAddress", async ({ server, partner }) => {
    const good = newAddress()
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["email", { email: "not-an-email", userAddress: good }],
      ["email", { email: "", userAddress: good }],
      ["email", { userAddress: good }],
      ["userAddress", { email: "ana@example.com", userAddress: good.toLowerCase() }],
      ["userAddress", { email: "ana@example.com", userAddress: withBadChecksum(good) }],
      ["userAddress", { email: "ana@example.com", userAddress: "0x1234" }],
      ["userAddress", { email: "ana@example.com" }]
    ]
    for (const [field, body] of cases) {
      const error = expectErrorBody(await call(server, `${BREB}/kyc/otp/send`, { apiKey: partner.apiKey, body }), 400)
      expect(error.error, JSON.stringify(body)).toContain(field)
    }
  })
})

describe("kyc/otp/verify", () => {
  it("approves KYC with the right code, and the approved customer can create a payout", async ({ server, partner }) => {
    const userAddress = newAddress()
    const before = await call(server, `${BREB}/payouts`, { apiKey: partner.apiKey, body: payoutBody(userAddress) })
    expectErrorBody(before, 409, "needs_kyc")
    const sent = await send(server, partner.apiKey, userAddress)
    await expectApproved(await verify(server, partner.apiKey, userAddress, sent.body.debugCode), userAddress)
    const created = await call(server, `${BREB}/payouts`, { apiKey: partner.apiKey, body: payoutBody(userAddress) })
    expect(created.status, created.text).toBe(201)
  })

  it("answers 400 otp_invalid for a wrong code, then still accepts the right one", async ({ server, partner }) => {
    const userAddress = newAddress()
    const { body } = await send(server, partner.apiKey, userAddress)
    expectErrorBody(await verify(server, partner.apiKey, userAddress, wrongCode(body.debugCode)), 400, "otp_invalid")
    await expectApproved(await verify(server, partner.apiKey, userAddress, body.debugCode), userAddress)
  })

  it("X-Mock-Scenario: provider_unavailable is 503 ErrorBody, and the same code verifies once the provider is back", async ({ server, partner }) => {
    const userAddress = newAddress()
    const { body } = await send(server, partner.apiKey, userAddress)
    const down = await call(server, `${BREB}/kyc/otp/verify`, {
      apiKey: partner.apiKey,
      body: { userAddress, code: body.debugCode },
      headers: { "x-mock-scenario": "provider_unavailable" }
    })
    expect(expectErrorBody(down, 503).errorCode).toBeUndefined()
    await expectApproved(await verify(server, partner.apiKey, userAddress, body.debugCode), userAddress)
    // used once: a verify repeated for the approved customer answers it (issue #29 part 5)
    await expectApproved(await verify(server, partner.apiKey, userAddress, body.debugCode), userAddress)
  })

  it("gives the typed client an OtpInvalid failure for a wrong code", async ({ server, partner }) => {
    const userAddress = newAddress()
    const { body } = await send(server, partner.apiKey, userAddress)
    const exit = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) =>
        client.breb.verifyOtp({
          headers: {},
          payload: { userAddress: UserAddress.make(userAddress), code: wrongCode(body.debugCode) }
        })
    )
    expect(failureOf(exit)).toBeInstanceOf(OtpInvalid)
  })

  it("allows at most 5 wrong attempts: after 4 the right code works, after 5 it is burnt", async ({ server, partner }) => {
    const lucky = newAddress()
    const luckyCode = (await send(server, partner.apiKey, lucky)).body.debugCode
    for (let i = 0; i < MAX_WRONG_ATTEMPTS - 1; i++) {
      expectErrorBody(await verify(server, partner.apiKey, lucky, wrongCode(luckyCode, i)), 400, "otp_invalid")
    }
    await expectApproved(await verify(server, partner.apiKey, lucky, luckyCode), lucky)

    const unlucky = newAddress()
    const code = (await send(server, partner.apiKey, unlucky)).body.debugCode
    for (let i = 0; i < MAX_WRONG_ATTEMPTS; i++) {
      expectErrorBody(await verify(server, partner.apiKey, unlucky, wrongCode(code, i)), 400, "otp_invalid")
    }
    expectErrorBody(await verify(server, partner.apiKey, unlucky, code), 400, "otp_invalid")
  })

  it("accepts a new code after a burnt one (resend after the cooldown)", async ({ server, partner }) => {
    const userAddress = newAddress()
    const code = (await send(server, partner.apiKey, userAddress)).body.debugCode
    for (let i = 0; i < MAX_WRONG_ATTEMPTS; i++) await verify(server, partner.apiKey, userAddress, wrongCode(code, i))
    expectErrorBody(await verify(server, partner.apiKey, userAddress, code), 400, "otp_invalid")
    expectErrorBody(await send(server, partner.apiKey, userAddress), 429)
    // pretend the cooldown passed instead of waiting 30 s
    await sql(server, (q) =>
      q`UPDATE otp_challenges SET created_at = created_at - interval '1 minute'
        WHERE user_address = ${userAddress.toLowerCase()}`)
    const resent = await send(server, partner.apiKey, userAddress)
    expect(resent.status, resent.text).toBe(200)
    await expectApproved(await verify(server, partner.apiKey, userAddress, resent.body.debugCode), userAddress)
  })

  it("answers otp_invalid for an expired code", async ({ server, partner }) => {
    const userAddress = newAddress()
    const code = (await send(server, partner.apiKey, userAddress)).body.debugCode
    await sql(server, (q) =>
      q`UPDATE otp_challenges SET expires_at = now() - interval '1 second'
        WHERE user_address = ${userAddress.toLowerCase()}`)
    expectErrorBody(await verify(server, partner.apiKey, userAddress, code), 400, "otp_invalid")
  })

  it("answers otp_invalid when no code was sent", async ({ server, partner }) => {
    expectErrorBody(await verify(server, partner.apiKey, newAddress(), DEFAULT_DEBUG_CODE), 400, "otp_invalid")
  })

  it("answers a code that was already used with the customer once approved, otp_invalid once rejected", async ({ server, partner }) => {
    const userAddress = newAddress()
    const code = (await send(server, partner.apiKey, userAddress)).body.debugCode
    await expectApproved(await verify(server, partner.apiKey, userAddress, code), userAddress)
    await expectApproved(await verify(server, partner.apiKey, userAddress, code), userAddress)
    await expectApproved(await verify(server, partner.apiKey, userAddress, wrongCode(code)), userAddress)
    // a new code sent to the approved customer is checked: a wrong one is still otp_invalid, the right one verifies
    await sql(server, (q) =>
      q`UPDATE otp_challenges SET created_at = created_at - interval '1 minute'
        WHERE user_address = ${userAddress.toLowerCase()}`)
    const resent = await send(server, partner.apiKey, userAddress)
    expect(resent.status, resent.text).toBe(200)
    expectErrorBody(
      await verify(server, partner.apiKey, userAddress, wrongCode(resent.body.debugCode)),
      400,
      "otp_invalid"
    )
    await expectApproved(await verify(server, partner.apiKey, userAddress, resent.body.debugCode), userAddress)
    const rejected = await call(server, `/api/integrations/test-helpers/kyc/${userAddress}/reject`, {
      apiKey: partner.apiKey,
      body: {}
    })
    expect(rejected.status, rejected.text).toBe(200)
    expectErrorBody(await verify(server, partner.apiKey, userAddress, code), 400, "otp_invalid")
  })

  it("does not let another integration verify this integration's code", async ({ server, partner }) => {
    const { apiKey: otherKey } = await server.newIntegration()
    const userAddress = newAddress()
    const code = (await send(server, partner.apiKey, userAddress)).body.debugCode
    expectErrorBody(await verify(server, otherKey, userAddress, code), 400, "otp_invalid")
    const other = await call(server, `${BREB}/payouts`, { apiKey: otherKey, body: payoutBody(userAddress) })
    expectErrorBody(other, 409, "needs_kyc")
    // the owner's code is untouched by the foreign attempt
    await expectApproved(await verify(server, partner.apiKey, userAddress, code), userAddress)
  })

  it("answers 400 otp_invalid for a code that is not 6 digits (seed: an invalid code yields otp_invalid), without using an attempt", async ({ server, partner }) => {
    const userAddress = newAddress()
    const { body } = await send(server, partner.apiKey, userAddress)
    for (const code of ["12345", "1234567", "12a456", " 123456", "", "１２３４５６"]) {
      const error = expectErrorBody(await verify(server, partner.apiKey, userAddress, code), 400, "otp_invalid")
      expect(error.error, JSON.stringify(code)).toContain("6 digits")
    }
    for (let i = 0; i < MAX_WRONG_ATTEMPTS - 1; i++) {
      expectErrorBody(
        await verify(server, partner.apiKey, userAddress, wrongCode(body.debugCode, i)),
        400,
        "otp_invalid"
      )
    }
    await expectApproved(await verify(server, partner.apiKey, userAddress, body.debugCode), userAddress)
  })

  it("answers 400 naming the field for a bad userAddress, or a code that is missing or not a string", async ({ server, partner }) => {
    const good = newAddress()
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["userAddress", { userAddress: good.toLowerCase(), code: DEFAULT_DEBUG_CODE }],
      ["userAddress", { userAddress: withBadChecksum(good), code: DEFAULT_DEBUG_CODE }],
      ["code", { userAddress: good, code: 123456 }],
      ["code", { userAddress: good, code: null }],
      ["code", { userAddress: good }]
    ]
    for (const [field, body] of cases) {
      const error = expectErrorBody(await call(server, `${BREB}/kyc/otp/verify`, { apiKey: partner.apiKey, body }), 400)
      expect(error.error, JSON.stringify(body)).toContain(field)
      expect(error.errorCode).toBeUndefined()
    }
  })
})

describe("OTP at rest", () => {
  it("never stores the code in clear", async ({ server, partner }) => {
    const userAddress = newAddress()
    const code = (await send(server, partner.apiKey, userAddress)).body.debugCode as string
    const rows = await sql<Record<string, unknown>>(
      server,
      (q) => q`SELECT * FROM otp_challenges WHERE user_address = ${userAddress.toLowerCase()}`
    )
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    expect(row["code_hash"]).not.toBe(code)
    expect(String(row["code_hash"]).length).toBeGreaterThanOrEqual(32)
    for (const value of Object.values(row)) expect(String(value)).not.toContain(code)
  })
})

describe("operator-configured debug code", () => {
  itWithDebugCode("returns MOCK_OTP_DEBUG_CODE as debugCode, and that code verifies", async ({ server, partner }) => {
    const userAddress = newAddress()
    const sent = await send(server, partner.apiKey, userAddress)
    expect(sent.status, sent.text).toBe(200)
    expect(sent.body.debugCode).toBe("482913")
    expectErrorBody(await verify(server, partner.apiKey, userAddress, DEFAULT_DEBUG_CODE), 400, "otp_invalid")
    await expectApproved(await verify(server, partner.apiKey, userAddress, "482913"), userAddress)
  })
})
