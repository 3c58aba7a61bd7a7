import { Effect, Layer } from "effect"
import { AppConfig } from "../config/Config.ts"
import { OtpCodes } from "./OtpCodes.ts"

/** Mock: every code is the configured MOCK_OTP_DEBUG_CODE (default 123456), shown as `debugCode`. */
export const OtpCodesMock = Layer.effect(
  OtpCodes,
  Effect.map(
    AppConfig,
    (config) => OtpCodes.of({ next: Effect.succeed({ code: config.mockOtpDebugCode, revealed: true }) })
  )
)
