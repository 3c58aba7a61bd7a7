/**
 * Payout creation in three steps (issue #7, "make the seam honest"): a short transaction records intent (the
 * Idempotency-Key row `started` with the pre-allocated payout id), the provider is called outside any
 * transaction, a short transaction writes the payout and marks the key `done`. And firm quotes: a quoteId
 * charges the quoted sourceAmount while the rate stays within tolerance.
 *
 * The app runs over the mock ports with a test provider that keeps transfers by idempotency key (as Bridge
 * does: the same key returns the same transfer, the same key with another amount is refused) and can hold or fail
 * `createTransfer` on demand.
 */
import { SqlClient } from "effect/sql"
import type { Quote } from "@cop-integrations/contracts"
import { BigDecimal, ConfigProvider, Deferred, Effect, Layer } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { AppConfig, AppConfigShape } from "../../src/config/Config.ts"
import { requestFingerprint } from "../../src/idempotency/IdempotencyStore.ts"
import { makeHousekeeping } from "../../src/worker/Housekeeping.ts"
import { PAYOUTS_PATH } from "../../src/payouts/PayoutService.ts"
import { providerIdempotencyKey } from "../../src/provider/IdempotencyKeys.ts"
import {
  PayoutProvider,
  ProviderBadResponse,
  type ProviderTransfer,
  ProviderUnavailable
} from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import {
  BREB,
  countPayouts,
  decodePayout,
  expectedPayout,
  expectError,
  newPartner,
  type Partner,
  payoutBody,
  sql
} from "../support/flows.ts"

interface Hold {
  readonly entered: Deferred.Deferred<void>
  readonly release: Deferred.Deferred<void>
}

/** What the test provider saw and what it will do to the next transfer. */
const provider = {
  /** Transfers by idempotency key: one key, one transfer. */
  transfers: new Map<string, ProviderTransfer>(),
  transferCalls: [] as Array<string>,
  externalAccountCalls: 0,
  holdNext: undefined as Hold | undefined,
  failNext: false,
  /** The next transfer is made, and its answer lost: the caller sees ProviderUnavailable (a timeout). */
  loseNextAnswer: false,
  /** The next transfer is refused by the provider's answer (a 4xx): nothing is made. */
  refuseNext: false
}

const TestProvider = Layer.effect(
  PayoutProvider,
  Effect.map(PayoutProvider, (base) =>
    PayoutProvider.of({
      ...base,
      createExternalAccount: (input) =>
        Effect.andThen(Effect.sync(() => void provider.externalAccountCalls++), base.createExternalAccount(input)),
      createTransfer: (input) =>
        Effect.gen(function*() {
          provider.transferCalls.push(input.idempotencyKey)
          const hold = provider.holdNext
          provider.holdNext = undefined
          if (hold !== undefined) {
            yield* Deferred.succeed(hold.entered, undefined)
            yield* Deferred.await(hold.release)
          }
          if (provider.failNext) {
            provider.failNext = false
            return yield* Effect.fail(new ProviderUnavailable({ reason: "test: the provider is down" }))
          }
          if (provider.refuseNext) {
            provider.refuseNext = false
            return yield* Effect.fail(
              new ProviderBadResponse({ reason: "test: HTTP 422 invalid_parameters", refused: true })
            )
          }
          const existing = provider.transfers.get(input.idempotencyKey)
          if (existing !== undefined && existing.depositAmount !== input.amount) {
            return yield* Effect.fail(
              new ProviderBadResponse({ reason: "test: Idempotency-Key reused with another body" })
            )
          }
          if (existing !== undefined) return existing
          const created = yield* base.createTransfer(input)
          const transfer = { ...created, transferId: `tr_test_${provider.transfers.size + 1}` }
          provider.transfers.set(input.idempotencyKey, transfer)
          if (provider.loseNextAnswer) {
            provider.loseNextAnswer = false
            return yield* Effect.fail(new ProviderUnavailable({ reason: "test: transfer: no answer within 10s" }))
          }
          return transfer
        })
    }))
).pipe(Layer.provide(ProviderMock))

/** Holds the next createTransfer until `release`; `entered` resolves once a request is inside it. */
const holdNextTransfer = () => {
  const hold: Hold = { entered: Effect.runSync(Deferred.make<void>()), release: Effect.runSync(Deferred.make<void>()) }
  provider.holdNext = hold
  return {
    entered: () => Effect.runPromise(Deferred.await(hold.entered)),
    release: () => Effect.runSync(Deferred.succeed(hold.release, undefined))
  }
}

const it = httpTest({
  captureLogs: true,
  // the rate row is moved by hand (setSellRate): read it on every request
  env: { RATE_CACHE_TTL_SECONDS: "3600", RATE_CACHE_IN_MEMORY: "false" },
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, TestProvider) })
  }
})

const keyRows = (server: TestServer, key: string) =>
  sql<{ state: string; resource_id: string }>(
    server,
    (q) => q`SELECT state, resource_id FROM idempotency_keys WHERE idempotency_key = ${key}`
  )

const setSellRate = (server: TestServer, sellRate: string) =>
  sql(server, (q) => q`UPDATE rate_cache SET sell_rate = ${sellRate}, fetched_at = now() RETURNING pair`)

describe("firm quotes", () => {
  const quoteFor = async (partner: Partner, destinationCop: string): Promise<Quote> => {
    const quote = await partner.get(`${BREB}/quote`, { destinationCop })
    expect(quote.status, quote.text).toBe(200)
    return quote.json as Quote
  }

  it("charges the quoted sourceAmount and fees when the rate moved within tolerance", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const quote = await quoteFor(partner, "250000")
    try {
      await setSellRate(server, "3948.12") // 30 bps below the quoted 3960.00 (tolerance 50 bps)
      const firm = await partner.payout(user, { quoteId: quote.quoteId })
      expect(firm.sourceAmount).toBe(quote.sourceAmount)
      expect(firm.fees).toEqual(quote.fees)
      expect(firm.receipt.totalPaid.amount).toBe(quote.sourceAmount)

      const unquoted = await partner.payout(user)
      expect(unquoted.sourceAmount).not.toBe(quote.sourceAmount)
    } finally {
      await setSellRate(server, "3960.00")
    }
  })

  it("answers requote when the rate moved against the user beyond tolerance", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const quote = await quoteFor(partner, "250000")
    try {
      await setSellRate(server, "3900.00") // 152 bps below
      expectError(await partner.createPayout(payoutBody(user, { quoteId: quote.quoteId })), 409, "requote")
    } finally {
      await setSellRate(server, "3960.00")
    }
  })
})

describe("provider calls outside any transaction", () => {
  it("holds no transaction or lock while createTransfer is in flight", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const key = `held-${crypto.randomUUID()}`
    const hold = holdNextTransfer()
    const creating = partner.createPayout(payoutBody(user), { "idempotency-key": key })
    try {
      await hold.entered()
      // the intent is committed: another connection sees the key `started`
      expect(await keyRows(server, key)).toEqual([{ state: "started", resource_id: expect.stringMatching(/^po_/) }])
      // ... with the rates it priced at, recorded before the provider was called
      const [intent] = await sql<{ intent: unknown }>(
        server,
        (q) => q`SELECT intent FROM idempotency_keys WHERE idempotency_key = ${key}`
      )
      expect(intent?.intent).toEqual({ sellRate: expect.any(String), midRate: expect.any(String) })
      const idleInTransaction = await server.direct(
        Effect.flatMap(SqlClient.SqlClient, (q) =>
          q<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
                         WHERE datname = current_database() AND pid <> pg_backend_pid()
                           AND state LIKE 'idle in transaction%'
                           AND (query ILIKE '%idempotency_keys%' OR query ILIKE '%customers%'
                                OR query ILIKE '%quotes%' OR query ILIKE '%rate_cache%')`)
      )
      expect(idleInTransaction).toEqual([{ n: 0 }])
      // nothing of this request holds a lock: exclusive locks and the key's row are free at once
      await server.direct(Effect.flatMap(SqlClient.SqlClient, (q) =>
        q.withTransaction(Effect.gen(function*() {
          yield* q`SET LOCAL lock_timeout = '1s'`
          yield* q`LOCK TABLE idempotency_keys, customers IN ACCESS EXCLUSIVE MODE`
          yield* q`SELECT 1 FROM idempotency_keys WHERE idempotency_key = ${key} FOR UPDATE`
        }))))
    } finally {
      hold.release()
    }
    const created = await creating
    expect(created.status, created.text).toBe(201)
    expect(await keyRows(server, key)).toEqual([{ state: "done", resource_id: decodePayout(created.json).payoutId }])
  })

  it("a duplicate that arrives while the key is started waits for it and replays", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const key = `dup-${crypto.randomUUID()}`
    const body = payoutBody(user)
    const hold = holdNextTransfer()
    const transfersBefore = provider.transferCalls.length
    const first = partner.createPayout(body, { "idempotency-key": key })
    let duplicate: ReturnType<typeof partner.createPayout> | undefined
    try {
      await hold.entered()
      duplicate = partner.createPayout(body, { "idempotency-key": key })
      await vi.waitFor(
        () => expect(server.logs.some((line) => line.includes("waits for the request holding"))).toBe(true),
        {
          timeout: 10_000,
          interval: 10
        }
      )
    } finally {
      hold.release()
    }
    const [created, replayed] = [await first, await duplicate]
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("idempotent-replayed")).toBeNull()
    expect(replayed.status, replayed.text).toBe(201)
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    expect(replayed.text).toBe(created.text)
    expect(provider.transferCalls.length - transfersBefore).toBe(1)
  })

  it("the same key with another body while started is 422", async ({ partner }) => {
    const user = await partner.approvedUser()
    const key = `dup422-${crypto.randomUUID()}`
    const hold = holdNextTransfer()
    const first = partner.createPayout(payoutBody(user), { "idempotency-key": key })
    try {
      await hold.entered()
      expectError(
        await partner.createPayout(payoutBody(user, { destinationCop: "300000" }), { "idempotency-key": key }),
        422
      )
    } finally {
      hold.release()
    }
    expect((await first).status).toBe(201)
  })
})

describe("failures and crashes around the provider call", () => {
  it("provider down at the transfer: 503, no payout; the retry with the same key succeeds once it is back", async ({ server }) => {
    const other = await newPartner(server)
    const user = await other.approvedUser()
    const key = `outage-${crypto.randomUUID()}`
    const accountsBefore = provider.externalAccountCalls
    provider.failNext = true

    const down = await other.createPayout(payoutBody(user), { "idempotency-key": key })
    expectError(down, 503)
    expect(provider.externalAccountCalls - accountsBefore).toBe(1)
    expect(await countPayouts(server, other.integrationId)).toBe(0)

    const retry = await other.createPayout(payoutBody(user), { "idempotency-key": key })
    expect(retry.status, retry.text).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBeNull()
    expect(await countPayouts(server, other.integrationId)).toBe(1)
  })

  it("a transfer made whose answer was lost: 503, the key keeps its payout id, the retry at once reaches the same transfer", async ({ server }) => {
    const other = await newPartner(server)
    const user = await other.approvedUser()
    const key = `lost-${crypto.randomUUID()}`
    const body = payoutBody(user)
    const transfersBefore = provider.transfers.size
    provider.loseNextAnswer = true

    expectError(await other.createPayout(body, { "idempotency-key": key }), 503)
    expect(await countPayouts(server, other.integrationId)).toBe(0)
    const [held] = await keyRows(server, key)
    expect(held).toEqual({ state: "started", resource_id: expect.stringMatching(/^po_/) })

    const retry = await other.createPayout(body, { "idempotency-key": key })
    expect(retry.status, retry.text).toBe(201)
    expect(decodePayout(retry.json).payoutId).toBe(held!.resource_id)
    expect(provider.transfers.size - transfersBefore).toBe(1)
    const transferKey = providerIdempotencyKey("transfer", held!.resource_id)
    expect(provider.transferCalls.filter((k) => k === transferKey)).toHaveLength(2)
    expect(await countPayouts(server, other.integrationId)).toBe(1)
    expect(await keyRows(server, key)).toEqual([{ state: "done", resource_id: held!.resource_id }])
    // the 503 itself was not stored: only the created payout is replayed
    const again = await other.createPayout(body, { "idempotency-key": key })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(retry.text)
  })

  it("a transfer the provider refused (it made nothing): 502, the key is free for another body", async ({ server }) => {
    const other = await newPartner(server)
    const user = await other.approvedUser()
    const key = `refused-${crypto.randomUUID()}`
    provider.refuseNext = true

    expectError(await other.createPayout(payoutBody(user), { "idempotency-key": key }), 502)
    expect(await keyRows(server, key)).toEqual([])
    const other_body = await other.createPayout(payoutBody(user, { destinationCop: "300000" }), {
      "idempotency-key": key
    })
    expect(other_body.status, other_body.text).toBe(201)
  })

  it("exactly one retry takes over a key its failed request left: one payout under concurrent retries", async ({ server }) => {
    const other = await newPartner(server)
    const user = await other.approvedUser()
    const key = `lost-race-${crypto.randomUUID()}`
    const body = payoutBody(user)
    const transfersBefore = provider.transfers.size
    provider.loseNextAnswer = true
    expectError(await other.createPayout(body, { "idempotency-key": key }), 503)

    const retries = await Promise.all(
      Array.from({ length: 8 }, () => other.createPayout(body, { "idempotency-key": key }))
    )
    expect(retries.map((r) => r.status)).toEqual(Array(8).fill(201))
    expect(new Set(retries.map((r) => decodePayout(r.json).payoutId)).size).toBe(1)
    expect(retries.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(provider.transfers.size - transfersBefore).toBe(1)
    expect(await countPayouts(server, other.integrationId)).toBe(1)
  })

  it("a crash between the provider call and the database write: the retry takes over, one transfer, one payout", async ({ server }) => {
    const other = await newPartner(server)
    const user = await other.approvedUser()
    const key = `crash-${crypto.randomUUID()}`
    const body = payoutBody(user)
    const payoutId = `po_crashed${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`
    const transferKey = providerIdempotencyKey("transfer", payoutId)
    // The crashed request had recorded its intent (with the rates it priced at, not today's) and reached the
    // provider, then died.
    const pinned = { sellRate: "3940.00", midRate: "4000.00" }
    const deposit = expectedPayout(body.destinationCop, {
      mockSellRate: BigDecimal.fromStringUnsafe(pinned.sellRate),
      mockMidRate: BigDecimal.fromStringUnsafe(pinned.midRate),
      tokenDecimals: server.config.tokenDecimals
    }).wire.deposit
    await sql(
      server,
      (q) =>
        q`INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, response_status, response_body,
                                      resource_id, state, provider_key, attempt, intent, started_at)
        VALUES (${other.integrationId}, ${key}, ${requestFingerprint("POST", PAYOUTS_PATH, body)}, 0, '{}'::jsonb,
                ${payoutId}, 'started', ${transferKey}, 'crashed', ${JSON.stringify(pinned)}::jsonb,
                now() - interval '1 hour')
        RETURNING resource_id`
    )
    const before: ProviderTransfer = {
      transferId: "tr_before_the_crash",
      chain: server.config.chainName,
      currency: "usdc",
      depositAddress: "0x2222222222222222222222222222222222222222",
      depositAmount: deposit
    }
    provider.transfers.set(transferKey, before)
    const transfersBefore = provider.transfers.size

    const retry = await other.createPayout(body, { "idempotency-key": key })
    expect(retry.status, retry.text).toBe(201)
    // the provider was asked again under the stored key, and created nothing new
    expect(provider.transferCalls.filter((k) => k === transferKey)).toHaveLength(1)
    expect(provider.transfers.size).toBe(transfersBefore)
    const payout = decodePayout(retry.json)
    expect(payout.payoutId).toBe(payoutId)
    expect(payout.deposit.address).toBe(before.depositAddress)
    expect(payout.deposit.amount).toBe(deposit)
    const priced = BigDecimal.fromStringUnsafe(payout.receipt.exchangeRate.sellRateUsdCop ?? "")
    expect(BigDecimal.equals(priced, BigDecimal.fromStringUnsafe(pinned.sellRate))).toBe(true)
    expect(await countPayouts(server, other.integrationId)).toBe(1)
    expect(await keyRows(server, key)).toEqual([{ state: "done", resource_id: payoutId }])

    const again = await other.createPayout(body, { "idempotency-key": key })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(retry.text)
  })

  it("housekeeping deletes started rows older than 24 h, never a done or a recent one", async ({ server }) => {
    const other = await newPartner(server)
    const plant = (server: TestServer, key: string, state: string, startedAt: string) =>
      sql(
        server,
        (q) =>
          q`INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, response_status, response_body,
                                        resource_id, state, provider_key, attempt, started_at)
          VALUES (${other.integrationId}, ${key}, 'h', 0, '{}'::jsonb, 'po_x', ${state}, 'k', 'a', now() - ${startedAt}::interval)
          RETURNING resource_id`
      )
    await plant(server, "stale-started", "started", "25 hours")
    await plant(server, "recent-started", "started", "1 hour")
    await plant(server, "old-done", "done", "30 days")
    await Effect.runPromise(makeHousekeeping.pipe(
      Effect.flatten,
      Effect.provide(Layer.merge(appConfig, server.database.layer))
    ))
    const left = await sql<{ idempotency_key: string }>(
      server,
      (q) => q`SELECT idempotency_key FROM idempotency_keys WHERE integration_id = ${other.integrationId} ORDER BY 1`
    )
    expect(left.map((row) => row.idempotency_key)).toEqual(["old-done", "recent-started"])
  })
})

const appConfig = Layer.effect(
  AppConfig,
  Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
)
  .pipe(
    Layer.orDie
  )
