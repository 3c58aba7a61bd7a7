import { SqlClient, SqlSchema } from "effect/sql"
import { IntegrationId, KycStatus } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { getAddress } from "viem"
import { atomically } from "../db/Atomically.ts"
import { Outbox } from "../outbox/Outbox.ts"

export const CustomerRow = Schema.Struct({
  integration_id: IntegrationId,
  user_address: Schema.String,
  email: Schema.String,
  kyc_status: KycStatus,
  kyc_url: Schema.NullOr(Schema.String),
  provider_customer_id: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date
})
export type CustomerRow = typeof CustomerRow.Type

/** What starting the provider's KYC gave us for a customer. */
export interface KycStart {
  readonly providerCustomerId: string
  readonly kycStatus: KycStatus
  readonly kycUrl: string | null
}

const Owner = Schema.Struct({ integrationId: IntegrationId, userAddress: Schema.String })

/** A customer whose KYC status a write changed. */
const KycChange = Schema.Struct({
  integration_id: IntegrationId,
  user_address: Schema.String,
  kyc_status: KycStatus,
  kyc_url: Schema.NullOr(Schema.String),
  previous_status: Schema.NullOr(KycStatus)
})

/**
 * Customers are keyed by (integration, lower-cased wallet address): one integration never sees another's. A write
 * that decides a customer's KYC (approved or rejected) records `kyc.approved` / `kyc.rejected` in its transaction.
 */
export class CustomerRepo extends Context.Service<CustomerRepo>()("CustomerRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    const recordDecisions = (changes: ReadonlyArray<unknown>, at: Date) =>
      Effect.forEach(changes, (raw) =>
        Effect.gen(function*() {
          const change = yield* Schema.decodeUnknownEffect(KycChange)(raw)
          if (change.kyc_status === change.previous_status) return
          if (change.kyc_status !== "approved" && change.kyc_status !== "rejected") return
          const userAddress = getAddress(change.user_address)
          yield* outbox.record({
            integrationId: change.integration_id,
            type: `kyc.${change.kyc_status}`,
            resourceId: change.user_address,
            object: { userAddress, kycStatus: change.kyc_status, kycUrl: change.kyc_url },
            at
          })
        }))

    const find = SqlSchema.findOneOption({
      Request: Owner,
      Result: CustomerRow,
      execute: ({ integrationId, userAddress }) =>
        sql`SELECT integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at
            FROM customers
            WHERE integration_id = ${integrationId} AND user_address = ${userAddress.toLowerCase()}`
    })

    const upsertEmail = (owner: typeof Owner.Type, email: string, at: Date) =>
      sql`INSERT INTO customers (integration_id, user_address, email, kyc_status, created_at, updated_at)
          VALUES (${owner.integrationId}, ${owner.userAddress.toLowerCase()}, ${email}, 'not_started', ${at}, ${at})
          ON CONFLICT (integration_id, user_address) DO UPDATE SET email = EXCLUDED.email, updated_at = EXCLUDED.updated_at`

    // A decision the provider's webhook already recorded (it can arrive before the KYC link's answer) stays.
    const setKyc = (owner: typeof Owner.Type, kyc: KycStart, at: Date) =>
      sql`WITH previous AS (SELECT kyc_status FROM customers
                            WHERE integration_id = ${owner.integrationId} AND user_address = ${owner.userAddress.toLowerCase()})
          UPDATE customers SET provider_customer_id = ${kyc.providerCustomerId}, kyc_url = ${kyc.kycUrl}, updated_at = ${at},
                 kyc_status = CASE WHEN provider_customer_id IS NOT DISTINCT FROM ${kyc.providerCustomerId}
                                    AND kyc_status IN ('approved', 'rejected') THEN kyc_status ELSE ${kyc.kycStatus} END
          WHERE integration_id = ${owner.integrationId} AND user_address = ${owner.userAddress.toLowerCase()}
          RETURNING integration_id, user_address, kyc_status, kyc_url, (SELECT kyc_status FROM previous) AS previous_status`

    /**
     * The provider's KYC decision for its customer. Only a decision (approved / rejected) replaces what we have,
     * and nothing moves a decided customer back to pending: a late or replayed "under review" changes nothing.
     */
    const applyProviderKyc = (providerCustomerId: string, kycStatus: KycStatus, at: Date) =>
      sql`UPDATE customers SET kyc_status = ${kycStatus}, updated_at = ${at}
          WHERE provider_customer_id = ${providerCustomerId}
            AND kyc_status IS DISTINCT FROM ${kycStatus}
            AND (${kycStatus} IN ('approved', 'rejected') OR kyc_status NOT IN ('approved', 'rejected'))
          RETURNING integration_id, user_address, kyc_status, kyc_url, NULL AS previous_status`

    return {
      find: (owner: typeof Owner.Type) => find(owner).pipe(Effect.orDie),
      applyProviderKyc: (providerCustomerId: string, kycStatus: KycStatus, at: Date) =>
        applyProviderKyc(providerCustomerId, kycStatus, at).pipe(
          Effect.tap((rows) => recordDecisions(rows, at)),
          atomically(sql),
          Effect.orDie,
          Effect.map((rows) => rows.length > 0)
        ),
      isApproved: (owner: typeof Owner.Type) =>
        find(owner).pipe(Effect.orDie, Effect.map(Option.exists((row) => row.kyc_status === "approved"))),
      upsertEmail: (owner: typeof Owner.Type, email: string, at: Date) =>
        upsertEmail(owner, email, at).pipe(Effect.orDie),
      setKyc: (owner: typeof Owner.Type, kyc: KycStart, at: Date) =>
        setKyc(owner, kyc, at).pipe(
          Effect.tap((rows) => recordDecisions(rows, at)),
          atomically(sql),
          Effect.orDie,
          Effect.map((rows) => Schema.decodeUnknownSync(KycStatus)(rows[0]?.["kyc_status"] ?? kyc.kycStatus))
        )
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
