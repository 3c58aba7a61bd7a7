/**
 * ChainLive against a real node: a deposit verifies only when its receipt exists, succeeded, was sent by the
 * user, and carries a Transfer of at least the expected amount of the configured token to the expected
 * address. Each mismatch fails with a reason that names it.
 */
import { ConfigProvider, Effect, Layer, Option, Redacted, Result } from "effect"
import { erc20Abi, parseEther } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Chain, type TransferCheck } from "../../src/chain/Chain.ts"
import { ChainLive, makeChainLive } from "../../src/chain/ChainLive.ts"
import { AppConfig, AppConfigShape } from "../../src/config/Config.ts"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import { newAddress, newTxHash } from "../support/flows.ts"

let anvil: Anvil
let token: `0x${string}`
let otherToken: `0x${string}`
let chain: Chain["Service"]

const DEPOSIT = 63_448_556n

const usdcOnly = () => [{ symbol: "USDC" as const, chain: "anvil", address: token, decimals: 6 }]

beforeAll(async () => {
  anvil = await startAnvil()
  token = await anvil.deploy(testUsdArtifact())
  otherToken = await anvil.deploy(testUsdArtifact())
  chain = makeChainLive({ rpcUrl: Redacted.make(anvil.rpcUrl), chainName: "anvil", tokens: usdcOnly() }).chain
})
afterAll(() => anvil?.close())

/** A user with ETH for gas and `units` of both tokens. */
const newUser = async (units: bigint) => {
  const key = generatePrivateKey()
  const address = privateKeyToAddress(key)
  await anvil.client.setBalance({ address, value: parseEther("1") })
  for (const contract of [token, otherToken]) await anvil.mintTestUsd(contract, address, units)
  const wallet = anvil.walletOf(key)
  /** Sends an ERC-20 transfer and waits until it is mined; `gas` set skips estimation, so a revert gets mined. */
  const transfer = async (to: `0x${string}`, value: bigint, options: { token?: `0x${string}`; gas?: bigint } = {}) => {
    const hash = await wallet.writeContract({
      address: options.token ?? token,
      abi: erc20Abi,
      functionName: "transfer",
      args: [to, value],
      ...(options.gas === undefined ? {} : { gas: options.gas })
    })
    await anvil.client.waitForTransactionReceipt({ hash })
    return hash
  }
  return { address, transfer }
}

/** A check of the configured token (`token`), unless it names another. */
type Check = Omit<TransferCheck, "token"> & { readonly token?: `0x${string}` }

const verify = (check: Check, on: Chain["Service"] = chain) =>
  Effect.runPromise(Effect.result(on.verifyTransfer({ token, ...check })))

const reasonOf = async (check: Check, on?: Chain["Service"]) => {
  const result = await verify(check, on)
  if (Result.isSuccess(result)) throw new Error("expected the deposit not to verify")
  return result.failure.reason
}

/** Which kind of failure: only `unreachable` is asked again by the confirm. */
const kindOf = async (check: Check, on?: Chain["Service"]) => {
  const result = await verify(check, on)
  if (Result.isSuccess(result)) throw new Error("expected the deposit not to verify")
  return result.failure.kind
}

describe("ChainLive.verifyTransfer on anvil", () => {
  it("verifies a transfer of exactly the deposit, and of more", async () => {
    const user = await newUser(3n * DEPOSIT)
    const depositAddress = newAddress()
    for (const value of [DEPOSIT, DEPOSIT + 1n]) {
      const txHash = await user.transfer(depositAddress, value)
      const receipt = await anvil.client.getTransactionReceipt({ hash: txHash })
      const block = await anvil.client.getBlock({ blockNumber: receipt.blockNumber })
      expect(await verify({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT }))
        .toEqual(Result.succeed({
          minedAt: new Date(Number(block.timestamp) * 1000),
          // the receipt's Transfer logs, read once for a batch's other legs
          transfers: [{ token: token.toLowerCase(), from: user.address, to: depositAddress, value }]
        }))
    }
  })

  it("accepts the hash and the addresses in any letter case", async () => {
    const user = await newUser(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await user.transfer(depositAddress, DEPOSIT)
    const check = {
      txHash: txHash.toUpperCase().replace("0X", "0x"),
      from: user.address.toLowerCase(),
      to: depositAddress.toLowerCase(),
      minAmountBaseUnits: DEPOSIT
    }
    expect(Result.isSuccess(await verify(check))).toBe(true)
  })

  it("rejects one base unit less than the deposit, naming both amounts", async () => {
    const user = await newUser(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await user.transfer(depositAddress, DEPOSIT - 1n)
    expect(await reasonOf({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT }))
      .toContain(`transfers ${DEPOSIT - 1n} base units to ${depositAddress}, less than the ${DEPOSIT} expected`)
  })

  it("rejects a transfer sent by someone other than the user", async () => {
    const user = await newUser(DEPOSIT)
    const stranger = await newUser(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await stranger.transfer(depositAddress, DEPOSIT)
    expect(await reasonOf({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT }))
      .toContain(`was sent by ${stranger.address}, not ${user.address}`)
  })

  it("rejects a transfer to another address, and one of another token", async () => {
    const user = await newUser(2n * DEPOSIT)
    const depositAddress = newAddress()
    const elsewhere = await user.transfer(newAddress(), DEPOSIT)
    const wrongToken = await user.transfer(depositAddress, DEPOSIT, { token: otherToken })
    for (const txHash of [elsewhere, wrongToken]) {
      expect(await reasonOf({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT }))
        .toContain(`has no Transfer of the anvil token ${token} to ${depositAddress}`)
    }
  })

  it("rejects a transaction that reverted", async () => {
    const user = await newUser(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await user.transfer(depositAddress, DEPOSIT + 1n, { gas: 100_000n })
    expect((await anvil.client.getTransactionReceipt({ hash: txHash })).status).toBe("reverted")
    expect(await reasonOf({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT })).toContain(
      "reverted"
    )
    expect(await kindOf({ txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT })).toBe(
      "reverted"
    )
  })

  it("rejects a hash that was never mined", async () => {
    const txHash = newTxHash()
    expect(await reasonOf({ txHash, from: newAddress(), to: newAddress(), minAmountBaseUnits: DEPOSIT }))
      .toBe(`no mined transaction ${txHash} on anvil`)
    expect(await kindOf({ txHash, from: newAddress(), to: newAddress(), minAmountBaseUnits: DEPOSIT })).toBe(
      "not_mined"
    )
  })

  it("says the node could not be asked when it does not answer, without the RPC URL", async () => {
    const unreachable =
      makeChainLive({ rpcUrl: Redacted.make("http://127.0.0.1:9/secret-key"), chainName: "anvil", tokens: usdcOnly() })
        .chain
    const reason = await reasonOf({
      txHash: newTxHash(),
      from: newAddress(),
      to: newAddress(),
      minAmountBaseUnits: DEPOSIT
    }, unreachable)
    expect(reason).toContain("the anvil node could not be asked")
    expect(reason).not.toContain("secret-key")
    expect(
      await kindOf(
        { txHash: newTxHash(), from: newAddress(), to: newAddress(), minAmountBaseUnits: DEPOSIT },
        unreachable
      )
    )
      .toBe("unreachable")
  })
})

describe("ChainLive confirmations", () => {
  it("waits for the required confirmations, then verifies", async () => {
    const threeDeep =
      makeChainLive({ rpcUrl: Redacted.make(anvil.rpcUrl), chainName: "anvil", tokens: usdcOnly(), confirmations: 3 })
        .chain
    const user = await newUser(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await user.transfer(depositAddress, DEPOSIT)
    const check = { txHash, from: user.address, to: depositAddress, minAmountBaseUnits: DEPOSIT }
    expect(await reasonOf(check, threeDeep)).toBe(
      `transaction ${txHash} has 1 of the 3 confirmations required; retry later`
    )
    expect(await kindOf(check, threeDeep)).toBe("unconfirmed")
    await anvil.client.mine({ blocks: 2 })
    expect(Result.isSuccess(await verify(check, threeDeep))).toBe(true)
  })
})

describe("ChainLive layer", () => {
  const configWith = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )

  it("is a configuration error without CHAIN_RPC_URL", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(Chain, ChainLive.pipe(Layer.provide(Layer.succeed(AppConfig, configWith({})))))
    )
    expect(String(exit)).toContain("CHAIN_RPC_URL")
    expect(exit._tag).toBe("Failure")
  })

  it("refuses to start when the token's decimals onchain differ from TOKEN_DECIMALS", async () => {
    const config = configWith({
      CHAIN_RPC_URL: anvil.rpcUrl,
      CHAIN_NAME: "anvil",
      TOKEN_ADDRESS: token,
      TOKEN_DECIMALS: "18",
      COP_TOKEN_ADDRESS: otherToken,
      COP_TOKEN_DECIMALS: "6"
    })
    const exit = await Effect.runPromiseExit(
      Effect.provide(Chain, ChainLive.pipe(Layer.provide(Layer.succeed(AppConfig, config))))
    )
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain(`TOKEN_DECIMALS`)
    expect(String(exit)).toContain(`has 6 decimals onchain, not 18`)
  })

  it("serves the configured token from CHAIN_RPC_URL", async () => {
    const config = configWith({
      CHAIN_RPC_URL: anvil.rpcUrl,
      CHAIN_NAME: "anvil",
      TOKEN_ADDRESS: token.toLowerCase(),
      COP_TOKEN_ADDRESS: otherToken,
      COP_TOKEN_DECIMALS: "6"
    })
    expect(Option.isSome(config.chainRpcUrl)).toBe(true)
    const info = await Effect.runPromise(
      Effect.provide(
        Effect.map(Chain, (c) => c.token("USDC")),
        ChainLive.pipe(Layer.provide(Layer.succeed(AppConfig, config)))
      )
    )
    expect(info).toEqual({ symbol: "USDC", chain: "anvil", address: token, decimals: 6 })
  })
})

describe("ChainLive.verifyRefund on anvil", () => {
  const refund = (check: { txHash: string; to: string; amountBaseUnits: bigint; token?: `0x${string}` }) =>
    Effect.runPromise(Effect.result(chain.verifyRefund({ token, ...check })))

  it("verifies a transfer of the refund's amount of the token to the user, whoever sent it", async () => {
    const provider = await newUser(2n * DEPOSIT)
    const user = newAddress()
    const txHash = await provider.transfer(user, DEPOSIT)
    const result = await refund({ txHash, to: user, amountBaseUnits: DEPOSIT })
    expect(Result.isSuccess(result)).toBe(true)
  })

  it("is not verified when the transaction moves less, to someone else, another token, or is not mined", async () => {
    const provider = await newUser(2n * DEPOSIT)
    const user = newAddress()
    const txHash = await provider.transfer(user, DEPOSIT - 1n)
    const failures = await Promise.all([
      refund({ txHash, to: user, amountBaseUnits: DEPOSIT }),
      refund({ txHash, to: newAddress(), amountBaseUnits: DEPOSIT - 1n }),
      refund({ txHash, to: user, amountBaseUnits: DEPOSIT - 1n, token: otherToken }),
      refund({ txHash: newTxHash(), to: user, amountBaseUnits: 1n })
    ])
    expect(failures.map((result) => (Result.isFailure(result) ? result.failure.kind : "verified"))).toEqual([
      "mismatch",
      "mismatch",
      "mismatch",
      "not_mined"
    ])
    expect(Result.isFailure(failures[0]) && failures[0].failure.reason).toContain("not the 63448556 refunded")
  })
})
