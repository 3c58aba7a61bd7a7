/**
 * A local EVM node for `npm run live:local` and the chain tests: anvil from the registry
 * (`@foundry-rs/anvil-linux-amd64`, an optional dependency that ships the binary), or the binary named by ANVIL_BIN
 * on other platforms. One node per call, on a free loopback port. A missing binary is an error, never a skipped test.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  type Abi,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  publicActions,
  walletActions
} from "viem"
import { privateKeyToAccount } from "viem/accounts"

const STARTUP_DEADLINE_MS = 20_000

/** Anvil's first dev account (well known, funded at genesis), used to deploy and set up contracts. */
const DEV_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

export const anvilBinary = (): string => {
  const fromEnv = process.env["ANVIL_BIN"]
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  try {
    const manifest = createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json")
    const binary = join(dirname(manifest), "bin", "anvil")
    if (existsSync(binary)) return binary
  } catch {
    // not installed: this platform is not linux x64, or optional dependencies were omitted
  }
  throw new Error(
    "anvil not found: the chain tests need a local EVM node. `npm ci` installs @foundry-rs/anvil-linux-amd64 on " +
      "linux x64 (do not pass --omit=optional); elsewhere install foundry and set ANVIL_BIN to the anvil binary"
  )
}

const waitForListening = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let output = ""
    const fail = (reason: string) => {
      clearTimeout(deadline)
      child.kill("SIGKILL")
      reject(new Error(`anvil did not start: ${reason}\n${output}`))
    }
    const deadline = setTimeout(() => fail(`no "Listening on" within ${STARTUP_DEADLINE_MS} ms`), STARTUP_DEADLINE_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Listening on (\S+)/.exec(output)
      if (match?.[1] !== undefined) {
        clearTimeout(deadline)
        child.stdout?.off("data", onData)
        child.stdout?.resume()
        resolve(`http://${match[1]}`)
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
    child.once("error", (error) => fail(error.message))
    child.once("exit", (code, signal) => fail(`exited with ${code ?? signal}`))
  })

/** viem's chain for the anvil node at `rpcUrl`, answering as chain `id`. */
export const anvilChain = (rpcUrl: string, id: number) =>
  defineChain({
    id,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } }
  })

export const startAnvil = async () => {
  const child = spawn(anvilBinary(), ["--host", "127.0.0.1", "--port", "0", "--chain-id", "31337"], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  const rpcUrl = await waitForListening(child)
  child.removeAllListeners("exit")
  const chain = anvilChain(rpcUrl, 31337)
  // cacheTime 0: every read goes to the node, never to viem's cache of an earlier block
  const client = createTestClient({ chain, mode: "anvil", transport: http(rpcUrl), cacheTime: 0 })
    .extend(publicActions)
    .extend(walletActions)
  const walletOf = (privateKey: Hex) =>
    createWalletClient({ account: privateKeyToAccount(privateKey), chain, transport: http(rpcUrl), cacheTime: 0 })
  const dev = walletOf(DEV_KEY)

  return {
    rpcUrl,
    client,
    walletOf,
    /** Anvil's first dev account, funded with ETH. */
    dev,
    /** Deploys a contract (with its constructor's `args`) from the dev account; its address once mined. */
    deploy: async (artifact: Compiled, args: ReadonlyArray<unknown> = []): Promise<`0x${string}`> => {
      const hash = await dev.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args })
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deployment failed: ${hash}`)
      return getAddress(receipt.contractAddress)
    },
    /** Mints `units` of a deployed TestUsd to `to` and waits until it is mined. */
    mintTestUsd: async (token: `0x${string}`, to: `0x${string}`, units: bigint): Promise<void> => {
      const hash = await dev.writeContract({
        address: token,
        abi: testUsdArtifact().abi,
        functionName: "mint",
        args: [to, units]
      })
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== "success") throw new Error(`mint failed: ${hash}`)
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
  }
}

export type Anvil = Awaited<ReturnType<typeof startAnvil>>

/** A contract as the committed artifacts of test/chain hold it. */
export interface Compiled {
  readonly abi: Abi
  readonly bytecode: Hex
}

const artifacts = new Map<string, unknown>()

/**
 * test/chain/<file>, read once. The artifacts are ours, written by scripts/solc.ts from the pinned solc (a test checks
 * that each is current): their shape is known.
 */
export const committedArtifact = <A>(file: string): A => {
  if (!artifacts.has(file)) {
    const path = fileURLToPath(new URL(`../../test/chain/${file}`, import.meta.url))
    artifacts.set(file, JSON.parse(readFileSync(path, "utf8")))
  }
  return artifacts.get(file) as A
}

/** The test token (test/chain/TestUsd.sol), compiled by scripts/test-token.ts. */
export const testUsdArtifact = (): Compiled => committedArtifact<Compiled>("TestUsd.artifact.json")
