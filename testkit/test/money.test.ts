import { describe, expect, it } from "vitest"
import { expectedAmounts, expectedRateOnly, minimalDeposit, providerMinimumBoundary } from "../src/expected.ts"
import { compare, decimal, divide, format, fractionDigits, multiply, show, toBaseUnits } from "../src/money.ts"

describe("exact decimals", () => {
  it("divides with the rounding asked for, exactly", () => {
    expect(show(divide(decimal("2"), decimal("3"), 6, "floor"))).toBe("0.666666")
    expect(show(divide(decimal("2"), decimal("3"), 6, "ceil"))).toBe("0.666667")
    expect(show(divide(decimal("6"), decimal("3"), 2, "ceil"))).toBe("2.00")
  })

  it("formats and converts to base units without losing digits", () => {
    expect(format(decimal("25.3794"), 6)).toBe("25.379400")
    expect(() => format(decimal("1.2345"), 2)).toThrow(RangeError)
    expect(toBaseUnits(decimal("25.379423"), 6)).toBe(25_379_423n)
    expect(fractionDigits("25.379423")).toBe(6)
    expect(compare(decimal("1.10"), decimal("1.1"))).toBe(0)
  })
})

describe("expected amounts (DESIGN §3 money math)", () => {
  // The values a correct deployment shows for D = 100000 COP at S = 3960 with a 6-decimal token.
  it("derives X, the legs, T, E and display from D, S and the token decimals", () => {
    const amounts = expectedAmounts({ destinationCop: decimal("100000"), sellRate: decimal("3960"), decimals: 6 })
    expect(show(amounts.deposit)).toBe("25.379423")
    expect(show(amounts.providerFee)).toBe("0.126898")
    expect(show(amounts.serviceFee)).toBe("0.253795")
    expect(show(amounts.totalPaid)).toBe("25.633218")
    expect(show(amounts.effectiveUsdCop)).toBe("3901.187903")
    expect(amounts.display).toBe("1 USD = 3901.18 COP")
  })

  it("X is the least amount that delivers D", () => {
    const D = decimal("4321987.65")
    const S = decimal("3960.5")
    const X = minimalDeposit(D, S, 6)
    const delivered = (x: typeof X) => compare(multiply(multiply(x, decimal("0.995")), S), D)
    expect(delivered(X)).toBeGreaterThanOrEqual(0)
    expect(delivered({ units: X.units - 1n, scale: X.scale })).toBeLessThan(0)
  })

  it("a quote without an amount shows S × 0.995 / 1.01", () => {
    expect(show(expectedRateOnly(decimal("3960")).effectiveUsdCop)).toBe("3901.188118")
    expect(expectedRateOnly(decimal("3960")).display).toBe("1 USD = 3901.18 COP")
  })

  it("finds the COP amounts on both sides of the 2 USD provider minimum", () => {
    const { below, enough } = providerMinimumBoundary(decimal("3960"))
    expect([show(below), show(enough)]).toEqual(["7880", "7881"])
    expect(compare(minimalDeposit(below, decimal("3960"), 6), decimal("2"))).toBeLessThan(0)
    expect(compare(minimalDeposit(enough, decimal("3960"), 6), decimal("2"))).toBeGreaterThanOrEqual(0)
  })
})
