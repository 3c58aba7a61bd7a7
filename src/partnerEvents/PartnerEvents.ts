import {
  type BadRequest,
  type EventId,
  type IntegrationId,
  NotFound,
  type Redelivery
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { now } from "../base/Clock.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { filterDigest, instantOf, positionPage } from "../db/Pagination.ts"
import { EventRepo } from "./EventRepo.ts"
import { presentAttempt } from "./Present.ts"

export interface EventListRequest {
  readonly integrationId: IntegrationId
  readonly type: string | undefined
  readonly resourceId?: string | undefined
  readonly createdFrom: string | undefined
  readonly limit: number | undefined
  readonly cursor: string | undefined
}

const WALLET_ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** A resource id as events store it: a customer's wallet address in lower case, any other id as it is. */
export const storedResourceId = (resourceId: string): string =>
  WALLET_ADDRESS.test(resourceId) ? resourceId.toLowerCase() : resourceId

/**
 * The events API. Events are answered with the bytes that were (or will be) delivered: the stored body, spliced
 * into the JSON answer as is, so what a partner lists is exactly what its endpoint received. The list is in the order
 * events were recorded (their position, given once committed): each list first numbers what has committed since, so
 * a follower sees an event as soon as its transaction commits, and never behind its cursor.
 */
export class PartnerEvents extends Context.Service<PartnerEvents>()("PartnerEvents", {
  make: Effect.gen(function*() {
    const events = yield* EventRepo
    const pageBudget = yield* PageBudget

    const list = Effect.fn("PartnerEvents.list")(
      function*(request: EventListRequest): Effect.fn.Return<string, BadRequest> {
        const resourceId = request.resourceId === undefined ? undefined : storedResourceId(request.resourceId)
        const digest = filterDigest({ resourceId }, { type: request.type, createdFrom: instantOf(request.createdFrom) })
        const listed = yield* positionPage(
          { ...request, filterDigest: digest },
          (page) =>
            events.positionPending(request.integrationId).pipe(
              Effect.andThen(
                events.page({ ...page, type: request.type ?? null, resourceId: resourceId ?? null }).pipe(
                  pageBudget.withRows(page.limit)
                )
              )
            ),
          (row) => row.body
        )
        return `{"integrationId":${JSON.stringify(listed.integrationId)},"items":[${
          listed.items.join(",")
        }],"nextCursor":${JSON.stringify(listed.nextCursor)}}`
      }
    )

    const get = Effect.fn("PartnerEvents.get")(
      function*(integrationId: IntegrationId, eventId: EventId): Effect.fn.Return<string, NotFound> {
        const found = yield* events.findOwned(integrationId, eventId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no event ${eventId}` }))
        const attempts = (yield* events.attempts(eventId)).map(presentAttempt)
        // The stored body is an object literal: close it with the attempts instead of its last brace.
        return `${found.value.body.slice(0, -1)},"attempts":${JSON.stringify(attempts)}}`
      }
    )

    const redeliver = Effect.fn("PartnerEvents.redeliver")(
      function*(integrationId: IntegrationId, eventId: EventId): Effect.fn.Return<Redelivery, NotFound> {
        const found = yield* events.findOwned(integrationId, eventId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no event ${eventId}` }))
        const endpointIds = yield* events.redeliver(integrationId, eventId, yield* now)
        return { eventId, endpointIds }
      }
    )

    return { list, get, redeliver } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
