/**
 * The swap fixtures on anvil: TestCop (an 18-decimal COPm stand-in) and TestRouter (own liquidity, a settable price
 * per pair), from the committed artifact (scripts/swap-fixtures.ts).
 */
import type { Abi } from "viem"
import { type Anvil, committedArtifact, type Compiled } from "./anvil.ts"

interface Fixtures {
  readonly TestCop: Compiled
  readonly TestRouter: Compiled
}

export const swapFixturesArtifact = (): Fixtures =>
  committedArtifact<{ readonly contracts: Fixtures }>("SwapFixtures.artifact.json").contracts

/**
 * COPm and a router seeded with liquidity of both tokens, priced at 1 USD = 4000 COPm less 0.32 % each way (the
 * mock route's defaults): COPm → USDC 0.00024920 USDC per COPm, USDC → COPm 3987.2 COPm per USDC, in base units.
 */
export const deploySwapFixtures = async (anvil: Anvil, usdc: `0x${string}`) => {
  const fixtures = swapFixturesArtifact()
  const copm = await anvil.deploy(fixtures.TestCop)
  const router = await anvil.deploy(fixtures.TestRouter)
  const write = async (address: `0x${string}`, abi: Abi, functionName: string, args: ReadonlyArray<unknown>) => {
    const hash = await anvil.dev.writeContract({ address, abi, functionName, args })
    const receipt = await anvil.client.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success") throw new Error(`${functionName} failed`)
  }
  const mintCopm = (to: `0x${string}`, units: bigint) => write(copm, fixtures.TestCop.abi, "mint", [to, units])
  await anvil.mintTestUsd(usdc, router, 10n ** 12n)
  await mintCopm(router, 10n ** 30n)
  // 1e18 COPm base units → 249.2 USDC base units; 1 USDC base unit → 3987.2e12 COPm base units
  await write(router, fixtures.TestRouter.abi, "setRate", [copm, usdc, 2492n, 10n ** 19n])
  await write(router, fixtures.TestRouter.abi, "setRate", [usdc, copm, 39_872n * 10n ** 11n, 1n])
  return {
    copm,
    router,
    mintCopm,
    /** Reprices a pair: amountOut = amountIn × numerator / denominator, in base units. */
    setRate: (tokenIn: `0x${string}`, tokenOut: `0x${string}`, numerator: bigint, denominator: bigint) =>
      write(router, fixtures.TestRouter.abi, "setRate", [tokenIn, tokenOut, numerator, denominator]),
    /** Test only: deliver `shortfall` base units less than quoted, with or without the minAmountOut check. */
    misbehave: (shortfall: bigint, enforceMinimum: boolean) =>
      write(router, fixtures.TestRouter.abi, "setMisbehaviour", [shortfall, enforceMinimum])
  }
}

export type SwapFixtures = Awaited<ReturnType<typeof deploySwapFixtures>>
