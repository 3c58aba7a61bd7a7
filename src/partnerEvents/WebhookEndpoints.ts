import {
  type CreateWebhookEndpointRequest,
  type EndpointId,
  type IntegrationId,
  NotFound,
  type UpdateWebhookEndpointRequest,
  type WebhookEndpointWithSecret
} from "@cop-integrations/contracts"
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { AuditLog } from "../auth/AuditLog.ts"
import { now } from "../base/Clock.ts"
import { newId } from "../base/ids.ts"
import type { EndpointRow } from "./EndpointRepo.ts"
import { EndpointRepo } from "./EndpointRepo.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { presentEndpoint } from "./Present.ts"
import { newSigningSecret } from "./Signing.ts"
import { WebhookTargets } from "./WebhookTargets.ts"

/** Endpoints one integration may have at once. */
export const MAX_ENDPOINTS = 16
/** After a rotation the old secret keeps signing this long, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

/** The integration already has `max` endpoints. */
export class WebhookEndpointLimit extends Data.TaggedError("WebhookEndpointLimit")<{ readonly max: number }> {}

/** The endpoint is disabled (`reason`: why), so it receives nothing. */
export class WebhookEndpointDisabled extends Data.TaggedError("WebhookEndpointDisabled")<{
  readonly endpointId: EndpointId
  readonly reason: string | null
}> {}

export type WebhookEndpointConflict = WebhookEndpointLimit | WebhookEndpointDisabled

const notFound = (endpointId: EndpointId) => new NotFound({ error: `no webhook endpoint ${endpointId}` })

const withSecret = (row: EndpointRow): WebhookEndpointWithSecret => ({
  ...presentEndpoint(row),
  secret: Redacted.value(row.secret)
})

/** Registering, updating (enabling, disabling), rotating, pinging and deleting an integration's webhook endpoints. */
export class WebhookEndpoints extends Context.Service<WebhookEndpoints>()("WebhookEndpoints", {
  make: Effect.gen(function*() {
    const endpoints = yield* EndpointRepo
    const targets = yield* WebhookTargets
    const outbox = yield* Outbox
    const audit = yield* AuditLog
    /** A change and its audit entry, together or not at all (a database failure is a defect, as in the repositories). */

    const owned = (integrationId: IntegrationId, endpointId: EndpointId) =>
      Effect.flatMap(
        endpoints.findOwned(integrationId, endpointId),
        Option.match({
          onNone: () => Effect.fail(notFound(endpointId)),
          onSome: Effect.succeed
        })
      )

    const create = Effect.fn("WebhookEndpoints.create")(
      function*(integrationId: IntegrationId, request: CreateWebhookEndpointRequest) {
        const url = yield* targets.check(request.url)
        const at = yield* now
        const row = yield* Effect.tap(
          endpoints.insertWithinCap({
            id: newId("we"),
            integration_id: integrationId,
            url: url.href,
            events: request.events === undefined ? ["*"] : [...new Set(request.events)],
            secret: newSigningSecret(),
            previous_secret: null,
            previous_secret_expires_at: null,
            status: "enabled",
            signature_scheme: request.signatureScheme ?? "v1",
            disabled_reason: null,
            created_at: at,
            updated_at: at
          }, MAX_ENDPOINTS),
          Option.match({
            onNone: () => Effect.void,
            onSome: (created) =>
              audit.record({
                integrationId,
                action: "webhook_endpoint.created",
                targetId: created.id,
                details: { url: created.url, events: created.events, signatureScheme: created.signature_scheme }
              })
          })
        ).pipe(audit.withItsEntry)
        return yield* Option.match(row, {
          onNone: () => Effect.fail(new WebhookEndpointLimit({ max: MAX_ENDPOINTS })),
          onSome: (created) => Effect.succeed(withSecret(created))
        })
      }
    )

    const rotateSecret = Effect.fn("WebhookEndpoints.rotateSecret")(
      function*(integrationId: IntegrationId, endpointId: EndpointId) {
        const at = yield* now
        const rotated = yield* Effect.tap(
          endpoints.rotate({
            integrationId,
            endpointId,
            secret: newSigningSecret(),
            at,
            overlapUntil: new Date(at.getTime() + ROTATION_OVERLAP_MS)
          }),
          Option.match({
            onNone: () => Effect.void,
            onSome: () =>
              audit.record({ integrationId, action: "webhook_endpoint.secret_rotated", targetId: endpointId })
          })
        ).pipe(audit.withItsEntry)
        return yield* Option.match(rotated, {
          onNone: () => Effect.fail(notFound(endpointId)),
          onSome: (row) => Effect.succeed(withSecret(row))
        })
      }
    )

    /** An `endpoint.ping` for this endpoint alone; a disabled endpoint receives nothing, so it is refused. */
    const ping = Effect.fn("WebhookEndpoints.ping")(function*(integrationId: IntegrationId, endpointId: EndpointId) {
      const row = yield* owned(integrationId, endpointId)
      if (row.status === "disabled") {
        return yield* Effect.fail(new WebhookEndpointDisabled({ endpointId, reason: row.disabled_reason }))
      }
      const at = yield* now
      const body = yield* outbox.recordFor(row.id, {
        integrationId,
        type: "endpoint.ping",
        resourceId: row.id,
        object: presentEndpoint(row),
        at
      })
      return body
    })

    /** Sets the fields given (none: the endpoint as it is): see EndpointRepo's `update`. */
    const update = Effect.fn("WebhookEndpoints.update")(
      function*(integrationId: IntegrationId, endpointId: EndpointId, request: UpdateWebhookEndpointRequest) {
        const url = request.url === undefined ? undefined : (yield* targets.check(request.url)).href
        const at = yield* now
        const events = request.events === undefined ? undefined : [...new Set(request.events)]
        const set = {
          ...(request.status === undefined ? {} : { status: request.status }),
          ...(url === undefined ? {} : { url }),
          ...(events === undefined ? {} : { events }),
          ...(request.signatureScheme === undefined ? {} : { signatureScheme: request.signatureScheme })
        }
        const updated = yield* Effect.tap(
          endpoints.update(integrationId, endpointId, {
            ...set,
            disabledReason: `disabled by the integration at ${at.toISOString()}`
          }, at),
          Option.match({
            // An update that sets nothing changes nothing: no entry.
            onNone: () => Effect.void,
            onSome: () =>
              Object.keys(set).length === 0
                ? Effect.void
                : audit.record({
                  integrationId,
                  action: "webhook_endpoint.updated",
                  targetId: endpointId,
                  details: set
                })
          })
        ).pipe(audit.withItsEntry)
        return yield* Option.match(updated, {
          onNone: () => Effect.fail(notFound(endpointId)),
          onSome: (row) => Effect.succeed(presentEndpoint(row))
        })
      }
    )

    const remove = Effect.fn("WebhookEndpoints.remove")(
      function*(integrationId: IntegrationId, endpointId: EndpointId) {
        const at = yield* now
        const removed = yield* Effect.tap(
          endpoints.remove(integrationId, endpointId, at),
          (done) =>
            done
              ? audit.record({ integrationId, action: "webhook_endpoint.deleted", targetId: endpointId })
              : Effect.void
        ).pipe(audit.withItsEntry)
        if (!removed) return yield* Effect.fail(notFound(endpointId))
      }
    )

    const list = Effect.fn("WebhookEndpoints.list")(function*(integrationId: IntegrationId) {
      return { items: (yield* endpoints.list(integrationId)).map(presentEndpoint) }
    })

    const get = Effect.fn("WebhookEndpoints.get")(function*(integrationId: IntegrationId, endpointId: EndpointId) {
      return presentEndpoint(yield* owned(integrationId, endpointId))
    })

    return { create, list, get, update, rotateSecret, ping, remove } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
