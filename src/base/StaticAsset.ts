import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib"

/** A static answer (a page, its script or styles), compressed once, served with its ETag. */
export interface Asset {
  readonly identity: Uint8Array
  readonly gzip: Uint8Array
  readonly br: Uint8Array
  readonly etag: string
  readonly headers: Record<string, string>
}

export const makeAsset = (text: string, headers: Record<string, string>): Asset => {
  const identity = Buffer.from(text, "utf8")
  return {
    identity,
    gzip: gzipSync(identity, { level: 9 }),
    br: brotliCompressSync(identity, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length }
    }),
    etag: `"${createHash("sha256").update(identity).digest("base64url").slice(0, 32)}"`,
    headers
  }
}

/** A version for an asset's URL (`?v=`), changing with its content: the URL can be cached for good. */
export const assetVersion = (asset: Asset): string => asset.etag.slice(1, 13)

/** br, then gzip, then none: what the client accepts (q=0 refuses). */
const encodingFor = (acceptEncoding: string | undefined): "br" | "gzip" | "identity" => {
  const accepted = new Set(
    (acceptEncoding ?? "").split(",").map((part) => part.trim().split(";")).filter(([, q]) => q?.trim() !== "q=0").map((
      [name]
    ) => name?.trim())
  )
  return accepted.has("br") ? "br" : accepted.has("gzip") ? "gzip" : "identity"
}

/** The asset in the encoding the request accepts, or 304 when it has it already. */
export const serveAsset = (asset: Asset) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const common = { ...asset.headers, etag: asset.etag, vary: "accept-encoding" }
    if (request.headers["if-none-match"] === asset.etag) {
      return HttpServerResponse.empty({ status: 304, headers: common })
    }
    const encoding = encodingFor(request.headers["accept-encoding"])
    const body = asset[encoding]
    return HttpServerResponse.uint8Array(body, {
      contentType: asset.headers["content-type"]!,
      headers: encoding === "identity" ? common : { ...common, "content-encoding": encoding }
    })
  })
