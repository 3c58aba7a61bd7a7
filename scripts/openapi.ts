import { execFileSync } from "node:child_process"
/**
 * Writes contracts/openapi.json from the contract, and the README's errors table from the contract's error catalogue
 * (`npm run openapi`); a test fails when either is stale.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { errorTableMarkdown, openApiDocument } from "@cop-integrations/contracts"

const target = fileURLToPath(new URL("../contracts/openapi.json", import.meta.url))
const readme = fileURLToPath(new URL("../README.md", import.meta.url))

const TABLE_START = "<!-- errors:start (written by npm run openapi from contracts/src/ErrorCatalogue.ts) -->"
const TABLE_END = "<!-- errors:end -->"

/** `text` (the README) with the error catalogue's table between its markers. */
export const withErrorTable = (text: string): string => {
  const start = text.indexOf(TABLE_START)
  const end = text.indexOf(TABLE_END)
  if (start < 0 || end < start) throw new Error(`README.md has no ${TABLE_START} … ${TABLE_END} section`)
  return `${text.slice(0, start + TABLE_START.length)}\n${errorTableMarkdown()}\n${text.slice(end)}`
}

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
  writeFileSync(readme, withErrorTable(readFileSync(readme, "utf8")))
  console.log(`wrote the errors table of ${readme}`)
  // The SDK's types and operation table follow the document (sdk/scripts/generate.mjs).
  execFileSync(process.execPath, [fileURLToPath(new URL("../sdk/scripts/generate.mjs", import.meta.url))], {
    stdio: "inherit"
  })
  console.log("wrote sdk/src/generated")
}
