/**
 * The provider simulator as a process:
 *   node --import tsx scripts/simulators/provider/main.ts
 * Environment (all optional):
 *   PROVIDER_SIM_PORT (or PORT)        port on 127.0.0.1, default 4010 (0 = any free port)
 *   PROVIDER_SIM_API_KEY               the Api-Key clients must send, default sk-test-simulator
 *   PROVIDER_SIM_WEBHOOK_URL           where signed webhooks go (e.g. http://127.0.0.1:3000/api/integrations/webhooks/provider)
 *   PROVIDER_SIM_RPC_URL (or CHAIN_RPC_URL) and PROVIDER_SIM_TOKEN_ADDRESS (or TOKEN_ADDRESS): watch deposits onchain
 *   PROVIDER_SIM_TOKEN_DECIMALS        skip reading decimals() onchain (default: read it; 6 without a node)
 *   PROVIDER_SIM_MIDMARKET_RATE / _BUY_RATE / _SELL_RATE   COP per USD, default 4000.00 / 4040.00 / 3960.00
 *   PROVIDER_SIM_STEP_DELAY_MS         between transfer states after the deposit, default 1000
 *   PROVIDER_SIM_POLL_INTERVAL_MS      deposit polling, default 1000
 *   PROVIDER_SIM_MINIMUM_COP           offramp minimum, default 4000
 *   PROVIDER_SIM_RETURN_POLICY         the crypto return policy served: refund_to_sender (default), static_address, none
 *   PROVIDER_SIM_PRIVATE_KEY_FILE      webhook signing key (PEM); created on first start, so the public key
 *                                      the service is configured with survives restarts
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { isAddress } from "viem"
import { parseDecimal } from "./amounts.ts"
import { startProviderSimulator } from "./server.ts"

const env = (...names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const value = process.env[name]
    if (value !== undefined && value !== "") return value
  }
  return undefined
}

const fail = (message: string): never => {
  process.stderr.write(`provider simulator: ${message}\n`)
  process.exit(2)
}

const integer = (name: string, fallback: number): number => {
  const raw = env(name)
  if (raw === undefined) return fallback
  const value = Number(raw)
  return Number.isInteger(value) && value >= 0 ? value : fail(`${name} must be a non-negative integer, got ${raw}`)
}

const decimal = (name: string): string | undefined => {
  const raw = env(name)
  return raw === undefined || parseDecimal(raw) !== undefined
    ? raw
    : fail(`${name} must be a plain decimal string, got ${raw}`)
}

const port = integer("PROVIDER_SIM_PORT", env("PORT") === undefined ? 4010 : integer("PORT", 4010))
const rpcUrl = env("PROVIDER_SIM_RPC_URL", "CHAIN_RPC_URL")
const tokenAddress = env("PROVIDER_SIM_TOKEN_ADDRESS", "TOKEN_ADDRESS")
if (tokenAddress !== undefined && !isAddress(tokenAddress, { strict: false })) {
  fail(`token address ${tokenAddress} is not an address`)
}
const webhookUrl = env("PROVIDER_SIM_WEBHOOK_URL")
if (webhookUrl !== undefined && !URL.canParse(webhookUrl)) fail(`PROVIDER_SIM_WEBHOOK_URL is not a URL: ${webhookUrl}`)
const keyFile = env("PROVIDER_SIM_PRIVATE_KEY_FILE")
const rates = Object.fromEntries(
  ([["midmarket_rate", "PROVIDER_SIM_MIDMARKET_RATE"], ["buy_rate", "PROVIDER_SIM_BUY_RATE"], [
    "sell_rate",
    "PROVIDER_SIM_SELL_RATE"
  ]] as const)
    .flatMap(([field, name]) => {
      const value = decimal(name)
      return value === undefined ? [] : [[field, value]]
    })
)
const decimalsRaw = env("PROVIDER_SIM_TOKEN_DECIMALS")
const returnPolicy = env("PROVIDER_SIM_RETURN_POLICY") ?? "refund_to_sender"
if (!["refund_to_sender", "static_address", "none"].includes(returnPolicy)) {
  fail(`PROVIDER_SIM_RETURN_POLICY must be refund_to_sender, static_address or none, got ${returnPolicy}`)
}
const minimumCop = decimal("PROVIDER_SIM_MINIMUM_COP")

const simulator = await startProviderSimulator({
  apiKey: env("PROVIDER_SIM_API_KEY") ?? "sk-test-simulator",
  port,
  webhookUrl: webhookUrl ?? null,
  ...(rpcUrl !== undefined && tokenAddress !== undefined
    ? { rpcUrl, tokenAddress: tokenAddress as `0x${string}` }
    : {}),
  ...(decimalsRaw === undefined ? {} : { tokenDecimals: integer("PROVIDER_SIM_TOKEN_DECIMALS", 6) }),
  rates,
  stepDelayMs: integer("PROVIDER_SIM_STEP_DELAY_MS", 1000),
  pollIntervalMs: integer("PROVIDER_SIM_POLL_INTERVAL_MS", 1000),
  ...(minimumCop === undefined ? {} : { minimumCop }),
  ...(keyFile !== undefined && existsSync(keyFile) ? { privateKeyPem: readFileSync(keyFile, "utf8") } : {}),
  returnPolicy: returnPolicy === "none" ? null : returnPolicy as "refund_to_sender" | "static_address",
  log: (line) => process.stdout.write(`${line}\n`)
}).catch((cause: unknown) => fail(`could not start: ${cause instanceof Error ? cause.message : String(cause)}`))

if (keyFile !== undefined && !existsSync(keyFile)) writeFileSync(keyFile, simulator.privateKeyPem, { mode: 0o600 })

process.stdout.write(
  [
    `provider simulator listening on ${simulator.url}`,
    `  Bridge API base: ${simulator.url}/v0 (Api-Key: ${simulator.apiKey})`,
    `  webhooks to: ${webhookUrl ?? "(none; POST /__sim/config {\"webhook_url\": ...})"}`,
    `  deposits: ${
      rpcUrl !== undefined && tokenAddress !== undefined
        ? `watching ${tokenAddress} on ${rpcUrl} (${simulator.tokenDecimals} decimals)`
        : "not watched onchain (POST /__sim/transfers/{id}/deposit)"
    }`,
    "webhook public key (PEM; also at GET /__sim/public-key):",
    simulator.publicKeyPem.trimEnd(),
    ""
  ].join("\n")
)

let stopping = false
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return
  stopping = true
  process.stdout.write(`provider simulator: ${signal}, stopping\n`)
  void simulator.close().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
