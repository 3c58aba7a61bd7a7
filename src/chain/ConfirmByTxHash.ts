import { Context, Data, Duration, Effect, Schedule } from "effect"
import type { ClaimKind, TxHashClaims } from "./TxHashClaims.ts"

/** What a confirm's first, short transaction decided (payouts and swaps), generic over the resource's row. */
export type ConfirmBegun<Row> = Data.TaggedEnum<{
  /** The resource is already confirmed with this txHash: answer it unchanged. */
  Replay: { readonly row: Row }
  /** Another confirm of the resource is verifying its hashes (`sameHash`: this confirm's txHash among them). */
  InProgress: { readonly sameHash: boolean }
  /** The hashes are claimed `verifying` for the resource; the chain check comes next. */
  Claimed: { readonly row: Row; readonly hashes: ReadonlyArray<string> }
}>
interface ConfirmBegunDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: ConfirmBegun<this["A"]>
}
export const ConfirmBegun = Data.taggedEnum<ConfirmBegunDefinition>()

/**
 * How long a confirm waits for a confirmation of the same resource with the same txHash that is still being verified
 * (then it answers with that result); past it, ConfirmStillVerifying (a 409). Like a duplicate Idempotency-Key (DESIGN §3).
 */
export const ConfirmWait = Context.Reference<Duration.Duration>("ConfirmWait", {
  defaultValue: () => Duration.seconds(10)
})

/** A confirm of this `resource` (`payout`, `payout batch`) with the same txHash is still being verified after `ConfirmWait`. */
export class ConfirmStillVerifying extends Data.TaggedError("ConfirmStillVerifying")<{ readonly resource: string }> {}

class StillVerifying extends Data.TaggedError("StillVerifying") {}

/** `begin`, asked again (bounded by ConfirmWait) while a confirm of the same resource with the same hash is verifying. */
export const beginOrWait = <Row, E, R>(begin: Effect.Effect<ConfirmBegun<Row>, E, R>, resource: string) =>
  Effect.gen(function*() {
    const wait = yield* ConfirmWait
    return yield* begin.pipe(
      Effect.filterOrFail(
        (begun) => !(begun._tag === "InProgress" && begun.sameHash),
        () => new StillVerifying()
      ),
      Effect.retry({
        schedule: Schedule.min([Schedule.exponential("10 millis"), Schedule.spaced("200 millis")]).pipe(
          Schedule.upTo({ duration: wait })
        ),
        while: (error) => error instanceof StillVerifying
      }),
      Effect.catchIf(
        (error): error is StillVerifying => error instanceof StillVerifying,
        () => Effect.fail(new ConfirmStillVerifying({ resource }))
      )
    )
  })

/**
 * A confirm by txHash (payouts, batches and swaps). No network call runs inside a database transaction:
 * 1. `begin`, a short transaction, locks the resource, checks it and claims its hashes `verifying` (or finds it
 *    already confirmed with them: a replay; or another confirm of it verifying: `inProgress`);
 * 2. `finish` checks the chain outside any transaction, then records the outcome in a second short transaction
 *    (which keeps the claims, see `keepClaims`);
 * 3. when anything after the claim fails, the claims are released (the hashes are free again). A crash between
 *    the steps leaves `verifying` claims that the reconciler releases.
 */
export const confirmByTxHash = <Row, A, E1, R1, E2, R2, E3>(flow: {
  readonly begin: Effect.Effect<ConfirmBegun<Row>, E1, R1>
  /** The refusal when another confirm of the resource is verifying. */
  readonly inProgress: () => E3
  readonly replay: (row: Row) => A
  readonly finish: (row: Row, hashes: ReadonlyArray<string>) => Effect.Effect<A, E2, R2>
  readonly release: (row: Row, hashes: ReadonlyArray<string>) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const begun = yield* flow.begin
    if (begun._tag === "InProgress") return yield* Effect.fail(flow.inProgress())
    if (begun._tag === "Replay") return flow.replay(begun.row)
    const { hashes, row } = begun
    return yield* flow.finish(row, hashes).pipe(Effect.onError(() => flow.release(row, hashes)))
  })

/** The confirm's claims were released while it checked the chain (it took too long): it may be sent again. */
export class ConfirmReleased extends Data.TaggedError("ConfirmReleased") {}

/** Step 2's first move: marks the hashes `claimed`, or ConfirmReleased when any was released meanwhile. */
export const keepClaims = (
  claims: TxHashClaims["Service"],
  kind: ClaimKind,
  resourceId: string,
  hashes: ReadonlyArray<string>
) =>
  Effect.flatMap(claims.markClaimed(kind, resourceId, hashes), (kept) =>
    kept === hashes.length
      ? Effect.void
      : Effect.fail(new ConfirmReleased()))
