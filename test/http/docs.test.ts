/**
 * /docs over HTTP: compressed (br, gzip) with ETag and Cache-Control, a Content-Security-Policy that lets the page
 * reach nothing but this server, the heavy script as a separate immutable asset, and the mock-only
 * `x-mock-scenario` parameter left out of the page's document (its snippets would send the header empty).
 */
import { request } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest()

/** The raw answer (no client-side decompression). */
const raw = (server: TestServer, path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(`${server.baseUrl}${path}`, { headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end()
    }
  )

describe("GET /docs", () => {
  it("is compressed for clients that accept it, the same page in each encoding", async ({ server }) => {
    const plain = await raw(server, "/docs")
    const br = await raw(server, "/docs", { "accept-encoding": "gzip, deflate, br" })
    const gzip = await raw(server, "/docs", { "accept-encoding": "gzip" })
    expect([plain.status, br.status, gzip.status]).toEqual([200, 200, 200])
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(br.headers["content-encoding"]).toBe("br")
    expect(gzip.headers["content-encoding"]).toBe("gzip")
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true)
    expect(br.body.length).toBeLessThan(plain.body.length / 4)
    expect(br.headers["vary"]).toBe("accept-encoding")
  })

  it("has an ETag (304 when unchanged) and a Cache-Control", async ({ server }) => {
    const first = await raw(server, "/docs", { "accept-encoding": "br" })
    const etag = first.headers["etag"] as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/)
    expect(first.headers["cache-control"]).toMatch(/max-age=\d+/)
    const again = await raw(server, "/docs", { "accept-encoding": "br", "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)
  })

  it("lets the page reach nothing but this server, and loads its script from here, cached for good", async ({ server }) => {
    const page = await raw(server, "/docs")
    const policy = String(page.headers["content-security-policy"])
    for (
      const directive of ["default-src 'self'", "connect-src 'self'", "font-src 'self' data:", "frame-ancestors 'none'"]
    ) {
      expect(policy).toContain(directive)
    }
    const html = page.body.toString("utf8")
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((match) => match[1]!)
    expect(scripts).toHaveLength(1)
    expect(scripts[0]).toMatch(/^\/docs\/scalar\.js\?v=/)
    expect(html).not.toMatch(/<link[^>]+href="https?:/)
    const script = await raw(server, scripts[0]!, { "accept-encoding": "br" })
    expect(script.status).toBe(200)
    expect(script.headers["content-encoding"]).toBe("br")
    expect(script.headers["cache-control"]).toContain("immutable")
    expect(script.headers["content-type"]).toMatch(/^text\/javascript/)
  })

  it("shows the document without the mock-only x-mock-scenario header parameter, mentioning it instead", async ({ server }) => {
    const html = (await raw(server, "/docs")).body.toString("utf8")
    const embedded = JSON.parse(
      /<script id="api-reference" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!
    ) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }>; description?: string }>>
    }
    const operations = Object.values(embedded.paths).flatMap((item) => Object.values(item))
    expect(operations.flatMap((operation) => operation.parameters ?? []).map((parameter) => parameter.name)).not
      .toContain("x-mock-scenario")
    expect(operations.filter((operation) => operation.description?.includes("X-Mock-Scenario")).length).toBeGreaterThan(
      3
    )
    const served = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as typeof embedded
    const documented = Object.values(served.paths).flatMap((item) => Object.values(item)).flatMap((operation) =>
      operation.parameters ?? []
    )
    expect(documented.map((parameter) => parameter.name)).toContain("x-mock-scenario") // the contract itself keeps it
  })
})
