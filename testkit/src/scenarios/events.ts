/**
 * Events to partners (R-EVT-1 to R-EVT-11): webhook endpoint management (enable, disable, update), signed
 * deliveries verified by the kit (Standard Webhooks), every payout outcome through the test helpers, order per
 * payout and its `sequence`, rotation, redelivery and the events API (one resource's events, each attempt's excerpt).
 */
import { Event, type EventWithAttempts, type WebhookEndpointWithSecret } from "@cop-integrations/contracts"
import { Effect, Result } from "effect"
import { ok, rejected, unknownEventTypesWarning, unknownFieldsWarning } from "../api.ts"
import { check, checkEqual, checkNamesField, pollUntil, sameJson } from "../check.ts"
import { decodeResource, isKnownEventType } from "../contract.ts"
import { failure, type ScenarioFailure, show } from "../failure.ts"
import type { Exchange } from "../exchange.ts"
import { approvedUser, createPayout, payoutRequest } from "../fixtures.ts"
import type { Channel, ReceivedDelivery } from "../receiver.ts"
import { type Kit, scenario } from "../scenario.ts"
import { signatureProblem, v1aSignatureProblem } from "../webhookSignature.ts"

const ENDPOINT_RULE = "a webhook endpoint's secret is shown only at creation and rotation"
const DELIVERY_RULE =
  "a delivery is signed per Standard Webhooks and its body is the event { id, type, createdAt, sequence, data: { object } }"
const ORDER_RULE = "events arrive at least once, ordered per resource: payout.completed after payout.processing"
const SEQUENCE_RULE = "a resource's events carry sequence 1, 2, 3 … with no gap, in deliveries and in GET events"
const V1A_RULE =
  "an endpoint with signatureScheme v1a gets deliveries signed v1a (ed25519 of \"<id>.<timestamp>.<body>\") by the key GET webhook-signing-key publishes"
const REPLAY_RULE =
  "POST webhook-endpoints/{endpointId}/replay sends the range's events again to the endpoint, each once, in recording order, under its webhook-id; its progress completes"
const HELPER_RULE = "the test helpers move a payout only forward, through the provider's state machine and event path"

const receiverOf = (kit: Kit) =>
  kit.receiver === undefined
    ? Effect.die(new Error("scenario needs a receiver but the run has none"))
    : Effect.succeed(kit.receiver)

/** Registers an endpoint on a channel of the kit's receiver for the scenario's life, deleting it at the end. */
const withEndpoint = <A>(
  kit: Kit,
  events: ReadonlyArray<string> | undefined,
  use: (endpoint: WebhookEndpointWithSecret, channel: Channel) => Effect.Effect<A, ScenarioFailure>
) =>
  Effect.gen(function*() {
    const channel = (yield* receiverOf(kit)).channel()
    const reply = yield* kit.call("createWebhookEndpoint", {
      json: events === undefined ? { url: channel.url } : { url: channel.url, events }
    })
    const endpoint = yield* ok(reply, "201 with the new endpoint and its secret")
    return yield* use(endpoint, channel).pipe(
      Effect.ensuring(Effect.ignore(kit.call("deleteWebhookEndpoint", { path: { endpointId: endpoint.endpointId } })))
    )
  })

/** The deliveries of `channel` that match, once `count` have arrived (bounded by the scenario's deadline). */
const awaitDeliveries = (
  kit: Kit,
  channel: Channel,
  what: string,
  match: (delivery: ReceivedDelivery) => boolean,
  count = 1
) =>
  Effect.flatMap(Effect.promise(() => channel.await(match, count, kit.deadline - 500)), (found) =>
    found === undefined
      ? Effect.fail(failure(DELIVERY_RULE, {
        expected: `${count} delivery(ies): ${what}`,
        actual: `received ${channel.deliveries().length}: ${show(channel.deliveries().map((d) => typeOf(d)))}`
      }))
      : Effect.succeed(found))

const typeOf = (delivery: ReceivedDelivery): string =>
  typeof delivery.json === "object" && delivery.json !== null && "type" in delivery.json
    ? String(delivery.json.type)
    : "?"

const objectOf = (delivery: ReceivedDelivery): Record<string, unknown> => {
  const json = delivery.json as { data?: { object?: Record<string, unknown> } } | undefined
  return json?.data?.object ?? {}
}

const ofPayout = (payoutId: string) => (delivery: ReceivedDelivery) => objectOf(delivery)["payoutId"] === payoutId

/**
 * A delivery verifies with `secret`, its id is the event id, and its body is an Event as the contract says (a field
 * the contract does not know is a warning, a failure with --strict).
 */
const checkSigned = (kit: Kit, secret: string, delivery: ReceivedDelivery) =>
  Effect.gen(function*() {
    const problem = signatureProblem(secret, delivery)
    yield* check(problem === undefined, DELIVERY_RULE, {
      expected: "a valid Standard Webhooks signature",
      actual: `${problem}; headers ${show(delivery)}`
    })
    const event = decodeResource(Event, delivery.json, kit.strict)
    yield* check(Result.isSuccess(event), DELIVERY_RULE, {
      expected: "the body to be an Event of the contract",
      actual: Result.isFailure(event) ? `${event.failure.problem}: ${delivery.body.slice(0, 400)}` : ""
    })
    const decoded = Result.getOrThrowWith(event, ({ problem }) => new Error(problem))
    if (decoded.unknownFields.length > 0) kit.warn(unknownFieldsWarning("a webhook delivery", decoded.unknownFields))
    yield* checkEqual("webhook-id is the event id (receivers dedupe on it)", delivery.id, decoded.value.id)
    return decoded.value
  })

const advance = (kit: Kit, payoutId: string, to: "processing" | "completed" | "failed" | "refunded") =>
  Effect.flatMap(
    kit.call("advancePayout", { path: { payoutId }, json: { to } }),
    (reply) => ok(reply, `the test helper to move the payout to ${to}`)
  )

const newPayout = (kit: Kit) => Effect.flatMap(approvedUser(kit), (user) => createPayout(kit, payoutRequest(user)))

const deliveredTypes = (
  kit: Kit,
  channel: Channel,
  payoutId: string,
  expected: ReadonlyArray<string>,
  secret: string
) =>
  Effect.gen(function*() {
    // A type the contract does not know is an addition (README#versioning): skipped with a warning, unless --strict.
    const counted = (delivery: ReceivedDelivery) => kit.strict || isKnownEventType(typeOf(delivery))
    const got = yield* awaitDeliveries(
      kit,
      channel,
      expected.join(", "),
      (delivery) => ofPayout(payoutId)(delivery) && counted(delivery),
      expected.length
    )
    const skipped = channel.deliveries().filter((delivery) => ofPayout(payoutId)(delivery) && !counted(delivery))
    if (skipped.length > 0) {
      kit.warn(unknownEventTypesWarning("webhook deliveries", [...new Set(skipped.map(typeOf))]))
    }
    yield* checkEqual(ORDER_RULE, got.map(typeOf), expected)
    for (const delivery of got) yield* checkSigned(kit, secret, delivery)
    return got
  })

/**
 * A new payout moved through `moves` by the test helper (each answered with the payout in that status), and the
 * signed events its endpoint receives for it, in the order expected.
 */
const advancedPayoutDelivers = (
  kit: Kit,
  moves: ReadonlyArray<"processing" | "completed" | "failed" | "refunded">,
  expected: ReadonlyArray<string>
) =>
  withEndpoint(kit, undefined, (endpoint, channel) =>
    Effect.gen(function*() {
      const payout = yield* newPayout(kit)
      for (const to of moves) {
        const moved = yield* advance(kit, payout.payoutId, to)
        yield* checkEqual(HELPER_RULE, moved.status, to)
      }
      const delivered = yield* deliveredTypes(kit, channel, payout.payoutId, expected, endpoint.secret)
      return { payout, delivered }
    }))

const sequenceOf = (delivery: ReceivedDelivery): unknown => (delivery.json as { sequence?: unknown }).sequence

/**
 * The payout's events in `GET events` from `createdFrom` on, in list order, through the pages (at most 20 of them),
 * with the first page's exchange (a failure's reproduction).
 */
const listedEventsOf = (kit: Kit, payoutId: string, createdFrom: string) =>
  Effect.gen(function*() {
    const found: Array<Event> = []
    let cursor: string | null = null
    let exchange: Exchange | undefined
    for (let page = 0; page < 20; page++) {
      const query: Record<string, string> = cursor === null ? { createdFrom, limit: "100" } : { cursor, limit: "100" }
      const reply = yield* kit.call("listEvents", { query })
      exchange ??= reply.exchange
      const list = yield* ok(reply)
      found.push(...list.items.filter((event) => (event.data.object as { payoutId?: string }).payoutId === payoutId))
      cursor = list.nextCursor
      if (cursor === null) break
    }
    return { found, exchange }
  })

const payoutEvents = { mock: true, moneyMoving: true, receiver: true } as const

const RESOURCE_RULE = "GET events?resourceId= lists one resource's events, in sequence order"
const EXCERPT_RULE =
  "an attempt's responseExcerpt is the start of the receiver's body as text, control characters removed"
const UPDATE_RULE =
  "a disabled endpoint shows why and is refused a ping; enabled again it has no disabledReason and receives events"

/** Every event listed with `query`, one page at a time (at most 50 pages), and the first page's exchange. */
const eventsOnePerPage = (kit: Kit, query: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const found: Array<Event> = []
    let cursor: string | null = null
    let exchange: Exchange | undefined
    for (let page = 0; page < 50; page++) {
      const pageQuery: Record<string, string> = { ...query, limit: "1", ...(cursor === null ? {} : { cursor }) }
      const reply = yield* kit.call("listEvents", { query: pageQuery })
      exchange ??= reply.exchange
      const list = yield* ok(reply)
      found.push(...list.items)
      cursor = list.nextCursor
      if (cursor === null) break
    }
    return { found, exchange }
  })

const updateEndpoint = (kit: Kit, endpointId: string, json: Readonly<Record<string, unknown>>) =>
  kit.call("updateWebhookEndpoint", { path: { endpointId }, json })

export const eventScenarios = [
  scenario({
    id: "EVT-001",
    title: "a webhook endpoint: 201 with its secret once; get and list never show it; delete is 204, then 404",
    rules: ["R-EVT-1"],
    tags: ["events"],
    // The receiver's URL is one the deployment accepts (a live one refuses what does not resolve to a public address).
    requires: { receiver: true },
    run: (kit) =>
      Effect.gen(function*() {
        const url = (yield* receiverOf(kit)).channel().url
        const created = yield* ok(yield* kit.call("createWebhookEndpoint", { json: { url } }))
        yield* checkEqual("events default to every type", created.events, ["*"])
        yield* checkEqual("a new endpoint is enabled", [created.status, created.disabledReason], ["enabled", null])
        yield* check(/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(created.secret), ENDPOINT_RULE, {
          expected: "secret whsec_<base64>",
          actual: created.secret
        })
        const path = { endpointId: created.endpointId }
        // the strict decode of WebhookEndpoint refuses an extra `secret` property
        const got = yield* ok(yield* kit.call("getWebhookEndpoint", { path }))
        yield* checkEqual("GET shows the endpoint as created", got.url, created.url)
        const listed = yield* ok(yield* kit.call("listWebhookEndpoints"))
        yield* check(listed.items.some((item) => item.endpointId === created.endpointId), ENDPOINT_RULE, {
          expected: `the list to include ${created.endpointId}`,
          actual: show(listed.items.map((item) => item.endpointId))
        })
        yield* ok(yield* kit.call("deleteWebhookEndpoint", { path }), "204 deleting the endpoint")
        yield* rejected(yield* kit.call("getWebhookEndpoint", { path }), 404, "none", "a deleted endpoint is 404")
        yield* rejected(yield* kit.call("deleteWebhookEndpoint", { path }), 404, "none", "deleting it again is 404")
      })
  }),
  scenario({
    id: "EVT-002",
    title: "an endpoint's url and events are validated: 400 naming the field",
    rules: ["R-EVT-1", "R-ERR-2"],
    tags: ["events", "errors"],
    run: (kit) =>
      Effect.forEach(
        [
          [{ url: "not a url" }, "url"],
          [{ url: "ftp://example.com/hooks" }, "url"],
          [{ url: "https://example.com/hooks", events: ["payout.done"] }, "events"],
          [{ url: "https://example.com/hooks", events: [] }, "events"],
          [{ url: "https://example.com/hooks", event: ["*"] }, "event"]
        ] as const,
        ([json, field]) =>
          Effect.gen(function*() {
            const reply = yield* kit.call("createWebhookEndpoint", { json })
            const error = yield* rejected(reply, 400, "none", `an invalid ${field} is 400`)
            yield* checkNamesField("the 400 names the field", error, field, reply.exchange)
          }),
        { discard: true }
      )
  }),
  scenario({
    id: "EVT-003",
    title:
      "ping: 202 with the endpoint.ping event, delivered signed; webhook-id is its id and the body is the same event",
    rules: ["R-EVT-2"],
    tags: ["events"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, ["payout.completed"], (endpoint, channel) =>
        Effect.gen(function*() {
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          yield* checkEqual(
            "ping queues an endpoint.ping event (whatever the endpoint subscribes to)",
            ping.type,
            "endpoint.ping"
          )
          const [delivery] = yield* awaitDeliveries(kit, channel, "the ping", (d) => d.id === ping.id)
          const event = yield* checkSigned(kit, endpoint.secret, delivery!)
          yield* check(sameJson(event, ping), DELIVERY_RULE, {
            expected: "the delivered event to equal the 202 body",
            actual: delivery!.body
          })
          yield* checkEqual("a ping's object is the endpoint", objectOf(delivery!)["endpointId"], endpoint.endpointId)
        }))
  }),
  scenario({
    id: "EVT-004",
    title:
      "rotate-secret: a new secret; for 24 h deliveries carry two signatures, and the old and new secret each verify",
    rules: ["R-EVT-3"],
    tags: ["events"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          const rotated = yield* ok(
            yield* kit.call("rotateWebhookSecret", { path: { endpointId: endpoint.endpointId } })
          )
          yield* check(rotated.secret !== endpoint.secret, "rotation gives a new secret", {
            expected: "a different secret",
            actual: "the same one"
          })
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          const [delivery] = yield* awaitDeliveries(kit, channel, "the ping", (d) => d.id === ping.id)
          yield* checkSigned(kit, rotated.secret, delivery!)
          yield* checkSigned(kit, endpoint.secret, delivery!)
          yield* checkEqual(
            "two space-separated signatures during the overlap",
            delivery!.signature.split(" ").length,
            2
          )
        }))
  }),
  scenario({
    id: "EVT-005",
    title:
      "a payout moved to processing, then completed: created, deposit_confirmed, processing, completed arrive in order, signed",
    rules: ["R-EVT-4", "R-EVT-2"],
    tags: ["events", "test-helpers"],
    requires: payoutEvents,
    run: (kit) =>
      Effect.gen(function*() {
        const { delivered, payout } = yield* advancedPayoutDelivers(kit, ["processing", "completed"], [
          "payout.created",
          "payout.deposit_confirmed",
          "payout.processing",
          "payout.completed"
        ])
        const current = yield* ok(yield* kit.call("getPayout", { path: { payoutId: payout.payoutId } }))
        yield* check(
          sameJson(objectOf(delivered[3]!), current),
          "an event's object is the resource as the API returns it",
          {
            expected: show(current),
            actual: show(objectOf(delivered[3]!))
          }
        )
      })
  }),
  scenario({
    id: "EVT-006",
    title: "a payout moved to failed, then refunded: payout.failed then payout.refunded",
    rules: ["R-EVT-5"],
    tags: ["events", "test-helpers"],
    requires: payoutEvents,
    run: (kit) =>
      Effect.asVoid(
        advancedPayoutDelivers(kit, ["failed", "refunded"], ["payout.created", "payout.failed", "payout.refunded"])
      )
  }),
  scenario({
    id: "EVT-007",
    title: "a KYC rejected by the test helper: 200 rejected, and kyc.rejected is delivered",
    rules: ["R-EVT-5"],
    tags: ["events", "test-helpers", "kyc"],
    requires: payoutEvents,
    run: (kit) =>
      withEndpoint(kit, ["kyc.rejected"], (endpoint, channel) =>
        Effect.gen(function*() {
          const user = yield* approvedUser(kit)
          const customer = yield* ok(yield* kit.call("rejectKyc", { path: { userAddress: user } }))
          yield* checkEqual(HELPER_RULE, [customer.userAddress, customer.kycStatus], [user, "rejected"])
          const [delivery] = yield* awaitDeliveries(
            kit,
            channel,
            "kyc.rejected",
            (d) => objectOf(d)["userAddress"] === user
          )
          yield* checkSigned(kit, endpoint.secret, delivery!)
          yield* checkEqual(
            "kyc.rejected carries the customer",
            [typeOf(delivery!), objectOf(delivery!)["kycStatus"]],
            ["kyc.rejected", "rejected"]
          )
        }))
  }),
  scenario({
    id: "EVT-008",
    title: "the payout test helper only moves forward (409), and an unknown payout is 404",
    rules: ["R-EVT-5"],
    tags: ["events", "test-helpers", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* newPayout(kit)
        yield* advance(kit, payout.payoutId, "completed")
        for (const to of ["processing", "failed"] as const) {
          yield* rejected(
            yield* kit.call("advancePayout", { path: { payoutId: payout.payoutId }, json: { to } }),
            409,
            "none",
            `completed → ${to} is not forward`
          )
        }
        yield* rejected(
          yield* kit.call("advancePayout", { path: { payoutId: "po_conformance_unknown" }, json: { to: "completed" } }),
          404,
          "none",
          "an unknown payout is 404"
        )
      })
  }),
  scenario({
    id: "EVT-009",
    title: "redeliver: 202 naming the endpoint, and the same bytes arrive again under the same webhook-id",
    rules: ["R-EVT-6"],
    tags: ["events"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          const [first] = yield* awaitDeliveries(kit, channel, "the ping", (d) => d.id === ping.id)
          const redelivery = yield* ok(yield* kit.call("redeliverEvent", { path: { eventId: ping.id } }))
          yield* checkEqual("redeliver names the endpoints it will send to", redelivery, {
            eventId: ping.id,
            endpointIds: [endpoint.endpointId]
          })
          const both = yield* awaitDeliveries(kit, channel, "the ping twice", (d) => d.id === ping.id, 2)
          yield* checkEqual("a redelivery is the same bytes", both[1]!.body, first!.body)
          yield* checkSigned(kit, endpoint.secret, both[1]!)
        }))
  }),
  scenario({
    id: "EVT-010",
    title: "the events API: an event with its succeeded attempt; the list is in recording order and filters by type",
    rules: ["R-EVT-7"],
    tags: ["events", "list"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          const [delivery] = yield* awaitDeliveries(kit, channel, "the ping", (d) => d.id === ping.id)
          // the attempt is recorded once the receiver's answer is back: poll the event (bounded) until it is
          const recorded = yield* pollUntil<EventWithAttempts>(
            kit,
            {
              rule: DELIVERY_RULE,
              expected: "GET events/{id} to list the succeeded attempt",
              describe: (event) => show(event.attempts)
            },
            Effect.flatMap(kit.call("getEvent", { path: { eventId: ping.id } }), (reply) => ok(reply)),
            (event) => event.attempts.some((a) => a.outcome === "succeeded" && a.endpointId === endpoint.endpointId)
          )
          yield* checkEqual(
            "the event with its attempts is the event as delivered",
            sameJson({ ...recorded, attempts: undefined }, { ...(delivery!.json as object), attempts: undefined }),
            true
          )
          const typed = yield* ok(yield* kit.call("listEvents", { query: { type: "endpoint.ping", limit: "2" } }))
          yield* check(typed.items.every((event) => event.type === "endpoint.ping"), "type filters the list", {
            expected: "only endpoint.ping events",
            actual: show(typed.items.map((event) => event.type))
          })
          const again = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          const since = yield* ok(
            yield* kit.call("listEvents", { query: { createdFrom: ping.createdAt, type: "endpoint.ping" } })
          )
          yield* check(
            since.items.some((event) => event.id === ping.id && sameJson(event, delivery!.json)),
            "the list holds the event as delivered",
            {
              expected: `${ping.id} as delivered`,
              actual: show(since.items.map((event) => event.id))
            }
          )
          // Recording order: createdAt need not rise across resources, a resource's sequence does.
          const numbers = since.items
            .filter((event) => (event.data.object as { endpointId?: string }).endpointId === endpoint.endpointId)
            .map((event) => event.sequence)
          yield* check(
            sameJson(numbers, [ping.sequence, again.sequence]) && ping.sequence < again.sequence,
            "a resource's events are listed in sequence order",
            {
              expected: `this endpoint's two pings, sequence ${ping.sequence} then ${again.sequence}`,
              actual: show(numbers)
            }
          )
          yield* rejected(
            yield* kit.call("getEvent", { path: { eventId: "evt_conformance_unknown" } }),
            404,
            "none",
            "an unknown event is 404"
          )
        }))
  }),
  scenario({
    id: "EVT-011",
    title:
      "a payout moved through processing to completed: its events carry sequence 1, 2, 3, 4, delivered and in GET events",
    rules: ["R-EVT-8", "R-EVT-4"],
    tags: ["events", "test-helpers"],
    requires: payoutEvents,
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          const payout = yield* newPayout(kit)
          for (const to of ["processing", "completed"] as const) yield* advance(kit, payout.payoutId, to)
          const expected = ["payout.created", "payout.deposit_confirmed", "payout.processing", "payout.completed"]
          const delivered = yield* deliveredTypes(kit, channel, payout.payoutId, expected, endpoint.secret)
          const { exchange, found } = yield* listedEventsOf(kit, payout.payoutId, payout.createdAt)
          const numbered = delivered.map((d) => [sequenceOf(d), typeOf(d)])
          const last = sequenceOf(delivered[delivered.length - 1]!)
          // every delivery of the payout up to the last one counted, of any type (a type the contract does not know
          // is numbered with the others), once per event (a retry repeats its webhook-id)
          const numbers = [...new Map(channel.deliveries().filter(ofPayout(payout.payoutId)).map((d) => [d.id, d]))]
            .map(([, d]) => sequenceOf(d))
            .filter((n) => typeof n === "number" && typeof last === "number" && n <= last)
            .sort((a, b) => Number(a) - Number(b))
          const gapFree = typeof last === "number" ? Array.from({ length: last }, (_, i) => i + 1) : []
          yield* check(sameJson(numbers, gapFree) && numbered[0]?.[0] === 1, SEQUENCE_RULE, {
            expected: `the payout's deliveries numbered 1 to ${String(last)}, each once`,
            actual: show(numbered),
            exchange
          })
          yield* check(numbered.every(([n], i) => i === 0 || Number(n) > Number(numbered[i - 1]![0])), ORDER_RULE, {
            expected: "sequence rising in delivery order",
            actual: show(numbered),
            exchange
          })
          // listEvents answered only known types: unknown ones were skipped, or failed the call with --strict
          const listed = found.map((event) => [event.sequence, event.type])
          yield* check(sameJson(listed, numbered), SEQUENCE_RULE, {
            expected: `GET events to number the payout's events as delivered: ${show(numbered)}`,
            actual: show(listed),
            exchange
          })
        }))
  }),
  scenario({
    id: "EVT-012",
    title:
      "GET events?resourceId=: a payout's events in sequence order over pages of one, with type; a customer's by its address in any case",
    rules: ["R-EVT-9", "R-LIST-4"],
    tags: ["events", "list", "filters", "test-helpers"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const payout = yield* createPayout(kit, payoutRequest(user))
        for (const to of ["processing", "completed"] as const) yield* advance(kit, payout.payoutId, to)
        const { exchange, found } = yield* eventsOnePerPage(kit, { resourceId: payout.payoutId })
        const listed = found.map((event) => [event.type, (event.data.object as { payoutId?: string }).payoutId])
        const expected = ["payout.created", "payout.deposit_confirmed", "payout.processing", "payout.completed"]
        yield* check(sameJson(listed, expected.map((type) => [type, payout.payoutId])), RESOURCE_RULE, {
          expected: `the payout's events only: ${expected.join(", ")}`,
          actual: show(listed),
          exchange
        })
        const numbers = found.map((event) => event.sequence)
        yield* check(numbers.every((n, i) => i === 0 ? n === 1 : n > numbers[i - 1]!), RESOURCE_RULE, {
          expected: "sequence 1 first, then rising",
          actual: show(numbers),
          exchange
        })
        const typed = yield* ok(
          yield* kit.call("listEvents", { query: { resourceId: payout.payoutId, type: "payout.completed" } })
        )
        yield* checkEqual("resourceId and type combine", typed.items.map((event) => event.type), ["payout.completed"])
        const customer = yield* kit.call("listEvents", {
          query: { resourceId: `0x${user.slice(2).toUpperCase()}`, type: "kyc.approved" }
        })
        const approvals = yield* ok(customer)
        yield* check(
          approvals.items.length === 1 &&
            (approvals.items[0]!.data.object as { userAddress?: string }).userAddress?.toLowerCase() ===
              user.toLowerCase(),
          RESOURCE_RULE,
          {
            expected: `the customer's kyc.approved, found by its address in upper case`,
            actual: show(approvals.items.map((event) => [event.type, event.data.object])),
            exchange: customer.exchange
          }
        )
        // A resource's cursor continues that resource's list only.
        const first = yield* ok(yield* kit.call("listEvents", { query: { resourceId: payout.payoutId, limit: "1" } }))
        const reply = yield* kit.call("listEvents", { query: { cursor: first.nextCursor ?? "", limit: "1" } })
        const error = yield* rejected(reply, 400, "none", "a resource's cursor is refused without its resourceId")
        yield* checkNamesField("the 400 names cursor", error, "cursor", reply.exchange)
      })
  }),
  scenario({
    id: "EVT-013",
    title: "an attempt's responseExcerpt is the start of what the receiver answered, control characters removed",
    rules: ["R-EVT-10"],
    tags: ["events"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          channel.answerBody = (delivery) => `{"received":"${delivery.id}"}\r\n\u0007${"x".repeat(300)}`
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path: { endpointId: endpoint.endpointId } }))
          yield* awaitDeliveries(kit, channel, "the ping", (d) => d.id === ping.id)
          const recorded = yield* pollUntil<{ readonly event: EventWithAttempts; readonly exchange: Exchange }>(
            kit,
            {
              rule: EXCERPT_RULE,
              expected: "GET events/{id} to list the succeeded attempt",
              describe: ({ event }) => show(event.attempts),
              exchange: ({ exchange }) => exchange
            },
            Effect.flatMap(
              kit.call("getEvent", { path: { eventId: ping.id } }),
              (reply) => Effect.map(ok(reply), (event) => ({ event, exchange: reply.exchange }))
            ),
            ({ event }) => event.attempts.some((a) => a.outcome === "succeeded" && a.endpointId === endpoint.endpointId)
          )
          const attempt = recorded.event.attempts.find((a) => a.outcome === "succeeded")!
          const head = `{"received":"${ping.id}"} `
          yield* checkEqual(
            `${EXCERPT_RULE} (responseExcerpt)`,
            attempt.responseExcerpt,
            `${head}${"x".repeat(256 - head.length)}`,
            recorded.exchange
          )
        }))
  }),
  scenario({
    id: "EVT-014",
    title:
      "PATCH an endpoint: disabled it shows why and a ping is 409; enabled it receives the ping; url, events and status are validated",
    rules: ["R-EVT-11", "R-ERR-2"],
    tags: ["events"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, undefined, (endpoint, channel) =>
        Effect.gen(function*() {
          const path = { endpointId: endpoint.endpointId }
          const disabled = yield* ok(yield* updateEndpoint(kit, endpoint.endpointId, { status: "disabled" }))
          yield* check(
            disabled.status === "disabled" && typeof disabled.disabledReason === "string" &&
              disabled.disabledReason !== "",
            UPDATE_RULE,
            { expected: "status disabled with a disabledReason", actual: show(disabled) }
          )
          const got = yield* kit.call("getWebhookEndpoint", { path })
          yield* checkEqual(UPDATE_RULE, yield* ok(got), disabled, got.exchange)
          yield* rejected(
            yield* kit.call("pingWebhookEndpoint", { path }),
            409,
            "none",
            "a disabled endpoint is not pinged"
          )
          const enabled = yield* ok(yield* updateEndpoint(kit, endpoint.endpointId, { status: "enabled" }))
          yield* checkEqual(UPDATE_RULE, [enabled.status, enabled.disabledReason], ["enabled", null])
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path }))
          yield* awaitDeliveries(kit, channel, "the ping once enabled again", (d) => d.id === ping.id)

          const changed = yield* ok(yield* updateEndpoint(kit, endpoint.endpointId, { events: ["payout.completed"] }))
          yield* checkEqual("events replaces the subscription", [changed.events, changed.url], [
            ["payout.completed"],
            endpoint.url
          ])
          for (
            const [json, field] of [
              [{ url: "not a url" }, "url"],
              [{ events: [] }, "events"],
              [{ status: "paused" }, "status"],
              [{ status: "enabled", secret: "whsec_AAAA" }, "secret"]
            ] as const
          ) {
            const reply = yield* updateEndpoint(kit, endpoint.endpointId, json)
            const error = yield* rejected(reply, 400, "none", `an invalid ${field} is 400`)
            yield* checkNamesField("the 400 names the field", error, field, reply.exchange)
          }
          yield* rejected(
            yield* updateEndpoint(kit, "we_conformance_unknown", { status: "disabled" }),
            404,
            "none",
            "an unknown endpoint is 404"
          )
        }))
  }),
  scenario({
    id: "EVT-015",
    title:
      "signatureScheme v1a: deliveries carry a v1a ed25519 signature that verifies with GET webhook-signing-key, without an API key",
    rules: ["R-EVT-12"],
    tags: ["events", "signatures"],
    requires: { receiver: true },
    run: (kit) =>
      Effect.gen(function*() {
        const published = yield* kit.call("getWebhookSigningKey", { auth: "none" })
        const key = yield* ok(published, "200 with the public key, without an API key")
        const channel = (yield* receiverOf(kit)).channel()
        const created = yield* ok(
          yield* kit.call("createWebhookEndpoint", {
            json: { url: channel.url, events: ["endpoint.ping"], signatureScheme: "v1a" }
          }),
          "201 with the v1a endpoint"
        )
        const path = { endpointId: created.endpointId }
        yield* Effect.gen(function*() {
          yield* checkEqual(V1A_RULE, created.signatureScheme, "v1a")
          const ping = yield* ok(yield* kit.call("pingWebhookEndpoint", { path }))
          const [delivery] = yield* awaitDeliveries(kit, channel, "the ping, signed v1a", (d) => d.id === ping.id)
          const problem = v1aSignatureProblem(key.publicKey, delivery!)
          yield* check(problem === undefined, V1A_RULE, {
            expected: "a v1a signature by the published key",
            actual: `${problem}; headers ${show(delivery)}`,
            exchange: published.exchange
          })
          const tampered = v1aSignatureProblem(key.publicKey, { ...delivery!, body: `${delivery!.body} ` })
          yield* check(tampered !== undefined, V1A_RULE, {
            expected: "a changed body not to verify",
            actual: "it verified"
          })
        }).pipe(Effect.ensuring(Effect.ignore(kit.call("deleteWebhookEndpoint", { path }))))
      })
  }),
  scenario({
    id: "EVT-016",
    title:
      "replay: a range of an endpoint's events is sent again, each once, in order, under its webhook-id, and the replay completes",
    rules: ["R-EVT-13"],
    tags: ["events", "replay"],
    requires: { receiver: true },
    run: (kit) =>
      withEndpoint(kit, ["endpoint.ping"], (endpoint, channel) =>
        Effect.gen(function*() {
          const path = { endpointId: endpoint.endpointId }
          const pings: Array<{ readonly id: string; readonly createdAt: string }> = []
          for (let i = 0; i < 2; i++) pings.push(yield* ok(yield* kit.call("pingWebhookEndpoint", { path })))
          const ids = pings.map((ping) => ping.id)
          yield* awaitDeliveries(kit, channel, "the two pings", (d) => ids.includes(d.id), 2)
          const range = {
            from: pings[0]!.createdAt,
            to: new Date(Date.parse(pings[1]!.createdAt) + 1).toISOString()
          }
          const started = yield* kit.call("replayWebhookEvents", { path, json: range })
          const replay = yield* ok(started, "202 with the replay")
          yield* checkEqual(
            REPLAY_RULE,
            [replay.events, replay.from, replay.to],
            [2, range.from, range.to],
            started.exchange
          )
          const all = yield* awaitDeliveries(kit, channel, "each ping twice", (d) => ids.includes(d.id), 4)
          yield* checkEqual(REPLAY_RULE, all.slice(2).map((d) => d.id), ids)
          for (const delivery of all.slice(2)) yield* checkSigned(kit, endpoint.secret, delivery)
          const done = yield* pollUntil(
            kit,
            {
              rule: REPLAY_RULE,
              expected: "the replay completed, 2 delivered",
              intervalMs: 200,
              describe: (last) =>
                last._tag === "Success"
                  ? `${last.value.status}, ${last.value.delivered} delivered`
                  : String(last.status),
              exchange: (last) => last.exchange
            },
            kit.call("getWebhookReplay", { path: { ...path, replayId: replay.replayId } }),
            (last) => last._tag === "Success" && last.value.status === "completed"
          )
          const progress = yield* ok(done)
          yield* checkEqual(
            REPLAY_RULE,
            [progress.delivered, progress.failed, progress.pending],
            [2, 0, 0],
            done.exchange
          )
        }))
  })
]
