/**
 * The money checks shared by quotes and payouts: every amount the deployment shows must follow from its
 * own sell rate, the destination amount and the token's decimals (R-MONEY-1).
 */
import type { FeeLeg } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { check } from "../check.ts"
import { type ExpectedAmounts, expectedAmounts, minimalDeposit } from "../expected.ts"
import type { ScenarioFailure } from "../failure.ts"
import type { Exchange } from "../http.ts"
import { compare, type Decimal, decimal, fractionDigits, show, subtract } from "../money.ts"
import type { Mode } from "../scenario.ts"

export interface ShownAmounts {
  readonly destinationCop: string
  readonly sellRateUsdCop: string
  /** X: `deposit.amount`; a quote does not show it (it is T − F there). */
  readonly deposit: string | undefined
  readonly totalPaid: string
  readonly fees: ReadonlyArray<FeeLeg>
  readonly effectiveUsdCop: string
  readonly display: string
}

const MONEY_RULE = "amounts follow from D, the sell rate S and the token decimals"

export const legAmount = (fees: ReadonlyArray<FeeLeg>, code: FeeLeg["code"]): string | undefined =>
  fees.find((leg) => leg.code === code)?.amountUsd

/** Token decimals: token amounts are whole-token strings with exactly the token's decimals. */
export const tokenDecimals = (shown: ShownAmounts): number => fractionDigits(shown.deposit ?? shown.totalPaid)

export const checkAmounts = (
  shown: ShownAmounts,
  mode: Mode,
  exchange: Exchange
): Effect.Effect<ExpectedAmounts, ScenarioFailure> =>
  Effect.gen(function*() {
    const decimals = tokenDecimals(shown)
    const feeText = (code: FeeLeg["code"]) => legAmount(shown.fees, code) ?? "0"
    const tokenAmounts: ReadonlyArray<readonly [string, string | undefined]> = [
      ["totalPaid", shown.totalPaid],
      ["deposit", shown.deposit],
      ...shown.fees.map((leg) => [`${leg.code} leg`, leg.amountUsd] as const)
    ]
    for (const [name, text] of tokenAmounts) {
      if (text === undefined) continue
      yield* check(
        fractionDigits(text) === decimals,
        "token amounts are whole-token strings with the token's decimals",
        {
          expected: `${name} with ${decimals} fraction digits (like ${shown.deposit ?? shown.totalPaid})`,
          actual: text,
          exchange
        }
      )
    }
    const D = decimal(shown.destinationCop)
    const S = decimal(shown.sellRateUsdCop)
    const X: Decimal = shown.deposit === undefined
      ? subtract(decimal(shown.totalPaid), decimal(feeText("copby")))
      : decimal(shown.deposit)
    const minimal = minimalDeposit(D, S, decimals)
    const depositRule = mode === "mock" ? compare(X, minimal) === 0 : compare(X, minimal) >= 0
    yield* check(depositRule, `the provider deposit X = D / (0.995 × S) rounded up (${MONEY_RULE})`, {
      expected: `X ${mode === "mock" ? "=" : "≥"} ${
        show(minimal)
      } for D ${shown.destinationCop} at S ${shown.sellRateUsdCop}`,
      actual: `X = ${show(X)}`,
      exchange
    })
    const expected = expectedAmounts({ destinationCop: D, sellRate: S, decimals, deposit: X })
    const pairs: ReadonlyArray<readonly [string, string, Decimal]> = [
      ["copby leg F = 1% of X rounded up", feeText("copby"), expected.serviceFee],
      ["bridge leg = 0.5% of X rounded up", feeText("bridge"), expected.providerFee],
      ["total paid T = X + F", shown.totalPaid, expected.totalPaid],
      ["effectiveUsdCop E = D / T rounded down to 6 decimals", shown.effectiveUsdCop, expected.effectiveUsdCop]
    ]
    for (const [name, actual, wanted] of pairs) {
      yield* check(compare(decimal(actual), wanted) === 0, `${name} (${MONEY_RULE})`, {
        expected: show(wanted),
        actual,
        exchange
      })
    }
    yield* check(shown.display === expected.display, `display is E rounded down to 2 decimals (${MONEY_RULE})`, {
      expected: JSON.stringify(expected.display),
      actual: JSON.stringify(shown.display),
      exchange
    })
    const fx = decimal(feeText("bridge_fx"))
    yield* check(
      compare(fx, subtract(X, expected.providerFee)) <= 0,
      "the bridge_fx leg is a share of what the provider converts",
      {
        expected: `0 ≤ bridge_fx ≤ X − bridge = ${show(subtract(X, expected.providerFee))}`,
        actual: feeText("bridge_fx"),
        exchange
      }
    )
    return expected
  })
