import { createPublicKey } from "node:crypto"
import { type Config, Option, Redacted } from "effect"
import { configError } from "../base/StartupFailure.ts"
import { type AppConfigShape, PLACEHOLDER_FEE_WALLET } from "./Config.ts"

const isPublicKeyPem = (pem: string) => {
  try {
    return createPublicKey(pem).asymmetricKeyType === "rsa"
  } catch {
    return false
  }
}

/** Every setting live mode needs that is missing or unusable, each with what it is for. */
export const liveConfigProblems = (config: AppConfigShape): ReadonlyArray<string> => [
  ...(Option.isNone(config.providerApiKey) ? ["PROVIDER_API_KEY is missing (the payout provider's API key)"] : []),
  ...(Option.isNone(config.chainRpcUrl) ? ["CHAIN_RPC_URL is missing (a JSON-RPC node of the deposit chain)"] : []),
  ...Option.match(config.providerWebhookPublicKey, {
    onNone: () => ["PROVIDER_WEBHOOK_PUBLIC_KEY is missing (the provider's PEM public key that signs its webhooks)"],
    onSome: (pem) =>
      isPublicKeyPem(Redacted.value(pem)) ? [] : ["PROVIDER_WEBHOOK_PUBLIC_KEY is not an RSA public key in PEM"]
  }),
  ...(Option.isNone(config.chainId)
    ? ["CHAIN_ID is missing (the chain's id: the node is checked against it, and swap routes are asked for it)"]
    : []),
  ...(Option.isNone(config.emailApiKey)
    ? ["EMAIL_API_KEY is missing (live OTP codes reach users only by e-mail)"]
    : []),
  ...(Option.isNone(config.swapApiKey)
    ? ["SWAP_API_KEY is missing (the swap aggregator's API key, for the Swaps group)"]
    : []),
  ...(config.feeWalletAddress.toLowerCase() === PLACEHOLDER_FEE_WALLET
    ? ["FEE_WALLET_ADDRESS is the sandbox placeholder (set the wallet that receives the 1% service fee)"]
    : [])
]

/** One configuration error naming every problem, or none. */
export const liveConfigError = (config: AppConfigShape): Option.Option<Config.ConfigError> => {
  const problems = liveConfigProblems(config)
  return problems.length === 0
    ? Option.none()
    : Option.some(configError(["APP_MODE"], `live mode cannot start: ${problems.join("; ")}`))
}
