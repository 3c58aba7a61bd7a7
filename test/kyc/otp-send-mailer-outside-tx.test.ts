/**
 * OTP send (issue #7, "make the seam honest"): the e-mail goes out after the send's short transaction has
 * committed, so a slow e-mail API holds neither a pooled connection in a transaction nor the user's advisory
 * lock; when it fails, the send is undone (503, no cooldown, the earlier code active again).
 */
import { SqlClient } from "effect/sql"
import { Deferred, Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import type { Partner } from "../support/flows.ts"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { Mailer, MailerUnavailable } from "../../src/kyc/Mailer.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"

const CODE = "123456" // the mock's fixed code (debugCode)

interface Hold {
  readonly entered: Deferred.Deferred<void>
  readonly release: Deferred.Deferred<void>
}

/** How the test e-mail API answers, per recipient. */
const mail = {
  holds: new Map<string, Hold>(),
  failing: new Set<string>(),
  delivered: [] as Array<string>
}

const TestMailer = Layer.succeed(
  Mailer,
  Mailer.of({
    sendOtp: ({ to }) =>
      Effect.gen(function*() {
        const hold = mail.holds.get(to)
        if (hold !== undefined) {
          yield* Deferred.succeed(hold.entered, undefined)
          yield* Deferred.await(hold.release)
        }
        if (mail.failing.has(to)) {
          return yield* Effect.fail(new MailerUnavailable({ reason: "test: the e-mail API is down" }))
        }
        mail.delivered.push(to)
      })
  })
)

/** Holds every e-mail to `to` until `release`; `entered` resolves once a send is waiting on it. */
const holdMailTo = (to: string) => {
  const hold: Hold = { entered: Effect.runSync(Deferred.make<void>()), release: Effect.runSync(Deferred.make<void>()) }
  mail.holds.set(to, hold)
  return {
    entered: () => Effect.runPromise(Deferred.await(hold.entered)),
    release: () => {
      mail.holds.delete(to)
      Effect.runSync(Deferred.succeed(hold.release, undefined))
    }
  }
}

const it = httpTest({
  captureLogs: true,
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, TestMailer) })
  }
})

const send = (server: TestServer, partner: Partner, userAddress: string, email: string) =>
  call(server, `${BREB}/kyc/otp/send`, { apiKey: partner.apiKey, body: { email, userAddress } })

const verify = (server: TestServer, partner: Partner, userAddress: string, code: string) =>
  call(server, `${BREB}/kyc/otp/verify`, { apiKey: partner.apiKey, body: { userAddress, code } })

/** Whether another connection can take the user's OTP advisory lock right now (released at once). */
const otpLockIsFree = (server: TestServer, partner: Partner, userAddress: string) =>
  server.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      sql<{ readonly free: boolean }>`
        SELECT pg_try_advisory_xact_lock(hashtext(${`otp:${partner.integrationId}:${userAddress.toLowerCase()}`})) AS free`
    ).pipe(Effect.map((rows) => rows[0]?.free === true))))

/**
 * Sessions of this test's database idle inside a transaction after a statement of the OTP path. The background work
 * runs short transactions of its own all along (the delivery claim's turn on its row among them), so a transaction
 * held by the OTP send right after its own advisory lock is found by `otpLockIsFree` instead. Housekeeping's purge of
 * expired challenges (src/worker/RetentionRepo.ts, `WITH gone AS (DELETE …`, one short transaction per batch, run
 * when the server starts) is background work too: on a loaded machine it was caught between its DELETE and COMMIT.
 */
const HOUSEKEEPING_PURGE = "^WITH gone AS \\(DELETE"

const idleInTransaction = (server: TestServer) =>
  server.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state LIKE 'idle in transaction%'
        AND query ~* 'otp_challenges|customers' AND query !~ ${HOUSEKEEPING_PURGE}`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0)
    )))

const challenges = (server: TestServer, partner: Partner, userAddress: string) =>
  server.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly id: string; readonly consumed: boolean }>`
      SELECT id, consumed_at IS NOT NULL AS consumed FROM otp_challenges
      WHERE integration_id = ${partner.integrationId} AND user_address = ${userAddress.toLowerCase()}
      ORDER BY created_at`))

/** Moves the user's challenges back in time, past the resend cooldown. */
const pastCooldown = (server: TestServer, partner: Partner, userAddress: string) =>
  server.direct(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE otp_challenges SET created_at = created_at - interval '31 seconds'
        WHERE integration_id = ${partner.integrationId} AND user_address = ${userAddress.toLowerCase()}`)
  )

describe("kyc/otp/send with the e-mail outside any transaction", () => {
  it("while the e-mail is on its way: no transaction is open, the user's lock is free, another user's send completes", async ({ server, partner }) => {
    const slowUser = newAddress()
    const held = holdMailTo("slow@example.com")
    const slow = send(server, partner, slowUser, "slow@example.com")
    await held.entered()

    expect(await idleInTransaction(server)).toBe(0)
    expect(await otpLockIsFree(server, partner, slowUser)).toBe(true)

    const other = await send(server, partner, newAddress(), "quick@example.com")
    expect(other.status, other.text).toBe(200)
    // The challenge is recorded: a second send for the same user meanwhile is held by the cooldown (one e-mail).
    expectErrorBody(await send(server, partner, slowUser, "slow@example.com"), 429)

    held.release()
    const answer = await slow
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.debugCode).toBe(CODE)
    const verified = await verify(server, partner, slowUser, CODE)
    expect(verified.status, verified.text).toBe(200)
    expect(verified.body.kycStatus).toBe("approved")
  })

  it("when the e-mail fails: 503, no cooldown starts, and an immediate retry is sent", async ({ server, partner }) => {
    const userAddress = newAddress()
    mail.failing.add("down@example.com")
    const down = await send(server, partner, userAddress, "down@example.com")
    expect(expectErrorBody(down, 503).errorCode).toBeUndefined()
    expect(await challenges(server, partner, userAddress)).toEqual([])

    mail.failing.delete("down@example.com")
    const retried = await send(server, partner, userAddress, "down@example.com")
    expect(retried.status, retried.text).toBe(200)
    expect(mail.delivered).toContain("down@example.com")
    expect((await verify(server, partner, userAddress, CODE)).status).toBe(200)
  })

  it("when a resend's e-mail fails, the code sent before is active again, attempts and all", async ({ server, partner }) => {
    const userAddress = newAddress()
    expect((await send(server, partner, userAddress, "first@example.com")).status).toBe(200)
    expectErrorBody(await verify(server, partner, userAddress, "000000"), 400, "otp_invalid")
    const [first] = await challenges(server, partner, userAddress)
    await pastCooldown(server, partner, userAddress)

    mail.failing.add("second@example.com")
    expectErrorBody(await send(server, partner, userAddress, "second@example.com"), 503)
    mail.failing.delete("second@example.com")
    expect(await challenges(server, partner, userAddress)).toEqual([{ id: first!.id, consumed: false }])
    // the attempt made on it still counts (5 in all)
    const wrong = await verify(server, partner, userAddress, "000000")
    expect(wrong.body.error).toContain("3 attempts left")

    const retried = await send(server, partner, userAddress, "second@example.com")
    expect(retried.status, retried.text).toBe(200)
    const after = await challenges(server, partner, userAddress)
    expect(after.map((row) => row.consumed)).toEqual([true, false])
    expect((await verify(server, partner, userAddress, CODE)).status).toBe(200)
  })

  it("the e-mail failing while held: the lock was free during the wait and the failure leaves nothing behind", async ({ server, partner }) => {
    const userAddress = newAddress()
    const held = holdMailTo("flaky@example.com")
    mail.failing.add("flaky@example.com")
    const pending = send(server, partner, userAddress, "flaky@example.com")
    await held.entered()
    expect(await otpLockIsFree(server, partner, userAddress)).toBe(true)
    expect(await idleInTransaction(server)).toBe(0)
    held.release()
    expectErrorBody(await pending, 503)
    mail.failing.delete("flaky@example.com")
    expect(await challenges(server, partner, userAddress)).toEqual([])
    expect((await send(server, partner, userAddress, "flaky@example.com")).status).toBe(200)
  })

  it("never logs a code or an e-mail address", ({ server }) => {
    const logs = server.logs.join("\n")
    expect(logs).not.toMatch(new RegExp(`\\b${CODE}\\b`))
    for (const address of ["slow@", "quick@", "down@", "first@", "second@", "flaky@"]) {
      expect(logs).not.toContain(address)
    }
  })
})
