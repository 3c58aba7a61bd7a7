/** Writes contracts/openapi.json from the contract (`npm run openapi`); a test fails when it is stale. */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "@cop-integrations/contracts"

const target = fileURLToPath(new URL("../contracts/openapi.json", import.meta.url))

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `value` with each object's keys in the order `like` (the same place in the committed document) has them, keys it
 * lacks after them as generated. Key order means nothing in JSON, and Effect 4 writes keys in another order than
 * Effect 3 did: keeping the committed order makes a regenerated file differ only where the document changed.
 */
const orderedLike = (value: unknown, like: unknown): unknown => {
  if (Array.isArray(value)) {
    return value.map((item, index) => orderedLike(item, Array.isArray(like) ? like[index] : undefined))
  }
  if (!isObject(value)) return value
  const known = isObject(like) ? Object.keys(like).filter((key) => Object.hasOwn(value, key)) : []
  const keys = [...known, ...Object.keys(value).filter((key) => !known.includes(key))]
  return Object.fromEntries(keys.map((key) => [key, orderedLike(value[key], isObject(like) ? like[key] : undefined)]))
}

export const renderOpenApi = (): string => {
  const committed: unknown = existsSync(target) ? JSON.parse(readFileSync(target, "utf8")) : undefined
  return `${JSON.stringify(orderedLike(openApiDocument(), committed), null, 2)}\n`
}

// Imported by tests for `renderOpenApi`; writes only when run.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(target, renderOpenApi())
  console.log(`wrote ${target}`)
}
