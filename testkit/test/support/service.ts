/**
 * The real mock service with one integration, and the proxies a test file puts in front of it (./proxy.ts): started
 * before the file's (or the describe block's) tests, all closed after them. Call it where the hooks belong.
 */
import { afterAll, beforeAll } from "vitest"
import { startTestServer, type TestServer } from "../../../test/support/server.ts"
import { type Interceptor, type Proxy, startProxy } from "./proxy.ts"

export const serviceBehindProxies = () => {
  let server: TestServer | undefined
  let apiKey = ""
  const proxies: Array<Proxy> = []
  beforeAll(async () => {
    server = await startTestServer()
    apiKey = (await server.newIntegration()).apiKey
  })
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close()
    await server?.close()
  })
  const started = () => {
    if (server === undefined) throw new Error("the service starts in beforeAll")
    return server
  }
  return {
    get server(): TestServer {
      return started()
    },
    /** The integration's key. */
    get apiKey(): string {
      return apiKey
    },
    /** A proxy in front of the service that rewrites what `interceptor` says. */
    through: async (interceptor: Interceptor = {}): Promise<Proxy> => {
      const proxy = await startProxy(started().baseUrl, interceptor)
      proxies.push(proxy)
      return proxy
    }
  }
}
