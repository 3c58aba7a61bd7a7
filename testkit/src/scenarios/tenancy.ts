import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, sameJson } from "../check.ts"
import { approvedUser, confirmPayout, payoutRequest, preparedPayout, randomTxHash } from "../fixtures.ts"
import { scenario } from "../scenario.ts"
import { listPages } from "./list.ts"

const ISOLATION_RULE = "each payout is owned by its integration; another integration's resource is 404, never 403"

const crossTenant = { mock: true, moneyMoving: true, secondKey: true } as const

export const tenancyScenarios = [
  scenario({
    id: "TENANT-001",
    title: "another integration's payout is 404 on GET, never 403 or the payout",
    rules: ["R-TENANT-1"],
    tags: ["isolation", "payout"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const reply = yield* kit.call("getPayout", { path: { payoutId: payout.payoutId }, auth: "second" })
        yield* rejected(reply, 404, "none", ISOLATION_RULE)
      })
  }),
  scenario({
    id: "TENANT-002",
    title: "another integration cannot confirm this integration's payout: 404, and the payout is unchanged",
    rules: ["R-TENANT-1"],
    tags: ["isolation", "confirm"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const reply = yield* kit.call("confirmPayout", {
          path: { payoutId: payout.payoutId },
          json: { txHash: randomTxHash() },
          auth: "second"
        })
        yield* rejected(reply, 404, "none", ISOLATION_RULE)
        const after = yield* kit.call("getPayout", { path: { payoutId: payout.payoutId } })
        const unchanged = yield* ok(after, "the payout to its owner")
        yield* check(unchanged.status === "awaiting_deposit" && unchanged.txHash === null, ISOLATION_RULE, {
          expected: "still awaiting_deposit with no txHash",
          actual: `${unchanged.status}, txHash ${unchanged.txHash}`,
          exchange: after.exchange
        })
      })
  }),
  scenario({
    id: "TENANT-003",
    title: "the list holds only the caller's payouts, under the caller's integrationId",
    rules: ["R-TENANT-2"],
    tags: ["isolation", "list"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const mine = yield* preparedPayout(kit)
        const theirs = yield* preparedPayout(kit, {}, "second")
        const createdFrom = new Date(Math.min(Date.parse(mine.createdAt), Date.parse(theirs.createdAt)) - 1000)
          .toISOString()
        const myPages = yield* listPages(kit, { createdFrom })
        const theirPages = yield* listPages(kit, { createdFrom }, "second")
        const myIds = myPages.flatMap((page) => page.value.items.map((item) => item.payoutId))
        const theirIds = theirPages.flatMap((page) => page.value.items.map((item) => item.payoutId))
        const leaked = myIds.filter((id) => theirIds.includes(id))
        yield* check(
          leaked.length === 0 && myIds.includes(mine.payoutId) && theirIds.includes(theirs.payoutId),
          "each integration lists its own payouts and none of the other's",
          {
            expected: `${mine.payoutId} only in the first list, ${theirs.payoutId} only in the second`,
            actual: `first: ${myIds.join(", ") || "nothing"}; second: ${theirIds.join(", ") || "nothing"}`,
            exchange: theirPages[0]?.exchange
          }
        )
        const [myIntegration, theirIntegration] = [myPages[0]?.value.integrationId, theirPages[0]?.value.integrationId]
        yield* check(myIntegration !== theirIntegration, "integrationId names the caller's integration", {
          expected: "two different integrationIds",
          actual: `${myIntegration}, ${theirIntegration}`,
          exchange: theirPages[0]?.exchange
        })
      })
  }),
  scenario({
    id: "TENANT-004",
    title:
      "KYC belongs to the integration: approved by one, an address is needs_kyc for another, which may send it an OTP at once",
    rules: ["R-TENANT-1", "R-PAYOUT-5", "R-OTP-5"],
    tags: ["isolation", "kyc"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const reply = yield* kit.call("createPayout", { json: payoutRequest(user), auth: "second" })
        yield* rejected(reply, 409, "needs_kyc", "another integration's KYC approval does not count")
        const sent = yield* kit.call("sendOtp", {
          json: { email: "conformance@example.com", userAddress: user },
          auth: "second",
          retryOn429: false
        })
        yield* ok(sent, "200: the other integration's resend cooldown does not apply")
      })
  }),
  scenario({
    id: "TENANT-005",
    title: "a txHash is unique across integrations: reusing another integration's is 409 tx_hash_reused",
    rules: ["R-TXHASH-1"],
    tags: ["isolation", "confirm", "errors"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const hash = randomTxHash()
        const mine = yield* preparedPayout(kit)
        const theirs = yield* preparedPayout(kit, {}, "second")
        yield* confirmPayout(kit, mine.payoutId, { txHash: hash })
        const reply = yield* kit.call("confirmPayout", {
          path: { payoutId: theirs.payoutId },
          json: { txHash: hash },
          auth: "second"
        })
        yield* rejected(reply, 409, "tx_hash_reused", "one hash confirms one payout, whoever owns it")
      })
  }),
  scenario({
    id: "TENANT-006",
    title: "another integration's KYC customer is 404 on GET kyc/customers/{userAddress}, never 403 or the customer",
    rules: ["R-TENANT-1", "R-KYC-2"],
    tags: ["isolation", "kyc"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        yield* ok(yield* kit.call("getKycCustomer", { path: { userAddress: user } }), "the customer to its owner")
        const reply = yield* kit.call("getKycCustomer", { path: { userAddress: user }, auth: "second" })
        yield* rejected(reply, 404, "none", ISOLATION_RULE)
      })
  }),
  scenario({
    id: "TENANT-007",
    title: "another integration cannot update this integration's webhook endpoint: 404, and it is unchanged",
    rules: ["R-TENANT-1", "R-EVT-11"],
    tags: ["isolation", "events"],
    // The receiver's URL is one the deployment accepts for an endpoint.
    requires: { secondKey: true, receiver: true },
    run: (kit) =>
      Effect.gen(function*() {
        const url = kit.receiver === undefined ? "" : kit.receiver.channel().url
        const endpoint = yield* ok(yield* kit.call("createWebhookEndpoint", { json: { url } }))
        const path = { endpointId: endpoint.endpointId }
        yield* Effect.gen(function*() {
          const reply = yield* kit.call("updateWebhookEndpoint", { path, json: { status: "disabled" }, auth: "second" })
          yield* rejected(reply, 404, "none", ISOLATION_RULE)
          const after = yield* kit.call("getWebhookEndpoint", { path })
          const unchanged = yield* ok(after, "the endpoint to its owner")
          yield* check(unchanged.status === "enabled" && unchanged.disabledReason === null, ISOLATION_RULE, {
            expected: "still enabled",
            actual: `${unchanged.status}, ${unchanged.disabledReason}`,
            exchange: after.exchange
          })
        }).pipe(Effect.ensuring(Effect.ignore(kit.call("deleteWebhookEndpoint", { path }))))
      })
  }),
  scenario({
    id: "TENANT-008",
    title: "filters never reach another integration: its payout's events by resourceId, its payout by txHash",
    rules: ["R-TENANT-2", "R-EVT-9", "R-LIST-3"],
    tags: ["isolation", "list", "events", "filters"],
    requires: crossTenant,
    run: (kit) =>
      Effect.gen(function*() {
        const hash = randomTxHash()
        const mine = yield* preparedPayout(kit)
        yield* confirmPayout(kit, mine.payoutId, { txHash: hash })
        // Listed by its owner first (the events are there to be found).
        const own = yield* ok(yield* kit.call("listEvents", { query: { resourceId: mine.payoutId } }))
        const byHash = yield* ok(yield* kit.call("listPayouts", { query: { txHash: hash } }))
        yield* check(own.items.length > 0 && byHash.items.length === 1, "an integration finds its own", {
          expected: `${mine.payoutId}'s events, and it by ${hash}`,
          actual: `${own.items.length} events, ${byHash.items.length} payouts`
        })
        const events = yield* kit.call("listEvents", { query: { resourceId: mine.payoutId }, auth: "second" })
        const payouts = yield* kit.call("listPayouts", { query: { txHash: hash }, auth: "second" })
        const [theirEvents, theirPayouts] = [yield* ok(events), yield* ok(payouts)]
        yield* check(theirEvents.items.length === 0, ISOLATION_RULE, {
          expected: "no event of another integration's payout",
          actual: `${theirEvents.items.length} events`,
          exchange: events.exchange
        })
        yield* check(theirPayouts.items.length === 0, ISOLATION_RULE, {
          expected: "no payout of another integration found by its txHash",
          actual: `${theirPayouts.items.length} payouts`,
          exchange: payouts.exchange
        })
      })
  }),
  scenario({
    id: "TENANT-009",
    title: "each key lists its own integration's API keys: the two lists share none, each has its own current key",
    rules: ["R-TENANT-2", "R-KEYS-1"],
    tags: ["isolation", "api-keys", "read-only"],
    requires: { secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const mine = yield* ok(yield* kit.call("listApiKeys"))
        const reply = yield* kit.call("listApiKeys", { auth: "second" })
        const theirs = yield* ok(reply)
        const shared = mine.items.filter((key) => theirs.items.some((other) => other.keyId === key.keyId))
        const currentOf = (items: typeof mine.items) => items.filter((key) => key.current).map((key) => key.last4)
        yield* check(
          shared.length === 0 && mine.integrationId !== theirs.integrationId &&
            sameJson(currentOf(mine.items), [kit.keyEndings[0]]) &&
            sameJson(currentOf(theirs.items), [kit.keyEndings[1]]),
          "each integration lists its own API keys only, the key of the request current",
          {
            expected: "two disjoint lists, each with its own key current",
            actual: `shared ${shared.map((key) => key.keyId).join(", ") || "none"}; current ${
              currentOf(mine.items).join(", ")
            } and ${currentOf(theirs.items).join(", ")}`,
            exchange: reply.exchange
          }
        )
      })
  })
]
