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

/**
 * The document the page shows: the contract's, without the mock-only `x-mock-scenario` header parameter (Scalar's
 * requests and snippets would send it empty); the operations that take it carry the contract's description of it
 * in their own instead.
 */
const documentForPage = () => {
  // A copy: the platform memoizes the document, and /openapi.json must keep the parameter. Read as the plain JSON it
  // is (OpenAPI 3.1 paths, operations and parameters), the only parts edited here.
  const document = structuredClone(openApiDocument()) as unknown as {
    paths: Record<
      string,
      Record<string, { parameters?: Array<{ name: string; description?: string }>; description?: string }>
    >
  }
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const parameters = operation.parameters ?? []
      const scenario = parameters.find((parameter) => parameter.name === "x-mock-scenario")
      if (scenario === undefined) continue
      operation.parameters = parameters.filter((parameter) => parameter !== scenario)
      const note = `\`X-Mock-Scenario\` header (not offered on this page, which would send it empty): ${
        scenario.description ?? ""
      }`
      operation.description = `${operation.description ?? ""}\n\n${note}`.trim()
    }
  }
  return document
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

const pageHtml = (scriptUrl: string) => {
  const configure =
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
    <script id="api-reference" type="application/json">${scriptJson(documentForPage())}</script>
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

/** `/openapi.json`: the contract's document (the same as contracts/openapi.json), serialized once. */
const OpenApiLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const document = HttpServerResponse.jsonUnsafe(openApiDocument())
    yield* router.add("GET", OPENAPI_PATH, Effect.succeed(document))
  })
)

/** `/openapi.json` and `/docs`. */
export const DocsLive = Layer.merge(OpenApiLive, DocsPageLive)
