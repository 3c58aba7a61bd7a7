/**
 * `/dashboard` as served: a strict Content-Security-Policy (nothing inline, nothing from another host), its script and
 * styles at URLs that change with their content (cached for good), every file compressed and revalidated by ETag.
 * Its weight (HTML + JS + CSS, raw, gzip and brotli) is written to .artifacts/dashboard-weight.json and held under a
 * budget, so a dependency that bloats the page fails here.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect } from "vitest"
import { raw } from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { repoRoot } from "../support/process.ts"

const it = httpTest()

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** What the whole page may weigh, brotli-compressed (HTML + JS + CSS): about twice what it weighs now. */
const BROTLI_BUDGET_BYTES = 40_000

describe("/dashboard", () => {
  it("is the page under its strict policy; its script and styles are versioned files of this origin", async ({ server }) => {
    const page = await raw(server, "/dashboard")
    expect(page.status).toBe(200)
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(page.headers["content-security-policy"]).toBe(CSP)
    expect(page.headers["x-content-type-options"]).toBe("nosniff")
    expect(page.headers["referrer-policy"]).toBe("no-referrer")
    expect(page.headers["cache-control"]).toBe("no-cache")
    expect(page.text).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/) // nothing inline for the policy to refuse
    const script = /<script type="module" src="(\/dashboard\/app\.js\?v=[\w-]+)"><\/script>/.exec(page.text)?.[1]
    const styles = /<link rel="stylesheet" href="(\/dashboard\/app\.css\?v=[\w-]+)" \/>/.exec(page.text)?.[1]
    expect(script).toBeDefined()
    expect(styles).toBeDefined()
    for (const [path, type] of [[script!, "text/javascript"], [styles!, "text/css"]] as const) {
      const asset = await raw(server, path)
      expect(asset.status).toBe(200)
      expect(asset.headers["content-type"]).toBe(`${type}; charset=utf-8`)
      expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
    }
  })

  it("is compressed and revalidated by ETag; its weight is within budget", async ({ server }) => {
    const page = await raw(server, "/dashboard")
    const paths = [
      "/dashboard",
      /src="([^"]+)"/.exec(page.text)![1]!,
      /href="(\/dashboard\/app\.css[^"]+)"/.exec(page.text)![1]!
    ]
    const weight: Record<string, Record<string, number>> = {}
    for (const path of paths) {
      const sizes: Record<string, number> = {}
      for (const encoding of ["identity", "gzip", "br"]) {
        const answer = await raw(server, path, { headers: { "accept-encoding": encoding } })
        expect(answer.headers["content-encoding"]).toBe(encoding === "identity" ? undefined : encoding)
        expect(answer.headers["vary"]).toBe("accept-encoding")
        sizes[encoding] = Number(answer.headers["content-length"])
        const again = await raw(server, path, { headers: { "if-none-match": String(answer.headers["etag"]) } })
        expect(again.status).toBe(304)
      }
      weight[path.split("?")[0]!] = sizes
    }
    const total = (encoding: string) => Object.values(weight).reduce((sum, sizes) => sum + sizes[encoding]!, 0)
    const report = { ...weight, total: { identity: total("identity"), gzip: total("gzip"), br: total("br") } }
    mkdirSync(join(repoRoot, ".artifacts"), { recursive: true })
    writeFileSync(join(repoRoot, ".artifacts", "dashboard-weight.json"), `${JSON.stringify(report, null, 2)}\n`)
    console.log(`dashboard page weight (bytes): ${JSON.stringify(report)}`)
    expect(total("br")).toBeLessThan(BROTLI_BUDGET_BYTES)
  })

  it("answers 405 naming GET for another method on its paths", async ({ server }) => {
    for (const path of ["/dashboard", "/dashboard/sign-in", "/dashboard/app.js"]) {
      const answer = await raw(server, path, { method: "POST" })
      expect(answer.status, path).toBe(405)
      expect(answer.headers["allow"]).toBe("GET")
    }
  })
})
