import { randomInt } from "node:crypto"
import { Context, Effect, Layer } from "effect"

export interface OtpCode {
  readonly code: string
  /** Whether the API may show the code to the partner (`debugCode`): only a sandbox's fixed code. */
  readonly revealed: boolean
}

/** Where a new OTP code comes from. */
export class OtpCodes extends Context.Service<OtpCodes, {
  readonly next: Effect.Effect<OtpCode>
}>()("OtpCodes") {}

/** Live: 6 digits from a CSPRNG, never revealed (they reach the user only by e-mail). */
export const OtpCodesLive = Layer.succeed(
  OtpCodes,
  OtpCodes.of({
    next: Effect.sync(() => ({ code: String(randomInt(0, 1_000_000)).padStart(6, "0"), revealed: false }))
  })
)
