import { SqlClient, SqlSchema } from "@effect/sql"
import { KycStatus } from "@cop-integrations/contracts"
import { Effect, Option, Schema } from "effect"

export const CustomerRow = Schema.Struct({
  integration_id: Schema.String,
  user_address: Schema.String,
  email: Schema.String,
  kyc_status: KycStatus,
  kyc_url: Schema.NullOr(Schema.String)
})
export type CustomerRow = typeof CustomerRow.Type

const Owner = Schema.Struct({ integrationId: Schema.String, userAddress: Schema.String })

/** Customers are keyed by (integration, lower-cased wallet address): one integration never sees another's. */
export class CustomerRepo extends Effect.Service<CustomerRepo>()("CustomerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = SqlSchema.findOne({
      Request: Owner,
      Result: CustomerRow,
      execute: ({ integrationId, userAddress }) =>
        sql`SELECT integration_id, user_address, email, kyc_status, kyc_url FROM customers
            WHERE integration_id = ${integrationId} AND user_address = ${userAddress.toLowerCase()}`
    })

    const upsertEmail = (owner: typeof Owner.Type, email: string, at: Date) =>
      sql`INSERT INTO customers (integration_id, user_address, email, kyc_status, created_at, updated_at)
          VALUES (${owner.integrationId}, ${owner.userAddress.toLowerCase()}, ${email}, 'not_started', ${at}, ${at})
          ON CONFLICT (integration_id, user_address) DO UPDATE SET email = EXCLUDED.email, updated_at = EXCLUDED.updated_at`

    const setKyc = (owner: typeof Owner.Type, kycStatus: KycStatus, kycUrl: string | null, at: Date) =>
      sql`UPDATE customers SET kyc_status = ${kycStatus}, kyc_url = ${kycUrl}, updated_at = ${at}
          WHERE integration_id = ${owner.integrationId} AND user_address = ${owner.userAddress.toLowerCase()}`

    /**
     * The provider's KYC decision for its customer. Only a decision (approved / rejected) replaces what we have,
     * and nothing moves a decided customer back to pending: a late or replayed "under review" changes nothing.
     */
    const applyProviderKyc = (providerCustomerId: string, kycStatus: KycStatus, at: Date) =>
      sql`UPDATE customers SET kyc_status = ${kycStatus}, updated_at = ${at}
          WHERE provider_customer_id = ${providerCustomerId}
            AND kyc_status IS DISTINCT FROM ${kycStatus}
            AND (${kycStatus} IN ('approved', 'rejected') OR kyc_status NOT IN ('approved', 'rejected'))
          RETURNING integration_id`

    return {
      find: (owner: typeof Owner.Type) => find(owner).pipe(Effect.orDie),
      applyProviderKyc: (providerCustomerId: string, kycStatus: KycStatus, at: Date) =>
        applyProviderKyc(providerCustomerId, kycStatus, at).pipe(Effect.orDie, Effect.map((rows) => rows.length > 0)),
      isApproved: (owner: typeof Owner.Type) =>
        find(owner).pipe(Effect.orDie, Effect.map(Option.exists((row) => row.kyc_status === "approved"))),
      upsertEmail: (owner: typeof Owner.Type, email: string, at: Date) => upsertEmail(owner, email, at).pipe(Effect.orDie),
      setKyc: (owner: typeof Owner.Type, kycStatus: KycStatus, kycUrl: string | null, at: Date) =>
        setKyc(owner, kycStatus, kycUrl, at).pipe(Effect.orDie)
    } as const
  })
}) {}
