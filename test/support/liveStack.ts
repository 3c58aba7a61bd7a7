/**
 * The local live stack for tests, every part a real server on loopback: anvil (a real EVM node) with a 6-decimal
 * ERC-20, the provider simulator (Bridge's HTTP API, RSA-signed webhooks, deposits watched on anvil), the e-mail
 * capture server (Resend's API) and the service in live mode over real HTTP, on a fresh test database.
 */
import type { PreparedTx } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Hex, parseEther, type TransactionReceipt } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { type EmailCapture, startEmailCapture } from "../../scripts/simulators/email/server.ts"
import {
  type ProviderSimulator,
  type ProviderSimulatorOptions,
  startProviderSimulator
} from "../../scripts/simulators/provider/server.ts"
import { type Aggregator, startAggregator } from "../../scripts/localStack/aggregator.ts"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import { waitUntil } from "../simulators/support.ts"
import { call, newAddress, unitsOf } from "./flows.ts"
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts"
import { makeReconciler, type ReconcileReport } from "../../src/worker/Reconciler.ts"
import { deploySwapFixtures, type SwapFixtures } from "../../scripts/localStack/swapFixtures.ts"

export const TOKEN_DECIMALS = 6
export const COP_TOKEN_DECIMALS = 18
export const WEBHOOK_PATH = "/api/integrations/webhooks/provider"

export interface LiveStack {
  readonly anvil: Anvil
  readonly token: `0x${string}`
  /** The COP stablecoin of the Swaps group (COPm, 18 decimals). */
  readonly copToken: `0x${string}`
  /** The test router (with liquidity) and COPm helpers. */
  readonly swaps: SwapFixtures
  readonly aggregator: Aggregator
  readonly sim: ProviderSimulator
  readonly mail: EmailCapture
  readonly server: TestServer
  readonly feeWallet: `0x${string}`
  /** A live API key of a fresh integration. */
  readonly newLiveKey: () => Promise<string>
  readonly close: () => Promise<void>
}

/** What the service needs in live mode, pointed at the local stack. Every market day and hour is open. */
export const liveEnv = (parts: {
  readonly sim: ProviderSimulator
  readonly mail: EmailCapture
  readonly rpcUrl: string
  readonly token: string
  readonly copToken: string
  readonly aggregator: Aggregator
  readonly feeWallet: string
}): Record<string, string> => ({
  APP_MODE: "live",
  PROVIDER_API_URL: `${parts.sim.url}/v0`,
  PROVIDER_API_KEY: parts.sim.apiKey,
  PROVIDER_WEBHOOK_PUBLIC_KEY: parts.sim.publicKeyPem,
  PROVIDER_RETRIES: "2",
  PROVIDER_TIMEOUT_MS: "3000",
  CHAIN_RPC_URL: parts.rpcUrl,
  CHAIN_ID: "31337",
  TOKEN_ADDRESS: parts.token,
  TOKEN_DECIMALS: String(TOKEN_DECIMALS),
  COP_TOKEN_ADDRESS: parts.copToken,
  COP_TOKEN_DECIMALS: String(COP_TOKEN_DECIMALS),
  FEE_WALLET_ADDRESS: parts.feeWallet,
  EMAIL_API_URL: parts.mail.url,
  EMAIL_API_KEY: parts.mail.apiKey,
  SWAP_API_URL: parts.aggregator.url,
  SWAP_API_KEY: parts.aggregator.apiKey,
  MARKET_SESSION: "Mon-Sun 00:00-24:00",
  MARKET_HOLIDAYS: "none"
})

export const startLiveStack = async (options: {
  readonly env?: Record<string, string>
  readonly server?: Omit<TestServerOptions, "env">
  readonly sim?: Partial<ProviderSimulatorOptions>
} = {}): Promise<LiveStack> => {
  const closers: Array<() => Promise<void>> = []
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined)
  }
  try {
    const anvil = await startAnvil()
    closers.push(anvil.close)
    const token = await anvil.deploy(testUsdArtifact())
    const swaps = await deploySwapFixtures(anvil, token)
    const copToken = swaps.copm
    const aggregator = await startAggregator({ rpcUrl: anvil.rpcUrl, router: swaps.router, chainId: 31337 })
    closers.push(aggregator.close)
    const sim = await startProviderSimulator({
      apiKey: `sk-test-${generatePrivateKey().slice(2, 18)}`,
      port: 0,
      webhookUrl: null,
      rpcUrl: anvil.rpcUrl,
      tokenAddress: token,
      tokenDecimals: TOKEN_DECIMALS,
      stepDelayMs: 50,
      pollIntervalMs: 50,
      webhookBackoffMs: [25, 50, 100, 200],
      ...options.sim
    })
    closers.push(sim.close)
    const mail = await startEmailCapture({})
    closers.push(mail.close)
    const feeWallet = newAddress()
    const server = await startTestServer({
      ...options.server,
      env: { ...liveEnv({ sim, mail, rpcUrl: anvil.rpcUrl, token, copToken, aggregator, feeWallet }), ...options.env }
    })
    closers.push(server.close)
    sim.setWebhookUrl(`${server.baseUrl}${WEBHOOK_PATH}`)
    return {
      anvil,
      token,
      copToken,
      swaps,
      aggregator,
      sim,
      mail,
      server,
      feeWallet,
      newLiveKey: async () => (await server.newIntegration("live")).apiKey,
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** An end user with their own key and some ETH for gas; `fund` mints them the test token. */
export const newWalletUser = async (stack: LiveStack) => {
  const key = generatePrivateKey()
  const address = privateKeyToAddress(key)
  await stack.anvil.client.setBalance({ address, value: parseEther("1") })
  const wallet = stack.anvil.walletOf(key)
  return {
    address,
    wallet,
    fund: (units: bigint) => stack.anvil.mintTestUsd(stack.token, address, units),
    /** What a wallet does with a prepared transaction: send it exactly as given, wait until mined. */
    send: async (prepared: PreparedTx): Promise<TransactionReceipt> => {
      const hash = await wallet.sendTransaction({
        to: prepared.to as Hex,
        data: prepared.data as Hex,
        value: BigInt(prepared.value)
      })
      return stack.anvil.client.waitForTransactionReceipt({ hash })
    }
  }
}

export type WalletUser = Awaited<ReturnType<typeof newWalletUser>>

/**
 * OTP by e-mail, verify, then the provider approves the customer (the simulator's KYC decision, sent as a
 * signed webhook). Resolves once the service has applied the approval.
 */
export const completeLiveKyc = async (stack: LiveStack, apiKey: string, userAddress: string, email: string) => {
  const sent = await call(stack.server.baseUrl, apiKey, "POST", "/api/integrations/breb/kyc/otp/send", {
    body: { email, userAddress }
  })
  if (sent.status !== 200) throw new Error(`otp send: ${sent.status} ${sent.text}`)
  const message = await stack.mail.waitFor((m) => m.to.includes(email), 5000)
  const code = /\b([0-9]{6})\b/.exec(message.text ?? "")?.[1]
  if (code === undefined) throw new Error(`no code in the OTP e-mail: ${message.subject}`)
  const verified = await call(stack.server.baseUrl, apiKey, "POST", "/api/integrations/breb/kyc/otp/verify", {
    body: { userAddress, code }
  })
  if (verified.status !== 200) throw new Error(`otp verify: ${verified.status} ${verified.text}`)
  const linkId = String((verified.json as { kycUrl: string }).kycUrl).split("/").pop()
  const link = await fetch(`${stack.sim.url}/v0/kyc_links/${linkId}`, { headers: { "api-key": stack.sim.apiKey } })
  const customerId = ((await link.json()) as { customer_id: string }).customer_id
  const approved = await fetch(`${stack.sim.url}/__sim/customers/${customerId}/approve`, { method: "POST" })
  if (!approved.ok) throw new Error(`simulator approve: ${approved.status}`)
  await eventsSettled(stack, "customer", customerId)
  return {
    sent: sent.json as Record<string, unknown>,
    code,
    verified: verified.json as { kycStatus: string; kycUrl: string },
    customerId,
    message
  }
}

interface SimEvent {
  readonly event_id: string
  readonly delivered: boolean
  readonly settled: boolean
  readonly attempts: ReadonlyArray<{ readonly status: number | null }>
}

/** The simulator's deliveries about one object, once every one of them is settled (answered or given up). */
export const eventsSettled = (stack: LiveStack, category: string, objectId: string, atLeast = 1, timeoutMs = 10_000) =>
  waitUntil(`${category} events about ${objectId} delivered`, async () => {
    const response = await fetch(`${stack.sim.url}/__sim/events?event_category=${category}&event_object_id=${objectId}`)
    const { data } = (await response.json()) as { data: ReadonlyArray<SimEvent> }
    return data.length >= atLeast && data.every((event) => event.settled) ? data : undefined
  }, { timeoutMs })

/** A KYC-approved user's payout, created through the API (201), with the user funded to pay it. */
export const fundedPayout = async (stack: LiveStack, apiKey: string, destinationCop = "250000") => {
  const user = await newWalletUser(stack)
  await completeLiveKyc(stack, apiKey, user.address, `u-${user.address.slice(2, 12).toLowerCase()}@example.com`)
  const created = await call(stack.server.baseUrl, apiKey, "POST", "/api/integrations/breb/payouts", {
    body: { userAddress: user.address, destinationCop, breBKey: "@camila2024", accountOwnerName: "Camila Rojas" }
  })
  if (created.status !== 201) throw new Error(`payout: ${created.status} ${created.text}`)
  const payout = created.json as {
    payoutId: string
    sourceAmount: string
    transaction: PreparedTx
    feeTransaction: PreparedTx
  }
  await user.fund(unitsOf(payout.sourceAmount, TOKEN_DECIMALS))
  return { user, payout }
}

/** The provider's transfer id of a payout (the partner never sees it). */
export const transferIdOf = async (stack: LiveStack, payoutId: string): Promise<string> => {
  const rows = await stack.server.run(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
    )
  )
  return rows[0]!.provider_transfer_id
}

/** The simulator's own API (its `/v0` and `/__sim` routes): GET, or POST with a JSON body; the parsed answer. */
export const simCall = async (stack: LiveStack, path: string, body?: unknown): Promise<any> => {
  const response = await fetch(
    `${stack.sim.url}${path}`,
    body === undefined ? {} : {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    }
  )
  return response.json()
}

/** The transfers the provider (simulator) holds on behalf of one customer. */
export const providerTransfersOf = async (
  stack: LiveStack,
  customerId: string
): Promise<Array<{ id: string; client_reference_id: string; to_address: string }>> =>
  (await simCall(stack, `/__sim/transfers?on_behalf_of=${customerId}`)).data

/** One reconciler run now, on the service's own layers (beside its loop, if it runs: both take turns). */
export const reconcileOnce = (stack: LiveStack) =>
  (stack.server.run as <A, E>(effect: Effect.Effect<A, E, unknown>) => Promise<A>)<ReconcileReport, unknown>(
    Effect.flatMap(makeReconciler, (reconciler) => reconciler.run)
  )
