import { randomUUID } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const RESEND_COOLDOWN = 30 * SECOND // DESIGN §3
const SENDS_PER_DAY = 10 // DESIGN §3

const it = httpTest()

/** Records earlier sends for the user, at the given instants (epoch ms). */
const sentAt = (server: TestServer, integrationId: string, userAddress: string, instants: ReadonlyArray<number>) =>
  server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        Effect.forEach(
          instants,
          (at) =>
            sql`INSERT INTO otp_challenges (id, integration_id, user_address, email, code_hash, created_at, expires_at, consumed_at)
          VALUES (${`otp_${randomUUID()}`}, ${integrationId}, ${userAddress.toLowerCase()}, 'ana@example.com', 'x',
                  ${new Date(at)}, ${new Date(at + 10 * MINUTE)}, ${new Date(at)})`
        )
    )
  )

/** Sends and returns the answer with the instants just before and after it. */
const timedSend = async (server: TestServer, partner: Partner, userAddress: string) => {
  const before = Date.now()
  const answer = await call(server, `${BREB}/kyc/otp/send`, {
    apiKey: partner.apiKey,
    body: { email: "ana@example.com", userAddress }
  })
  return { answer, before, after: Date.now() }
}

/** Retry-After must be the whole seconds until `allowedAt`, as seen at some instant during the request. */
const expectRetryAfterUntil = (sent: Awaited<ReturnType<typeof timedSend>>, allowedAt: number) => {
  expectErrorBody(sent.answer, 429)
  const retryAfter = Number(sent.answer.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((allowedAt - sent.after) / SECOND))
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil((allowedAt - sent.before) / SECOND))
}

describe("kyc/otp/send Retry-After", () => {
  it("after the daily limit, is the time until the oldest send in the rolling 24 h leaves it", async ({ server, partner }) => {
    const userAddress = newAddress()
    const now = Date.now()
    const outside = [now - DAY - 2 * HOUR, now - DAY - 10 * MINUTE]
    const inside = Array.from({ length: SENDS_PER_DAY }, (_, i) => now - 20 * HOUR + i * 10 * MINUTE)
    await sentAt(server, partner.integrationId, userAddress, [...outside, ...inside])
    expectRetryAfterUntil(await timedSend(server, partner, userAddress), Math.min(...inside) + DAY)
  })

  it("when both the cooldown and the daily limit hold, is the later of the two", async ({ server, partner }) => {
    const userAddress = newAddress()
    const now = Date.now()
    const inside = Array.from({ length: SENDS_PER_DAY - 1 }, (_, i) => now - 18 * HOUR + i * MINUTE)
    await sentAt(server, partner.integrationId, userAddress, [...inside, now - 10 * SECOND])
    expectRetryAfterUntil(await timedSend(server, partner, userAddress), Math.min(...inside) + DAY)
  })

  it("within the cooldown, is the time until the cooldown ends", async ({ server, partner }) => {
    const userAddress = newAddress()
    const last = Date.now() - 10 * SECOND
    await sentAt(server, partner.integrationId, userAddress, [last])
    expectRetryAfterUntil(await timedSend(server, partner, userAddress), last + RESEND_COOLDOWN)
  })

  it("allows a send again once the oldest send has left the window", async ({ server, partner }) => {
    const userAddress = newAddress()
    const now = Date.now()
    const inside = Array.from({ length: SENDS_PER_DAY - 1 }, (_, i) => now - 20 * HOUR + i * MINUTE)
    await sentAt(server, partner.integrationId, userAddress, [now - DAY - SECOND, ...inside])
    const sent = await timedSend(server, partner, userAddress)
    expect(sent.answer.status, sent.answer.text).toBe(200)
  })
})
