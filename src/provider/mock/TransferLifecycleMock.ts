import { Effect, Layer, Option, Schema } from "effect"
import { addSeconds } from "../../base/Clock.ts"
import { AppConfig } from "../../config/Config.ts"
import { type NewEvent, Outbox } from "../../outbox/Outbox.ts"
import { JobQueue } from "../../background/JobQueue.ts"
import { mockTransferId } from "./ProviderMock.ts"

/** What the mock reads of a `payout.deposit_confirmed` event's payout. */
const ConfirmedPayout = Schema.Struct({ txHash: Schema.NullOr(Schema.String) })

/**
 * The partner's confirm moved the payout (it carries the txHash our onchain check verified). A move the provider
 * reported (webhook, test helper) carries none: the provider is already past that point.
 */
const confirmedByPartner = (event: NewEvent) =>
  event.type === "payout.deposit_confirmed" &&
  Option.exists(Schema.decodeUnknownOption(ConfirmedPayout)(event.object), (payout) => payout.txHash !== null)

/**
 * The mock provider's transfer progresses on its own once the deposit is in, as Bridge's would: it reacts to the
 * `payout.deposit_confirmed` event as the outbox records it, and queues the transfer's later states as jobs (applied
 * like the provider's webhooks) in the same transaction, `MOCK_LIFECYCLE_DELAY_MS` apart.
 */
export const TransferLifecycleMock = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const outbox = yield* Outbox
    const jobs = yield* JobQueue
    const step = (yield* AppConfig).mockLifecycleDelayMs / 1000

    const progress = (payoutId: string, at: Date) => {
      const transferId = mockTransferId(payoutId)
      return Effect.andThen(
        jobs.enqueue(
          { _tag: "TransferProgress", transferId, status: "processing", fundsArrived: true },
          addSeconds(at, step)
        ),
        jobs.enqueue(
          { _tag: "TransferProgress", transferId, status: "completed", fundsArrived: true },
          addSeconds(at, 2 * step)
        )
      )
    }

    return Outbox.of({
      recordFor: outbox.recordFor,
      record: (event) =>
        Effect.tap(
          outbox.record(event),
          () => (confirmedByPartner(event) ? progress(event.resourceId, event.at) : Effect.void)
        )
    })
  })
).pipe(Layer.provide(Outbox.Default))
