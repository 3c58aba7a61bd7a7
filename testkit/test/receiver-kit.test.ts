/**
 * The receiver kit against receivers on 127.0.0.1: a correct one (verifies with the `standardwebhooks` package,
 * dedupes on webhook-id, ignores events older than what it applied, exposes the state probe) passes every scenario;
 * each broken variant fails exactly the scenario that names its fault. Then the CLI once, as a child process.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Webhook } from "standardwebhooks"
import { afterAll, describe, expect, it } from "vitest"
import { RECEIVER_SCENARIOS, runReceiverConformance } from "../src/receiverKit.ts"
import { toJUnit } from "../src/report/junit.ts"
import { describeReceiverConformance } from "../src/vitest.ts"
import { newV1aSigningKey, v1aPublicKey } from "../src/webhookSignature.ts"
import { verifyWebhook } from "../../sdk/src/index.ts"

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const OLD_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"

type Fault = "none" | "noSignatureCheck" | "noDedupe" | "appliesOutOfOrder" | "errorOnDuplicate"

interface PayoutState {
  status: string
  createdAt: string
  applied: number
}

const body = async (request: AsyncIterable<Buffer>) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk)
  return Buffer.concat(chunks).toString("utf8")
}

type Verify = (text: string, headers: IncomingMessage["headers"]) => Promise<unknown>

/** Verifies v1 with the `standardwebhooks` package, as the README's receiver does. */
const v1 = (secret: string): Verify => {
  const webhook = new Webhook(secret)
  return async (text, headers) => webhook.verify(text, headers as Record<string, string>)
}

/** Verifies v1a with the SDK's verifyWebhook and the public key(s) given. */
const v1a = (...publicKeys: ReadonlyArray<string>): Verify => (text, headers) =>
  verifyWebhook(text, headers, publicKeys)

/** A receiver as the README teaches it, with one fault planted (or none). */
const startReceiver = async (fault: Fault, verify: Verify = v1(SECRET)) => {
  const seen = new Set<string>()
  const payouts = new Map<string, PayoutState>()
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://receiver")
    if (request.method === "GET" && url.pathname === "/state") {
      const state = payouts.get(url.searchParams.get("payoutId") ?? "")
      if (state === undefined) return response.writeHead(404).end()
      return response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ status: state.status, applied: state.applied })
      )
    }
    const text = await body(request)
    let event: { id: string; type: string; createdAt: string; data: { object: Record<string, unknown> } }
    try {
      event = fault === "noSignatureCheck"
        ? JSON.parse(text)
        : await verify(text, request.headers) as typeof event
    } catch {
      return response.writeHead(400).end()
    }
    if (seen.has(event.id) && fault !== "noDedupe") {
      return response.writeHead(fault === "errorOnDuplicate" ? 500 : 204).end()
    }
    seen.add(event.id)
    const payoutId = event.data.object["payoutId"]
    if (typeof payoutId === "string") {
      const state = payouts.get(payoutId)
      // only a strictly older event is ignored: a duplicate gets through unless deduped
      const newer = state === undefined || fault === "appliesOutOfOrder" || event.createdAt >= state.createdAt
      if (newer) {
        payouts.set(payoutId, {
          status: String(event.data.object["status"]),
          createdAt: event.createdAt,
          applied: (state?.applied ?? 0) + 1
        })
      }
    }
    response.writeHead(204).end()
  }
  const server: Server = createServer((request, response) => void handle(request, response))
  server.listen(0, "127.0.0.1")
  await new Promise((resolve) => server.once("listening", resolve))
  servers.push(server)
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/hooks`, stateUrl: `http://127.0.0.1:${port}/state` }
}

const servers: Array<Server> = []
afterAll(() => {
  for (const server of servers) server.close()
})

const failingIds = async (fault: Fault) => {
  const receiver = await startReceiver(fault)
  const report = await runReceiverConformance({ ...receiver, secret: SECRET, oldSecret: OLD_SECRET })
  return { report, failing: report.scenarios.filter((result) => result.status !== "passed").map((result) => result.id) }
}

describe("the receiver kit", () => {
  it("passes a correct receiver: every scenario, with the state probe", async () => {
    const started = performance.now()
    const { report, failing } = await failingIds("none")
    expect(failing).toEqual([])
    expect(report.verdict).toBe("conformant")
    expect(report.scenarios.map((result) => result.id)).toEqual(RECEIVER_SCENARIOS.map((scenario) => scenario.id))
    expect(report.scenarios[0]?.details["eventTypes"]).toContain("endpoint.ping")
    console.info(`receiver kit: ${report.scenarios.length} scenarios in ${Math.round(performance.now() - started)} ms`)
  })

  it("fails a receiver that does not check signatures, on each delivery it should have refused", async () => {
    const { report, failing } = await failingIds("noSignatureCheck")
    expect(failing).toEqual(["RECEIVER-002", "RECEIVER-003", "RECEIVER-004", "RECEIVER-005", "RECEIVER-006"])
    const result = report.scenarios.find((candidate) => candidate.id === "RECEIVER-003")
    expect(result?.failure?.message).toContain("one byte of its body changed")
    // the exact bytes and headers sent, reproducible
    const sent = result?.evidence.at(-1)?.request
    expect(result?.failure?.curl).toContain(`-H 'webhook-signature: ${sent?.headers["webhook-signature"]}'`)
    expect(result?.failure?.curl).toContain(`--data-raw '${sent?.body}'`)
    expect(toJUnit(report)).toContain("RECEIVER-003")
  })

  it("fails a receiver that applies a duplicate twice (seen through the state probe)", async () => {
    const { report, failing } = await failingIds("noDedupe")
    expect(failing).toEqual(["RECEIVER-008"])
    expect(report.scenarios.find((result) => result.id === "RECEIVER-008")?.failure?.actual).toContain("\"applied\":2")
  })

  it("fails a receiver that answers 500 to a duplicate", async () => {
    const { report, failing } = await failingIds("errorOnDuplicate")
    expect(failing).toEqual(["RECEIVER-008"])
    const failure = report.scenarios.find((result) => result.id === "RECEIVER-008")?.failure
    expect(failure?.actual).toBe("500")
    // both deliveries, in order, reproduce it
    expect(failure?.reproduce?.match(/curl /g)).toHaveLength(2)
  })

  it("fails a receiver that lets an older event move a payout back", async () => {
    const { report, failing } = await failingIds("appliesOutOfOrder")
    expect(failing).toEqual(["RECEIVER-009"])
    expect(report.scenarios.find((result) => result.id === "RECEIVER-009")?.failure?.actual).toContain("processing")
  })

  it("without the state probe, checks the answers only and says so", async () => {
    const receiver = await startReceiver("noDedupe")
    const report = await runReceiverConformance({ url: receiver.url, secret: SECRET })
    expect(report.verdict).toBe("partial")
    expect(report.claim).toContain("--state-url")
  })
})

describe("the receiver kit, v1a (ed25519)", () => {
  const key = newV1aSigningKey()
  const oldKey = newV1aSigningKey()

  it("passes a receiver that verifies with the key's public key (whpk_, through the SDK): every scenario", async () => {
    const receiver = await startReceiver("none", v1a(v1aPublicKey(key)))
    const report = await runReceiverConformance({ ...receiver, secret: key, oldSecret: oldKey })
    expect(report.scenarios.filter((result) => result.status !== "passed").map((result) => result.id)).toEqual([])
    expect(report.verdict).toBe("conformant")
  })

  it("fails one that checks nothing, and one that still accepts the retired key, on exactly those scenarios", async () => {
    const unchecked = await startReceiver("noSignatureCheck", v1a(v1aPublicKey(key)))
    const report = await runReceiverConformance({ ...unchecked, secret: key, oldSecret: oldKey })
    expect(report.scenarios.filter((result) => result.status !== "passed").map((result) => result.id)).toEqual([
      "RECEIVER-002",
      "RECEIVER-003",
      "RECEIVER-004",
      "RECEIVER-005",
      "RECEIVER-006"
    ])
    const signature = report.scenarios.find((result) => result.id === "RECEIVER-003")?.evidence.at(-1)?.request
      .headers["webhook-signature"]
    expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/)

    const lenient = await startReceiver("none", v1a(v1aPublicKey(key), v1aPublicKey(oldKey)))
    const retired = await runReceiverConformance({ ...lenient, secret: key, oldSecret: oldKey })
    expect(retired.scenarios.filter((result) => result.status !== "passed").map((result) => result.id)).toEqual([
      "RECEIVER-006"
    ])
  })

  it(
    "the CLI signs v1a with --signing-key (a keygen PEM) and names the whpk_ key the receiver verifies with",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "receiver-v1a-"))
      try {
        const made = await cli(["keygen", "--out", join(dir, "key.pem")])
        const whpk = /^as a webhook signing key \(receiver --signing-key\): (whpk_\S+)$/m.exec(made.stderr)?.[1]
        expect(whpk, made.stderr).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/)
        const receiver = await startReceiver("none", v1a(whpk!))
        const passed = await cli([
          "receiver",
          "--url",
          receiver.url,
          "--signing-key",
          join(dir, "key.pem"),
          "--state-url",
          receiver.stateUrl
        ])
        expect(passed.stdout).toContain(`signed v1a (ed25519): your receiver verifies with ${whpk}`)
        expect(passed.stdout).toContain("CONFORMANT: every receiver scenario ran and passed")
        expect(passed.code).toBe(0)
        const both = await cli([
          "receiver",
          "--url",
          receiver.url,
          "--signing-key",
          join(dir, "key.pem"),
          "--secret",
          SECRET
        ])
        expect(both.code).toBe(2)
        expect(both.stderr).toContain("--secret (v1) or --signing-key (v1a): one of them")
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
    60_000
  )

  it("a v1 receiver (a secret) does not verify v1a deliveries: RECEIVER-001 fails", async () => {
    const receiver = await startReceiver("none", v1(SECRET))
    const report = await runReceiverConformance({ ...receiver, secret: key, grep: ["RECEIVER-001"] })
    expect(report.scenarios[0]?.status).toBe("failed")
  })
})

describeReceiverConformance(async () => ({ ...(await startReceiver("none")), secret: SECRET, oldSecret: OLD_SECRET }), {
  name: "describeReceiverConformance, a test per scenario, against a correct receiver"
})

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))

const cli = async (args: ReadonlyArray<string>) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", CLI, ...args], {
      env: { ...process.env, NO_COLOR: "1" }
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

describe("integrations-conformance receiver", () => {
  it("exits 0 for a correct receiver, 1 for a broken one, 2 when the URL does not answer", async () => {
    const good = await startReceiver("none")
    const passed = await cli(["receiver", "--url", good.url, "--secret", SECRET, "--state-url", good.stateUrl])
    expect(passed.stdout).toContain("CONFORMANT: every receiver scenario ran and passed")
    expect(passed.code).toBe(0)

    const broken = await startReceiver("appliesOutOfOrder")
    const failed = await cli([
      "receiver",
      "--url",
      broken.url,
      "--secret",
      SECRET,
      "--state-url",
      broken.stateUrl,
      "--reporter",
      "json"
    ])
    expect(failed.code).toBe(1)
    const report = JSON.parse(failed.stdout) as { verdict: string; scenarios: Array<{ id: string; status: string }> }
    expect(report.verdict).toBe("not_conformant")
    expect(report.scenarios.filter((result) => result.status === "failed").map((result) => result.id)).toEqual([
      "RECEIVER-009"
    ])

    // a port nothing listens on: the server just closed
    const gone = await startReceiver("none")
    const closed = servers.pop()!
    await new Promise((resolve) => closed.close(resolve))
    const unreachable = await cli(["receiver", "--url", gone.url, "--secret", SECRET])
    expect(unreachable.code).toBe(2)
    expect(unreachable.stderr).toContain("does not answer")
  }, 60_000)

  it(
    "says in one line what is wrong with a URL without its scheme, or https:// to a receiver speaking plain HTTP",
    async () => {
      const plain = await startReceiver("none")
      const port = new URL(plain.url).port
      const [noScheme, tls] = await Promise.all([
        cli(["receiver", "--url", `127.0.0.1:${port}/hooks`, "--secret", SECRET]),
        cli(["receiver", "--url", plain.url.replace("http://", "https://"), "--secret", SECRET])
      ])
      expect({ code: noScheme.code, stderr: noScheme.stderr }).toEqual({
        code: 2,
        stderr:
          `integrations-conformance: --url 127.0.0.1:${port}/hooks: the URL needs a scheme: http://127.0.0.1:${port}/hooks or https://127.0.0.1:${port}/hooks\n`
      })
      expect({ code: tls.code, stderr: tls.stderr }).toEqual({
        code: 2,
        stderr:
          `integrations-conformance: https://127.0.0.1:${port} speaks plain HTTP, not HTTPS: use http://127.0.0.1:${port}\n`
      })
    },
    60_000
  )
})
