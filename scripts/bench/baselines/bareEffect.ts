/**
 * Baseline: the design card's stack and nothing else. Effect's HttpApi with one endpoint, `GET /healthz`, answering
 * a fixed Schema-encoded body, served by `@effect/platform-node` on a plain `node:http` server. It has no
 * application services, middleware, database, request logs or metrics. Its CPU per request is the floor that any
 * service built on this stack pays for a light request.
 */
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"

const Health = Schema.Struct({ status: Schema.Literal("ok") })

class HealthGroup extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("healthz", "/healthz", { success: Health })
) {}

class FloorApi extends HttpApi.make("floor").add(HealthGroup) {}

const HealthLive = HttpApiBuilder.group(
  FloorApi,
  "health",
  (handlers) => handlers.handle("healthz", () => Effect.succeed({ status: "ok" as const }))
)

const nodeServer = createServer()

/** Serves the router's routes, then says where (as every baseline does, for the bench to read). */
const serve = Layer.effectDiscard(
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const server = yield* HttpServer.HttpServer
    yield* server.serve(router.asHttpEffect())
    const address = nodeServer.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    yield* Effect.sync(() => process.stdout.write(`listening on http://127.0.0.1:${port}\n`))
  })
)

serve.pipe(
  Layer.provide(HttpApiBuilder.layer(FloorApi).pipe(Layer.provide(HealthLive))),
  Layer.provide(HttpRouter.layer),
  Layer.provide(NodeHttpServer.layer(() => nodeServer, { port: 0, host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
