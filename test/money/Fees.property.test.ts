import { BigDecimal } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { computePayout, formatPayoutAmounts, quoteWithoutAmount } from "../../src/money/index.ts"
import { pow10, referencePayout, unitsOfDecimal, unitsOfFixed } from "./exact.ts"

const MAX_DESTINATION_CENTS = 1_155_200_000n // 11552000.00 COP

/** D in cents, sometimes passed normalized (e.g. 4000 instead of 4000.00). */
const destinationArb = fc
  .tuple(fc.bigInt({ min: 1n, max: MAX_DESTINATION_CENTS }), fc.boolean())
  .map(([cents, normalized]) => {
    const value = BigDecimal.make(cents, 2)
    return { cents, value: normalized ? BigDecimal.normalize(value) : value }
  })

/** A COP-per-USD rate in [100, 100000] with 0 to 6 fraction digits; `micros` is rate × 10^6. */
const rateArb = fc.integer({ min: 0, max: 6 }).chain((fractionDigits) =>
  fc
    .bigInt({ min: 100n * pow10(fractionDigits), max: 100_000n * pow10(fractionDigits) })
    .map((units) => ({
      micros: units * pow10(6 - fractionDigits),
      value: BigDecimal.make(units, fractionDigits)
    }))
)

const decimalsArb = fc.constantFrom(6, 18)

const payoutCaseArb = fc.record({
  destination: destinationArb,
  sell: rateArb,
  mid: rateArb,
  decimals: decimalsArb
})

type PayoutCase = typeof payoutCaseArb extends fc.Arbitrary<infer T> ? T : never

const computeCase = ({ destination, sell, mid, decimals }: PayoutCase) => {
  const amounts = computePayout({
    destinationCop: destination.value,
    sellRate: sell.value,
    midRate: mid.value,
    tokenDecimals: decimals
  })
  return { amounts, wire: formatPayoutAmounts(amounts) }
}

const RUNS = { numRuns: 1000 }

describe("computePayout properties", () => {
  it("every token wire string has exactly tokenDecimals fraction digits and matches its BigDecimal", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { amounts, wire } = computeCase(c)
        const tokenAmount = new RegExp(`^[0-9]+\\.[0-9]{${c.decimals}}$`)
        for (const key of ["deposit", "providerFee", "providerFx", "serviceFee", "totalPaid", "commissionUsd"] as const) {
          expect(wire[key]).toMatch(tokenAmount)
          expect(BigDecimal.equals(amounts[key], BigDecimal.unsafeFromString(wire[key]))).toBe(true)
        }
        expect(wire.effectiveUsdCop).toMatch(/^[0-9]+\.[0-9]{6}$/)
        expect(BigDecimal.equals(amounts.effectiveUsdCop, BigDecimal.unsafeFromString(wire.effectiveUsdCop))).toBe(true)
        expect(wire.display).toMatch(/^1 USD = [0-9]+\.[0-9]{2} COP$/)
        expect(wire.commissionDisplayAmount).toMatch(/^[0-9]+\.[0-9]{2}$/)
      }),
      RUNS
    )
  })

  it("the recipient gets at least D, and X is the smallest token amount that does", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { wire } = computeCase(c)
        const x = unitsOfFixed(wire.deposit, c.decimals)
        // X × 0.995 × S ≥ D, scaled by 10^decimals × 1000 × 10^6 × 100:
        const received = (units: bigint) => units * 995n * c.sell.micros * 100n
        const owed = c.destination.cents * pow10(c.decimals) * 1000n * pow10(6)
        expect(received(x) >= owed).toBe(true)
        expect(received(x - 1n) < owed).toBe(true)
      }),
      RUNS
    )
  })

  it("fees are the spec's roundings of X, and T = X + F exactly", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { wire } = computeCase(c)
        const units = (s: string) => unitsOfFixed(s, c.decimals)
        const x = units(wire.deposit)
        const serviceFee = units(wire.serviceFee)
        const providerFee = units(wire.providerFee)
        const providerFx = units(wire.providerFx)
        // F = ceil(X / 100): F ≥ X/100 and F − 1 unit < X/100
        expect(100n * serviceFee >= x && 100n * (serviceFee - 1n) < x).toBe(true)
        // fee = ceil(5X / 1000)
        expect(1000n * providerFee >= 5n * x && 1000n * (providerFee - 1n) < 5n * x).toBe(true)
        expect(units(wire.totalPaid)).toBe(x + serviceFee)
        expect(units(wire.commissionUsd)).toBe(providerFee + providerFx + serviceFee)
        // fx = round-half-up((X − fee)(M − S) / M), or 0 when S ≥ M
        if (c.sell.micros >= c.mid.micros) {
          expect(providerFx).toBe(0n)
        } else {
          const exactTimesM = (x - providerFee) * (c.mid.micros - c.sell.micros)
          // half-up means exact − 1/2 < fx ≤ exact + 1/2; multiplied by 2M:
          expect(2n * providerFx * c.mid.micros - 2n * exactTimesM <= c.mid.micros).toBe(true)
          expect(2n * exactTimesM - 2n * providerFx * c.mid.micros < c.mid.micros).toBe(true)
        }
      }),
      RUNS
    )
  })

  it("E × T ≤ D and D − E × T < T × 10^-6", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { wire } = computeCase(c)
        const e = unitsOfFixed(wire.effectiveUsdCop, 6)
        const t = unitsOfFixed(wire.totalPaid, c.decimals)
        // scaled by 10^6 × 10^decimals × 100
        const eTimesT = e * t * 100n
        const d = c.destination.cents * pow10(6 + c.decimals)
        expect(eTimesT <= d).toBe(true)
        expect(d - eTimesT < t * 100n).toBe(true)
      }),
      RUNS
    )
  })

  it("the displayed rate is E rounded down to cents", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { wire } = computeCase(c)
        const e = unitsOfFixed(wire.effectiveUsdCop, 6)
        const match = /^1 USD = ([0-9]+\.[0-9]{2}) COP$/.exec(wire.display)
        expect(match).not.toBeNull()
        const displayedMicros = unitsOfFixed(match?.[1] ?? "", 2) * 10_000n
        expect(displayedMicros <= e).toBe(true)
        expect(e - displayedMicros < 10_000n).toBe(true)
      }),
      RUNS
    )
  })

  it("matches the bigint reference, including commission display and minimums", () => {
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { amounts, wire } = computeCase(c)
        const ref = referencePayout(c.destination.cents, c.sell.micros, c.mid.micros, c.decimals)
        const units = (s: string) => unitsOfFixed(s, c.decimals)
        expect(units(wire.deposit)).toBe(ref.deposit)
        expect(units(wire.providerFee)).toBe(ref.providerFee)
        expect(units(wire.providerFx)).toBe(ref.providerFx)
        expect(units(wire.serviceFee)).toBe(ref.serviceFee)
        expect(units(wire.totalPaid)).toBe(ref.totalPaid)
        expect(unitsOfFixed(wire.effectiveUsdCop, 6)).toBe(ref.effectiveMicros)
        expect(unitsOfFixed(wire.commissionDisplayAmount, 2)).toBe(ref.commissionCents)
        const expectedMinimum = c.destination.cents < 400_000n
          ? "destination"
          : ref.deposit < 2n * pow10(c.decimals)
          ? "provider"
          : undefined
        expect(amounts.belowMinimum).toBe(expectedMinimum)
      }),
      RUNS
    )
  })

  it("the amount-specific rate never beats the amount-free quote", () => {
    // T ≥ 1.01 × D / (0.995 S) because X and F only round up, so D / T ≤ 0.995 S / 1.01.
    fc.assert(
      fc.property(payoutCaseArb, (c) => {
        const { wire } = computeCase(c)
        const quote = quoteWithoutAmount(c.sell.value)
        const e = unitsOfFixed(wire.effectiveUsdCop, 6)
        expect(BigDecimal.lessThanOrEqualTo(BigDecimal.make(e, 6), quote.effectiveUsdCop)).toBe(true)
      }),
      RUNS
    )
  })

  it("with a rate buffer, X is the smallest token amount covering D × (1 + buffer)", () => {
    // buffer in [0, 0.05] with 4 fraction digits
    const bufferArb = fc.bigInt({ min: 0n, max: 500n })
    fc.assert(
      fc.property(payoutCaseArb, bufferArb, (c, bufferUnits) => {
        const amounts = computePayout({
          destinationCop: c.destination.value,
          sellRate: c.sell.value,
          midRate: c.mid.value,
          tokenDecimals: c.decimals,
          rateBuffer: BigDecimal.make(bufferUnits, 4)
        })
        const x = unitsOfFixed(formatPayoutAmounts(amounts).deposit, c.decimals)
        // X × 0.995 × S ≥ D × (1 + b/10^4), scaled by 10^decimals × 1000 × 10^6 × 100 × 10^4
        const received = (units: bigint) => units * 995n * c.sell.micros * 100n * 10_000n
        const owed = c.destination.cents * (10_000n + bufferUnits) * pow10(c.decimals) * 1000n * pow10(6)
        expect(received(x) >= owed).toBe(true)
        expect(received(x - 1n) < owed).toBe(true)
      }),
      RUNS
    )
  })
})

describe("quoteWithoutAmount properties", () => {
  it("E = floor(S × 0.995 / 1.01) at 6 decimals; display = floor(E) at 2", () => {
    fc.assert(
      fc.property(rateArb, (sell) => {
        const quote = quoteWithoutAmount(sell.value)
        const e = unitsOfDecimal(quote.effectiveUsdCop, 6)
        // E ≤ S × 995 / 1010 < E + 10^-6, all in micros × 1010
        expect(e * 1010n <= sell.micros * 995n).toBe(true)
        expect(sell.micros * 995n < (e + 1n) * 1010n).toBe(true)
        const match = /^1 USD = ([0-9]+\.[0-9]{2}) COP$/.exec(quote.display)
        expect(match).not.toBeNull()
        const displayedMicros = unitsOfFixed(match?.[1] ?? "", 2) * 10_000n
        expect(displayedMicros <= e && e - displayedMicros < 10_000n).toBe(true)
      }),
      RUNS
    )
  })
})
