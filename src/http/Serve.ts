import { Etag, FileSystem, HttpApiBuilder, HttpPlatform, HttpServer, Path } from "@effect/platform"
import { Context, Effect, Layer, Scope } from "effect"

type PlatformServices = Scope.Scope | HttpPlatform.HttpPlatform | Etag.Generator | FileSystem.FileSystem | Path.Path

const platformOnly = (context: Context.Context<PlatformServices>): Context.Context<PlatformServices> =>
  Context.pick(Scope.Scope, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)(context)

/**
 * `HttpApiBuilder.serve()`, except that each request's fiber starts in a context holding only the platform's own
 * services, not every service of the application. The handlers took what they use when they were built (the
 * platform merges that in per group), and the app needs nothing else (`HttpApiBuilder.httpApp` requires only
 * per-request services). The platform copies the context on every `provideService` of a request and compares it
 * on every change: with the application's ~50 services in it that was a large share of each request's CPU.
 */
export const serveApi = Layer.scopedDiscard(
  Effect.gen(function*() {
    const app = yield* HttpApiBuilder.httpApp
    const server = yield* HttpServer.HttpServer
    yield* server.serve(app).pipe(Effect.mapInputContext(platformOnly))
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))
