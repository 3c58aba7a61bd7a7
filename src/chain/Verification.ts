import { Conflict, ServiceUnavailable } from "@cop-integrations/contracts"
import { Context, Duration, Effect, Schedule } from "effect"
import { type Chain, DepositNotVerified, type TransferCheck, type VerifiedTransfer } from "./Chain.ts"

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

/** A transfer that did not verify, as a confirm answers it: 409 saying why (not mined yet, mismatch), or 503. */
export const notVerifiedError = (field: string, error: DepositNotVerified) => {
  switch (error.kind) {
    case "not_mined":
      return new Conflict({ error: `${field}: not mined yet (${error.reason}); confirm again once it is mined` })
    case "unreachable":
      return new ServiceUnavailable({ error: `${field} could not be verified: ${error.reason}` })
    case "mismatch":
    case "reverted":
    case "unconfirmed":
      return new Conflict({ error: `${field}: ${error.reason}` })
  }
}
