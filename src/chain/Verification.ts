import { ServiceUnavailable } from "@cop-integrations/contracts"
import { Context, Data, Duration, Effect, Schedule } from "effect"
import {
  type Chain,
  DepositNotVerified,
  type NotVerifiedKind,
  type TransferCheck,
  type VerifiedTransfer
} from "./Chain.ts"

/**
 * How long one onchain check may take and how often a check the node could not answer is asked again. The
 * defaults bound a confirm's wait for the chain to about half a minute (3 attempts of at most 10 s).
 */
export const ChainVerifyPolicy = Context.Reference<{
  readonly attemptTimeout: Duration.Input
  readonly retries: number
  readonly backoff: Duration.Input
}>("ChainVerifyPolicy", {
  defaultValue: () => ({ attemptTimeout: Duration.seconds(10), retries: 2, backoff: Duration.millis(250) })
})

/**
 * `chain.verifyTransfer` with a timeout per attempt and a bounded, jittered exponential retry, only while the
 * node could not be asked (`unreachable`, a timeout included). A mismatch, a transaction not mined yet or one
 * short of confirmations is an answer: reported at once.
 */
export const verifyWithRetry = (
  chain: Chain["Service"],
  check: TransferCheck
): Effect.Effect<VerifiedTransfer, DepositNotVerified> => withVerifyPolicy(chain.verifyTransfer(check))

/** One onchain check (a deposit, a refund) under ChainVerifyPolicy: see `verifyWithRetry`. */
export const withVerifyPolicy = (
  attempt: Effect.Effect<VerifiedTransfer, DepositNotVerified>
): Effect.Effect<VerifiedTransfer, DepositNotVerified> =>
  Effect.flatMap(ChainVerifyPolicy, (policy) =>
    attempt.pipe(
      Effect.timeoutOrElse({
        duration: policy.attemptTimeout,
        orElse: () =>
          Effect.fail(
            new DepositNotVerified({
              kind: "unreachable",
              reason: `the chain node did not answer within ${
                Duration.format(Duration.fromInputUnsafe(policy.attemptTimeout))
              }; retry later`
            })
          )
      }),
      Effect.retry({
        schedule: Schedule.jittered(Schedule.exponential(policy.backoff)),
        times: policy.retries,
        while: (error) => error.kind === "unreachable"
      })
    ))

/** The confirmed transaction (`field` of the request) is not mined yet: it may be confirmed again once it is. */
export class DepositNotMined extends Data.TaggedError("DepositNotMined")<{
  readonly field: string
  readonly reason: string
}> {}

/** The chain answered, and the transaction (`field` of the request) is not the transfer asked for. */
export class DepositRefused extends Data.TaggedError("DepositRefused")<{
  readonly field: string
  readonly kind: Exclude<NotVerifiedKind, "not_mined" | "unreachable">
  readonly reason: string
}> {}

/** A transfer that did not verify, as a confirm answers it: why (not mined yet, refused), or 503 (no answer). */
export const notVerifiedError = (field: string, error: DepositNotVerified) => {
  switch (error.kind) {
    case "not_mined":
      return new DepositNotMined({ field, reason: error.reason })
    case "unreachable":
      return new ServiceUnavailable({ error: `${field} could not be verified: ${error.reason}` })
    case "mismatch":
    case "reverted":
    case "unconfirmed":
      return new DepositRefused({ field, kind: error.kind, reason: error.reason })
  }
}
