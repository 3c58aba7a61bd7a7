/**
 * What the kit's commands read from a server is bounded: a deployment, a receiver or a state probe that answers without
 * end (a body streamed until the kit hangs up) costs the command a few MiB, and where the command needs that body it
 * stops with one line naming the URL and the limit. The commands run as child processes, as a developer runs them,
 * their peak RSS measured at exit (support/peakRss.ts); the red team saw 1.3–2.1 GB when answers were read whole.
 * And `listen` stops on SIGTERM or SIGINT while the deployment holds its request open.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
const PEAK_RSS = fileURLToPath(new URL("./support/peakRss.ts", import.meta.url))
const EVENTS = "/api/integrations/events"
const KEY = "cop_test_pk_hostile0000000000000000000"
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
/** A command at rest (tsx included) peaks at 75–180 MB; one that reads a hostile answer whole passes 1 GB. */
const MAX_PEAK_RSS_MB = 400
/** The most a hostile server streams: a cap for this machine's sake, far beyond what the kit may read. */
const HOSTILE_CAP_BYTES = 1024 ** 3
/** How long a command may take, at most, before it is killed (a bounded one needs a few seconds). */
const DEADLINE_MS = 90_000
/** How long a command may take to exit once signalled (it needs well under a second). */
const SIGNAL_DEADLINE_MS = 15_000

// ------------------------------------------------------------------------------------------ hostile servers

const servers: Array<Server> = []
afterAll(async () => {
  for (const server of servers) server.closeAllConnections()
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
})

const serve = async (handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> => {
  const server = createServer(handle)
  servers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20)

/** 200, `start`, then spaces until the client hangs up: streamed with backpressure, never allocated. */
const answerWithoutEnd = (response: ServerResponse, start: string) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.write(start)
  let written = 0
  const pump = () => {
    while (!response.destroyed && written < HOSTILE_CAP_BYTES) {
      written += CHUNK.length
      if (!response.write(CHUNK)) return void response.once("drain", pump)
    }
    if (!response.destroyed) response.end()
  }
  pump()
}

// ---------------------------------------------------------------------------------------------- the commands

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** The child's peak RSS in MB (undefined if it was killed). */
  readonly peakRssMb: number | undefined
}

interface Command {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once `condition` holds; rejects if the command exits first or the deadline passes. */
  readonly until: (what: string, condition: () => boolean) => Promise<void>
  /** Sends `signal`; resolves with how the command ended (killed if it is still running after a generous deadline). */
  readonly stop: (signal: NodeJS.Signals) => Promise<Finished>
  readonly finished: Promise<Finished>
}

let scratch = ""
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "kit-bounded-"))
})
afterAll(() => rm(scratch, { recursive: true, force: true }))

let started = 0

/** `integrations-conformance <args>` from source, with its peak RSS written at exit. */
const start = (args: ReadonlyArray<string>): Command => {
  const rssFile = join(scratch, `peak-rss-${++started}`)
  const child = spawn(process.execPath, ["--import", "tsx", "--import", PEAK_RSS, CLI, ...args], {
    env: { ...process.env, NO_COLOR: "1", PEAK_RSS_FILE: rssFile },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
  let killAt = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS)
  let exited = false
  const finished = once(child, "exit").then(async ([code, signal]): Promise<Finished> => {
    exited = true
    clearTimeout(killAt)
    const peak = await readFile(rssFile, "utf8").catch(() => undefined)
    return {
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
      stdout,
      stderr,
      peakRssMb: peak === undefined ? undefined : Math.round(Number(peak) / 1024)
    }
  })
  const until = async (what: string, condition: () => boolean) => {
    const deadline = Date.now() + DEADLINE_MS
    while (!condition()) {
      if (exited || Date.now() > deadline) {
        throw new Error(`${exited ? "exited" : "still running"} before ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const stop = (signal: NodeJS.Signals) => {
    clearTimeout(killAt)
    killAt = setTimeout(() => child.kill("SIGKILL"), SIGNAL_DEADLINE_MS)
    child.kill(signal)
    return finished
  }
  return { child, stdout: () => stdout, stderr: () => stderr, until, stop, finished }
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

const expectBoundedMemory = (finished: Finished) =>
  expect(finished.peakRssMb, `peak RSS (MB)\n${finished.stderr}`).toBeLessThan(MAX_PEAK_RSS_MB)

// -------------------------------------------------------------------------------------------------- tests

describe("listen against hostile servers", () => {
  it("an events answer without end: exit 2, one line naming the URL and the limit, memory bounded", async () => {
    const deployment = await serve((_, response) => answerWithoutEnd(response, "{\"items\":["))
    const finished = await start([
      "listen",
      "--base-url",
      deployment,
      "--api-key",
      KEY,
      "--forward-to",
      "http://127.0.0.1:9/hooks"
    ]).finished
    expect(finished.code, finished.stderr).toBe(2)
    expect(finished.stderr).toMatch(
      new RegExp(
        `^listen: GET ${
          escaped(`${deployment}${EVENTS}`)
        }\\S* answered more than 8 MiB, the most the kit reads of an API answer: .*--base-url.*$`,
        "m"
      )
    )
    expectBoundedMemory(finished)
  })

  it("a receiver answering without end: the delivery counts by its status (as the API's own), memory bounded; SIGTERM stops it", async () => {
    const event = "{\"id\":\"evt_hostile1\",\"type\":\"payout.created\",\"createdAt\":\"2026-01-01T00:00:00.000Z\"}"
    const deployment = await serve((request, response) => {
      if (new URL(request.url ?? "/", "http://fake").pathname !== EVENTS) return void response.writeHead(404).end()
      response.writeHead(200, { "content-type": "application/json" }).end(
        `{"integrationId":"int_fake","items":[${event}],"nextCursor":null}`
      )
    })
    const receiver = await serve((request, response) => {
      request.resume()
      answerWithoutEnd(response, "ok")
    })
    const listen = start([
      "listen",
      "--base-url",
      deployment,
      "--api-key",
      KEY,
      "--forward-to",
      `${receiver}/hooks`,
      "--since",
      "2025-12-31T00:00:00Z",
      "--interval",
      "0.2"
    ])
    await listen.until(
      "the delivery's line",
      () => /^→ payout\.created evt_hostile1 200 in \d+ ms$/m.test(listen.stdout())
    )
    const finished = await listen.stop("SIGTERM")
    expect(finished.code, finished.stderr).toBe(0)
    expect(finished.stderr).toMatch(/^listen: stopped: \d+ delivered, 0 skipped$/m)
    expectBoundedMemory(finished)
  })

  it("stops on SIGTERM or SIGINT (exit 0) while the deployment holds its request open, before or after its headers", async () => {
    const held: Array<ServerResponse> = []
    const silent = await serve((_, response) => void held.push(response))
    const stalled = await serve((_, response) => {
      response.writeHead(200, { "content-type": "application/json" }).write("{\"items\":[")
      held.push(response)
    })
    for (const [deployment, signal] of [[silent, "SIGTERM"], [stalled, "SIGINT"]] as const) {
      const holding = held.length
      const listen = start([
        "listen",
        "--base-url",
        deployment,
        "--api-key",
        KEY,
        "--forward-to",
        "http://127.0.0.1:9/hooks"
      ])
      await listen.until("the deployment held a request", () => held.length > holding)
      const finished = await listen.stop(signal)
      expect({ code: finished.code, signal: finished.signal }, `${signal}\n${finished.stderr}`).toEqual({
        code: 0,
        signal: null
      })
      expect(finished.stderr).toContain("listen: stopped: 0 delivered, 0 skipped")
    }
  })
})

describe("receiver against a hostile receiver", () => {
  it("deliveries answered without end count by their status; a state probe answered without end fails naming the limit; memory bounded", async () => {
    const receiver = await serve((request, response) => {
      request.resume()
      answerWithoutEnd(response, request.method === "GET" ? "{\"status\":\"" : "ok")
    })
    const finished = await start([
      "receiver",
      "--url",
      `${receiver}/hooks`,
      "--secret",
      SECRET,
      "--state-url",
      `${receiver}/state`,
      "--grep",
      "RECEIVER-007,RECEIVER-008",
      "--reporter",
      "json"
    ]).finished
    expect(finished.code, finished.stderr).toBe(1)
    const report = JSON.parse(finished.stdout) as {
      scenarios: ReadonlyArray<{ id: string; status: string; failure?: { message: string; actual: string } }>
    }
    expect(report.scenarios.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: "RECEIVER-007", status: "passed" },
      { id: "RECEIVER-008", status: "failed" }
    ])
    const failure = report.scenarios[1]?.failure
    expect(failure?.message).toBe("the state probe did not answer as documented")
    expect(failure?.actual).toMatch(
      new RegExp(`^200: GET ${escaped(`${receiver}/state`)}\\S* answered more than 64 KiB`)
    )
    expectBoundedMemory(finished)
  })
})

describe("the main run against a hostile deployment", () => {
  it("an answer without end: exit 2, one line naming the URL and the limit, memory bounded", async () => {
    const deployment = await serve((_, response) => answerWithoutEnd(response, "{\"status\":\""))
    const finished = await start(["--base-url", deployment, "--api-key", KEY]).finished
    expect(finished.code, finished.stderr).toBe(2)
    expect(finished.stderr).toMatch(
      new RegExp(
        `^integrations-conformance: GET ${
          escaped(`${deployment}/healthz`)
        } answered more than 8 MiB, the most the kit reads of an API answer: .*--base-url.*$`,
        "m"
      )
    )
    expectBoundedMemory(finished)
  })
})
