/**
 * A failure's reproduction includes the setup requests the failing one depends on (the KYC OTP send and verify of
 * its user, the payouts it names, the confirmation that claimed a txHash, the first request under an
 * Idempotency-Key). Pasted into bash against a fresh deployment with the same break, it shows the failure again;
 * against a fresh deployment without the break, it shows the right answer. Without its setup, the failing request
 * alone would meet needs_kyc or a 404 there.
 */
import { execFile } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { runConformance } from "../src/index.ts"
import { brokenVariants } from "./support/brokenVariants.ts"
import { type Proxy, startProxy } from "./support/proxy.ts"

/** The run's deployment, then two fresh ones the reproductions are pasted against. */
let server: TestServer
let fresh: TestServer
let freshBehindBreak: TestServer
const proxies: Array<Proxy> = []

beforeAll(async () => {
  ;[server, fresh, freshBehindBreak] = await Promise.all([startTestServer(), startTestServer(), startTestServer()])
}, 120_000)
afterAll(async () => {
  for (const proxy of proxies) await proxy.close()
  await Promise.all([server?.close(), fresh?.close(), freshBehindBreak?.close()])
})

const variant = (name: string) => {
  const found = brokenVariants.find((candidate) => candidate.name === name)
  if (found === undefined) throw new Error(`no broken variant "${name}"`)
  return found
}

const proxyFor = async (target: TestServer, name: string) => {
  const proxy = await startProxy(target.baseUrl, variant(name).interceptor())
  proxies.push(proxy)
  return proxy
}

/** The failure of `id` when the kit runs it against the real service behind the break `name`. */
const failureOf = async (name: string, id: string) => {
  const proxy = await proxyFor(server, name)
  const { apiKey } = await server.newIntegration()
  const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey, grep: [id], seed: 11 })
  const result = report.scenarios.find((candidate) => candidate.id === id)
  expect(result?.status).toBe("failed")
  return { failure: result!.failure!, runUrl: proxy.baseUrl, apiKey }
}

/** Runs a reproduction in bash, as pasted, against `baseUrl` instead of the run's, with a key of that deployment. */
const paste = (script: string, runUrl: string, baseUrl: string, apiKey: string) =>
  new Promise<{ readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    execFile("bash", ["-c", script.replaceAll(runUrl, baseUrl)], {
      env: { ...process.env, CONFORMANCE_API_KEY: apiKey },
      maxBuffer: 1 << 20
    }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${error.message}\n${stdout}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })

/** The setup lines the script printed ("setup 1: debugCode 123456", "setup 2: 200"), and the final answer. */
const outcome = (stdout: string) => {
  const setup = stdout.split("\n").filter((line) => line.startsWith("setup "))
  const final = stdout.slice(stdout.indexOf("HTTP/1.1 "))
  return { setup, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(final)?.[1]), final: final.toLowerCase() }
}

const expectSetupSucceeded = (setup: ReadonlyArray<string>, count: number) => {
  expect(setup).toHaveLength(count)
  for (const line of setup) {
    expect(line).toMatch(/^setup \d+: (2\d\d|(debugCode|payoutId|intentId|quoteId|id) (?!undefined)\S+)$/)
  }
}

describe("the reproduction of a failure", () => {
  it(
    "a reused txHash accepted (PAYOUT-CONFIRM-003): KYC, both payouts and the first confirmation come before the failing confirmation",
    async () => {
      const name = "accepts a txHash that already confirms another payout"
      const { apiKey, failure, runUrl } = await failureOf(name, "PAYOUT-CONFIRM-003")
      const script = failure.reproduce ?? ""
      expect(script).toMatch(
        /kyc\/otp\/send[\s\S]*kyc\/otp\/verify[\s\S]*"code":"'"\$debugCode_\d+"'"[\s\S]*payoutId_\d+=\$\(curl -sS -X POST '[^']*\/payouts'[\s\S]*\/confirm'[\s\S]*# the request that shows the failure\ncurl -sS -i -X POST '[^']*\/payouts\/'"\$payoutId_\d+"'\/confirm'/
      )
      expect(script).not.toContain(apiKey)
      // the failing request alone, as before: against a fresh deployment its payout does not exist
      expect(failure.curl).toMatch(/^curl -sS -i -X POST '[^']*\/payouts\/po_[^/']+\/confirm'/)

      const setupSteps = script.split("\n").filter((line) => line.startsWith("# setup ")).length
      expect(setupSteps).toBeGreaterThanOrEqual(5)
      const broken = await proxyFor(freshBehindBreak, name)
      const again = outcome(
        (await paste(script, runUrl, broken.baseUrl, (await freshBehindBreak.newIntegration()).apiKey)).stdout
      )
      expectSetupSucceeded(again.setup, setupSteps)
      expect(again.status).toBe(200)

      const right = outcome((await paste(script, runUrl, fresh.baseUrl, (await fresh.newIntegration()).apiKey)).stdout)
      expectSetupSucceeded(right.setup, setupSteps)
      expect(right.status).toBe(409)
      expect(right.final).toContain("tx_hash_reused")
    },
    120_000
  )

  it(
    "a txHash reused in another letter case (PAYOUT-CONFIRM-004): the confirmation that claimed it, in any case, comes first",
    async () => {
      const name = "compares txHashes case-sensitively"
      const { failure, runUrl } = await failureOf(name, "PAYOUT-CONFIRM-004")
      const script = failure.reproduce ?? ""
      const [, setup = "", last = ""] = /^([\s\S]*)# the request that shows the failure\n([\s\S]*)$/.exec(script) ?? []
      const failing = /\/payouts\/'"\$(payoutId_\d+)"'\/confirm'/.exec(last)?.[1]
      const confirmedFirst = [...setup.matchAll(/\/payouts\/'"\$(payoutId_\d+)"'\/confirm'/g)].map((match) => match[1])
      expect(confirmedFirst).toHaveLength(1)
      expect(confirmedFirst[0]).not.toBe(failing)

      const setupSteps = script.split("\n").filter((line) => line.startsWith("# setup ")).length
      const broken = await proxyFor(freshBehindBreak, name)
      const again = outcome(
        (await paste(script, runUrl, broken.baseUrl, (await freshBehindBreak.newIntegration()).apiKey)).stdout
      )
      expectSetupSucceeded(again.setup, setupSteps)
      expect(again.status).toBe(200)
      const right = outcome((await paste(script, runUrl, fresh.baseUrl, (await fresh.newIntegration()).apiKey)).stdout)
      expect(right.status).toBe(409)
    },
    120_000
  )

  it(
    "a replay of another payout (IDEM-001): KYC and the first request under the same Idempotency-Key come first",
    async () => {
      const name = "replays a different payout for a reused Idempotency-Key"
      const { failure, runUrl } = await failureOf(name, "IDEM-001")
      const script = failure.reproduce ?? ""
      const key = /-H 'Idempotency-Key: ([^']+)'/.exec(failure.curl ?? "")?.[1]
      expect(key).toBeDefined()
      const sent = script.split("\n").filter((line) => line.includes(`-H 'Idempotency-Key: ${key}'`))
      expect(sent).toHaveLength(2)
      expect(script).toMatch(
        /kyc\/otp\/send[\s\S]*kyc\/otp\/verify[\s\S]*Idempotency-Key[\s\S]*# the request that shows the failure\n[^#]*Idempotency-Key/
      )

      const setupSteps = script.split("\n").filter((line) => line.startsWith("# setup ")).length
      const broken = await proxyFor(freshBehindBreak, name)
      const again = outcome(
        (await paste(script, runUrl, broken.baseUrl, (await freshBehindBreak.newIntegration()).apiKey)).stdout
      )
      expectSetupSucceeded(again.setup, setupSteps)
      expect(again.status).toBe(201)
      expect(again.final).not.toContain("idempotent-replayed: true")

      const right = outcome((await paste(script, runUrl, fresh.baseUrl, (await fresh.newIntegration()).apiKey)).stdout)
      expectSetupSucceeded(right.setup, setupSteps)
      expect(right.status).toBe(201)
      expect(right.final).toContain("idempotent-replayed: true")
    },
    120_000
  )

  it("a request that depends on nothing has no setup: its curl is the reproduction", async () => {
    const { failure } = await failureOf("answers 404 for the quote route", "QUOTE-002")
    expect(failure.reproduce).toBeUndefined()
    expect(failure.curl).toMatch(/^curl -sS -i -X GET '[^']*\/breb\/quote/)
  }, 60_000)
})
