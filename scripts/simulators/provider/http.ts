/** Small node:http helpers: body reading, JSON answers, path matching. */
import type { IncomingMessage, ServerResponse } from "node:http"

const MAX_BODY_BYTES = 1024 * 1024

export class BodyTooLarge extends Error {}

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge(`body over ${MAX_BODY_BYTES} bytes`))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const sendRaw = (
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {}
): void => {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
}

const bigintAsString = (_key: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value)

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  sendRaw(res, status, JSON.stringify(body, bigintAsString), headers)

export const sendText = (
  res: ServerResponse,
  status: number,
  body: string,
  contentType = "text/plain; charset=utf-8"
) => sendRaw(res, status, body, { "content-type": contentType })

/** JSON.parse that answers undefined for an empty body and a tagged failure for invalid JSON. */
export const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  if (text.trim() === "") return { ok: true, value: undefined }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** JSON with object keys sorted, so two serialisations of the same value compare equal. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export interface Route<Ctx, R> {
  readonly method: string
  readonly pattern: RegExp
  readonly handle: (ctx: Ctx, params: ReadonlyArray<string>) => R
}

export const route = <Ctx, R>(method: string, path: string, handle: Route<Ctx, R>["handle"]): Route<Ctx, R> => ({
  method,
  pattern: new RegExp(`^${path.replace(/:[a-zA-Z]+/g, "([^/]+)")}$`),
  handle
})

/** The route for `method` + `path`: its params, or "method" when only the method is wrong. */
export const match = <Ctx, R>(routes: ReadonlyArray<Route<Ctx, R>>, method: string, path: string) => {
  let pathMatched = false
  for (const candidate of routes) {
    const found = candidate.pattern.exec(path)
    if (found === null) continue
    pathMatched = true
    if (candidate.method === method) return { route: candidate, params: found.slice(1).map(decodeURIComponent) }
  }
  return pathMatched ? "method" as const : undefined
}
