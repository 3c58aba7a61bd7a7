import {
  Authentication,
  CurrentIntegration,
  DASHBOARD_SESSION_COOKIE,
  Forbidden,
  scopeRefusal,
  type TooManyRequests,
  Unauthorized
} from "@cop-integrations/contracts"
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import { HttpServerRequest } from "effect/http"
import { hashApiKey, hasValidChecksum, type KeyShape, keyShape } from "../auth/ApiKey.ts"
import { ApiKeyRepo, type ApiKeyRow } from "../auth/ApiKeyRepo.ts"
import { Deployment } from "../auth/Deployment.ts"
import { cachedKeyLookup } from "../auth/KeyCache.ts"
import { ipMatcher, parseCidrList } from "../base/IpAddresses.ts"
import { noteIntegration, noteRateLimit, tooManyRequests } from "../base/ResponseHints.ts"
import { singleFlight } from "../base/SingleFlight.ts"
import { AppConfig } from "../config/Config.ts"
import {
  type ActiveSession,
  activeSession,
  DashboardSessions,
  type SessionRefusal
} from "../dashboard/DashboardSessions.ts"
import type { SessionRow } from "../dashboard/SessionRepo.ts"
import { hashToken, isTokenShaped, sameToken } from "../dashboard/Tokens.ts"
import { clientAddressResolver } from "./ClientAddress.ts"
import { FailedAuthBudget, makeFailedAuthLimit } from "./FailedAuthLimit.ts"
import { makeRateLimiter } from "./RateLimiter.ts"

const bearerPattern = /^Bearer +(\S+)$/i

interface BearerKey {
  readonly shape: KeyShape
  /** The SHA-256 of the key, as keys are stored and remembered. */
  readonly hash: string
}

/**
 * The bearer key and its hash, or why the header cannot authenticate. The raw header is read (not the platform's
 * decoded token) to reject other schemes. Only the key's shape is checked here (see `invalidKey`).
 */
const readBearerKey = (header: string | undefined): Result.Result<BearerKey, string> => {
  if (header === undefined || header.trim() === "") {
    return Result.fail("missing API key: send Authorization: Bearer <API_KEY>")
  }
  const token = bearerPattern.exec(header.trim())?.[1]
  if (token === undefined) return Result.fail("Authorization header must use the Bearer scheme: Bearer <API_KEY>")
  const shape = keyShape(token)
  if (shape === undefined) return Result.fail(malformed)
  return Result.succeed({ shape, hash: hashApiKey(token) })
}

const malformed = "invalid API key: not a cop_test_pk_… or cop_live_pk_… key"

/** Why a well-shaped key cannot be one of this deployment's (checksum and kind, no database lookup), if it cannot. */
const invalidKey = (shape: KeyShape, deployment: typeof Deployment.Service): string | undefined => {
  if (!hasValidChecksum(shape)) return malformed
  const { keyKind, mode } = deployment
  return shape.kind === keyKind
    ? undefined
    : `this is a ${mode} deployment: it accepts only ${keyKind} keys (cop_${keyKind}_pk_…), not ${shape.kind} keys`
}

const sessionRefused: Record<SessionRefusal | "unknown", string> = {
  unknown: "unknown dashboard session: sign in again with a new link",
  ended: "this dashboard session has ended (signed out): sign in again with a new link",
  expired: "this dashboard session has expired: sign in again with a new link"
}

/** Methods that change nothing, so need no CSRF token with the session cookie. */
const SAFE_METHODS = new Set(["GET", "HEAD"])

const csrfRefused = new Forbidden({
  error:
    "X-CSRF-Token: a change made with the dashboard's session cookie (any method but GET and HEAD) must send the session's csrfToken (GET /api/integrations/dashboard/session) in this header"
})

const outsideAllowlist = (address: string) =>
  new Forbidden({
    error:
      `this API key is accepted only from the addresses its integration registered (IP allowlist), and this request came from ${address}`
  })

/**
 * Whether an address is in a key's allowlist. The matcher is built once per list: a remembered key's row (KeyCache)
 * is the same object on every request, so its list is too.
 */
const allowlists = new WeakMap<ReadonlyArray<string>, (address: string) => boolean>()
const allowlistOf = (cidrs: ReadonlyArray<string>) => {
  const known = allowlists.get(cidrs)
  if (known !== undefined) return known
  // Stored as parseCidrList wrote them; a list that no longer parses admits nothing rather than everything.
  const parsed = parseCidrList(cidrs.join(","))
  const matcher = Result.isSuccess(parsed) ? ipMatcher(parsed.success) : () => false
  allowlists.set(cidrs, matcher)
  return matcher
}

const tooManyFailures = (retryAfterSeconds: number) =>
  tooManyRequests(
    "failed_auth",
    "too many failed authentication attempts from this address; retry later",
    retryAfterSeconds
  )

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const deployment = yield* Deployment
    const keys = yield* ApiKeyRepo
    const findActive = cachedKeyLookup(config.apiKeyCacheMs, keys.findActiveByHash)
    const limiter = makeRateLimiter(config.rateLimitPerSecond, config.rateLimitBurst)
    const rateLimitPolicy = { name: "api_key", ...limiter.policy }
    const failedAuth = makeFailedAuthLimit({ lookUpMany: keys.findActiveByHashes, ...(yield* FailedAuthBudget) })
    const sessions = yield* DashboardSessions
    // Unknown session cookies cost a lookup each, as unknown keys do: the same kind of budget, one of its own.
    const failedSessions = makeFailedAuthLimit<SessionRow>({
      lookUpMany: sessions.findByHashes,
      ...(yield* FailedAuthBudget)
    })
    const clientAddress = clientAddressResolver(config.trustedProxies)
    // A burst of requests with the same key from one address is one lookup (and one failure if unknown).
    const findKey = singleFlight({
      key: (address: string, keyHash: string) => `${address} ${keyHash}`,
      run: (address: string, keyHash: string) => failedAuth.guardLookup(address, keyHash, findActive(keyHash)),
      whenStarterInterrupted: "finish"
    })

    /** Refused without a lookup, so without spending the address's budget of failures (see FailedAuthLimit). */
    const rejectWithoutLookup = (error: string): Authenticated => Effect.fail(new Unauthorized({ error }))

    type Authenticated = Effect.Effect<typeof CurrentIntegration.Service, Unauthorized | Forbidden | TooManyRequests>

    /** A request of key `keyId` counted against its rate limit, the state noted for the RateLimit headers. */
    const limited = (keyId: string, admitted: Authenticated): Authenticated => {
      const { allowed, remaining, resetSeconds, retryAfterSeconds } = limiter.take(keyId)
      const noted = noteRateLimit({ policy: rateLimitPolicy, remaining, resetSeconds })
      return Effect.andThen(
        noted,
        allowed ? admitted : tooManyRequests("api_key", "rate limit exceeded for this API key", retryAfterSeconds)
      )
    }

    /**
     * A key with an allowlist is refused from any other address, before its rate limit is spent (a leaked key used
     * elsewhere must not use up the partner's budget). The refusal names the rule and the address it saw, never the
     * addresses allowed.
     */
    const admit = (key: ApiKeyRow, request: HttpServerRequest.HttpServerRequest): Authenticated =>
      withinAllowlist(key.allowed_ips, request, () => admitted(key))

    /** `then`, unless `allowedIps` is a list and the request's client address is not in it (403, never the list). */
    const withinAllowlist = (
      allowedIps: ReadonlyArray<string> | null,
      request: HttpServerRequest.HttpServerRequest,
      then: () => Authenticated
    ): Authenticated => {
      if (allowedIps === null) return then()
      const address = clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers)
      return allowlistOf(allowedIps)(address) ? then() : Effect.fail(outsideAllowlist(address))
    }

    const admitted = (key: ApiKeyRow): Authenticated =>
      limited(
        key.id,
        Effect.as(
          noteIntegration(key.integration_id, { id: key.id, last4: key.last4 }),
          CurrentIntegration.of({
            integrationId: key.integration_id,
            keyId: key.id,
            mode: deployment.mode,
            ...(key.scopes === null ? {} : { scopes: key.scopes })
          })
        )
      )

    /** A correct key is admitted even from an address over budget; only a failure there is 429 (see FailedAuthLimit). */
    const lookUp = (request: HttpServerRequest.HttpServerRequest, address: string, keyHash: string) =>
      Effect.flatMap(findKey(address, keyHash), ({ value: looked }): Authenticated => {
        if (looked._tag === "OverBudget") {
          return Effect.flatMap(
            failedAuth.lookUpOverBudget(keyHash),
            (key) => Option.isSome(key) ? admit(key.value, request) : tooManyFailures(looked.retryAfterSeconds)
          )
        }
        return Option.isNone(looked.key)
          ? Effect.fail(new Unauthorized({ error: "unknown or revoked API key" }))
          : admit(looked.key.value, request)
      })

    /** A session's request, checked for its CSRF token and counted against its key's rate limit. */
    const admitSession = (method: string, csrfHeader: string | undefined, session: ActiveSession): Authenticated => {
      if (!SAFE_METHODS.has(method) && (csrfHeader === undefined || !sameToken(csrfHeader, session.csrfToken))) {
        return Effect.fail(csrfRefused)
      }
      const { csrfToken, expiresAt, integrationId, keyId, keyLast4, sessionId } = session
      return limited(
        keyId,
        Effect.as(
          // Logged as the key that made the session, and the session by its id (never its token).
          noteIntegration(integrationId, { id: keyId, last4: keyLast4 }, sessionId),
          CurrentIntegration.of({
            integrationId,
            keyId,
            mode: deployment.mode,
            session: { sessionId, expiresAt, csrfToken }
          })
        )
      )
    }

    /**
     * The dashboard session the cookie names (`token`), under the same kind of failed-lookup budget per address as
     * keys: a token of the wrong shape is refused without a lookup.
     */
    const authenticateSession = (
      request: HttpServerRequest.HttpServerRequest,
      token: string
    ): Authenticated => {
      if (!isTokenShaped(token)) return rejectWithoutLookup(sessionRefused.unknown)
      const hash = hashToken(token)
      const address = clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers)
      const found = (row: Option.Option<SessionRow>): Authenticated => {
        if (Option.isNone(row)) return Effect.fail(new Unauthorized({ error: sessionRefused.unknown }))
        const session = activeSession(row.value, token)
        return Result.isFailure(session)
          ? Effect.fail(new Unauthorized({ error: sessionRefused[session.failure] }))
          : withinAllowlist(
            session.success.allowedIps,
            request,
            () => admitSession(request.method, request.headers["x-csrf-token"], session.success)
          )
      }
      return Effect.flatMap(
        failedSessions.guardLookup(address, hash, sessions.findByHash(hash)),
        (looked): Authenticated =>
          looked._tag === "Looked"
            ? found(looked.key)
            : Effect.flatMap(
              failedSessions.lookUpOverBudget(hash),
              (row) => Option.isSome(row) ? found(row) : tooManyFailures(looked.retryAfterSeconds)
            )
      )
    }

    /**
     * The integration behind the request's bearer key, or why there is none (401, 429). Without an Authorization
     * header, the dashboard session its cookie names (401, 403 for a change without the CSRF token, 429); a request
     * with one is authenticated by its key alone.
     *
     * A key this replica remembers as active (KeyCache) that has authenticated before (FailedAuthLimit) is admitted
     * at once: no single flight (what a run would give it is that same remembered row) and no checksum or kind check
     * (its hash is remembered only after this exact key passed them and was found, on this deployment). Anything else
     * is checked and looked up as it always was.
     */
    const authenticate = Effect.withFiber((fiber): Authenticated => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const authorization = request.headers["authorization"]
      if (authorization === undefined || authorization.trim() === "") {
        const cookie = request.cookies[DASHBOARD_SESSION_COOKIE]
        if (cookie !== undefined && cookie !== "") return authenticateSession(request, cookie)
      }
      const bearer = readBearerKey(authorization)
      if (Result.isFailure(bearer)) return rejectWithoutLookup(bearer.failure)
      const { hash, shape } = bearer.success
      const remembered = findActive.cached(hash, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
      if (remembered !== undefined && failedAuth.passTrusted(hash)) return admit(remembered, request)
      const invalid = invalidKey(shape, deployment)
      if (invalid !== undefined) return rejectWithoutLookup(invalid)
      return lookUp(request, clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers), hash)
    })

    /** The request's integration, if its key's scopes allow `operation` (`<group>.<operation>`); else 403 naming why. */
    const withinScopes = (operation: string) => (current: typeof CurrentIntegration.Service): Authenticated => {
      const refusal = scopeRefusal(operation, current.scopes ?? null)
      return refusal === undefined ? Effect.succeed(current) : Effect.fail(new Forbidden({ error: refusal }))
    }

    /**
     * The platform tries the schemes in order and answers the last one's failure. One request is authenticated one
     * way (above), and its refusal must say why, so the first scheme (the cookie's) passes to the second, which decides
     * for both.
     */
    const passToNextScheme = Effect.fail(new Unauthorized({ error: "(tried by the next scheme)" }))

    return Authentication.of({
      dashboardSession: () => passToNextScheme,
      // A restricted key runs only the operations its scopes allow (contracts/src/Scopes.ts): else 403 naming the scope.
      bearer: (httpEffect, { endpoint, group }) =>
        authenticate.pipe(
          Effect.flatMap(withinScopes(`${group.identifier}.${endpoint.identifier}`)),
          Effect.flatMap((current) => Effect.provideService(httpEffect, CurrentIntegration, current))
        )
    })
  })
)
