/**
 * OTP e-mails through the HTTP e-mail API when EMAIL_API_KEY is set (DESIGN §3: "in either mode"). The API is
 * a local HTTP server standing in for the provider's, reached over real HTTP: the test sees exactly what the
 * service sends, and can make it fail.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const EMAIL_KEY = "re_test_key_0123456789"

interface Received {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly body: {
    readonly from: string
    readonly to: ReadonlyArray<string>
    readonly subject: string
    readonly text: string
  }
}

let emailApi: Server
let received: Array<Received> = []
let answer: { status: number; body: unknown } = { status: 200, body: { id: "msg_1" } }

const readBody = async (request: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

// The server's options name the e-mail API's port: read when the server starts, after the API below is listening.
const it = httpTest(() => ({
  captureLogs: true,
  env: {
    EMAIL_API_KEY: EMAIL_KEY,
    EMAIL_API_URL: `http://127.0.0.1:${(emailApi.address() as AddressInfo).port}`,
    EMAIL_FROM: "Codes <codes@example.com>"
  }
}))

it.beforeAll(async () => {
  const receive = async (request: IncomingMessage, response: ServerResponse) => {
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      authorization: request.headers.authorization,
      body: JSON.parse(await readBody(request))
    })
    response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body))
  }
  emailApi = createServer((request, response) => void receive(request, response))
  emailApi.listen(0, "127.0.0.1")
  await once(emailApi, "listening")
})
it.afterAll(() => void emailApi?.close())

const send = (server: TestServer, partner: Partner, userAddress: string, email: string) =>
  call(server, `${BREB}/kyc/otp/send`, { apiKey: partner.apiKey, body: { email, userAddress } })

describe("OTP e-mail", () => {
  it("sends the code to the user's address with the configured key and sender, and logs neither the code nor the key", async ({ server, partner }) => {
    received = []
    answer = { status: 200, body: { id: "msg_42" } }
    const sent = await send(server, partner, newAddress(), "lucia@example.com")
    expect(sent.status, sent.text).toBe(200)
    const code = sent.body.debugCode as string
    expect(received).toHaveLength(1)
    const [mail] = received
    expect(mail).toMatchObject({ method: "POST", url: "/emails", authorization: `Bearer ${EMAIL_KEY}` })
    expect(mail!.body.to).toEqual(["lucia@example.com"])
    expect(mail!.body.from).toBe("Codes <codes@example.com>")
    expect(mail!.body.text).toContain(code)
    const logs = server.logs.join("\n")
    expect(logs).toContain("msg_42")
    expect(logs).not.toContain(EMAIL_KEY)
    expect(logs).not.toContain("lucia@example.com")
    expect(logs).not.toMatch(new RegExp(`\\b${code}\\b`))
  })

  it("when the e-mail API fails, answers 503 ErrorBody with Retry-After and records nothing: the retry is not held by the cooldown", async ({ server, partner }) => {
    const userAddress = newAddress()
    for (const failure of [{ status: 500, body: { message: "down" } }, { status: 200, body: { unexpected: true } }]) {
      answer = failure
      const down = await send(server, partner, userAddress, "mateo@example.com")
      expect(expectErrorBody(down, 503).errorCode).toBeUndefined()
      expect(down.text).not.toContain("down")
      // every 503 tells when to come back, not only the database's and the provider's
      expect(down.headers.get("retry-after") ?? "(no Retry-After)").toMatch(/^[1-9][0-9]*$/)
    }
    answer = { status: 200, body: { id: "msg_43" } }
    const retried = await send(server, partner, userAddress, "mateo@example.com")
    expect(retried.status, retried.text).toBe(200)
    const verified = await call(server, `${BREB}/kyc/otp/verify`, {
      apiKey: partner.apiKey,
      body: { userAddress, code: retried.body.debugCode }
    })
    expect(verified.status, verified.text).toBe(200)
  })
})
