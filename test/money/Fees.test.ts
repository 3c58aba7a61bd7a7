import { BigDecimal } from "effect"
import { describe, expect, it } from "vitest"
import { computePayout, formatPayoutAmounts, quoteWithoutAmount } from "../../src/money/index.ts"
import { ceilDiv, expectDecimal, fixedOfUnits, floorDiv, halfUpDiv, pow10, referencePayout } from "./exact.ts"

const dec = BigDecimal.fromStringUnsafe

describe("computePayout worked examples", () => {
  it("D = 250000, S = 3950.5, M = 4000.12, 6 decimals", () => {
    const amounts = computePayout({
      destinationCop: dec("250000"),
      sellRate: dec("3950.5"),
      midRate: dec("4000.12"),
      tokenDecimals: 6
    })

    // 0.995 × 3950.5 = 3930.7475, so X = 250000 / 3930.7475 = 100000000 / 1572299 = 63.60113438…
    // In micro-USD: ceil(250000 × 10^6 × 10^4 / 39307475).
    const x = ceilDiv(250_000n * pow10(6) * 10_000n, 39_307_475n)
    expect(x).toBe(63_601_135n) // 63.601135
    // 0.5% of 63.601135 = 0.318005675 → up → 0.318006
    const providerFee = ceilDiv(x * 5n, 1000n)
    expect(providerFee).toBe(318_006n)
    // (63.601135 − 0.318006) × (1 − 3950.5 / 4000.12) = 63.283129 × 49.62 / 4000.12
    //   = 0.785003665… → half-up → 0.785004
    const providerFx = halfUpDiv((x - providerFee) * 4962n, 400_012n)
    expect(providerFx).toBe(785_004n)
    // 1% of 63.601135 = 0.63601135 → up → 0.636012
    const serviceFee = ceilDiv(x, 100n)
    expect(serviceFee).toBe(636_012n)
    const total = x + serviceFee // 64.237147
    // E = 250000 / 64.237147 = 3891.82913120… → down → 3891.829131
    const effectiveMicros = floorDiv(250_000n * pow10(6) * pow10(6), total)
    expect(effectiveMicros).toBe(3_891_829_131n)
    // commission = 0.318006 + 0.785004 + 0.636012 = 1.739022 → "1.74"

    expect(formatPayoutAmounts(amounts)).toEqual({
      deposit: "63.601135",
      providerFee: "0.318006",
      providerFx: "0.785004",
      serviceFee: "0.636012",
      totalPaid: "64.237147",
      commissionUsd: "1.739022",
      effectiveUsdCop: "3891.829131",
      display: "1 USD = 3891.82 COP",
      commissionDisplayAmount: "1.74",
      belowMinimum: undefined
    })
    expectDecimal(amounts.deposit, "63.601135")
    expectDecimal(amounts.totalPaid, "64.237147")
    expectDecimal(amounts.effectiveUsdCop, "3891.829131")
    expectDecimal(amounts.commissionUsd, "1.739022")
  })

  it("applies the live-mode rate buffer to X before rounding up", () => {
    const amounts = formatPayoutAmounts(computePayout({
      destinationCop: dec("250000"),
      sellRate: dec("3950.5"),
      midRate: dec("4000.12"),
      tokenDecimals: 6,
      rateBuffer: dec("0.002")
    }))
    // X = 250000 × 1.002 / 3930.7475 = 63.7283366… → up → 63.728337
    expect(ceilDiv(250_000n * 1002n * pow10(6) * 10n, 39_307_475n)).toBe(63_728_337n)
    expect(amounts.deposit).toBe("63.728337")
    // F = ceil(0.63728337) = 0.637284, T = 64.365621, E = 250000 / 64.365621 = 3884.0610…
    expect(amounts.serviceFee).toBe("0.637284")
    expect(amounts.totalPaid).toBe("64.365621")
    expect(amounts.effectiveUsdCop).toBe("3884.061026")
    expect(amounts.display).toBe("1 USD = 3884.06 COP")
  })

  it("a buffer of 0 is the same as no buffer", () => {
    const base = {
      destinationCop: dec("123456.78"),
      sellRate: dec("4123.4567"),
      midRate: dec("4200"),
      tokenDecimals: 6
    }
    expect(formatPayoutAmounts(computePayout({ ...base, rateBuffer: dec("0") }))).toEqual(
      formatPayoutAmounts(computePayout(base))
    )
  })

  it("uses exact decimal arithmetic for values a double cannot represent (18 decimals)", () => {
    // 11551999.99 and 3987.654321 have no exact binary64 representation, and the
    // 18-decimal results have ~22 significant digits: any trip through a number would show.
    expect(Number("11551999.99").toFixed(20)).not.toBe("11551999.99000000000000000000")
    const amounts = formatPayoutAmounts(computePayout({
      destinationCop: dec("11551999.99"),
      sellRate: dec("3987.654321"),
      midRate: dec("4012.345678"),
      tokenDecimals: 18
    }))
    const expected = referencePayout(1_155_199_999n, 3_987_654_321n, 4_012_345_678n, 18)
    expect(amounts).toEqual({
      deposit: fixedOfUnits(expected.deposit, 18),
      providerFee: fixedOfUnits(expected.providerFee, 18),
      providerFx: fixedOfUnits(expected.providerFx, 18),
      serviceFee: fixedOfUnits(expected.serviceFee, 18),
      totalPaid: fixedOfUnits(expected.totalPaid, 18),
      commissionUsd: fixedOfUnits(expected.providerFee + expected.providerFx + expected.serviceFee, 18),
      effectiveUsdCop: fixedOfUnits(expected.effectiveMicros, 6),
      display: `1 USD = ${fixedOfUnits(expected.displayCents, 2)} COP`,
      commissionDisplayAmount: fixedOfUnits(expected.commissionCents, 2),
      belowMinimum: undefined
    })
    // Independently computed with Python's fractions.Fraction:
    expect(amounts.deposit).toBe("2911.498667290331094563")
    expect(amounts.totalPaid).toBe("2940.613653963234405509")
    expect(amounts.effectiveUsdCop).toBe("3928.431732")
    expect(amounts.commissionDisplayAmount).toBe("61.50")
  })
})

describe("computePayout boundaries", () => {
  const payout = (destinationCop: string, sellRate: string, midRate: string, tokenDecimals = 6) =>
    computePayout({
      destinationCop: dec(destinationCop),
      sellRate: dec(sellRate),
      midRate: dec(midRate),
      tokenDecimals
    })

  it("D exactly 4000 is allowed; 3999.99 is below the destination minimum", () => {
    expect(payout("4000", "4000", "4000").belowMinimum).toBe("provider")
    expect(payout("4000", "1000", "1000").belowMinimum).toBe(undefined) // X = 4000 / 995 ≈ 4.02
    expect(payout("3999.99", "1000", "1000").belowMinimum).toBe("destination")
  })

  it("X exactly 2 is allowed; just under 2 is below the provider minimum", () => {
    // 0.995 × 4000 = 3980, so D = 7960 gives X = 2 exactly.
    const exactlyTwo = payout("7960", "4000", "4100")
    expectDecimal(exactlyTwo.deposit, "2")
    expect(formatPayoutAmounts(exactlyTwo).deposit).toBe("2.000000")
    expect(exactlyTwo.belowMinimum).toBe(undefined)
    // 7959.99 / 3980 = 1.9999974… → up → 1.999998
    const justUnder = payout("7959.99", "4000", "4100")
    expect(formatPayoutAmounts(justUnder).deposit).toBe("1.999998")
    expect(justUnder.belowMinimum).toBe("provider")
    expect(payout("7959.99", "4000", "4100", 18).belowMinimum).toBe("provider")
  })

  it("reports the destination minimum first when both minimums fail", () => {
    // X = 3999.99 / 3980 ≈ 1.005 < 2 as well
    expect(payout("3999.99", "4000", "3900").belowMinimum).toBe("destination")
  })

  it("providerFx is 0 when S equals or exceeds M", () => {
    expect(formatPayoutAmounts(payout("250000", "4000", "4000")).providerFx).toBe("0.000000")
    expect(formatPayoutAmounts(payout("250000", "4000.01", "4000")).providerFx).toBe("0.000000")
    expect(formatPayoutAmounts(payout("250000", "4000.01", "4000", 18)).providerFx).toBe(`0.${"0".repeat(18)}`)
  })

  it("commission is the sum of the three legs", () => {
    // X = 2, fee 0.01, fx = 1.99 × 100 / 4100 = 0.04853658… → 0.048537, F = 0.02 → 0.078537 → "0.08"
    const wire = formatPayoutAmounts(payout("7960", "4000", "4100"))
    expect(wire.providerFee).toBe("0.010000")
    expect(wire.providerFx).toBe("0.048537")
    expect(wire.serviceFee).toBe("0.020000")
    expect(wire.commissionUsd).toBe("0.078537")
    expect(wire.commissionDisplayAmount).toBe("0.08")
  })

  it("rounds the commission display half-up", () => {
    // D = 99500, S = M = 1000: X = 100 exactly, fee 0.5, fx 0, F 1 → 1.5 → "1.50"
    const wire = formatPayoutAmounts(payout("99500", "1000", "1000"))
    expect(wire.deposit).toBe("100.000000")
    expect(wire.commissionUsd).toBe("1.500000")
    expect(wire.commissionDisplayAmount).toBe("1.50")
    // D = 497.5 gives X = 0.5 exactly: fee 0.0025, fx 0, F 0.005 → 0.0075 → "0.01"
    const small = formatPayoutAmounts(payout("497.5", "1000", "1000"))
    expect(small.deposit).toBe("0.500000")
    expect(small.commissionUsd).toBe("0.007500")
    expect(small.commissionDisplayAmount).toBe("0.01")
  })

  it("formats 0 decimals without a dot", () => {
    // X = 250000 / 3930.7475 = 63.6… → up → 64; F = ceil(0.64) = 1; T = 65
    const wire = formatPayoutAmounts(payout("250000", "3950.5", "4000.12", 0))
    expect(wire.deposit).toBe("64")
    expect(wire.serviceFee).toBe("1")
    expect(wire.totalPaid).toBe("65")
    // E = 250000 / 65 = 3846.153846…
    expect(wire.effectiveUsdCop).toBe("3846.153846")
  })

  it.each([
    ["destinationCop", { destinationCop: dec("0") }],
    ["destinationCop", { destinationCop: dec("-1") }],
    ["destinationCop", { destinationCop: dec("1.001") }],
    ["sellRate", { sellRate: dec("0") }],
    ["midRate", { midRate: dec("-4000") }],
    ["tokenDecimals", { tokenDecimals: -1 }],
    ["tokenDecimals", { tokenDecimals: 6.5 }],
    ["rateBuffer", { rateBuffer: dec("-0.01") }]
  ])("rejects an invalid %s", (_, override) => {
    const valid = { destinationCop: dec("250000"), sellRate: dec("3950.5"), midRate: dec("4000.12"), tokenDecimals: 6 }
    expect(() => computePayout({ ...valid, ...override })).toThrow(RangeError)
  })

  it("accepts D with trailing zeros beyond 2 decimals", () => {
    expect(formatPayoutAmounts(payout("7960.0000", "4000", "4100")).deposit).toBe("2.000000")
  })
})

describe("quoteWithoutAmount", () => {
  it("E = S × 0.995 / 1.01 rounded down", () => {
    // 3950.5 × 0.995 / 1.01 = 3930.7475 / 1.01 = 3891.829207920… → 3891.829207
    const quote = quoteWithoutAmount(dec("3950.5"))
    expectDecimal(quote.effectiveUsdCop, "3891.829207")
    expect(quote.display).toBe("1 USD = 3891.82 COP")
  })

  it("rounds the display down, never up", () => {
    // 4000 × 1.01 / 0.995 = 4060.3015075…, so S = 4060.301507 gives E just under 4000:
    // E = 4060.301507 × 995 / 1010 = 3999.99999947… → 3999.999999
    const sMicros = 4_060_301_507n
    const eMicros = floorDiv(sMicros * 995n, 1010n)
    expect(eMicros).toBe(3_999_999_999n) // 3999.999999
    const quote = quoteWithoutAmount(BigDecimal.make(sMicros, 6))
    expectDecimal(quote.effectiveUsdCop, "3999.999999")
    expect(quote.display).toBe("1 USD = 3999.99 COP")
  })
})
