/**
 * Confirm in three steps (issue #7, "make the seam honest"): a short transaction claims the txHash `verifying`,
 * the chain is asked outside any transaction (timeout, bounded retry only while the node cannot be asked), and a
 * short transaction records the confirmation or releases the claim. The app runs over a test Chain whose
 * verifyTransfer each test scripts (by default the mock chain's: mined now, no receipt check).
 */
import { SqlClient } from "effect/sql"
import { Deferred, Duration, Effect, Layer } from "effect"
import { afterEach, describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { mockModeWith } from "../support/mockModeWith.ts"
import type { TestServer } from "../support/server.ts"
import {
  Chain,
  DepositNotVerified,
  type NotVerifiedKind,
  type TransferCheck,
  type VerifiedTransfer
} from "../../src/chain/Chain.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { ChainVerifyPolicy } from "../../src/chain/Verification.ts"
import { ConfirmWait } from "../../src/chain/ConfirmByTxHash.ts"
import { TransferLifecycleMock } from "../../src/provider/mock/TransferLifecycleMock.ts"
import {
  decodePayout,
  expectError,
  expirePayoutWindow,
  newTxHash,
  type Partner,
  pollPayout,
  sql
} from "../support/flows.ts"

type Verify = (check: TransferCheck, mock: Chain["Service"]) => Effect.Effect<VerifiedTransfer, DepositNotVerified>

const mockVerify: Verify = (check, mock) => mock.verifyTransfer(check)
let verify: Verify = mockVerify
/** Hashes verifyTransfer was called with, in order (every attempt). */
let attempts: Array<string> = []

/** The mock chain, with verifyTransfer delegated to whatever the running test set. */
const ScriptedChain = Layer.effect(
  Chain,
  Effect.map(Chain, (mock) =>
    Chain.of({
      ...mock,
      verifyTransfer: (check) =>
        Effect.suspend(() => {
          attempts.push(check.txHash)
          return verify(check, mock)
        })
    }))
).pipe(Layer.provide(ChainMock))

const ATTEMPT_TIMEOUT = Duration.millis(300)
const RETRIES = 2

const it = httpTest({
  // confirmed payouts stay deposit_confirmed while a test looks at them
  env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" },
  overrides: Layer.mergeAll(
    Layer.succeed(ChainVerifyPolicy, {
      attemptTimeout: ATTEMPT_TIMEOUT,
      retries: RETRIES,
      backoff: Duration.millis(10)
    }),
    Layer.succeed(ConfirmWait, Duration.seconds(10))
  ),
  app: mockModeWith({ chain: ScriptedChain, outbox: TransferLifecycleMock })
})
afterEach(() => {
  verify = mockVerify
  attempts = []
})

const failWith = (kind: NotVerifiedKind, reason: string): Verify => () =>
  Effect.fail(new DepositNotVerified({ kind, reason }))

const claimsOf = (server: TestServer, hash: string) =>
  sql<{ resource_id: string; state: string }>(
    server,
    (q) => q`SELECT resource_id, state FROM tx_hash_claims WHERE tx_hash = ${hash}`
  )

const expiresAtOf = async (server: TestServer, payoutId: string) => {
  const [row] = await sql<{ expires_at: Date }>(server, (q) => q`SELECT expires_at FROM payouts WHERE id = ${payoutId}`)
  return row!.expires_at
}

const confirmOk = async (partner: Partner, payoutId: string, body: Record<string, string>) => {
  const wire = await partner.confirm(payoutId, body)
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const await_ = <A>(deferred: Deferred.Deferred<A>) =>
  Effect.runPromise(Deferred.await(deferred).pipe(Effect.timeout("10 seconds")))

describe("confirm: the chain is asked outside any transaction", () => {
  it("holds no lock on the payout while the verification is pending; a concurrent confirm gets 409 or the replay", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const other = await partner.payout(user)
    const txHash = newTxHash()
    const started = Effect.runSync(Deferred.make<void>())
    const gate = Effect.runSync(Deferred.make<void>())
    verify = (check, mock) =>
      Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Deferred.await(gate)),
        Effect.andThen(mock.verifyTransfer(check))
      )

    const first = partner.confirm(payout.payoutId, { txHash })
    await await_(started)

    // Another connection can lock the payout row at once: no transaction holds it during the RPC.
    const locked = await server.direct(
      Effect.flatMap(
        SqlClient.SqlClient,
        (q) =>
          q.withTransaction(q<{ id: string }>`SELECT id FROM payouts WHERE id = ${payout.payoutId} FOR UPDATE NOWAIT`)
            .pipe(
              Effect.catch((error) =>
                Effect.succeed(`the payout row is locked during the chain check: ${String(error.cause)}`)
              )
            )
      )
    )
    expect(locked).toEqual([{ id: payout.payoutId }])
    // The hash is claimed for this payout, as `verifying`.
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: payout.payoutId, state: "verifying" }])
    // A different hash for the same payout: 409, in progress. The same hash for another payout: tx_hash_reused.
    expect(expectError(await partner.confirm(payout.payoutId, { txHash: newTxHash() }), 409)).toMatch(/being verified/)
    expectError(await partner.confirm(other.payoutId, { txHash }), 409, "tx_hash_reused")
    // The same hash for the same payout waits for the first and gets its answer.
    const duplicate = partner.confirm(payout.payoutId, { txHash })

    Effect.runSync(Deferred.succeed(gate, undefined))
    const [firstWire, duplicateWire] = await Promise.all([first, duplicate])
    expect(firstWire.status, firstWire.text).toBe(200)
    expect(duplicateWire.status, duplicateWire.text).toBe(200)
    expect(decodePayout(duplicateWire.json)).toEqual(decodePayout(firstWire.json))
    expect(decodePayout(firstWire.json).status).toBe("deposit_confirmed")
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: payout.payoutId, state: "claimed" }])
  })

  it("releases the claim when the verification fails: the same hash then confirms the right payout", async ({ server, partner, user }) => {
    const wrong = await partner.payout(user)
    const right = await partner.payout(user)
    const txHash = newTxHash()
    verify = (check, mock) =>
      check.to.toLowerCase() === wrong.deposit.address.toLowerCase()
        ? Effect.fail(
          new DepositNotVerified({
            kind: "mismatch",
            reason: `transaction ${check.txHash} has no Transfer to ${check.to}`
          })
        )
        : mock.verifyTransfer(check)

    const message = expectError(await partner.confirm(wrong.payoutId, { txHash }), 409)
    expect(message).toContain("has no Transfer to")
    expect(attempts).toEqual([txHash]) // a mismatch is an answer: not asked again
    expect(await claimsOf(server, txHash)).toEqual([])
    expect(decodePayout((await partner.getPayout(wrong.payoutId)).json).status).toBe("awaiting_deposit")

    expect((await confirmOk(partner, right.payoutId, { txHash })).txHash).toBe(txHash)
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: right.payoutId, state: "claimed" }])
  })

  it("answers 409 saying the transaction is not mined yet, leaves the hash unclaimed, and confirms once it is", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    verify = failWith("not_mined", `no mined transaction ${txHash} on testchain`)

    const message = expectError(await partner.confirm(payout.payoutId, { txHash }), 409)
    expect(message).toMatch(/not mined yet/)
    expect(attempts).toEqual([txHash])
    expect(await claimsOf(server, txHash)).toEqual([])

    verify = mockVerify
    expect((await confirmOk(partner, payout.payoutId, { txHash })).status).toBe("deposit_confirmed")
  })

  it("asks an unreachable node again a bounded number of times, then answers 503 and releases the hash", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    verify = failWith("unreachable", "the testchain node could not be asked; retry later")

    const message = expectError(await partner.confirm(payout.payoutId, { txHash }), 503)
    expect(message).toContain("could not be asked")
    expect(attempts).toEqual(Array(1 + RETRIES).fill(txHash))
    expect(await claimsOf(server, txHash)).toEqual([])
  })

  it("times out a node that does not answer, as unreachable (retried, then 503)", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    verify = () => Effect.never

    const message = expectError(await partner.confirm(payout.payoutId, { txHash }), 503)
    expect(message).toContain("did not answer within")
    expect(attempts).toHaveLength(1 + RETRIES)
    expect(await claimsOf(server, txHash)).toEqual([])
  })

  it("confirms when the node answers after failing to be asked", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    verify = (check, mock) =>
      attempts.length <= RETRIES
        ? Effect.fail(new DepositNotVerified({ kind: "unreachable", reason: "connection refused" }))
        : mock.verifyTransfer(check)

    expect((await confirmOk(partner, payout.payoutId, { txHash })).status).toBe("deposit_confirmed")
    expect(attempts).toHaveLength(1 + RETRIES)
  })

  it("keeps the copby leg pending, and the fee hash recorded, when the fee transfer does not verify", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const [txHash, feeTxHash] = [newTxHash(), newTxHash()]
    verify = (check, mock) =>
      check.txHash === feeTxHash
        ? Effect.fail(new DepositNotVerified({ kind: "mismatch", reason: "too little" }))
        : mock.verifyTransfer(check)

    const confirmed = await confirmOk(partner, payout.payoutId, { txHash, feeTxHash })
    expect(confirmed.feeTxHash).toBe(feeTxHash)
    expect(confirmed.fees.find((leg) => leg.code === "copby")?.status).toBe("pending")
    expect(await claimsOf(server, feeTxHash)).toEqual([{ resource_id: payout.payoutId, state: "claimed" }])
  })
})

describe("confirm: the deposit window", () => {
  it("accepts a deposit mined before expiresAt, confirmed after the window closed and after the sweep", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    const expiresAt = await expiresAtOf(server, payout.payoutId)
    verify = () => Effect.succeed({ minedAt: new Date(expiresAt.getTime() - 5_000), transfers: [] })

    const txHash = newTxHash()
    const confirmed = await confirmOk(partner, payout.payoutId, { txHash })
    expect(confirmed.status).toBe("deposit_confirmed")
    expect(confirmed.txHash).toBe(txHash)
    expect(await claimsOf(server, txHash)).toEqual([{ resource_id: payout.payoutId, state: "claimed" }])
  })

  it("answers requote when the deposit was mined after expiresAt, and leaves the hash unclaimed", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    const expiresAt = await expiresAtOf(server, payout.payoutId)
    verify = () => Effect.succeed({ minedAt: new Date(expiresAt.getTime() + 1_000), transfers: [] })

    const txHash = newTxHash()
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "requote")
    expect(await claimsOf(server, txHash)).toEqual([])
  })

  it("mock chain (mined now): a confirm after the window is requote, before and after the sweep", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    const txHash = newTxHash()
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "requote")
    await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "requote")
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("expired")
    expect(await claimsOf(server, txHash)).toEqual([])
  })
})
