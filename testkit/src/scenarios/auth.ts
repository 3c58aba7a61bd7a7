import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check } from "../check.ts"
import { endpoints } from "../contract.ts"
import { show } from "../failure.ts"
import { uniqueSuffix } from "../fixtures.ts"
import type { Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** A key of the right shape that no deployment issued (49 random base62 characters after the prefix). */
const forgedKey = (kind: "test" | "live"): string =>
  `cop_${kind}_pk_${Array.from(crypto.getRandomValues(new Uint8Array(49)), (byte) => BASE62[byte % 62]).join("")}`

const otherKind = (kit: Kit) => (kit.mode === "mock" ? "live" : "test")

/** The quote endpoint with these credentials must be 401 ErrorBody without errorCode. */
const unauthorizedQuote = (kit: Kit, auth: Auth, rule: string) =>
  Effect.flatMap(kit.call("quote", { auth }), (reply) => rejected(reply, 401, "none", rule))

/** A live deployment has no test helpers: every request there is 404, a missing key included (R-EVT-5). */
const absentInLive = (kit: Kit, path: string) =>
  kit.mode === "live" && path.startsWith("/api/integrations/test-helpers/")

export const authScenarios = [
  scenario({
    id: "AUTH-001",
    title: "every partner endpoint without a key is 401 ErrorBody, before any validation (live: the test helpers 404)",
    rules: ["R-AUTH-1", "R-EVT-5"],
    tags: ["auth", "errors", "read-only"],
    run: (kit) =>
      Effect.forEach(
        [...endpoints.values()].filter((spec) => spec.authenticated),
        (spec) =>
          Effect.flatMap(
            kit.call(spec.name, {
              auth: "none",
              path: {
                payoutId: "po_conformance",
                batchId: "pb_conformance",
                intentId: "sw_conformance",
                endpointId: "we_conformance",
                eventId: "evt_conformance",
                replayId: "rp_conformance",
                userAddress: "0x52908400098527886E0F7030069857D2E4169EE7"
              },
              ...(spec.payload === undefined ? {} : { json: {} })
            }),
            (reply) =>
              absentInLive(kit, spec.path)
                ? rejected(
                  reply,
                  404,
                  "none",
                  `${spec.method} ${spec.path} must be 404 in live mode, without a key too`
                )
                : rejected(reply, 401, "none", `${spec.method} ${spec.path} without a key must be 401`)
          ),
        { discard: true }
      )
  }),
  scenario({
    id: "AUTH-002",
    title: "a scheme other than Bearer is 401",
    rules: ["R-AUTH-1"],
    tags: ["auth", "read-only"],
    run: (kit) =>
      unauthorizedQuote(kit, { authorization: "Basic Y29uZm9ybWFuY2U6a2l0" }, "only the Bearer scheme authenticates")
  }),
  scenario({
    id: "AUTH-003",
    title: "a malformed key is 401",
    rules: ["R-AUTH-1"],
    tags: ["auth", "read-only"],
    run: (kit) =>
      unauthorizedQuote(kit, { authorization: `Bearer not-a-key-${uniqueSuffix()}` }, "a malformed key is 401")
  }),
  scenario({
    id: "AUTH-004",
    title: "a well-formed key the deployment never issued is 401",
    rules: ["R-AUTH-2"],
    tags: ["auth", "read-only"],
    run: (kit) =>
      unauthorizedQuote(
        kit,
        { authorization: `Bearer ${forgedKey(kit.mode === "mock" ? "test" : "live")}` },
        "an unknown key is 401"
      )
  }),
  scenario({
    id: "AUTH-005",
    title: "a key of the other kind (live key on a mock deployment, or test on live) is 401",
    rules: ["R-AUTH-3"],
    tags: ["auth", "read-only"],
    run: (kit) =>
      unauthorizedQuote(kit, { authorization: `Bearer ${forgedKey(otherKind(kit))}` }, "the other kind of key is 401")
  }),
  scenario({
    id: "AUTH-006",
    title: "the run's keys have the mode's prefix and are accepted",
    rules: ["R-AUTH-3"],
    tags: ["auth", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* kit.call("quote")
        yield* ok(reply, "the run's key to be accepted")
        const prefix = kit.mode === "mock" ? "cop_test_pk_" : "cop_live_pk_"
        yield* check(kit.keyPrefixes.every((key) => key === prefix), "keys carry the prefix of the deployment's mode", {
          expected: `keys starting with ${prefix}`,
          actual: `keys starting with ${show(kit.keyPrefixes)}`
        })
      })
  }),
  scenario({
    id: "AUTH-007",
    title: "healthz, readyz, openapi.json and docs answer without a key",
    rules: ["R-AUTH-4"],
    tags: ["auth", "health", "read-only"],
    run: (kit) =>
      Effect.forEach(
        ["/healthz", "/readyz", "/openapi.json", "/docs"],
        (path) =>
          Effect.flatMap(kit.send({ method: "GET", path, auth: "none" }), (exchange) =>
            check(exchange.response.status === 200, `${path} is public`, {
              expected: `GET ${path} without a key: 200`,
              actual: `${exchange.response.status} ${exchange.response.body.slice(0, 200)}`,
              exchange
            })),
        { discard: true }
      )
  })
]
