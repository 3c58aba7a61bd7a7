import { BadRequest, BelowMinimum, type FeeLeg } from "@cop-integrations/contracts"
import { BigDecimal, Effect, Option } from "effect"
import { computePayout, formatPayoutAmounts, parsePlainDecimal } from "../money/index.ts"
import type { UsdCopRates } from "../provider/PayoutProvider.ts"

/** `destinationCop` from the wire (already pattern-checked by the contract), within the Bre-B cap. */
export const parseDestinationCop = (raw: string, cap: BigDecimal.BigDecimal) =>
  Option.match(parsePlainDecimal(raw, 2), {
    onNone: () => Effect.fail(new BadRequest({ error: "destinationCop: must be a plain decimal string with at most 2 decimals" })),
    onSome: (value) =>
      BigDecimal.greaterThan(value, cap)
        ? Effect.fail(
          new BadRequest({
            error: `destinationCop: must be at most ${BigDecimal.format(cap)} COP (Bre-B per-transfer cap)`
          })
        )
        : Effect.succeed(value)
  })

export const priceDestination = (input: {
  readonly destinationCop: BigDecimal.BigDecimal
  readonly rates: UsdCopRates
  readonly tokenDecimals: number
  readonly feeWallet: string
  /** RATE_BUFFER_BPS: extra deposit against movement before the funds arrive (DESIGN: live, default 0). */
  readonly rateBufferBps: number
}) => {
  const amounts = computePayout({
    destinationCop: input.destinationCop,
    sellRate: input.rates.sellRate,
    midRate: input.rates.midRate,
    tokenDecimals: input.tokenDecimals,
    rateBuffer: BigDecimal.make(BigInt(input.rateBufferBps), 4)
  })
  const wire = formatPayoutAmounts(amounts)
  const fees: ReadonlyArray<FeeLeg> = [
    { code: "bridge_fx", amountUsd: wire.providerFx, to: null, status: "quoted" },
    { code: "bridge", amountUsd: wire.providerFee, to: null, status: "quoted" },
    { code: "copby", amountUsd: wire.serviceFee, to: input.feeWallet, status: "quoted" }
  ]
  return { amounts, wire, fees } as const
}

const belowMinimumMessage = (which: "destination" | "provider") =>
  which === "destination"
    ? "destinationCop is below the minimum payout of 4000 COP"
    : "the amount sent to the payout provider would be below the minimum of 2 USD"

/** `priceDestination`, failing with `below_minimum` when either minimum is not met. */
export const priceAboveMinimums = (input: Parameters<typeof priceDestination>[0]) => {
  const priced = priceDestination(input)
  return priced.amounts.belowMinimum === undefined
    ? Effect.succeed(priced)
    : Effect.fail(new BelowMinimum({ error: belowMinimumMessage(priced.amounts.belowMinimum) }))
}
