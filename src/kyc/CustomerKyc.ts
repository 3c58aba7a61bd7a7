import {
  docsPointer,
  type IntegrationId,
  type KycCustomerRecord,
  type KycStatus,
  NeedsKyc,
  NotFound
} from "@cop-integrations/contracts"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { getAddress } from "viem"
import { now } from "../base/Clock.ts"
import { singleFlight } from "../base/SingleFlight.ts"
import { maskEmail } from "./Mailer.ts"
import { PayoutProvider } from "../provider/PayoutProvider.ts"
import { CustomerRepo, type CustomerRow } from "./CustomerRepo.ts"

/**
 * How a KYC read asks the provider about a customer it has not decided yet: its answer (or its failure) is
 * remembered `rememberFor` per customer and replica, so a storm of reads asks the provider once every few seconds;
 * a read waits for the provider at most `waitAtMost` (the provider's own call is bounded by PROVIDER_TIMEOUT_MS and
 * goes on without it), then answers what is stored.
 */
export const ProviderKycReads = Context.Reference<{
  readonly rememberFor: Duration.Duration
  readonly waitAtMost: Duration.Duration
}>("ProviderKycReads", {
  defaultValue: () => ({ rememberFor: Duration.seconds(5), waitAtMost: Duration.seconds(2) })
})

/** Customers remembered at once per replica; the oldest is forgotten first. */
const MAX_REMEMBERED = 10_000

const isDecided = (status: KycStatus) => status === "approved" || status === "rejected"

interface Owner {
  readonly integrationId: IntegrationId
  readonly userAddress: string
}

/** The customer as the partner reads it: the address checksummed, the e-mail masked. */
export const presentCustomer = (row: CustomerRow): KycCustomerRecord => ({
  userAddress: getAddress(row.user_address),
  kycStatus: row.kyc_status,
  kycUrl: row.kyc_url,
  email: maskEmail(row.email),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

/**
 * A customer's KYC as it stands now: what is stored, and for a customer the provider has not decided yet (no
 * webhook has), what the provider says. A decision read this way is recorded like the webhook's
 * (`CustomerRepo.applyProviderKyc`: the status and one `kyc.approved` / `kyc.rejected` event, whichever comes first).
 */
export class CustomerKyc extends Context.Service<CustomerKyc>()("CustomerKyc", {
  make: Effect.gen(function*() {
    const customers = yield* CustomerRepo
    const provider = yield* PayoutProvider
    const timing = yield* ProviderKycReads
    // What the provider said last about each customer: none when it could not be asked.
    const remembered = new Map<string, { readonly said: Option.Option<KycStatus>; readonly until: number }>()

    const remember = (providerCustomerId: string, said: Option.Option<KycStatus>) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.sync(() => {
          remembered.delete(providerCustomerId)
          const oldest = remembered.keys().next()
          if (remembered.size >= MAX_REMEMBERED && oldest.done !== true) remembered.delete(oldest.value)
          remembered.set(providerCustomerId, { said, until: at + Duration.toMillis(timing.rememberFor) })
        }))

    // Runs to the end even when every reader stopped waiting, so a decision is recorded once it is known.
    const askProvider = singleFlight({
      key: (providerCustomerId: string) => providerCustomerId,
      run: (providerCustomerId: string) =>
        provider.getCustomerKyc(providerCustomerId).pipe(
          Effect.tap((status) =>
            isDecided(status)
              ? Effect.flatMap(now, (at) => customers.applyProviderKyc(providerCustomerId, status, at))
              : Effect.void
          ),
          Effect.map(Option.some),
          // The provider could not be asked (its client logged why): what is stored stands.
          Effect.orElseSucceed(() => Option.none<KycStatus>()),
          Effect.tap((said) => remember(providerCustomerId, said))
        ),
      whenStarterInterrupted: "finish"
    })

    const providerSays = (providerCustomerId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => {
        const hit = remembered.get(providerCustomerId)
        if (hit !== undefined && hit.until > at) return Effect.succeed(hit.said)
        return askProvider(providerCustomerId).pipe(
          Effect.timeoutOption(timing.waitAtMost),
          Effect.map(Option.flatMap((flight) => flight.value))
        )
      })

    /** The customer (none: no OTP was ever sent to this address by this integration), its KYC as it stands now. */
    const current = Effect.fn("CustomerKyc.current")(function*(owner: Owner) {
      const found = yield* customers.find(owner)
      if (Option.isNone(found)) return found
      const { kyc_status, provider_customer_id } = found.value
      if (provider_customer_id === null || isDecided(kyc_status)) return found
      const said = yield* providerSays(provider_customer_id)
      if (Option.isNone(said) || !isDecided(said.value)) return found
      // Recorded by the provider read, or by a webhook meanwhile: the row has it, with its updatedAt.
      return yield* customers.find(owner)
    })

    /**
     * The user's provider customer (null when the provider has none for them); a 409 unless their KYC is approved, as
     * it stands now (a customer the provider approved without a webhook reaching us is read from the provider).
     */
    const approvedCustomerId = Effect.fn("CustomerKyc.approvedCustomerId")(
      function*(integrationId: IntegrationId, userAddress: string) {
        const customer = yield* current({ integrationId, userAddress: userAddress.toLowerCase() })
        if (!Option.exists(customer, (row) => row.kyc_status === "approved")) {
          return yield* Effect.fail(
            new NeedsKyc({
              error: `KYC is not approved for this userAddress: complete kyc/otp/send and kyc/otp/verify (see ${
                docsPointer("needs_kyc")
              })`
            })
          )
        }
        return Option.getOrNull(Option.flatMap(customer, (row) => Option.fromNullishOr(row.provider_customer_id)))
      }
    )

    /** `GET kyc/customers/{userAddress}`: 404 for an address no OTP was sent to by this integration. */
    const read = Effect.fn("CustomerKyc.read")(function*(integrationId: IntegrationId, userAddress: string) {
      const found = yield* current({ integrationId, userAddress: userAddress.toLowerCase() })
      if (Option.isNone(found)) {
        return yield* Effect.fail(new NotFound({ error: `no KYC customer ${userAddress}: send it an OTP first` }))
      }
      return presentCustomer(found.value)
    })

    return { current, approvedCustomerId, read } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
