/** The service as `npm start` runs it (`node scripts/start.mjs`: the bundle), started and stopped by the bench. */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"

export const root = fileURLToPath(new URL("../..", import.meta.url))
export const API = "/api/integrations/breb"

export interface Service {
  readonly child: ChildProcess
  readonly pid: number
  readonly baseUrl: string
  readonly key: string
  readonly startupMs: number
  readonly auth: Record<string, string>
  /** Everything the process has written to stdout and stderr so far (why it exited, when it did). */
  readonly output: () => string
}

/**
 * `npm start`'s command in package.json: `[NAME=value …] exec node <args>`, split into the environment it sets and
 * node's arguments, so the bench runs what partners run.
 */
const npmStart = (tree: string) => {
  const start =
    (JSON.parse(readFileSync(`${tree}/package.json`, "utf8")) as { scripts: { start: string } }).scripts.start
  const parsed = /^((?:[A-Z_][A-Z0-9_]*=\S* )*)exec node (.+)$/.exec(start)
  if (parsed === null) throw new Error(`package.json's start script is not "[NAME=value …] exec node ...": ${start}`)
  const env = Object.fromEntries(
    (parsed[1] ?? "").split(" ").filter(Boolean).map((
      word
    ) => [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)])
  )
  return { env, args: (parsed[2] ?? "").split(" ") }
}

/** The node arguments of `npm start`. */
export const npmStartArgs = (tree = root): Array<string> => npmStart(tree).args

/** The environment `npm start` sets for node (MALLOC_ARENA_MAX …). */
export const npmStartEnv = (tree = root): Record<string, string> => npmStart(tree).env

/** Where a service runs from: a checkout (the working tree, or another ref's worktree) and the node binary it runs on. */
export interface Tree {
  readonly dir: string
  readonly node: string
}

/**
 * `needsKey`: the start must print a test key (it does on a database without integrations). `nodeArgs`: what node
 * runs, by default what `npm start` runs; the environment `npm start` sets is set either way (`env` can override it).
 */
export const startService = async (
  env: Record<string, string>,
  needsKey = true,
  nodeArgs = npmStartArgs(),
  tree: Tree = { dir: root, node: process.execPath }
): Promise<Service> => {
  const started = performance.now()
  // The default log level: the access log is part of the cost.
  const child = spawn(tree.node, nodeArgs, {
    cwd: tree.dir,
    env: {
      ...process.env,
      ...npmStartEnv(tree.dir),
      PORT: "0",
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
      PREVIEW_RATE_LIMIT_PER_MINUTE: "10000000",
      ...env
    }
  })
  let out = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()))
  const deadline = Date.now() + 60_000
  let baseUrl: string | undefined
  while (Date.now() < deadline && child.exitCode === null) {
    baseUrl ??= /listening on (http:\/\/\S+)/.exec(out)?.[1]
    if (baseUrl !== undefined) {
      const ok = await fetch(`${baseUrl}/healthz`).then((r) => r.status === 200, () => false)
      if (ok) break
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const startupMs = performance.now() - started
  const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(out)?.[1] ?? ""
  if (baseUrl === undefined || (needsKey && key === "")) throw new Error(`service did not start:\n${out}`)
  return {
    child,
    pid: child.pid ?? 0,
    baseUrl,
    key,
    startupMs,
    auth: { authorization: `Bearer ${key}` },
    output: () => out
  }
}

export const stopService = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, "exit")
  child.kill("SIGTERM")
  await exited
}

export const json = { "content-type": "application/json" }

/** A fresh wallet address with approved KYC (OTP send + verify; mock mode returns the code). */
export const approvedCustomer = async (service: Service): Promise<string> => {
  const userAddress = privateKeyToAddress(generatePrivateKey())
  const api = `${service.baseUrl}${API}`
  const sent = await fetch(`${api}/kyc/otp/send`, {
    method: "POST",
    headers: { ...service.auth, ...json },
    body: JSON.stringify({ email: "bench@example.com", userAddress })
  }).then((r) => r.json() as Promise<{ debugCode: string }>)
  const verified = await fetch(`${api}/kyc/otp/verify`, {
    method: "POST",
    headers: { ...service.auth, ...json },
    body: JSON.stringify({ userAddress, code: sent.debugCode })
  })
  if (verified.status !== 200) throw new Error(`KYC verify answered ${verified.status}: ${await verified.text()}`)
  return userAddress
}

export const payoutBody = (userAddress: string) =>
  JSON.stringify({ userAddress, destinationCop: "250000", breBKey: "@bench", accountOwnerName: "Bench" })

const RUN = randomBytes(24).toString("hex")
/** A transaction hash no earlier run used (the service refuses a reused one). */
export const txHash = (i: number) => `0x${RUN}${i.toString(16).padStart(16, "0")}`
