/**
 * startProviderSimulator: a local HTTP stand-in for the payout provider (Bridge), listening on 127.0.0.1 only.
 * /v0/... speaks the Bridge subset the live service uses (api.ts); /__sim/... is the control surface (control.ts).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { handleApi } from "./api.ts"
import type { SimulatorContext } from "./context.ts"
import { handleControl } from "./control.ts"
import { type DepositWatcher, readTokenDecimals, startDepositWatcher } from "./depositWatcher.ts"
import { BodyTooLarge, sendJson } from "./http.ts"
import { Lifecycle } from "./lifecycle.ts"
import { makeRefunder } from "./refunds.ts"
import { type Rates, type ReturnPolicyStrategy, SimulatorState } from "./state.ts"
import { WebhookSender } from "./webhooks.ts"

export interface ProviderSimulatorOptions {
  /** The `Api-Key` every /v0 request must carry. */
  readonly apiKey: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Where signed webhooks go; null sends nothing (settable later through POST /__sim/config). */
  readonly webhookUrl?: string | null
  /** EVM JSON-RPC URL and the deposit token: with both, deposits are watched onchain. */
  readonly rpcUrl?: string
  readonly tokenAddress?: `0x${string}`
  /** Decimals of the deposit token; read onchain when a node is configured, else 6. */
  readonly tokenDecimals?: number
  /** COP per USD (decimal strings); defaults match the service's mock rates. */
  readonly rates?: Partial<Rates>
  /** Delay between funds_received → payment_submitted → payment_processed (default 1000 ms). */
  readonly stepDelayMs?: number
  /** How often the node is polled for deposits (default 1000 ms). */
  readonly pollIntervalMs?: number
  readonly confirmations?: number
  readonly webhookMaxAttempts?: number
  /** Backoff before retry n (the last value repeats); default 1 s, 5 s, 30 s, 2 min. */
  readonly webhookBackoffMs?: ReadonlyArray<number>
  readonly webhookTimeoutMs?: number
  /** Upper bound of a request hung by the timeout switch (default 30 s), then 504. */
  readonly hangTimeoutMs?: number
  /** Offramp minimum in COP (default "4000"; "0" turns it off). */
  readonly minimumCop?: string
  /** Transfers need an approved customer (KYC, ToS and the COP endorsement); default true. */
  readonly requireApprovedCustomer?: boolean
  /** PEM (PKCS#8) RSA private key to sign webhooks with; generated when absent. */
  readonly privateKeyPem?: string
  /**
   * The developer's crypto return policy (`GET /v0/crypto_return_policies`): `refund_to_sender` (default),
   * `static_address`, or null for none.
   */
  readonly returnPolicy?: ReturnPolicyStrategy | null
  readonly log?: (line: string) => void
}

export interface ProviderSimulator {
  readonly url: string
  readonly port: number
  readonly apiKey: string
  readonly publicKeyPem: string
  readonly privateKeyPem: string
  readonly tokenDecimals: number
  /** Points webhooks somewhere else (same as POST /__sim/config { webhook_url }). */
  readonly setWebhookUrl: (url: string | null) => void
  readonly close: () => Promise<void>
}

export const DEFAULT_RATES: Rates = { midmarket_rate: "4000.00", buy_rate: "4040.00", sell_rate: "3960.00" }

export const startProviderSimulator = async (options: ProviderSimulatorOptions): Promise<ProviderSimulator> => {
  const log = options.log ?? (() => {})
  const state = new SimulatorState(
    { ...DEFAULT_RATES, ...options.rates },
    options.webhookUrl ?? null,
    options.stepDelayMs ?? 1000
  )
  const webhooks = new WebhookSender(state, {
    privateKeyPem: options.privateKeyPem,
    maxAttempts: options.webhookMaxAttempts ?? 5,
    backoffMs: options.webhookBackoffMs ?? [1000, 5000, 30_000, 120_000],
    timeoutMs: options.webhookTimeoutMs ?? 10_000
  })
  const chain = options.rpcUrl !== undefined && options.tokenAddress !== undefined
    ? { rpcUrl: options.rpcUrl, tokenAddress: options.tokenAddress }
    : undefined
  const decimals = options.tokenDecimals ??
    (chain === undefined ? 6 : await readTokenDecimals(chain.rpcUrl, chain.tokenAddress))

  let baseUrl = ""
  const refunder = chain === undefined ? null : makeRefunder(chain.rpcUrl, chain.tokenAddress)
  const lifecycle = new Lifecycle(state, webhooks, decimals, () => baseUrl, refunder, log)
  let watcher: DepositWatcher | null = null
  const hangs = new Set<() => void>()
  const ctx = (): SimulatorContext => ({
    state,
    lifecycle,
    webhooks,
    watcher,
    apiKey: options.apiKey,
    decimals,
    baseUrl: () => baseUrl,
    minimumCop: options.minimumCop ?? "4000",
    requireApprovedCustomer: options.requireApprovedCustomer ?? true,
    hangTimeoutMs: options.hangTimeoutMs ?? 30_000,
    hangs,
    returnPolicy: options.returnPolicy === undefined ? "refund_to_sender" : options.returnPolicy,
    log
  })

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const handler = url.pathname.startsWith("/v0/")
      ? handleApi
      : url.pathname.startsWith("/__sim/")
      ? handleControl
      : undefined
    if (handler === undefined) {
      req.resume()
      return sendJson(res, 404, { code: "not_found", message: `no route for ${req.method} ${url.pathname}` })
    }
    handler(ctx(), req, res, url).catch((cause: unknown) => {
      if (cause instanceof BodyTooLarge) {
        return sendJson(res, 413, { code: "payload_too_large", message: cause.message })
      }
      log(`request ${req.method} ${url.pathname} failed: ${cause instanceof Error ? cause.stack : String(cause)}`)
      sendJson(res, 500, { code: "internal_server_error", message: "simulator error" })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  baseUrl = `http://127.0.0.1:${port}`

  const close = async () => {
    watcher?.stop()
    lifecycle.close()
    webhooks.close()
    for (const end of [...hangs]) end()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  if (chain !== undefined) {
    try {
      watcher = await startDepositWatcher(state, lifecycle, {
        ...chain,
        pollIntervalMs: options.pollIntervalMs ?? 1000,
        confirmations: options.confirmations ?? 1,
        log
      })
    } catch (cause) {
      await close()
      throw cause
    }
  }

  return {
    url: baseUrl,
    port,
    apiKey: options.apiKey,
    publicKeyPem: webhooks.publicKeyPem,
    privateKeyPem: webhooks.privateKeyPem,
    tokenDecimals: decimals,
    setWebhookUrl: (url) => {
      state.webhookUrl = url
    },
    close
  }
}
