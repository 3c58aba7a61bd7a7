import { Schema } from "effect"
import { DecimalString, IsoTimestamp, matching, TxHash } from "./Primitives.ts"

export const FailureCategory = Schema.Literals(["destination", "limits", "rail", "provider", "compliance", "deposit"])
  .annotate({
    identifier: "FailureCategory",
    description:
      "What kind of failure, a closed set to branch on: `destination` fix the Bre-B key or the name; `limits` an amount limit; `rail` the recipient's bank or the Bre-B rail, try again later; `provider` the payout provider; `compliance` a compliance review; `deposit` something about the user's deposit."
  })
export type FailureCategory = typeof FailureCategory.Type

export interface FailureReason {
  readonly category: FailureCategory
  /** Whether a new payout to the same destination may succeed. */
  readonly retryable: boolean
  /** One sentence a partner can show its user. */
  readonly message: string
  /** What the partner should do (documentation). */
  readonly action: string
}

/**
 * Why a payout failed or was refunded: the documented codes, each with its category, whether a new payout to the same
 * destination may succeed, the sentence a partner shows its user and what the partner should do. `failure.code` is an
 * open set: a later release may add a code (clients treat an unknown code as its `category` says).
 */
export const FAILURE_CODES = {
  breb_key_not_found: {
    category: "destination",
    retryable: false,
    message: "This Bre-B key is not registered to any account. Ask the recipient for another key.",
    action: "Ask the user for another Bre-B key; a new payout to this key fails the same way."
  },
  account_inactive: {
    category: "destination",
    retryable: false,
    message: "The recipient's account cannot receive payments. Ask the recipient for another key or account.",
    action: "Ask the user for another Bre-B key (the account behind this one is closed or blocked)."
  },
  beneficiary_name_mismatch: {
    category: "destination",
    retryable: false,
    message: "The recipient's name does not match the holder of this Bre-B key. Check the name and try again.",
    action: "Ask the user for the holder's name exactly as the bank has it, or another key; preview it first."
  },
  amount_limit_exceeded: {
    category: "limits",
    retryable: true,
    message: "The amount is over a limit of the recipient's account. Try a smaller amount.",
    action: "Offer a smaller amount (or several payouts); the same amount fails again."
  },
  rejected_by_bank: {
    category: "rail",
    retryable: true,
    message: "The recipient's bank did not accept the payment. Try again later.",
    action: "Let the user try again later; if it keeps failing, ask for another key."
  },
  returned_by_bank: {
    category: "rail",
    retryable: true,
    message: "The recipient's bank sent the payment back. Try again later or with another key.",
    action: "Let the user try again later or with another key."
  },
  provider_rejected: {
    category: "provider",
    retryable: false,
    message: "The payout provider did not accept this payment.",
    action: "Contact support with the payoutId before trying again."
  },
  compliance_rejected: {
    category: "compliance",
    retryable: false,
    message: "This payment was stopped by a compliance review.",
    action: "Do not retry; contact support with the payoutId."
  },
  deposit_short: {
    category: "deposit",
    retryable: true,
    message: "The deposit was less than this payout needed, so it was returned.",
    action: "Create a new payout and deposit exactly `deposit.amount`."
  },
  deposit_after_cancel: {
    category: "deposit",
    retryable: true,
    message: "The deposit arrived after the payout was canceled, so it was returned.",
    action:
      "Nothing to fix: the funds go back to the user's wallet; create a new payout if the user still wants to pay."
  },
  provider_error: {
    category: "provider",
    retryable: true,
    message: "The payout provider could not complete this payment. Try again later.",
    action: "Let the user try again later; contact support if it keeps failing."
  },
  other: {
    category: "provider",
    retryable: true,
    message: "This payment could not be completed. Try again later.",
    action: "Let the user try again later; contact support with the payoutId if it keeps failing."
  }
} as const satisfies Record<string, FailureReason>

export type KnownFailureCode = keyof typeof FAILURE_CODES
export const KNOWN_FAILURE_CODES = Object.keys(FAILURE_CODES) as ReadonlyArray<KnownFailureCode>

export const isKnownFailureCode = (code: string): code is KnownFailureCode => Object.hasOwn(FAILURE_CODES, code)

export const FailureCode = Schema.String.check(matching(/^[a-z][a-z0-9_]{0,63}$/, "must be a lower-case code"))
  .annotate({
    identifier: "FailureCode",
    description:
      `Why the payout did not go through. An open set: a later release may add codes, so treat a code you do not know as its \`category\` says. Known today: ${
        KNOWN_FAILURE_CODES.map((code) => `\`${code}\``).join(", ")
      }.`
  })

export const PayoutFailure = Schema.Struct({
  code: FailureCode,
  category: FailureCategory,
  retryable: Schema.Boolean.annotate({ description: "Whether a new payout to the same destination may succeed" }),
  message: Schema.String.annotate({ description: "One sentence a partner can show its user" }),
  at: IsoTimestamp
}).annotate({
  identifier: "PayoutFailure",
  description: "Why a payout ended `failed` or `refunded`; null while it has not"
})
export type PayoutFailure = typeof PayoutFailure.Type

export const RefundStatus = Schema.Literals(["pending", "sent", "verified"]).annotate({
  identifier: "RefundStatus",
  description:
    "`pending` the provider said it will return the deposit; `sent` the provider named the refund's transaction; `verified` the service saw that transaction move `amount` of `token` to `to` onchain."
})
export type RefundStatus = typeof RefundStatus.Type

export const PayoutRefund = Schema.Struct({
  status: RefundStatus,
  to: Schema.String.annotate({ description: "The wallet the deposit is returned to: the payout's `userAddress`" }),
  token: Schema.Literal("USDC").annotate({
    description: "What comes back: the provider holds the deposit in USDC, also for a payout funded from COPm"
  }),
  amount: Schema.NullOr(DecimalString).annotate({
    description: "What comes back (whole tokens); null until the provider says. Less than the deposit by `retained`"
  }),
  retained: Schema.NullOr(DecimalString).annotate({
    description:
      "What the provider kept of the deposit (its return fee), never hidden; the 1% service fee (`copby`) was paid apart and is not returned"
  }),
  txHash: Schema.NullOr(TxHash),
  at: IsoTimestamp
}).annotate({
  identifier: "PayoutRefund",
  description:
    "The deposit going back to the user's wallet, onchain (`at`: when the refund last changed status); null unless the payout is being refunded"
})
export type PayoutRefund = typeof PayoutRefund.Type

/** For the document's description: why a payout did not go through, what comes back, and what to do for each code. */
export const FAILURES_GUIDE = `

## When a payout does not go through

A payout that ends \`failed\` or \`refunded\` carries \`failure\`: \`code\` (what happened), \`category\` (what kind: branch on it), \`retryable\` (whether a new payout to the same destination may succeed) and \`message\` (one sentence to show the user). \`failure.code\` is an **open set**: a later release may add a code, so treat one you do not know as its \`category\` says.

A payout whose deposit the provider returns carries \`refund\`: \`pending\` (the provider will return it), \`sent\` (its transaction is known: \`txHash\`), \`verified\` (the service saw that transaction move \`amount\` USDC to \`to\`, the user's wallet, onchain). \`retained\` is what the provider kept (its return fee); the 1% service fee was paid apart from the deposit and is not returned. Bre-B has no reversal once delivered: only a payment refused before delivery comes back.

A payout the user abandoned can be canceled (\`POST payouts/{payoutId}/cancel\`) while it awaits its deposit; funds that arrive after a cancel are returned (\`deposit_after_cancel\`).

| code | category | retryable | what to do |
| --- | --- | --- | --- |
${
  KNOWN_FAILURE_CODES.map((code) => {
    const reason: FailureReason = FAILURE_CODES[code]
    return `| \`${code}\` | \`${reason.category}\` | ${reason.retryable ? "yes" : "no"} | ${reason.action} |`
  }).join("\n")
}
`
