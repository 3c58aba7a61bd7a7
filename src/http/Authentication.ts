import { HttpServerRequest } from "@effect/platform"
import { Authentication, TooManyRequests, Unauthorized } from "@cop-integrations/contracts"
import { Effect, Layer, Option } from "effect"
import { keyKindForMode, parseApiKey } from "../auth/ApiKey.ts"
import { ApiKeyRepo } from "../auth/ApiKeyRepo.ts"
import { AppConfig } from "../Config.ts"
import { makeRateLimiter } from "./RateLimiter.ts"
import { setRetryAfter } from "./ResponseHints.ts"

const bearerPattern = /^Bearer +(\S+)$/i

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const keys = yield* ApiKeyRepo
    const limiter = makeRateLimiter(config.rateLimitPerSecond, config.rateLimitBurst)
    const expectedKind = keyKindForMode(config.mode)
    const unauthorized = (error: string) => Effect.fail(new Unauthorized({ error }))

    // The raw header is read here (not the platform's decoded token) to reject non-Bearer schemes.
    return Authentication.of({
      bearer: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const header = request.headers["authorization"]
          if (header === undefined || header.trim() === "") {
            return yield* unauthorized("missing API key: send Authorization: Bearer <API_KEY>")
          }
          const token = bearerPattern.exec(header.trim())?.[1]
          if (token === undefined) {
            return yield* unauthorized("Authorization header must use the Bearer scheme: Bearer <API_KEY>")
          }
          const parsed = parseApiKey(token)
          if (parsed._tag === "Malformed") {
            return yield* unauthorized("invalid API key: not a cop_test_pk_… or cop_live_pk_… key")
          }
          if (parsed.kind !== expectedKind) {
            return yield* unauthorized(
              `this is a ${config.mode} deployment: it accepts only ${expectedKind} keys (cop_${expectedKind}_pk_…), not ${parsed.kind} keys`
            )
          }
          const found = yield* keys.findActiveByHash(parsed.hash)
          if (Option.isNone(found)) return yield* unauthorized("unknown or revoked API key")
          const key = found.value
          const { allowed, retryAfterSeconds } = limiter.take(key.id)
          if (!allowed) {
            yield* setRetryAfter(retryAfterSeconds)
            return yield* Effect.fail(new TooManyRequests({ error: "rate limit exceeded for this API key" }))
          }
          yield* Effect.annotateCurrentSpan("integrationId", key.integration_id)
          return { integrationId: key.integration_id, keyId: key.id, mode: config.mode }
        })
    })
  })
)
