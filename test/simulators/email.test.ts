/**
 * The e-mail capture server (scripts/simulators/email): Resend's `POST /emails` subset over real HTTP on
 * loopback, the /__mail read-back surface, event-driven waitFor, the process entry point, and the service's own
 * MailerHttp layer delivering an OTP into it.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type EmailCapture, MAX_BODY_BYTES, startEmailCapture } from "../../scripts/simulators/email/server.ts"
import { AppConfig } from "../../src/config/Config.ts"
import { Mailer } from "../../src/kyc/Mailer.ts"
import { MailerHttp } from "../../src/kyc/MailerHttp.ts"
import { waitUntil } from "./support.ts"

const API_KEY = "re_test_email_capture_suite"
let capture: EmailCapture
const logs: Array<string> = []

beforeAll(async () => {
  capture = await startEmailCapture({ apiKey: API_KEY, log: (line) => logs.push(line) })
})
afterAll(() => capture?.close())
beforeEach(() => capture.clear())

const http = async (
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly raw?: string; readonly apiKey?: string | null } = {}
) => {
  const apiKey = options.apiKey === undefined ? API_KEY : options.apiKey
  const response = await fetch(`${capture.url}${path}`, {
    method,
    headers: {
      ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }),
      ...(options.body !== undefined || options.raw !== undefined ? { "content-type": "application/json" } : {})
    },
    ...(options.raw !== undefined
      ? { body: options.raw }
      : options.body !== undefined
      ? { body: JSON.stringify(options.body) }
      : {})
  })
  const text = await response.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, contentType: response.headers.get("content-type"), text, body }
}

const valid = { from: "Codes <codes@example.com>", to: ["ana@example.com"], subject: "Your code", text: "Code 123456" }
const send = (body: unknown, apiKey?: string | null) =>
  http("POST", "/emails", { body, ...(apiKey === undefined ? {} : { apiKey }) })

describe("POST /emails", () => {
  it("rejects a missing or wrong bearer key with 401 JSON and stores nothing", async () => {
    const missing = await send(valid, null)
    expect(missing.status).toBe(401)
    expect(missing.contentType).toContain("application/json")
    expect(missing.body).toMatchObject({ statusCode: 401, name: "missing_api_key" })
    const wrong = await send(valid, "re_wrong")
    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ statusCode: 401, name: "invalid_api_key" })
    const basic = await fetch(`${capture.url}/emails`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`user:${API_KEY}`).toString("base64")}`,
        "content-type": "application/json"
      },
      body: JSON.stringify(valid)
    })
    expect(basic.status).toBe(401)
    expect(capture.messages()).toHaveLength(0)
  })

  it("answers 400 naming the field for a missing or malformed from/to/subject/text, and stores nothing", async () => {
    const { text: _text, ...withoutText } = valid
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ ...valid, from: undefined }, "from"],
      [{ ...valid, from: "not an address" }, "from"],
      [{ ...valid, to: undefined }, "to"],
      [{ ...valid, to: [] }, "to"],
      [{ ...valid, to: ["ana@example.com", "nobody"] }, "to"],
      [{ ...valid, to: [42] }, "to"],
      [{ ...valid, to: { address: "ana@example.com" } }, "to"],
      [{ ...valid, to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) }, "to"],
      [{ ...valid, subject: undefined }, "subject"],
      [{ ...valid, subject: 7 }, "subject"],
      [withoutText, "text"],
      [{ ...valid, text: { body: "x" } }, "text"],
      [{ ...withoutText, html: 1 }, "html"],
      [[valid], "body"]
    ]
    for (const [body, field] of cases) {
      const answer = await send(body)
      expect(answer.status, JSON.stringify(body).slice(0, 120)).toBe(400)
      expect(answer.body).toMatchObject({ statusCode: 400, name: "validation_error", field })
      expect(answer.body.message).toContain(field === "body" ? "JSON object" : `\`${field}\``)
    }
    const notJson = await http("POST", "/emails", { raw: "{ not json" })
    expect(notJson.status).toBe(400)
    expect(notJson.body).toMatchObject({ name: "invalid_json" })
    expect(capture.messages()).toHaveLength(0)
  })

  it("answers 413 JSON for a body over 256 KiB, and keeps serving", async () => {
    const big = await send({ ...valid, text: "x".repeat(MAX_BODY_BYTES + 1) })
    expect(big.status).toBe(413)
    expect(big.body).toMatchObject({ statusCode: 413, name: "payload_too_large" })
    const huge = await send({ ...valid, text: "y".repeat(20 * MAX_BODY_BYTES) })
    expect(huge.status).toBe(413)
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x20))
        controller.close()
      }
    })
    const chunked = await fetch(`${capture.url}/emails`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: chunks,
      duplex: "half"
    } as RequestInit)
    expect(chunked.status).toBe(413)
    expect(capture.messages()).toHaveLength(0)
    expect((await send(valid)).status).toBe(200)
    expect(capture.messages()).toHaveLength(1)
  })
})

describe("captured messages", () => {
  it("stores each accepted message, lists it (filtered by recipient, newest last), answers the latest, and clears", async () => {
    const first = await send(valid)
    expect(first.status).toBe(200)
    expect(first.body.id).toMatch(/^em_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const second = await send({
      from: "x@example.com",
      to: "Mateo <Mateo@Example.com>",
      subject: "Hi",
      html: "<p>hi</p>"
    })
    expect(second.status).toBe(200)
    const third = await send({ ...valid, to: ["ana@example.com", "mateo@example.com"], subject: "Both" })
    expect(new Set([first.body.id, second.body.id, third.body.id]).size).toBe(3)

    const [stored] = capture.messages()
    expect(stored).toEqual({
      id: first.body.id,
      from: valid.from,
      to: ["ana@example.com"],
      subject: "Your code",
      text: "Code 123456",
      html: null,
      receivedAt: expect.any(String)
    })
    expect(Number.isNaN(Date.parse(stored!.receivedAt))).toBe(false)
    expect(capture.messages()[1]).toMatchObject({ to: ["Mateo <Mateo@Example.com>"], text: null, html: "<p>hi</p>" })

    const all = await http("GET", "/__mail/messages", { apiKey: null })
    expect(all.status).toBe(200)
    expect(all.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id, second.body.id, third.body.id])
    const toMateo = await http("GET", `/__mail/messages?to=${encodeURIComponent("mateo@example.com")}`, {
      apiKey: null
    })
    expect(toMateo.body.data.map((m: { subject: string }) => m.subject)).toEqual(["Hi", "Both"])
    const toNobody = await http("GET", "/__mail/messages?to=nobody@example.com", { apiKey: null })
    expect(toNobody.body).toEqual({ data: [] })

    const latestAna = await http("GET", "/__mail/messages/latest?to=ANA@example.com", { apiKey: null })
    expect(latestAna.status).toBe(200)
    expect(latestAna.body).toMatchObject({ id: third.body.id, subject: "Both" })
    expect((await http("GET", "/__mail/messages/latest", { apiKey: null })).body.id).toBe(third.body.id)
    const latestNobody = await http("GET", "/__mail/messages/latest?to=nobody@example.com", { apiKey: null })
    expect(latestNobody.status).toBe(404)
    expect(latestNobody.body).toMatchObject({ statusCode: 404, name: "not_found" })

    const cleared = await http("DELETE", "/__mail/messages", { apiKey: null })
    expect(cleared.status).toBe(200)
    expect(capture.messages()).toHaveLength(0)
    expect((await http("GET", "/__mail/messages", { apiKey: null })).body).toEqual({ data: [] })
    expect((await http("GET", "/__mail/messages/latest", { apiKey: null })).status).toBe(404)

    await send(valid)
    expect(capture.messages()).toHaveLength(1)
    capture.clear()
    expect(capture.messages()).toHaveLength(0)
    expect(logs.some((line) => line.includes(first.body.id))).toBe(true)
  })

  it("answers 404 JSON for any other route or method", async () => {
    for (
      const [method, path] of [["GET", "/"], ["GET", "/emails"], ["POST", "/emails/x"], ["PUT", "/__mail/messages"], [
        "GET",
        "/__mail/other"
      ]] as const
    ) {
      const answer = await http(method, path)
      expect(answer.status, `${method} ${path}`).toBe(404)
      expect(answer.body).toMatchObject({ statusCode: 404, name: "not_found" })
    }
  })
})

describe("waitFor", () => {
  it("resolves when a matching message arrives later, and at once for one already captured", async () => {
    let settled = false
    const waiting = capture.waitFor((m) => m.to.includes("late@example.com"), 5000).finally(() => (settled = true))
    await send({ ...valid, to: ["other@example.com"] })
    expect(settled).toBe(false)
    const sent = await send({ ...valid, to: ["late@example.com"], subject: "Late" })
    const message = await waiting
    expect(message).toMatchObject({ id: sent.body.id, subject: "Late" })

    await send({ ...valid, to: ["late@example.com"], subject: "Later" })
    expect((await capture.waitFor((m) => m.to.includes("late@example.com"), 1)).subject).toBe("Later")
  })

  it("rejects on timeout, and when the server closes", async () => {
    const started = Date.now()
    await expect(capture.waitFor((m) => m.subject === "never", 100)).rejects.toThrow(/within 100 ms/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(90)

    const other = await startEmailCapture()
    expect(other.apiKey).toBe("re_test_capture")
    expect(other.url).toBe(`http://127.0.0.1:${other.port}`)
    const onOther = other.waitFor(() => true, 60_000)
    await other.close()
    await expect(onOther).rejects.toThrow(/closed/)
  })
})

describe("the service's MailerHttp", () => {
  const deliver = (apiKey: string, to: string, code: string) =>
    Effect.gen(function*() {
      const mailer = yield* Mailer
      yield* mailer.sendOtp({ to, code })
    }).pipe(
      Effect.provide(MailerHttp(Redacted.make(apiKey)).pipe(Layer.provide(AppConfig.layer))),
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { EMAIL_API_URL: capture.url, EMAIL_FROM: "Codes <codes@example.com>" } })
      ),
      Effect.result,
      Effect.runPromise
    )

  it("delivers an OTP e-mail into the capture server; a wrong key is MailerUnavailable", async () => {
    const waiting = capture.waitFor((m) => m.to.includes("lucia@example.com"), 10_000)
    const sent = await deliver(API_KEY, "lucia@example.com", "482913")
    expect(sent._tag).toBe("Success")
    const message = await waiting
    expect(message.from).toBe("Codes <codes@example.com>")
    expect(message.to).toEqual(["lucia@example.com"])
    expect(message.subject).toContain("482913")
    expect(message.text).toContain("482913")

    const refused = await deliver("re_wrong", "lucia@example.com", "111111")
    expect(refused._tag).toBe("Failure")
    expect(refused._tag === "Failure" && refused.failure._tag).toBe("MailerUnavailable")
    expect(capture.messages()).toHaveLength(1)
  })
})

describe("e-mail capture process", () => {
  const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
  const run = (env: Record<string, string>) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/simulators/email/main.ts"], {
      cwd: repoRoot,
      env: { ...process.env, EMAIL_CAPTURE_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>
    return { child, output: () => output, exited }
  }

  it("prints the service's settings, captures mail, and stops on SIGTERM with exit code 0", async () => {
    const proc = run({ EMAIL_CAPTURE_API_KEY: "re_test_process" })
    try {
      const printed = await waitUntil("the banner", () => {
        const url = /^ {2}EMAIL_API_URL=(http:\/\/127\.0\.0\.1:\d+)$/m.exec(proc.output())?.[1]
        const key = /^ {2}EMAIL_API_KEY=(\S+)$/m.exec(proc.output())?.[1]
        return url !== undefined && key !== undefined ? { url, key } : undefined
      }, { timeoutMs: 15_000 })
      expect(printed.key).toBe("re_test_process")
      const posted = await fetch(`${printed.url}/emails`, {
        method: "POST",
        headers: { authorization: `Bearer ${printed.key}`, "content-type": "application/json" },
        body: JSON.stringify(valid)
      })
      expect(posted.status).toBe(200)
      const latest = await fetch(`${printed.url}/__mail/messages/latest?to=ana@example.com`)
      expect(((await latest.json()) as { text: string }).text).toBe(valid.text)
    } finally {
      proc.child.kill("SIGTERM")
    }
    const [code] = await proc.exited
    expect(code).toBe(0)
  })

  it("refuses a bad port with exit code 2", async () => {
    const proc = run({ EMAIL_CAPTURE_PORT: "70000" })
    const [code] = await proc.exited
    expect(code).toBe(2)
    expect(proc.output()).toContain("EMAIL_CAPTURE_PORT must be")
  })
})
