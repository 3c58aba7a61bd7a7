/**
 * `npm run live:local`: the service in LIVE mode against a local stack, every part its own process on loopback:
 *   anvil (a real EVM node) with a 6-decimal test USDC deployed, the provider simulator (Bridge's API, signed
 *   webhooks, deposits watched on anvil), the e-mail capture server (Resend's API), a 0x-style swap aggregator over
 *   a test router with COPm/USDC liquidity, and the service.
 * Prints the live API key (before the service answers), a funded test wallet and the steps of the partner flow, and
 * writes LIVE_LOCAL_DATA_DIR/session.json for `npm run -s live:pay -- <payoutId>` (the test wallet pays a payout);
 * Ctrl-C stops everything, the embedded PostgreSQL included.
 * Environment (all optional): PORT (the service's, default 8788; 0 = any free port; LIVE_LOCAL_PORT is its older
 * name), DATABASE_URL (else an embedded PostgreSQL in LIVE_LOCAL_DATA_DIR/postgres, started and stopped here),
 * LIVE_LOCAL_DATA_DIR (default .data/live), LIVE_LOCAL_STEP_DELAY_MS (the provider's pace, default 1000),
 * MARKET_SESSION and MARKET_HOLIDAYS (default: always open), LOG_LEVEL (the service's).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Option, Redacted, References } from "effect"
import { erc20Abi, formatUnits, parseEther, parseUnits } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { ApiKeyRepo } from "../src/auth/ApiKeyRepo.ts"
import { makeSqlLayer } from "../src/db/Database.ts"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../src/db/EmbeddedPostgres.ts"
import { MigrationsLive } from "../src/db/Migrations.ts"
import { IntegrationRepo } from "../src/auth/IntegrationRepo.ts"
import { issueKeyFor } from "./issueKey.ts"
import { startAggregator } from "./localStack/aggregator.ts"
import { startAnvil, testUsdArtifact } from "./localStack/anvil.ts"
import { removeSession, writeSession } from "./localStack/session.ts"
import { deploySwapFixtures } from "./localStack/swapFixtures.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const dataDir = process.env["LIVE_LOCAL_DATA_DIR"] || `${root}.data/live`
const children: Array<ChildProcess> = []
const DECIMALS = 6

const say = (line: string) => process.stdout.write(`${line}\n`)

/** Starts `script` with node + tsx; resolves with the first match of `ready` in its output. */
const startNode = (name: string, script: string, env: Record<string, string>, ready: RegExp, timeoutMs = 60_000) =>
  new Promise<{ readonly child: ChildProcess; readonly match: RegExpExecArray; readonly output: () => string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, env: { ...process.env, ...env } })
      children.push(child)
      let output = ""
      const timer = setTimeout(
        () => reject(new Error(`${name} did not start within ${timeoutMs} ms:\n${output}`)),
        timeoutMs
      )
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        const match = ready.exec(output)
        if (match !== null) {
          clearTimeout(timer)
          resolve({
            child,
            match,
            output: () => output
          })
        }
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      child.once("exit", (code) => {
        clearTimeout(timer)
        reject(new Error(`${name} exited with ${code}:\n${output}`))
      })
    }
  )

/**
 * Migrates the database and issues a live key for the integration "local-partner" (created when missing), here in
 * this process: the key is known before the service starts.
 */
const issueLiveKey = (databaseUrl: string) => {
  const sql = makeSqlLayer({ url: Option.some(Redacted.make(databaseUrl)), embeddedDataDir: "unused" })
  const repositories = Layer.mergeAll(ApiKeyRepo.Default, IntegrationRepo.Default).pipe(
    Layer.provideMerge(Layer.merge(sql, MigrationsLive.pipe(Layer.provide(sql))))
  )
  return Effect.runPromise(
    Effect.gen(function*() {
      const created = yield* issueKeyFor({ name: "local-partner", kind: "live", expiresAt: null, create: true })
      return Option.getOrThrow(created).issued.key
    }).pipe(Effect.provide(repositories), Effect.provideService(References.MinimumLogLevel, "Warn"))
  )
}

let stopping = false
/** Once: a terminal's Ctrl-C arrives here (and at every child) more than once; later signals change nothing. */
const stopAll = async (code: number) => {
  if (stopping) return
  stopping = true
  say("live:local: stopping")
  removeSession(dataDir)
  // The service first (it drains), then what it talks to, then the database.
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))])
  }
  await anvil?.close()
  await database?.stop().catch((error: unknown) =>
    process.stderr.write(`live:local: stopping PostgreSQL: ${String(error)}\n`)
  )
  process.exit(code)
}
process.on("SIGINT", () => void stopAll(0))
process.on("SIGTERM", () => void stopAll(0))

let anvil: Awaited<ReturnType<typeof startAnvil>> | undefined
let database: EmbeddedPostgres | undefined

const main = async () => {
  mkdirSync(dataDir, { recursive: true })
  const servicePort = process.env["PORT"] || process.env["LIVE_LOCAL_PORT"] || "8788"
  const databaseUrl = process.env["DATABASE_URL"] || (database = await startEmbeddedPostgres(`${dataDir}/postgres`)).url
  const apiKey = await issueLiveKey(databaseUrl)
  say(`live API key   ${apiKey}   (integration "local-partner"; the service starts next)`)

  anvil = await startAnvil()
  const token = await anvil.deploy(testUsdArtifact())
  const swaps = await deploySwapFixtures(anvil, token)
  const copToken = swaps.copm
  const aggregator = await startAggregator({ rpcUrl: anvil.rpcUrl, router: swaps.router, chainId: 31337 })
  say(`anvil: ${anvil.rpcUrl} (chain 31337), test USDC ${token}, test COPm ${copToken}, router ${swaps.router}`)
  say(`swap aggregator (0x v2 subset): ${aggregator.url}`)

  const simulator = await startNode("provider simulator", "scripts/simulators/provider/main.ts", {
    PROVIDER_SIM_PORT: "0",
    PROVIDER_SIM_API_KEY: `sk-local-${generatePrivateKey().slice(2, 26)}`,
    PROVIDER_SIM_RPC_URL: anvil.rpcUrl,
    PROVIDER_SIM_TOKEN_ADDRESS: token,
    PROVIDER_SIM_TOKEN_DECIMALS: String(DECIMALS),
    PROVIDER_SIM_STEP_DELAY_MS: process.env["LIVE_LOCAL_STEP_DELAY_MS"] ?? "1000",
    PROVIDER_SIM_POLL_INTERVAL_MS: "500",
    PROVIDER_SIM_PRIVATE_KEY_FILE: `${dataDir}/provider-webhook-key.pem`
  }, /-----END PUBLIC KEY-----/)
  const simUrl = /listening on (http:\/\/\S+)/.exec(simulator.output())?.[1] ?? ""
  const simApiKey = /Api-Key: (\S+)\)/.exec(simulator.output())?.[1] ?? ""
  const publicKeyPem = /(-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----)/.exec(simulator.output())?.[1] ??
    ""
  say(`provider simulator: ${simUrl}`)

  const mail = await startNode(
    "e-mail capture",
    "scripts/simulators/email/main.ts",
    { EMAIL_CAPTURE_PORT: "0" },
    /EMAIL_API_KEY=(\S+)/
  )
  const mailUrl = /EMAIL_API_URL=(\S+)/.exec(mail.output())?.[1] ?? ""
  const mailKey = mail.match[1] ?? ""
  say(`e-mail capture: ${mailUrl}`)

  const feeWalletKey = generatePrivateKey()
  const serviceEnv: Record<string, string> = {
    APP_MODE: "live",
    PORT: servicePort,
    DATABASE_URL: databaseUrl,
    PROVIDER_API_URL: `${simUrl}/v0`,
    PROVIDER_API_KEY: simApiKey,
    PROVIDER_WEBHOOK_PUBLIC_KEY: publicKeyPem,
    CHAIN_RPC_URL: anvil.rpcUrl,
    CHAIN_ID: "31337",
    TOKEN_ADDRESS: token,
    TOKEN_DECIMALS: String(DECIMALS),
    COP_TOKEN_ADDRESS: copToken,
    COP_TOKEN_DECIMALS: "18",
    FEE_WALLET_ADDRESS: privateKeyToAddress(feeWalletKey),
    EMAIL_API_URL: mailUrl,
    EMAIL_API_KEY: mailKey,
    SWAP_API_URL: aggregator.url,
    SWAP_API_KEY: aggregator.apiKey,
    // A local stack is for trying things at any hour: the market session is always open here.
    MARKET_SESSION: process.env["MARKET_SESSION"] ?? "Mon-Sun 00:00-24:00",
    MARKET_HOLIDAYS: process.env["MARKET_HOLIDAYS"] ?? "none"
  }
  const service = await startNode("service", "src/main.ts", serviceEnv, /listening on (http:\/\/\S+)/)
  const base = service.match[1] ?? ""
  service.child.stdout?.pipe(process.stdout)
  service.child.stderr?.pipe(process.stderr)
  await fetch(`${simUrl}/__sim/config`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ webhook_url: `${base}/api/integrations/webhooks/provider` })
  })

  const userKey = generatePrivateKey()
  const user = privateKeyToAddress(userKey)
  await anvil.client.setBalance({ address: user, value: parseEther("10") })
  await anvil.mintTestUsd(token, user, parseUnits("1000", DECIMALS))
  await swaps.mintCopm(user, parseUnits("4000000", 18))
  const balance = await anvil.client.readContract({
    address: token,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [user]
  })

  writeSession(dataDir, {
    base,
    apiKey,
    rpcUrl: anvil.rpcUrl,
    chainId: 31337,
    wallet: { address: user, privateKey: userKey },
    tokens: { USDC: token, COPm: copToken }
  })
  // live:pay finds the session in the default data directory; another one must be named on its command line
  const livePay = process.env["LIVE_LOCAL_DATA_DIR"]
    ? `LIVE_LOCAL_DATA_DIR=${dataDir} npm run -s live:pay`
    : "npm run -s live:pay"
  const json = `-H "authorization: Bearer $KEY" -H 'content-type: application/json'`

  say([
    "",
    "live:local is up (APP_MODE=live; every part on 127.0.0.1):",
    `  service        ${base}   docs: ${base}/docs`,
    `  live API key   ${apiKey}`,
    `  anvil          ${anvil.rpcUrl}   test USDC ${token}`,
    `  test wallet    ${user}   private key ${userKey}   (${
      formatUnits(balance, DECIMALS)
    } USDC, 4000000 COPm, 10 ETH)`,
    `  provider sim   ${simUrl}   (control: ${simUrl}/__sim/...)`,
    `  e-mails        ${mailUrl}/__mail/messages`,
    "",
    `The partner flow, in another terminal in ${root.replace(/\/$/, "")}:`,
    `  export BASE=${base} KEY=${apiKey} USER_ADDRESS=${user}`,
    `  curl -s -X POST $BASE/api/integrations/breb/kyc/otp/send ${json} -d '{"email":"ana@example.com","userAddress":"'$USER_ADDRESS'"}'`,
    `  curl -s '${mailUrl}/__mail/messages/latest?to=ana@example.com'          # the code is in the e-mail`,
    `  curl -s -X POST $BASE/api/integrations/breb/kyc/otp/verify ${json} -d '{"userAddress":"'$USER_ADDRESS'","code":"<code>"}'`,
    "  # approve KYC as the provider would (its signed webhook reaches the service):",
    `  curl -s ${simUrl}/v0/kyc_links/<link id: the end of kycUrl> -H 'api-key: ${simApiKey}'          # its customer_id`,
    `  curl -s -X POST ${simUrl}/__sim/customers/<customer_id>/approve`,
    `  curl -s -X POST $BASE/api/integrations/breb/payouts ${json} -d '{"userAddress":"'$USER_ADDRESS'","destinationCop":"250000","breBKey":"@camila2024","accountOwnerName":"Camila Rojas"}'`,
    "  # the test wallet signs and sends the payout's transaction and feeTransaction on anvil, then confirms with their hashes:",
    `  ${livePay} -- <payoutId>`,
    `  curl -s $BASE/api/integrations/breb/payouts/<payoutId> -H "authorization: Bearer $KEY"          # processing, then completed`,
    "",
    `Conformance: npx integrations-conformance --base-url ${base} --api-key ${apiKey} --mode live --allow-live`,
    "Ctrl-C stops everything.",
    ""
  ].join("\n"))
}

main().catch((error: unknown) => {
  process.stderr.write(`live:local: ${error instanceof Error ? error.message : String(error)}\n`)
  void stopAll(1)
})
