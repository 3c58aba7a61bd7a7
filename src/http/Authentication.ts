import { Authentication, CurrentIntegration, TooManyRequests, Unauthorized } from "@cop-integrations/contracts"
import { Effect, Layer, Option, Result } from "effect"
import { HttpServerRequest } from "effect/http"
import { parseApiKey } from "../auth/ApiKey.ts"
import { ApiKeyRepo } from "../auth/ApiKeyRepo.ts"
import { Deployment } from "../auth/Deployment.ts"
import { cachedKeyLookup } from "../auth/KeyCache.ts"
import { noteIntegration, setRetryAfter } from "../base/ResponseHints.ts"
import { singleFlight } from "../base/SingleFlight.ts"
import { AppConfig } from "../config/Config.ts"
import { makeFailedAuthLimit } from "./FailedAuthLimit.ts"
import { makeRateLimiter } from "./RateLimiter.ts"

const bearerPattern = /^Bearer +(\S+)$/i

/**
 * The hash of the bearer key, or why the header cannot authenticate. The raw header is read (not the
 * platform's decoded token) to reject other schemes; checksum and kind are checked without a database lookup.
 */
const readBearerKey = (
  header: string | undefined,
  deployment: typeof Deployment.Service
): Result.Result<string, string> => {
  if (header === undefined || header.trim() === "") {
    return Result.fail("missing API key: send Authorization: Bearer <API_KEY>")
  }
  const token = bearerPattern.exec(header.trim())?.[1]
  if (token === undefined) return Result.fail("Authorization header must use the Bearer scheme: Bearer <API_KEY>")
  const parsed = parseApiKey(token)
  if (parsed._tag === "Malformed") return Result.fail("invalid API key: not a cop_test_pk_… or cop_live_pk_… key")
  const { keyKind, mode } = deployment
  if (parsed.kind !== keyKind) {
    return Result.fail(
      `this is a ${mode} deployment: it accepts only ${keyKind} keys (cop_${keyKind}_pk_…), not ${parsed.kind} keys`
    )
  }
  return Result.succeed(parsed.hash)
}

const tooMany = (error: string, retryAfterSeconds: number) =>
  Effect.andThen(setRetryAfter(retryAfterSeconds), Effect.fail(new TooManyRequests({ error })))

const tooManyFailures = (retryAfterSeconds: number) =>
  tooMany("too many failed authentication attempts from this address; retry later", retryAfterSeconds)

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const deployment = yield* Deployment
    const keys = yield* ApiKeyRepo
    const findActive = cachedKeyLookup(config.apiKeyCacheMs, keys.findActiveByHash)
    const limiter = makeRateLimiter(config.rateLimitPerSecond, config.rateLimitBurst)
    const failedAuth = makeFailedAuthLimit()
    // A burst of requests with the same key from one address is one lookup (and one failure if unknown).
    const findKey = singleFlight({
      key: (address: string, keyHash: string) => `${address} ${keyHash}`,
      run: (address: string, keyHash: string) => failedAuth.guardLookup(address, keyHash, findActive(keyHash)),
      whenStarterInterrupted: "finish"
    })

    const rejectWithoutLookup = (address: string, error: string) => {
      const { allowed, retryAfterSeconds } = failedAuth.recordFailure(address)
      return allowed ? Effect.fail(new Unauthorized({ error })) : tooManyFailures(retryAfterSeconds)
    }

    /** The integration behind the request's bearer key, or why there is none (401, 429). */
    const authenticate = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      const keyHash = readBearerKey(request.headers["authorization"], deployment)
      if (Result.isFailure(keyHash)) return yield* rejectWithoutLookup(address, keyHash.failure)
      const { value: looked } = yield* findKey(address, keyHash.success)
      if (looked._tag === "Refused") return yield* tooManyFailures(looked.retryAfterSeconds)
      if (Option.isNone(looked.key)) {
        return yield* Effect.fail(new Unauthorized({ error: "unknown or revoked API key" }))
      }
      const key = looked.key.value
      const { allowed, retryAfterSeconds } = limiter.take(key.id)
      if (!allowed) return yield* tooMany("rate limit exceeded for this API key", retryAfterSeconds)
      yield* noteIntegration(key.integration_id)
      return CurrentIntegration.of({ integrationId: key.integration_id, keyId: key.id, mode: deployment.mode })
    })

    return Authentication.of({
      bearer: (httpEffect) =>
        Effect.flatMap(authenticate, (current) => Effect.provideService(httpEffect, CurrentIntegration, current))
    })
  })
)
