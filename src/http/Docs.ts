import { HttpApiBuilder, HttpApiScalar, HttpServerResponse } from "@effect/platform"
import { openApiDocument } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"

/** `/openapi.json` (the same document as contracts/openapi.json) and `/docs`, an offline API reference. */
export const DocsLive = Layer.mergeAll(
  HttpApiBuilder.Router.use((router) => router.get("/openapi.json", Effect.succeed(HttpServerResponse.unsafeJson(openApiDocument())))),
  HttpApiScalar.layer({ path: "/docs", scalar: { hideTestRequestButton: false } })
)
