import { openApiDocument } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiScalar } from "effect/http-api"
import { createHash } from "node:crypto"
import { assetVersion, makeAsset, serveAsset } from "../base/StaticAsset.ts"

export const OPENAPI_PATH = "/openapi.json"
export const DOCS_PATH = "/docs"
export const DOCS_SCRIPT_PATH = "/docs/scalar.js"

/**
 * Scalar's standalone bundle (@scalar/api-reference), as effect ships it: taken from the page its public HttpApiScalar
 * route serves (an empty API's, rendered once here, where the bundle is the inline script before the last one, which
 * mounts it), so neither effect's internals nor a second copy of Scalar are needed. Built on first use, so it is not in
 * memory until someone opens the page.
 */
const loadScalar = Effect.gen(function*() {
  const html = yield* Effect.acquireUseRelease(
    Effect.sync(() => HttpRouter.toWebHandler(HttpApiScalar.layer(HttpApi.make("scalar")), { disableLogger: true })),
    ({ handler }) => Effect.promise(() => handler(new Request("http://localhost/docs")).then((page) => page.text())),
    ({ dispose }) => Effect.promise(dispose)
  )
  const mount = html.lastIndexOf("<script>")
  const end = html.lastIndexOf("</script>", mount)
  const start = html.lastIndexOf("<script>", end) + "<script>".length
  if (mount < 0 || end < 0 || start < "<script>".length) {
    return yield* Effect.die(new Error("HttpApiScalar's page has no inline Scalar bundle"))
  }
  return html.slice(start, end)
})

interface PageParameter {
  name: string
  description?: string
  example?: unknown
}

/** What the page says of the pre-filled `Idempotency-Key` (the page's script sends a new key in its place). */
const PER_SEND_KEY_NOTE =
  "On this page each Send replaces the pre-filled example with a new key, so a second Send creates another resource; type a key of your own to try a replay (the same key and body again) or a 422 (another body)."

/**
 * The document the page shows: the contract's, without the mock-only `x-mock-scenario` header parameter (Scalar's
 * requests and snippets would send it empty); the operations that take it carry the contract's description of it
 * in their own instead. Also the `Idempotency-Key` examples, which the page's script replaces on each send.
 */
const documentForPage = () => {
  // A copy: the platform memoizes the document, and /openapi.json must keep the parameter. Read as the plain JSON it
  // is (OpenAPI 3.1 paths, operations and parameters), the only parts edited here.
  const document = structuredClone(openApiDocument()) as unknown as {
    paths: Record<string, Record<string, { parameters?: Array<PageParameter>; description?: string }>>
  }
  const keyExamples = new Set<string>()
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const parameters = operation.parameters ?? []
      for (const parameter of parameters) {
        if (parameter.name !== "idempotency-key" || typeof parameter.example !== "string") continue
        keyExamples.add(parameter.example)
        parameter.description = `${parameter.description ?? ""}. ${PER_SEND_KEY_NOTE}`
      }
      const scenario = parameters.find((parameter) => parameter.name === "x-mock-scenario")
      if (scenario === undefined) continue
      operation.parameters = parameters.filter((parameter) => parameter !== scenario)
      const note = `\`X-Mock-Scenario\` header (not offered on this page, which would send it empty): ${
        scenario.description ?? ""
      }`
      operation.description = `${operation.description ?? ""}\n\n${note}`.trim()
    }
  }
  return { document, keyExamples: [...keyExamples] }
}

/**
 * Scalar without its cloud features and outside fonts (system fonts), requests sent to this very server (not a
 * proxy, not the document's example hosts), and the bearer scheme preselected so a pasted key is all "Test Request"
 * needs.
 */
const scalarConfiguration = {
  _integration: "html",
  withDefaultFonts: false,
  hideClientButton: true,
  showDeveloperTools: "never", // share to and generate SDKs on Scalar's cloud
  telemetry: false,
  hideTestRequestButton: false,
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  authentication: { preferredSecurityScheme: "bearer", securitySchemes: { bearer: { token: "" } } }
}

/** JSON inside a <script> element: nothing in it may close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")

/**
 * Runs in the page before Scalar: a fresh `Idempotency-Key` (a v4 UUID, from getRandomValues: a page served over plain
 * http on another host than loopback has no crypto.randomUUID) in place of a pre-filled example on every request the
 * page sends (Scalar sends them with the global fetch, a Request); and `#error-…` anchors (links to the errors table,
 * or a URL an error message names) scrolled to once Scalar has rendered the row, on load and on each hash change.
 */
const pageBehaviour = (keyExamples: ReadonlyArray<string>) =>
  `var k=${scriptJson(keyExamples)},f=window.fetch;` +
  `function u(){var b=crypto.getRandomValues(new Uint8Array(16));b[6]=b[6]&15|64;b[8]=b[8]&63|128;` +
  `var h=Array.from(b,function(x){return(x+256).toString(16).slice(1)}).join("");` +
  `return h.slice(0,8)+"-"+h.slice(8,12)+"-"+h.slice(12,16)+"-"+h.slice(16,20)+"-"+h.slice(20)}` +
  `window.fetch=function(r,i){if(r instanceof Request&&k.indexOf(r.headers.get("idempotency-key"))>=0)` +
  `r.headers.set("idempotency-key",u());return f.call(this,r,i)};` +
  `function g(){var id=decodeURIComponent(location.hash.slice(1));if(!/^error-[a-z0-9_]+$/.test(id))return;` +
  `var s=function(){var e=document.getElementById(id);if(!e)return false;e.scrollIntoView({block:"center"});return true};` +
  `if(s())return;var o=new MutationObserver(function(){if(s())o.disconnect()});` +
  `o.observe(document.documentElement,{childList:true,subtree:true});setTimeout(function(){o.disconnect()},60000)}` +
  `addEventListener("hashchange",g);addEventListener("DOMContentLoaded",g);`

const pageHtml = (scriptUrl: string) => {
  const { document, keyExamples } = documentForPage()
  const configure = pageBehaviour(keyExamples) +
    `var c=${scriptJson(scalarConfiguration)};c.servers=[{url:location.origin,description:"This server"}];` +
    `document.getElementById("api-reference").dataset.configuration=JSON.stringify(c);`
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Integrations API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <script id="api-reference" type="application/json">${scriptJson(document)}</script>
    <script>${configure}</script>
    <script src="${scriptUrl}"></script>
  </body>
</html>`
  return { html, configureHash: createHash("sha256").update(configure).digest("base64") }
}

/**
 * Nothing but this server: a browser refuses any request elsewhere (fonts, telemetry, a CDN), so the page works
 * offline and never leaks what a partner types into it.
 */
const contentSecurityPolicy = (configureHash: string) =>
  [
    "default-src 'self'",
    // WebAssembly (Scalar compiles one module) without allowing eval itself.
    `script-src 'self' 'wasm-unsafe-eval' 'sha256-${configureHash}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'"
  ].join("; ")

const makeDocsAssets = Effect.map(loadScalar, (scalar) => {
  const script = makeAsset(scalar, {
    "content-type": "text/javascript; charset=utf-8",
    // Its URL changes with its content: cached for good.
    "cache-control": "public, max-age=31536000, immutable"
  })
  const { configureHash, html } = pageHtml(`${DOCS_SCRIPT_PATH}?v=${assetVersion(script)}`)
  const page = makeAsset(html, {
    "content-type": "text/html; charset=utf-8",
    // The document changes with a deployment: revalidated (304 while unchanged) after five minutes.
    "cache-control": "public, max-age=300",
    "content-security-policy": contentSecurityPolicy(configureHash),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer"
  })
  return { page, script }
})

/** `/docs`, an offline API reference. */
const DocsPageLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    // Built (and compressed) by the first request for the page or its script, then kept.
    const assets = yield* Effect.cached(makeDocsAssets)
    yield* router.add("GET", DOCS_PATH, Effect.flatMap(assets, ({ page }) => serveAsset(page)))
    yield* router.add("GET", DOCS_SCRIPT_PATH, Effect.flatMap(assets, ({ script }) => serveAsset(script)))
  })
)

/**
 * `/openapi.json`: the contract's document (the same as contracts/openapi.json), made and serialized by the first
 * request for it, then kept (made at start-up it was a tenth of the time to the first answer).
 */
const OpenApiLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const document = yield* Effect.cached(Effect.sync(() => HttpServerResponse.jsonUnsafe(openApiDocument())))
    yield* router.add("GET", OPENAPI_PATH, document)
  })
)

/** `/openapi.json` and `/docs`. */
export const DocsLive = Layer.merge(OpenApiLive, DocsPageLive)
