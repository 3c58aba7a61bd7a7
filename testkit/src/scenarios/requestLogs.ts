/**
 * Request logs (R-LOGS-1): a request the kit makes with an `X-Request-Id` of its own is found by that id in
 * request-logs, with the status it was answered; another integration never finds it.
 */
import { randomBytes } from "node:crypto"
import type { RequestLog } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected, type Reply } from "../api.ts"
import { check, pollUntil } from "../check.ts"
import { type Kit, scenario } from "../scenario.ts"

const RULE = "a request answered to the integration is found in request-logs by its X-Request-Id, with its status"
const ISOLATION_RULE = "another integration's request is 404 in request-logs, and never in its list"

/** An id the deployment keeps as sent: letters, digits and dashes, no long random run. */
const newRequestId = () => `kit-${randomBytes(4).toString("hex")}-${Date.now().toString(36)}`

const UNKNOWN_PAYOUT = "po_kitRequestLogsProbe"

/** A GET of a payout that does not exist, with `requestId`: a 404 the log must show. */
const probe = (kit: Kit, requestId: string) =>
  Effect.flatMap(
    kit.call("getPayout", { path: { payoutId: UNKNOWN_PAYOUT }, headers: { "x-request-id": requestId } }),
    (reply) => rejected(reply, 404, "none", "an unknown payout is 404")
  )

const describeLog = (reply: Reply<RequestLog>) =>
  reply._tag === "Success" ? `${reply.value.status} ${reply.value.path}` : `${reply.status} ${reply.error.error}`

export const requestLogScenarios = [
  scenario({
    id: "LOGS-001",
    title: "a request made with a known X-Request-Id appears in request-logs with its status, and under its filter",
    rules: ["R-LOGS-1"],
    tags: ["request-logs"],
    run: (kit) =>
      Effect.gen(function*() {
        const requestId = newRequestId()
        yield* probe(kit, requestId)
        // written in the background: it appears within seconds
        const reply = yield* pollUntil(
          kit,
          {
            rule: RULE,
            expected: `GET request-logs/${requestId} to answer the request`,
            intervalMs: 250,
            describe: describeLog,
            exchange: (last) => last.exchange
          },
          kit.call("getRequestLog", { path: { requestId } }),
          (last) => last._tag === "Success"
        )
        const log = yield* ok(reply, "the request's log")
        yield* check(
          log.requestId === requestId && log.status === 404 && log.method === "GET" &&
            log.path === `/api/integrations/breb/payouts/${UNKNOWN_PAYOUT}`,
          RULE,
          {
            expected: `${requestId}: GET /api/integrations/breb/payouts/${UNKNOWN_PAYOUT} answered 404`,
            actual: `${log.requestId}: ${log.method} ${log.path} answered ${log.status}`,
            exchange: reply.exchange
          }
        )
        const listed = yield* ok(
          yield* kit.call("listRequestLogs", { query: { requestId, statusClass: "4xx" } }),
          "the list filtered by requestId"
        )
        yield* check(listed.items.map((item) => item.requestId).join(",") === requestId, RULE, {
          expected: `exactly ${requestId} listed under requestId=${requestId}&statusClass=4xx`,
          actual: listed.items.map((item) => `${item.requestId} ${item.status}`).join(", ") || "nothing"
        })
      })
  }),
  scenario({
    id: "LOGS-002",
    title: "another integration's request is 404 in request-logs, and not in its list",
    rules: ["R-LOGS-1"],
    tags: ["request-logs", "isolation"],
    requires: { secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const requestId = newRequestId()
        yield* probe(kit, requestId)
        yield* pollUntil(
          kit,
          {
            rule: RULE,
            expected: `GET request-logs/${requestId} to answer the request to its own integration`,
            intervalMs: 250,
            describe: describeLog,
            exchange: (last) => last.exchange
          },
          kit.call("getRequestLog", { path: { requestId } }),
          (last) => last._tag === "Success"
        )
        yield* rejected(
          yield* kit.call("getRequestLog", { path: { requestId }, auth: "second" }),
          404,
          "none",
          ISOLATION_RULE
        )
        const theirs = yield* ok(
          yield* kit.call("listRequestLogs", { query: { requestId }, auth: "second" }),
          "the other integration's list"
        )
        yield* check(theirs.items.length === 0, ISOLATION_RULE, {
          expected: `nothing listed under requestId=${requestId} for the other integration`,
          actual: theirs.items.map((item) => `${item.requestId} ${item.path}`).join(", ")
        })
      })
  })
]
