import { Effect, Result } from "effect"
import { rejected } from "../api.ts"
import { check, checkNamesField } from "../check.ts"
import { decodeErrorBody } from "../contract.ts"
import { failure, type ScenarioFailure } from "../failure.ts"
import { freshAddress, payoutRequest } from "../fixtures.ts"
import type { Answered } from "../http.ts"
import { scenario } from "../scenario.ts"

/** A response outside the contract's routes: one of `statuses`, an exact ErrorBody, no errorCode. */
export const errorBodyWithout = (
  exchange: Answered,
  statuses: ReadonlyArray<number>,
  rule: string
): Effect.Effect<void, ScenarioFailure> => {
  const { response } = exchange
  const expected = `${statuses.join(" or ")} with an ErrorBody {error} (no errorCode)`
  const body = response.isJson ? decodeErrorBody(response.json) : Result.fail("the body is not JSON")
  if (!statuses.includes(response.status) || Result.isFailure(body) || body.success.errorCode !== undefined) {
    const problem = Result.isFailure(body) ? ` (${body.failure})` : ""
    return Effect.fail(failure(rule, { expected, actual: `${response.status} ${response.body}${problem}`, exchange }))
  }
  return Effect.void
}

const postBodies = [
  { name: "createPayout", path: {} },
  { name: "sendOtp", path: {} },
  { name: "verifyOtp", path: {} },
  { name: "confirmPayout", path: { payoutId: "po_conformance" } }
] as const

const jsonHeaders = { "Content-Type": "application/json" }

export const errorScenarios = [
  scenario({
    id: "ERR-001",
    title: "unknown routes are 404 ErrorBody, with or without a key",
    rules: ["R-ERR-1"],
    tags: ["errors", "read-only"],
    run: (kit) =>
      Effect.forEach(
        [
          { method: "GET", path: "/api/integrations/does-not-exist", auth: "primary" },
          { method: "GET", path: "/does-not-exist", auth: "none" },
          { method: "POST", path: "/api/integrations/breb/does-not-exist", auth: "primary" }
        ] as const,
        (request) =>
          Effect.flatMap(
            kit.send({ ...request, ...(request.method === "POST" ? { json: {} } : {}) }),
            (exchange) => errorBodyWithout(exchange, [404], `${request.method} ${request.path} is not a route`)
          ),
        { discard: true }
      )
  }),
  scenario({
    id: "ERR-002",
    title: "a known path with a method it does not serve is 404 or 405 ErrorBody",
    rules: ["R-ERR-1"],
    tags: ["errors", "read-only"],
    run: (kit) =>
      Effect.forEach([
        { method: "DELETE", path: "/api/integrations/breb/quote" },
        { method: "PUT", path: "/api/integrations/breb/payouts" },
        { method: "PATCH", path: "/healthz" }
      ], (request) =>
        Effect.flatMap(
          kit.send({ ...request, ...(request.method === "DELETE" ? {} : { json: {} }) }),
          (exchange) => errorBodyWithout(exchange, [404, 405], `${request.method} ${request.path} is not served`)
        ), { discard: true })
  }),
  scenario({
    id: "ERR-003",
    title: "a body that is not valid JSON is 400 ErrorBody on every POST endpoint",
    rules: ["R-ERR-2"],
    tags: ["errors", "validation", "read-only"],
    run: (kit) =>
      Effect.forEach(postBodies, ({ name, path }) =>
        Effect.flatMap(
          kit.call(name, { path, body: `{"userAddress": "0x`, headers: jsonHeaders }),
          (reply) => rejected(reply, 400, "none", `${name}: malformed JSON is 400`)
        ), { discard: true })
  }),
  scenario({
    id: "ERR-004",
    title: "JSON that is not an object ([], \"text\", 42, null) is 400 ErrorBody",
    rules: ["R-ERR-2"],
    tags: ["errors", "validation", "read-only"],
    run: (kit) =>
      Effect.forEach(["[]", "\"text\"", "42", "null"], (body) =>
        Effect.flatMap(
          kit.call("createPayout", { body, headers: jsonHeaders }),
          (reply) => rejected(reply, 400, "none", `a body of ${body} is 400`)
        ), { discard: true })
  }),
  scenario({
    id: "ERR-005",
    title: "a body over 64 KiB is 413 ErrorBody, with a Content-Length or chunked",
    rules: ["R-ERR-3"],
    tags: ["errors", "limits", "read-only"],
    run: (kit) =>
      Effect.forEach([false, true], (chunked) =>
        Effect.flatMap(
          kit.send({
            method: "POST",
            path: "/api/integrations/breb/payouts",
            json: { ...payoutRequest(freshAddress()), accountOwnerName: "a".repeat(70_000) },
            chunked
          }),
          (exchange) =>
            errorBodyWithout(exchange, [413], `a body over 64 KiB${chunked ? ", sent chunked," : ""} is 413`)
        ), { discard: true })
  }),
  scenario({
    id: "ERR-006",
    title: "a POST body that is not application/json is 415 ErrorBody",
    rules: ["R-ERR-3"],
    tags: ["errors", "read-only"],
    run: (kit) =>
      Effect.forEach(["text/plain", "application/x-www-form-urlencoded"], (contentType) =>
        Effect.flatMap(
          kit.send({
            method: "POST",
            path: "/api/integrations/breb/kyc/otp/send",
            headers: { "Content-Type": contentType },
            body: JSON.stringify({ email: "a@example.com", userAddress: freshAddress() })
          }),
          (exchange) => errorBodyWithout(exchange, [415], `a ${contentType} body is 415`)
        ), { discard: true })
  }),
  scenario({
    id: "ERR-007",
    title: "a validation error names the field and the rule",
    rules: ["R-ERR-2"],
    tags: ["errors", "validation", "read-only"],
    run: (kit) =>
      Effect.forEach(
        [
          ["destinationCop", "12,5"],
          ["userAddress", "0xnothex"],
          ["breBKey", "not a key"],
          ["accountOwnerName", " "]
        ] as const,
        ([field, value]) =>
          Effect.gen(function*() {
            const reply = yield* kit.call("createPayout", {
              json: { ...payoutRequest(freshAddress()), [field]: value }
            })
            const error = yield* rejected(reply, 400, "none", `an invalid ${field} is 400`)
            yield* checkNamesField(`the 400 for an invalid ${field} names it`, error, field, reply.exchange)
            yield* check(error.error.length > field.length + 2, "the 400 also says what rule was broken", {
              expected: "a message with the rule, not just the field name",
              actual: error.error,
              exchange: reply.exchange
            })
          }),
        { discard: true }
      )
  })
]
