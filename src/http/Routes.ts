import { HttpApi } from "effect/http-api"
import { IntegrationsApi } from "@cop-integrations/contracts"
import { DASHBOARD_PATHS } from "../dashboard/DashboardPage.ts"
import { DOCS_PATH, DOCS_SCRIPT_PATH, OPENAPI_PATH } from "./Docs.ts"

export interface KnownRoute {
  readonly method: string
  readonly pattern: RegExp
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[A-Za-z0-9_]+/g, "[^/]+")}/?$`)

/** Every (method, path) the service answers, used to tell 405 from 404. */
const knownRoutes: ReadonlyArray<KnownRoute> = (() => {
  const routes: Array<KnownRoute> = [
    { method: "GET", pattern: toPattern(OPENAPI_PATH) },
    { method: "GET", pattern: toPattern(DOCS_PATH) },
    { method: "GET", pattern: toPattern(DOCS_SCRIPT_PATH) },
    ...DASHBOARD_PATHS.map((path) => ({ method: "GET", pattern: toPattern(path) }))
  ]
  HttpApi.reflect(IntegrationsApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path) })
    }
  })
  return routes
})()

export const allowedMethods = (path: string): ReadonlyArray<string> =>
  knownRoutes.filter((route) => route.pattern.test(path)).map((route) => route.method)
