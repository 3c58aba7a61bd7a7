/**
 * The audit log (R-AUDIT-1): the kit's own changes to a webhook endpoint (created, secret rotated, deleted), each made
 * with an `X-Request-Id` of its own, are listed by `GET audit-log` newest first, naming the key that made them and
 * those request ids, and holding no secret; another integration's list never holds them.
 */
import { randomBytes } from "node:crypto"
import type { AuditEntry } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok } from "../api.ts"
import { check } from "../check.ts"
import { type Kit, scenario } from "../scenario.ts"

const RULE =
  "a change to a webhook endpoint is in audit-log, newest first, with the key and the X-Request-Id that made it, and no secret"
const ISOLATION_RULE = "another integration's audit log never holds this integration's changes"

const newRequestId = (what: string) => `kit-audit-${what}-${randomBytes(4).toString("hex")}`

/** An endpoint created, its secret rotated and deleted, each with a request id of the kit's: the ids, by action. */
const endpointChanges = (kit: Kit) =>
  Effect.gen(function*() {
    const url = kit.receiver === undefined ? "" : kit.receiver.channel().url
    const ids = { created: newRequestId("create"), rotated: newRequestId("rotate"), deleted: newRequestId("delete") }
    const endpoint = yield* ok(
      yield* kit.call("createWebhookEndpoint", { json: { url }, headers: { "x-request-id": ids.created } })
    )
    const path = { endpointId: endpoint.endpointId }
    const rotated = yield* ok(
      yield* kit.call("rotateWebhookSecret", { path, headers: { "x-request-id": ids.rotated } })
    )
    yield* ok(yield* kit.call("deleteWebhookEndpoint", { path, headers: { "x-request-id": ids.deleted } }))
    return { endpointId: endpoint.endpointId, ids, secrets: [endpoint.secret, rotated.secret] }
  })

const describeEntries = (items: ReadonlyArray<AuditEntry>) =>
  items.map((item) => `${item.action} ${item.targetId} ${item.actor.type} ${item.requestId}`).join("; ") || "nothing"

export const auditLogScenarios = [
  scenario({
    id: "AUDIT-001",
    title:
      "an endpoint created, its secret rotated and deleted: in audit-log newest first, by this key, with no secret",
    rules: ["R-AUDIT-1"],
    tags: ["audit-log", "events"],
    // The receiver's URL is one the deployment accepts for an endpoint.
    requires: { receiver: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { endpointId, ids, secrets } = yield* endpointChanges(kit)
        const reply = yield* kit.call("listAuditLog", { query: { limit: "100" } })
        const listed = yield* ok(reply, "the audit log")
        const mine = listed.items.filter((item) => item.targetId === endpointId)
        const expected = [
          ["webhook_endpoint.deleted", ids.deleted],
          ["webhook_endpoint.secret_rotated", ids.rotated],
          ["webhook_endpoint.created", ids.created]
        ]
        yield* check(
          JSON.stringify(mine.map((item) => [item.action, item.requestId])) === JSON.stringify(expected) &&
            mine.every((item) => item.actor.type === "api_key"),
          RULE,
          {
            expected: `by an api_key, newest first: ${expected.map(([action, id]) => `${action} ${id}`).join("; ")}`,
            actual: describeEntries(mine),
            exchange: reply.exchange
          }
        )
        const leaked = secrets.filter((secret) => reply.exchange.response.body.includes(secret))
        yield* check(leaked.length === 0, RULE, {
          expected: "no webhook secret anywhere in the audit log",
          actual: `${leaked.length} secret(s) in it`,
          exchange: reply.exchange
        })
      })
  }),
  scenario({
    id: "AUDIT-002",
    title: "another integration's audit log does not hold this integration's changes",
    rules: ["R-AUDIT-1"],
    tags: ["audit-log", "isolation"],
    requires: { secondKey: true, receiver: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { endpointId } = yield* endpointChanges(kit)
        const reply = yield* kit.call("listAuditLog", { query: { limit: "100" }, auth: "second" })
        const theirs = yield* ok(reply, "the second integration's audit log")
        const leaked = theirs.items.filter((item) => item.targetId === endpointId)
        yield* check(leaked.length === 0, ISOLATION_RULE, {
          expected: `nothing about ${endpointId}`,
          actual: describeEntries(leaked),
          exchange: reply.exchange
        })
      })
  })
]
