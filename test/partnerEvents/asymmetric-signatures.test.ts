/**
 * Standard Webhooks `v1a` (issue #35, part 2): an endpoint that chooses it gets deliveries signed with the deployment's
 * ed25519 key, one `v1a,<signature>` and no HMAC, which a receiver verifies with the public key `GET
 * webhook-signing-key` publishes (no API key) and nothing else: no secret. `v1` endpoints are signed as before. The key
 * is the same on every replica (one row, made by the first). A changed byte does not verify.
 */
import { createPublicKey, verify } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { WebhookSigningKey } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { call } from "../support/flows.ts"
import { repoRoot } from "../support/process.ts"
import { type Delivery, receiverForTests } from "../support/webhookReceiver.ts"

const it = httpTest()
const API = "/api/integrations"
const receiver = receiverForTests()

/** The public key as a receiver builds it from `whpk_…`: the raw 32 bytes as an Ed25519 JWK. */
const publicKeyOf = (whpk: string) =>
  createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(whpk.replace(/^whpk_/, ""), "base64").toString("base64url") },
    format: "jwk"
  })

/** Whether one of the delivery's `v1a` signatures verifies over `<id>.<timestamp>.<body>` with `whpk`. */
const verifiesV1a = (delivery: Pick<Delivery, "id" | "timestamp" | "signature" | "body">, whpk: string) => {
  const signed = Buffer.from(`${delivery.id}.${delivery.timestamp}.${delivery.body}`)
  return delivery.signature.split(" ").some((entry) => {
    const [version, signature = ""] = entry.split(",")
    return version === "v1a" && verify(null, signed, publicKeyOf(whpk), Buffer.from(signature, "base64"))
  })
}

const signingKey = async (baseUrl: string) => {
  // public: no Authorization header
  const answer = await fetch(`${baseUrl}${API}/webhook-signing-key`)
  expect(answer.status).toBe(200)
  return Schema.decodeUnknownSync(WebhookSigningKey)(await answer.json())
}

describe("v1a (ed25519) webhook signatures", () => {
  it("a v1a endpoint's deliveries verify with the published public key, and carry no HMAC", async ({ partner, server }) => {
    const key = await signingKey(server.baseUrl)
    expect(key).toMatchObject({ scheme: "v1a", algorithm: "ed25519" })
    expect(key.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/)

    const created = await partner.post(`${API}/webhook-endpoints`, {
      url: `${receiver.url}?v1a`,
      events: ["endpoint.ping"],
      signatureScheme: "v1a"
    })
    expect(created.status, created.text).toBe(201)
    const endpoint = created.json as { endpointId: string; signatureScheme: string }
    expect(endpoint.signatureScheme).toBe("v1a")
    const pinged = await partner.post(`${API}/webhook-endpoints/${endpoint.endpointId}/ping`, {})
    expect(pinged.status, pinged.text).toBe(202)
    const delivery = await receiver.next((d) => d.event.data.object["endpointId"] === endpoint.endpointId)

    expect(delivery.signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/)
    expect(verifiesV1a(delivery, key.publicKey)).toBe(true)
    // one changed byte of the body, the id or the timestamp does not verify
    expect(verifiesV1a({ ...delivery, body: delivery.body.replace("endpoint.ping", "endpoint.pinG") }, key.publicKey))
      .toBe(false)
    expect(verifiesV1a({ ...delivery, id: `${delivery.id}x` }, key.publicKey)).toBe(false)
    expect(verifiesV1a({ ...delivery, timestamp: String(Number(delivery.timestamp) + 1) }, key.publicKey)).toBe(false)
  })

  it("a v1 endpoint is signed with its secret as before; PATCH switches it to v1a", async ({ partner, server }) => {
    const key = await signingKey(server.baseUrl)
    const created = await partner.post(`${API}/webhook-endpoints`, {
      url: `${receiver.url}?v1`,
      events: ["endpoint.ping"]
    })
    expect(created.status, created.text).toBe(201)
    const { endpointId, signatureScheme } = created.json as { endpointId: string; signatureScheme: string }
    expect(signatureScheme).toBe("v1")
    const ofEndpoint = (d: Delivery) => d.event.data.object["endpointId"] === endpointId
    expect((await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})).status).toBe(202)
    const first = await receiver.next(ofEndpoint)
    expect(first.signature).toMatch(/^v1,/)
    expect(verifiesV1a(first, key.publicKey)).toBe(false)

    const switched = await call(server.baseUrl, partner.apiKey, "PATCH", `${API}/webhook-endpoints/${endpointId}`, {
      body: { signatureScheme: "v1a" }
    })
    expect(switched.status, switched.text).toBe(200)
    expect((switched.json as { signatureScheme: string }).signatureScheme).toBe("v1a")
    expect((await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})).status).toBe(202)
    const [, second] = await receiver.count(ofEndpoint, 2)
    expect(verifiesV1a(second!, key.publicKey)).toBe(true)

    const refused = await call(server.baseUrl, partner.apiKey, "PATCH", `${API}/webhook-endpoints/${endpointId}`, {
      body: { signatureScheme: "v2" }
    })
    expect(refused.status).toBe(400)
    expect((refused.json as { error: string }).error).toMatch(/signatureScheme/)
  })

  it("the README's v1a receiver verifies a real delivery, and refuses a changed byte", async ({ partner, server }) => {
    const code = /#### v1a receivers[\s\S]*?```js\n([\s\S]*?)```/.exec(
      readFileSync(join(repoRoot, "README.md"), "utf8")
    )?.[1]
    expect(code).toBeDefined()
    const file = join(repoRoot, `.readme-v1a-${process.pid}.mjs`)
    writeFileSync(file, code!)
    try {
      process.env["WEBHOOK_PUBLIC_KEY"] = (await signingKey(server.baseUrl)).publicKey
      const { verifiedV1a } = (await import(pathToFileURL(file).href)) as {
        verifiedV1a: (headers: Record<string, string>, body: Buffer) => boolean
      }
      const created = await partner.post(`${API}/webhook-endpoints`, {
        url: `${receiver.url}?readme`,
        events: ["endpoint.ping"],
        signatureScheme: "v1a"
      })
      const { endpointId } = created.json as { endpointId: string }
      expect((await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})).status).toBe(202)
      const delivery = await receiver.next((d) => d.event.data.object["endpointId"] === endpointId)
      expect(verifiedV1a(delivery.headers, Buffer.from(delivery.body))).toBe(true)
      expect(verifiedV1a(delivery.headers, Buffer.from(`${delivery.body} `))).toBe(false)
      expect(verifiedV1a({ ...delivery.headers, "webhook-timestamp": "1" }, Buffer.from(delivery.body))).toBe(false)
    } finally {
      rmSync(file, { force: true })
      delete process.env["WEBHOOK_PUBLIC_KEY"]
    }
  })

  it("every replica publishes and signs with the same key", async ({ replica, server }) => {
    expect((await signingKey(replica.baseUrl)).publicKey).toBe((await signingKey(server.baseUrl)).publicKey)
  })
})
