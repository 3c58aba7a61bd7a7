import { AuditLog } from "../auth/AuditLog.ts"
import type { IntegrationId, KeyId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Result } from "effect"
import { newInternalId } from "../base/ids.ts"
import { AppConfig } from "../config/Config.ts"
import { originOfHost } from "./Hosts.ts"
import { SessionRepo, type SessionRow } from "./SessionRepo.ts"
import { csrfTokenFor, hashToken, isTokenShaped, newToken } from "./Tokens.ts"

export const DASHBOARD_PATH = "/dashboard"
export const SIGN_IN_PATH = "/dashboard/sign-in"

/** How long a sign-in link can be opened. */
export const SIGN_IN_LINK_MS = 5 * 60_000

/** Who makes a link: an integration, through one of its keys (the session ends when that key stops working). */
export interface LinkOwner {
  readonly integrationId: IntegrationId
  readonly keyId: KeyId
}

export interface SignInLink {
  readonly url: string
  readonly expiresAt: Date
}

/** A session a link opened: its secret goes into the cookie, and nowhere else. */
export interface OpenedSession {
  readonly sessionId: string
  readonly sessionToken: string
  readonly integrationId: IntegrationId
  readonly expiresAt: Date
}

/** Why a link opened nothing: no such link, opened already, or past its five minutes (or its key stopped working). */
export type SignInRefusal = "unknown" | "used" | "expired"

/** A session a request's cookie names, open. */
export interface ActiveSession {
  readonly sessionId: string
  readonly integrationId: IntegrationId
  readonly keyId: KeyId
  readonly keyLast4: string
  readonly expiresAt: Date
  readonly csrfToken: string
  /** The CIDRs its key is accepted from (null: any address). */
  readonly allowedIps: ReadonlyArray<string> | null
}

/** Why a known session authenticates nothing: signed out, or past its end (or its key stopped working). */
export type SessionRefusal = "ended" | "expired"

/** The session `row` is, when it is open: the one `sessionToken` (a cookie's value, whose hash found it) names. */
export const activeSession = (row: SessionRow, sessionToken: string): Result.Result<ActiveSession, SessionRefusal> => {
  if (row.ended) return Result.fail("ended")
  if (row.expired || !row.key_active) return Result.fail("expired")
  return Result.succeed({
    sessionId: row.id,
    integrationId: row.integration_id,
    keyId: row.key_id,
    keyLast4: row.key_last4,
    expiresAt: row.expires_at,
    csrfToken: csrfTokenFor(sessionToken),
    allowedIps: row.key_allowed_ips
  })
}

/** The dashboard's sign-in: one-time links made with a key, and the sessions they open. */
export class DashboardSessions extends Context.Service<DashboardSessions>()("DashboardSessions", {
  make: Effect.gen(function*() {
    const repo = yield* SessionRepo
    const config = yield* AppConfig
    const audit = yield* AuditLog
    /** A change and its audit entry, together or not at all. */
    const sessionMs = config.dashboardSessionHours * 3_600_000

    const createLink = Effect.fn("DashboardSessions.createLink")(function*(owner: LinkOwner, origin: string) {
      const token = newToken()
      const expiresAt = yield* Effect.tap(
        repo.insertLink({ ...owner, tokenHash: hashToken(token), validMs: SIGN_IN_LINK_MS }),
        (until) =>
          audit.record({
            integrationId: owner.integrationId,
            action: "dashboard.sign_in_link_created",
            targetId: owner.keyId,
            details: { keyId: owner.keyId, expiresAt: until.toISOString() }
          })
      ).pipe(audit.withItsEntry)
      return { url: `${origin}${SIGN_IN_PATH}?token=${token}`, expiresAt } satisfies SignInLink
    })

    const signIn = Effect.fn("DashboardSessions.signIn")(
      function*(token: string): Effect.fn.Return<Result.Result<OpenedSession, SignInRefusal>> {
        if (!isTokenShaped(token)) return Result.fail("unknown")
        const tokenHash = hashToken(token)
        const sessionToken = newToken()
        const opened = yield* Effect.tap(
          repo.consumeLink({
            tokenHash,
            sessionId: newInternalId("ds"),
            sessionTokenHash: hashToken(sessionToken),
            sessionMs
          }),
          Option.match({
            onNone: () => Effect.void,
            onSome: ({ expires_at, id, integration_id, key_id }) =>
              audit.record({
                integrationId: integration_id,
                action: "dashboard.signed_in",
                targetId: id,
                actor: { type: "dashboard_session", sessionId: id, keyId: key_id },
                details: { keyId: key_id, expiresAt: expires_at.toISOString() }
              })
          })
        ).pipe(audit.withItsEntry)
        if (Option.isSome(opened)) {
          const { expires_at, id, integration_id } = opened.value
          return Result.succeed({ sessionId: id, sessionToken, integrationId: integration_id, expiresAt: expires_at })
        }
        const state = yield* repo.linkState(tokenHash)
        return Result.fail(Option.match(state, {
          onNone: (): SignInRefusal => "unknown",
          onSome: ({ used }) => used ? "used" : "expired"
        }))
      }
    )

    return {
      /** A one-time link to `SIGN_IN_PATH` at `origin`, valid five minutes. */
      createLink,
      /** Opens the session of a link, once. */
      signIn,
      /** The session whose token has this hash (`hashToken`), open or not. */
      findByHash: repo.findSession,
      /** `findByHash` for many hashes at once, keyed by hash. */
      findByHashes: repo.findSessions,
      /** Ends the session (sign-out); false when it had ended already. */
      end: (sessionId: string, integrationId: IntegrationId) =>
        Effect.tap(
          Effect.map(repo.endSession({ sessionId, integrationId }), Option.isSome),
          (ended) =>
            ended ? audit.record({ integrationId, action: "dashboard.signed_out", targetId: sessionId }) : Effect.void
        ).pipe(audit.withItsEntry),
      /** The origin links name: PUBLIC_BASE_URL, else the one a request's Host header names (none if it is invalid). */
      originFor: (host: string | undefined): Option.Option<string> =>
        Option.orElse(config.publicBaseUrl, () => Option.fromUndefinedOr(originOfHost(host)))
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
