/**
 * `npm run -s live:pay -- <payoutId>`: what the end user's wallet does in `npm run live:local`, so its printed
 * partner flow runs without foundry's `cast`. It reads the payout from the running live:local service with the live
 * API key live:local printed, signs `transaction` and `feeTransaction` (and an approval first when the transaction
 * names an `approvalTarget`) with the funded test wallet's private key, sends them to anvil, waits until each is
 * mined, then confirms the payout with their hashes, printing each step.
 * It finds the service, the key, anvil and the wallet in the session file live:local writes while it runs
 * (LIVE_LOCAL_DATA_DIR/session.json, default .data/live). Exit code 2: a usage error, no running live:local, or a
 * payout it cannot pay; 1: a transaction or the confirm failed.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import { createPublicClient, createWalletClient, erc20Abi, type Hex, http, parseUnits } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { anvilChain } from "./localStack/anvil.ts"
import { LiveLocalSession, sessionFile } from "./localStack/session.ts"

const USAGE = `usage: npm run -s live:pay -- <payoutId>

Pays a payout of the running \`npm run live:local\` from its funded test wallet: reads the payout with the printed
live API key, signs and sends its transaction and feeTransaction on anvil (an approval first when the transaction
has an approvalTarget), then confirms the payout with their hashes. The payout's userAddress must be the test
wallet. live:local's session file: LIVE_LOCAL_DATA_DIR/session.json (default .data/live/session.json).`

const HexString = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]*$/))

const PreparedTx = Schema.Struct({
  approvalTarget: Schema.NullOr(HexString),
  to: HexString,
  data: HexString,
  value: Schema.String
})

/** The part of a Payout (the API's answer) the wallet needs. */
const PayoutToPay = Schema.Struct({
  payoutId: Schema.String,
  status: Schema.String,
  userAddress: Schema.String,
  fromToken: Schema.Literals(["USDC", "COPm"]),
  sourceAmount: Schema.String,
  transaction: PreparedTx,
  feeTransaction: PreparedTx
})

class Refusal extends Error {}

const say = (line: string) => process.stdout.write(`live:pay: ${line}\n`)

const readSession = (dataDir: string) => {
  const file = sessionFile(dataDir)
  if (!existsSync(file)) {
    throw new Refusal(`no running live:local (${file} is missing): start \`npm run live:local\` first`)
  }
  return Schema.decodeUnknownSync(Schema.fromJsonString(LiveLocalSession))(readFileSync(file, "utf8"))
}

const pay = async (payoutId: string, dataDir: string) => {
  const session = readSession(dataDir)
  const api = `${session.base}/api/integrations/breb/payouts/${encodeURIComponent(payoutId)}`
  const headers = { authorization: `Bearer ${session.apiKey}`, "content-type": "application/json" }

  const answer = await fetch(api, { headers }).catch(() => {
    throw new Refusal(`cannot reach live:local's service at ${session.base}: is \`npm run live:local\` still running?`)
  })
  if (!answer.ok) throw new Refusal(`GET payout ${payoutId}: ${answer.status} ${await answer.text()}`)
  const payout = Schema.decodeUnknownSync(PayoutToPay)(await answer.json())
  const account = privateKeyToAccount(session.wallet.privateKey as Hex)
  if (payout.userAddress.toLowerCase() !== account.address.toLowerCase()) {
    throw new Refusal(
      `payout ${payoutId} is for userAddress ${payout.userAddress}, not the test wallet ${account.address}`
    )
  }
  if (payout.status !== "awaiting_deposit") {
    throw new Refusal(`payout ${payoutId} is ${payout.status}, not awaiting_deposit`)
  }
  say(`payout ${payoutId}: ${payout.sourceAmount} ${payout.fromToken} from ${account.address}`)

  const chain = anvilChain(session.rpcUrl, session.chainId)
  const wallet = createWalletClient({ account, chain, transport: http(session.rpcUrl) })
  const chainReader = createPublicClient({ chain, transport: http(session.rpcUrl), cacheTime: 0 })
  const mined = async (what: string, hash: Hex) => {
    const receipt = await chainReader.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success") throw new Error(`${what} ${hash} reverted (block ${receipt.blockNumber})`)
    say(`${what} ${hash} mined in block ${receipt.blockNumber}`)
    return hash
  }
  const send = (what: string, prepared: typeof PreparedTx.Type) =>
    wallet.sendTransaction({ to: prepared.to as Hex, data: prepared.data as Hex, value: BigInt(prepared.value) })
      .then((hash) => mined(what, hash))

  const approvalTarget = payout.transaction.approvalTarget
  if (approvalTarget !== null) {
    const token = session.tokens[payout.fromToken] as Hex
    const decimals = await chainReader.readContract({ address: token, abi: erc20Abi, functionName: "decimals" })
    const amount = parseUnits(payout.sourceAmount, decimals)
    const hash = await wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: "approve",
      args: [approvalTarget as Hex, amount]
    })
    await mined(`approval of ${payout.sourceAmount} ${payout.fromToken} to ${approvalTarget}`, hash)
  }
  const txHash = await send("transaction (the deposit)", payout.transaction)
  const feeTxHash = await send("feeTransaction (the service fee)", payout.feeTransaction)

  const confirmed = await fetch(`${api}/confirm`, {
    method: "POST",
    headers,
    body: JSON.stringify({ txHash, feeTxHash })
  })
  const body = await confirmed.text()
  if (!confirmed.ok) throw new Error(`confirm: ${confirmed.status} ${body}`)
  const status = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Struct({ status: Schema.String })))(body).status
  say(`confirmed: payout ${payoutId} is ${status}; the provider completes it within a few seconds`)
}

const args = process.argv.slice(2)
const help = args.includes("--help") || args.includes("-h") || args[0] === "help"
const payoutId = args[0]
if (help) {
  process.stdout.write(`${USAGE}\n`)
} else if (args.length !== 1 || payoutId === undefined || payoutId.startsWith("-")) {
  process.stderr.write(`${USAGE}\n`)
  process.exitCode = 2
} else {
  const dataDir = process.env["LIVE_LOCAL_DATA_DIR"] || join(process.cwd(), ".data", "live")
  await pay(payoutId, dataDir).catch((error: unknown) => {
    process.stderr.write(`live:pay: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = error instanceof Refusal ? 2 : 1
  })
}
