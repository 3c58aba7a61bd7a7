import { PgClient } from "@effect/sql-pg"
import { SqlError } from "effect/sql"
import { Clock, Context, Effect, Layer } from "effect"
import { CustomerRepo } from "../kyc/CustomerRepo.ts"
import { Lifecycle } from "../payouts/Lifecycle.ts"
import { ProviderCallbacks } from "../provider/ProviderCallbacks.ts"
import { ProviderEventRepo } from "./ProviderEventRepo.ts"

/** Provider callbacks: the provider's adapter checks and reads one, then de-duplication on its event id, then the change. */
export class ProviderWebhook extends Context.Service<ProviderWebhook>()("ProviderWebhook", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const callbacks = yield* ProviderCallbacks
    const lifecycle = yield* Lifecycle
    const customers = yield* CustomerRepo
    const providerEvents = yield* ProviderEventRepo

    const receive = (input: {
      readonly headers: Readonly<Record<string, string | undefined>>
      readonly rawBody: string
    }) =>
      Effect.gen(function*() {
        const callback = yield* callbacks.read(input)
        if (!(yield* providerEvents.recordFirst(callback.eventId, callback.category))) {
          return { received: true, duplicate: true } as const
        }
        switch (callback._tag) {
          case "Transfer":
            yield* lifecycle.applyTransferProgress({ progress: callback.progress, source: "provider_webhook" })
            break
          case "Kyc":
            yield* customers.applyProviderKyc(
              callback.providerCustomerId,
              callback.kycStatus,
              new Date(yield* Clock.currentTimeMillis)
            )
            break
          case "Other":
            break
        }
        return { received: true, duplicate: false } as const
      }).pipe(sql.withTransaction, Effect.catchIf(SqlError.isSqlError, Effect.die))

    return { receive } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
