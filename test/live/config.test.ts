/**
 * `APP_MODE=live` starts only with its configuration: without it, one configuration error line lists every missing
 * or unusable setting (checked in-process, before any database or network work), and a node that is not the
 * configured chain or token is refused at start-up, as is a provider whose crypto return policy would not send a
 * failed payout's deposit back to the user's wallet (issue #29: refund_to_sender, never static_address).
 */
import { generateKeyPairSync } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { newAddress } from "../support/flows.ts"
import { startupFailure } from "../support/startup.ts"
import { type ProviderSimulator, startProviderSimulator } from "../../scripts/simulators/provider/server.ts"
import type { ReturnPolicyStrategy } from "../../scripts/simulators/provider/state.ts"

const unreachableDatabase = "postgres://nobody@127.0.0.1:1/never-reached"
const publicKeyPem = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({
  type: "spki",
  format: "pem"
}).toString()

describe("APP_MODE=live without its settings", () => {
  it("is one configuration error line naming every missing setting", async () => {
    const line = await startupFailure({ APP_MODE: "live", DATABASE_URL: unreachableDatabase })
    expect(line).toMatch(/^configuration error: /)
    expect(line).not.toContain("\n")
    for (
      const name of [
        "PROVIDER_API_KEY",
        "CHAIN_RPC_URL",
        "CHAIN_ID",
        "PROVIDER_WEBHOOK_PUBLIC_KEY",
        "EMAIL_API_KEY",
        "SWAP_API_KEY",
        "FEE_WALLET_ADDRESS"
      ]
    ) {
      expect(line).toContain(name)
    }
  })

  it("names only what is still wrong, and a webhook key that is not a PEM public key", async () => {
    const line = await startupFailure({
      APP_MODE: "live",
      DATABASE_URL: unreachableDatabase,
      PROVIDER_API_KEY: "sk-live-something",
      CHAIN_RPC_URL: "http://127.0.0.1:1",
      CHAIN_ID: "42220",
      PROVIDER_WEBHOOK_PUBLIC_KEY: "-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----",
      EMAIL_API_KEY: "re_live_something",
      SWAP_API_KEY: "0x-live-something",
      FEE_WALLET_ADDRESS: newAddress()
    })
    expect(line).toContain("PROVIDER_WEBHOOK_PUBLIC_KEY is not an RSA public key")
    for (
      const name of [
        "PROVIDER_API_KEY",
        "CHAIN_RPC_URL",
        "CHAIN_ID",
        "EMAIL_API_KEY",
        "SWAP_API_KEY",
        "FEE_WALLET_ADDRESS"
      ]
    ) {
      expect(line).not.toContain(name)
    }
    expect(line).not.toContain("sk-live-something")
  })
})

describe("APP_MODE=live against a node", () => {
  let anvil: Anvil
  let token: `0x${string}`
  let copToken: `0x${string}`
  let database: TestDatabase
  const sims = new Map<ReturnPolicyStrategy | null, ProviderSimulator>()
  beforeAll(async () => {
    for (const policy of ["refund_to_sender", "static_address", null] as const) {
      sims.set(
        policy,
        await startProviderSimulator({ apiKey: "sk-live-something", tokenDecimals: 6, returnPolicy: policy })
      )
    }
    database = await acquireTestDatabase()
    anvil = await startAnvil()
    token = await anvil.deploy(testUsdArtifact())
    copToken = await anvil.deploy(testUsdArtifact())
  })
  afterAll(async () => {
    for (const sim of sims.values()) await sim.close()
    await anvil?.close()
    await database?.release()
  })

  const complete = (returnPolicy: ReturnPolicyStrategy | null = "refund_to_sender") => ({
    APP_MODE: "live",
    DATABASE_URL: database.url,
    PROVIDER_API_URL: `${sims.get(returnPolicy)!.url}/v0`,
    PROVIDER_API_KEY: "sk-live-something",
    CHAIN_RPC_URL: anvil.rpcUrl,
    TOKEN_ADDRESS: token,
    TOKEN_DECIMALS: "6",
    COP_TOKEN_ADDRESS: copToken,
    COP_TOKEN_DECIMALS: "6",
    PROVIDER_WEBHOOK_PUBLIC_KEY: publicKeyPem,
    EMAIL_API_KEY: "re_live_something",
    SWAP_API_KEY: "0x-live-something",
    CHAIN_ID: "31337",
    FEE_WALLET_ADDRESS: newAddress()
  })

  it("refuses a token whose decimals() onchain differ from TOKEN_DECIMALS or COP_TOKEN_DECIMALS", async () => {
    expect(await startupFailure({ ...complete(), TOKEN_DECIMALS: "18" })).toMatch(
      /^configuration error: .*TOKEN_DECIMALS.*6 decimals onchain/
    )
    expect(await startupFailure({ ...complete(), COP_TOKEN_DECIMALS: "18" })).toMatch(
      /^configuration error: .*COP_TOKEN_DECIMALS.*COPm.*6 decimals onchain, not 18/
    )
  })

  it("refuses a node that is another chain than CHAIN_ID", async () => {
    const line = await startupFailure({ ...complete(), CHAIN_ID: "42220" })
    expect(line).toMatch(/^configuration error: .*CHAIN_ID.*chain 31337, not 42220/)
  })

  it("refuses a provider whose crypto return policy is static_address, naming the setting", async () => {
    expect(await startupFailure(complete("static_address"))).toMatch(
      /^configuration error: PROVIDER_API_KEY: the provider's crypto return policy is static_address: every user's refund would go to one wallet \(custodial\); set it to refund_to_sender/
    )
  })

  it("refuses a provider with no refund_to_sender crypto return policy", async () => {
    expect(await startupFailure(complete(null))).toMatch(
      /^configuration error: PROVIDER_API_KEY: the provider has no crypto return policy refund_to_sender/
    )
  })

  it("with every setting right, starts", async () => {
    expect(await startupFailure(complete())).toBe("started")
  })
})
