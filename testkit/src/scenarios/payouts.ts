import { isAddress } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { type ExpectedCode, ok, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField, checkTimestamps, sameJson } from "../check.ts"
import { providerMinimumBoundary } from "../expected.ts"
import { show } from "../failure.ts"
import {
  approvedUser,
  createPayout,
  freshAddress,
  payoutRequest,
  type PayoutRequest,
  preparedPayout,
  uniqueSuffix
} from "../fixtures.ts"
import { compare, decimal, format, fractionDigits, sameValue } from "../money.ts"
import { type Kit, scenario } from "../scenario.ts"
import { checkAmounts } from "./amounts.ts"
import { checkCalldata, checkMaskedKey, checkReceipt } from "./payoutChecks.ts"

const create = (kit: Kit, request: PayoutRequest | Record<string, unknown>, headers: Record<string, string> = {}) =>
  kit.call("createPayout", { json: request, headers })

const created = (kit: Kit, request: PayoutRequest) =>
  Effect.flatMap(
    create(kit, request),
    (reply) => Effect.map(ok(reply, "201 with a prepared payout"), (payout) => ({ payout, reply }))
  )

const randomDigits = (count: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(count)), (byte) => String(byte % 10)).join("")

/** One key of each Bre-B form (R-PAYOUT-8), fresh per call. */
const keyForms = (): ReadonlyArray<readonly [string, string]> => [
  ["alias", `@conf${uniqueSuffix()}`],
  ["mobile", `3${randomDigits(9)}`],
  ["mobile with +57", `+573${randomDigits(9)}`],
  ["e-mail", `conf${uniqueSuffix()}@example.com`],
  ["document", `1${randomDigits(9)}`]
]

/** An approved user's payout under an `X-Mock-Scenario` is rejected as that scenario says (R-MOCK-1). */
const mockScenarioRejection = (
  id: string,
  title: string,
  mockScenario: string,
  status: number,
  errorCode: ExpectedCode
) =>
  scenario({
    id,
    title,
    rules: ["R-MOCK-1"],
    tags: ["payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* create(kit, payoutRequest(yield* approvedUser(kit)), { "X-Mock-Scenario": mockScenario })
        yield* rejected(reply, status, errorCode, title)
      })
  })

export const payoutScenarios = [
  scenario({
    id: "PAYOUT-001",
    title: "creating a payout answers 201 with a prepared payout awaiting deposit",
    rules: ["R-PAYOUT-1"],
    tags: ["payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const request = payoutRequest(yield* approvedUser(kit))
        const { payout, reply } = yield* created(kit, request)
        const ex = reply.exchange
        yield* checkEqual("a new payout awaits its deposit", payout.status, "awaiting_deposit", ex)
        yield* checkEqual("fromToken defaults to USDC", payout.fromToken, "USDC", ex)
        yield* checkEqual("userAddress is echoed", payout.userAddress, request.userAddress, ex)
        yield* check(sameValue(payout.destinationCop, request.destinationCop), "destinationCop is echoed", {
          expected: request.destinationCop,
          actual: payout.destinationCop,
          exchange: ex
        })
        yield* checkEqual("no txHash before confirmation", [payout.txHash, payout.feeTxHash], [null, null], ex)
        yield* checkEqual(
          "the preview shows the account owner",
          payout.destinationPreview.accountOwnerName,
          request.accountOwnerName,
          ex
        )
        yield* checkTimestamps("timestamps are ISO 8601 UTC with milliseconds", {
          createdAt: payout.createdAt,
          updatedAt: payout.updatedAt,
          expiresAt: payout.expiresAt
        }, ex)
        yield* check(
          payout.createdAt <= payout.updatedAt && payout.updatedAt < payout.expiresAt,
          "the deposit window is after creation",
          {
            expected: "createdAt ≤ updatedAt < expiresAt",
            actual: show({ createdAt: payout.createdAt, updatedAt: payout.updatedAt, expiresAt: payout.expiresAt }),
            exchange: ex
          }
        )
        yield* check(
          isAddress(payout.deposit.address) && payout.deposit.chain !== "",
          "deposit says where to send funds",
          {
            expected: "deposit.address an address, deposit.chain named",
            actual: show(payout.deposit),
            exchange: ex
          }
        )
      })
  }),
  scenario({
    id: "PAYOUT-002",
    title: "fees are the bridge_fx, bridge and copby legs, quoted, itemized identically on the receipt",
    rules: ["R-PAYOUT-2"],
    tags: ["payout", "fees"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { payout, reply } = yield* created(kit, payoutRequest(yield* approvedUser(kit)))
        yield* checkEqual(
          "a USDC payout has the legs bridge_fx, bridge and copby (swap only when fromToken needs one), all quoted",
          payout.fees.map((leg) => `${leg.code}:${leg.status}`).sort(),
          ["bridge:quoted", "bridge_fx:quoted", "copby:quoted"],
          reply.exchange
        )
        yield* checkEqual(
          "fees and receipt.feesItemized carry the same legs",
          payout.receipt.feesItemized,
          payout.fees,
          reply.exchange
        )
        const copby = payout.fees.find((leg) => leg.code === "copby")
        yield* check(
          copby?.to !== null && copby?.to !== undefined && isAddress(copby.to),
          "the copby leg names the fee wallet",
          {
            expected: "copby.to: the service fee wallet address",
            actual: show(copby),
            exchange: reply.exchange
          }
        )
      })
  }),
  scenario({
    id: "PAYOUT-003",
    title: "amounts are consistent: X minimal for D at S, F = 1% X, T = X + F, E = D / T, display, commission",
    rules: ["R-MONEY-1"],
    tags: ["payout", "money"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        for (const destinationCop of ["100000", "4321987.65", "8000.5"]) {
          const { payout, reply } = yield* created(kit, payoutRequest(user, { destinationCop }))
          yield* checkAmounts(
            {
              destinationCop: payout.destinationCop,
              sellRateUsdCop: payout.receipt.exchangeRate.sellRateUsdCop ?? "",
              deposit: payout.deposit.amount,
              totalPaid: payout.sourceAmount,
              fees: payout.fees,
              effectiveUsdCop: payout.quote.effectiveUsdCop ?? "",
              display: payout.quote.display ?? ""
            },
            kit.mode,
            reply.exchange
          )
          kit.note("tokenDecimals", fractionDigits(payout.deposit.amount))
        }
      })
  }),
  scenario({
    id: "PAYOUT-004",
    title: "the receipt masks the Bre-B key to its last 4, states currencies, included_in_rate and totals",
    rules: ["R-PAYOUT-3"],
    tags: ["payout", "receipt"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        for (const [, key] of keyForms()) {
          const request = payoutRequest(user, { breBKey: key })
          const { payout, reply } = yield* created(kit, request)
          yield* checkMaskedKey(payout, key, reply.exchange)
          yield* checkReceipt(payout, request, reply.exchange)
        }
      })
  }),
  scenario({
    id: "PAYOUT-005",
    title:
      "both prepared transactions decode as ERC-20 transfers of the deposit and of the copby fee; calls, if offered, batches exactly them",
    rules: ["R-PAYOUT-4", "R-PAYOUT-10"],
    tags: ["payout", "calldata"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { payout, reply } = yield* created(
          kit,
          payoutRequest(yield* approvedUser(kit), { destinationCop: "123456.78" })
        )
        yield* checkCalldata(payout, reply.exchange)
      })
  }),
  scenario({
    id: "PAYOUT-006",
    title: "GET payouts/{payoutId} answers the payout as created",
    rules: ["R-PAYOUT-1"],
    tags: ["payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const reply = yield* kit.call("getPayout", { path: { payoutId: payout.payoutId } })
        const fetched = yield* ok(reply, "200 with the payout")
        yield* check(sameJson(fetched, payout), "GET returns the same payout", {
          expected: show(payout),
          actual: show(fetched),
          exchange: reply.exchange
        })
      })
  }),
  scenario({
    id: "PAYOUT-007",
    title: "a payout created with a fresh quoteId is accepted",
    rules: ["R-QUOTE-3"],
    tags: ["payout", "quote"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const quote = yield* Effect.flatMap(kit.call("quote", { query: { destinationCop: "100000" } }), (r) =>
          ok(r, "200 Quote"))
        yield* createPayout(kit, payoutRequest(yield* approvedUser(kit), { quoteId: quote.quoteId }))
      })
  }),
  scenario({
    id: "PAYOUT-021",
    title:
      "a quote with destinationCop binds it and its fromToken: another amount or token is 409 requote naming both; a quote without an amount fixes only the rate",
    rules: ["R-QUOTE-3"],
    tags: ["payout", "quote", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const quoteOf = (query: Record<string, string>) =>
          Effect.flatMap(kit.call("quote", { query }), (r) => ok(r, "200 Quote"))
        const user = yield* approvedUser(kit)
        const bound = yield* quoteOf({ destinationCop: "100000" })
        const otherAmount = yield* create(
          kit,
          payoutRequest(user, { destinationCop: "110000", quoteId: bound.quoteId })
        )
        const amountError = yield* rejected(
          otherAmount,
          409,
          "requote",
          "a quote for 100000 COP used for 110000 COP is requote"
        )
        yield* checkNamesField("the requote names the quoted amount", amountError, "100000.00", otherAmount.exchange)
        yield* checkNamesField("the requote names the asked amount", amountError, "110000.00", otherAmount.exchange)
        const otherToken = yield* create(
          kit,
          payoutRequest(user, { destinationCop: "100000", fromToken: "COPm", quoteId: bound.quoteId })
        )
        const tokenError = yield* rejected(
          otherToken,
          409,
          "requote",
          "a USDC quote used for a payout from COPm is requote"
        )
        yield* checkNamesField("the requote names the quoted token", tokenError, "USDC", otherToken.exchange)
        yield* checkNamesField("the requote names the asked token", tokenError, "COPm", otherToken.exchange)
        const rateOnly = yield* quoteOf({})
        yield* createPayout(kit, payoutRequest(user, { destinationCop: "110000", quoteId: rateOnly.quoteId }))
      })
  }),
  scenario({
    id: "PAYOUT-008",
    title: "a payout for an address without approved KYC is 409 needs_kyc (never sent, or sent but not verified)",
    rules: ["R-PAYOUT-5"],
    tags: ["payout", "errors", "kyc"],
    requires: { moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        yield* rejected(
          yield* create(kit, payoutRequest(freshAddress())),
          409,
          "needs_kyc",
          "an unknown address needs KYC"
        )
        const pending = freshAddress()
        yield* Effect.flatMap(
          kit.call("sendOtp", { json: { email: "conformance@example.com", userAddress: pending } }),
          (r) => ok(r)
        )
        yield* rejected(
          yield* create(kit, payoutRequest(pending)),
          409,
          "needs_kyc",
          "an OTP sent but not verified is no KYC"
        )
      })
  }),
  scenario({
    id: "PAYOUT-009",
    title: "an owner name containing `mismatch`, in any letter case, is 409 destination_mismatch",
    rules: ["R-PAYOUT-6"],
    tags: ["payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        for (const accountOwnerName of ["Maria mismatch", "MISMATCH S.A.S.", "Ana MisMatch Ruiz"]) {
          const reply = yield* create(kit, payoutRequest(user, { accountOwnerName }))
          yield* rejected(
            reply,
            409,
            "destination_mismatch",
            `${JSON.stringify(accountOwnerName)} fails destination verification`
          )
        }
      })
  }),
  scenario({
    id: "PAYOUT-010",
    title: "a payout below 4000 COP is 409 below_minimum",
    rules: ["R-MONEY-2"],
    tags: ["payout", "errors", "limits"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* create(kit, payoutRequest(yield* approvedUser(kit), { destinationCop: "3999.99" }))
        yield* rejected(reply, 409, "below_minimum", "destinationCop < 4000 is below_minimum")
      })
  }),
  scenario({
    id: "PAYOUT-011",
    title: "a payout that would send the provider less than 2 USD is 409 below_minimum",
    rules: ["R-MONEY-2"],
    tags: ["payout", "errors", "limits"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const quote = yield* Effect.flatMap(kit.call("quote"), (r) => ok(r, "200 Quote"))
        const { below } = providerMinimumBoundary(decimal(quote.sellRateUsdCop))
        if (compare(below, decimal("4000")) < 0) {
          kit.note("notApplicable", `at S ${quote.sellRateUsdCop} every D ≥ 4000 sends ≥ 2 USD`)
          return
        }
        const destinationCop = format(below, 0)
        const reply = yield* create(kit, payoutRequest(yield* approvedUser(kit), { destinationCop }))
        yield* rejected(
          reply,
          409,
          "below_minimum",
          `D ${destinationCop} at S ${quote.sellRateUsdCop} sends the provider < 2 USD`
        )
      })
  }),
  mockScenarioRejection(
    "PAYOUT-012",
    "with the market closed a payout is 409 mercado_cerrado",
    "market_closed",
    409,
    "mercado_cerrado"
  ),
  mockScenarioRejection("PAYOUT-013", "a payout that needs a new quote is 409 requote", "requote", 409, "requote"),
  mockScenarioRejection(
    "PAYOUT-014",
    "with the payout provider down a payout is 503 ErrorBody without errorCode",
    "provider_unavailable",
    503,
    "none"
  ),
  scenario({
    id: "PAYOUT-015",
    title: "errors take precedence: 400 → needs_kyc → mercado_cerrado → requote → below_minimum → destination_mismatch",
    rules: ["R-PAYOUT-7"],
    tags: ["payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const approved = yield* approvedUser(kit)
        const everythingWrong = { destinationCop: "100", accountOwnerName: "Mismatch" }
        const unapproved = payoutRequest(freshAddress(), everythingWrong)
        const steps = [
          ["400 before needs_kyc", { ...unapproved, breBKey: "not a key" }, "market_closed", 400, "none"],
          ["needs_kyc before mercado_cerrado", unapproved, "market_closed", 409, "needs_kyc"],
          [
            "mercado_cerrado before requote",
            payoutRequest(approved, everythingWrong),
            "market_closed",
            409,
            "mercado_cerrado"
          ],
          ["requote before below_minimum", payoutRequest(approved, everythingWrong), "requote", 409, "requote"],
          [
            "below_minimum before destination_mismatch",
            payoutRequest(approved, everythingWrong),
            undefined,
            409,
            "below_minimum"
          ]
        ] as const
        for (const [rule, request, mockScenario, status, code] of steps) {
          const reply = yield* create(
            kit,
            request,
            mockScenario === undefined ? {} : { "X-Mock-Scenario": mockScenario }
          )
          yield* rejected(reply, status, code, rule)
        }
      })
  }),
  scenario({
    id: "PAYOUT-016",
    title: "every Bre-B key form is accepted; anything else is 400 naming breBKey",
    rules: ["R-PAYOUT-8"],
    tags: ["payout", "validation"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        for (const [form, key] of keyForms()) {
          const reply = yield* create(kit, payoutRequest(user, { breBKey: key }))
          yield* ok(reply, `a ${form} key (${key}) to be accepted`)
        }
        for (const key of ["hello world", "@", `@${"a".repeat(20)}`, "+57300123", ""]) {
          const reply = yield* create(kit, payoutRequest(user, { breBKey: key }))
          const error = yield* rejected(reply, 400, "none", `${JSON.stringify(key)} is no Bre-B key`)
          yield* checkNamesField("the 400 names breBKey", error, "breBKey", reply.exchange)
        }
      })
  }),
  scenario({
    id: "PAYOUT-017",
    title: "a userAddress that is not EIP-55 checksummed is 400 naming userAddress",
    rules: ["R-PAYOUT-8"],
    tags: ["payout", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const address = freshAddress()
        const wrongChecksum = address.replace(/[a-fA-F]/, (letter) =>
          letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase())
        for (const userAddress of new Set([address.toLowerCase(), wrongChecksum, address.slice(0, -1)])) {
          if (userAddress === address) {
            continue
          }
          const reply = yield* create(kit, payoutRequest(userAddress))
          const error = yield* rejected(reply, 400, "none", `${userAddress} is not checksummed`)
          yield* checkNamesField("the 400 names userAddress", error, "userAddress", reply.exchange)
        }
      })
  }),
  scenario({
    id: "PAYOUT-018",
    title: "destinationCop must be a plain positive decimal with at most 2 decimals",
    rules: ["R-MONEY-3"],
    tags: ["payout", "validation", "read-only"],
    run: (kit) =>
      Effect.forEach(
        ["1e5", "-100000", " 100000", "100000.505", "0", "0.00", "0100000", "100,000", "0x10"],
        (destinationCop) =>
          Effect.gen(function*() {
            const reply = yield* create(kit, payoutRequest(freshAddress(), { destinationCop }))
            const error = yield* rejected(
              reply,
              400,
              "none",
              `destinationCop ${JSON.stringify(destinationCop)} is invalid`
            )
            yield* checkNamesField("the 400 names destinationCop", error, "destinationCop", reply.exchange)
          }),
        { discard: true }
      )
  }),
  scenario({
    id: "PAYOUT-019",
    title: "the four body fields are required: a missing one is 400 naming it",
    rules: ["R-PAYOUT-8", "R-ERR-2"],
    tags: ["payout", "validation", "read-only"],
    run: (kit) =>
      Effect.forEach(
        ["userAddress", "destinationCop", "breBKey", "accountOwnerName"] as const,
        (field) =>
          Effect.gen(function*() {
            const { [field]: _, ...rest } = payoutRequest(freshAddress())
            const reply = yield* create(kit, rest)
            const error = yield* rejected(reply, 400, "none", `a body without ${field} is 400`)
            yield* checkNamesField(`the 400 names ${field}`, error, field, reply.exchange)
          }),
        { discard: true }
      )
  }),
  scenario({
    id: "PAYOUT-020",
    title: "GET of a payout that does not exist is 404 ErrorBody",
    rules: ["R-TENANT-1"],
    tags: ["payout", "errors", "read-only"],
    run: (kit) =>
      Effect.flatMap(
        kit.call("getPayout", { path: { payoutId: `po_conformance_${uniqueSuffix()}` } }),
        (reply) => rejected(reply, 404, "none", "an unknown payoutId is 404")
      )
  })
]
