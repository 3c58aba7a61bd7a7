import { Option, Schema } from "effect"

/**
 * Bridge's crypto return policy (per developer; `GET /v0/crypto_return_policies`): where the funds of a failed
 * crypto deposit go. `refund_to_sender` returns them to the wallet that sent the deposit, which the service has
 * verified is the user's. `static_address` sends every return to one wallet of the developer's: every user's
 * refund would land with the operator, and the service would hold users' money (custodial).
 */
export const CryptoReturnPolicy = Schema.Struct({
  id: Schema.String,
  strategy: Schema.String,
  refund_destination_address: Schema.optional(Schema.NullOr(Schema.String))
})
export type CryptoReturnPolicy = typeof CryptoReturnPolicy.Type

/** The list answer: Bridge's list shape, `{ count, data }`. */
export const CryptoReturnPolicies = Schema.Struct({ data: Schema.Array(CryptoReturnPolicy) })

/** Why live mode must not start with these policies, or none: a `refund_to_sender` one, and no `static_address`. */
export const returnPolicyProblem = (policies: ReadonlyArray<CryptoReturnPolicy>): Option.Option<string> => {
  if (policies.some((policy) => policy.strategy === "static_address")) {
    return Option.some(
      "the provider's crypto return policy is static_address: every user's refund would go to one wallet " +
        "(custodial); set it to refund_to_sender (Bridge: crypto_return_policies)"
    )
  }
  if (!policies.some((policy) => policy.strategy === "refund_to_sender")) {
    return Option.some(
      "the provider has no crypto return policy refund_to_sender: a failed payout's deposit would have nowhere to " +
        "go back to the user; create one with strategy refund_to_sender (Bridge: crypto_return_policies)"
    )
  }
  return Option.none()
}
