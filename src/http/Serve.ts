import { Context, Effect, Layer, type Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { RequestMiddleware } from "./RequestMiddleware.ts"

/**
 * Serves the router's routes behind the request middleware (which answers for route misses too) on the HttpServer
 * provided. The routes and the router's own middleware must be registered before this is built.
 *
 * Each request's fiber starts from this layer's context (every service of the application): in Effect 4 a context
 * is layered, so adding the request's services to it does not copy it (Effect 3's did, which is why the service once
 * served with the platform's services only) — up to the context's `maxDepth` additions, 8 by default, past which each
 * addition copies every service into a new map. A request adds more than 8 (the request, its route and parameters,
 * log annotations, the middleware's services): served from a context that keeps REQUEST_ADDITIONS of them layered.
 */
export const REQUEST_ADDITIONS = 24

export const serveApi = Layer.effectDiscard(
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const middleware = yield* RequestMiddleware
    const server = yield* HttpServer.HttpServer
    yield* server.serve(middleware(router.asHttpEffect())).pipe(
      Effect.updateContext((context: Context.Context<Scope.Scope>) =>
        Context.makeUnsafe(context.mapUnsafe, { maxDepth: REQUEST_ADDITIONS })
      )
    )
  })
)
