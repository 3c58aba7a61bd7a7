/**
 * Generated negative inputs. For one input surface of an endpoint (its JSON body, its query or its path),
 * the fields and their constraints are read from the contract's schema (as JSON Schema), a valid input is
 * broken one way at a time (a field missing, of the wrong type, at or past a boundary, oversized, badly
 * encoded; or the whole body malformed), and the contract's own schema is the oracle: a case is kept
 * only if the schema rejects it, so every kept case must be answered with a 4xx ErrorBody.
 */
import { Result, Schema, SchemaParser } from "effect"
import type { ParseOptions } from "effect/SchemaAST"
import type { WireSchema } from "../contract.ts"
import type { Random } from "./random.ts"

export type Input =
  | { readonly kind: "json"; readonly value: Readonly<Record<string, unknown>> }
  | { readonly kind: "raw"; readonly bytes: Uint8Array }
  | { readonly kind: "query"; readonly query: string }
  | { readonly kind: "path"; readonly segment: string }

export interface NegativeCase {
  readonly description: string
  /** The field the case breaks (its name must appear in a 400's message); none for whole-body cases. */
  readonly field: string | undefined
  readonly input: Input
  /** A rule checked in every run, not one breakage among many: kept in every sample. */
  readonly always?: true
}

export interface Surface {
  readonly location: "body" | "query" | "path"
  /** The contract's schema of this surface (payload, url params or path params). */
  readonly schema: WireSchema
  /** How the deployment decodes the surface (the contract's parse options for it; Schema's defaults when none). */
  readonly parseOptions?: ParseOptions | undefined
  /** A valid input: every field as its wire string. */
  readonly base: Readonly<Record<string, string>>
}

interface FieldInfo {
  readonly name: string
  readonly required: boolean
  readonly maxLength: number | undefined
  readonly enumValues: ReadonlyArray<unknown> | undefined
}

type Json = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Follows `$ref`s into the document's definitions. */
const resolve = (definitions: Json, node: unknown): Json => {
  if (!isRecord(node)) return {}
  const ref = node["$ref"]
  if (typeof ref !== "string") return node
  return resolve(definitions, definitions[ref.replace("#/$defs/", "")])
}

/** The fields of a struct schema with the constraints its JSON Schema states. */
export const fieldsOf = (schema: WireSchema): ReadonlyArray<FieldInfo> => {
  const document = Schema.toJsonSchemaDocument(schema)
  const root = document.schema
  const definitions: Json = document.definitions
  const object = resolve(definitions, root)
  const properties = isRecord(object["properties"]) ? object["properties"] : {}
  const required = Array.isArray(object["required"]) ? object["required"] : []
  return Object.entries(properties).map(([name, node]) => {
    const field = resolve(definitions, node)
    return {
      name,
      required: required.includes(name),
      maxLength: typeof field["maxLength"] === "number" ? field["maxLength"] : undefined,
      enumValues: Array.isArray(field["enum"]) ? field["enum"] : undefined
    }
  })
}

const OVERSIZED: Record<Surface["location"], number> = { body: 10_000, query: 1_500, path: 1_500 }

const fullWidthDigits = (text: string) => text.replace(/[0-9]/g, (digit) => String.fromCharCode(0xff10 + Number(digit)))

/** A valid value broken in ways that keep it a string. */
const stringBreakers = (
  field: FieldInfo,
  value: string,
  oversize: number
): ReadonlyArray<readonly [string, string]> => [
  ["empty string", ""],
  ["only whitespace", "   "],
  ["surrounded by spaces", ` ${value} `],
  ["trailing newline", `${value}\n`],
  ["last character dropped", value.slice(0, -1)],
  ["a character appended", `${value}0`],
  ["upper-cased", value.toUpperCase()],
  ["lower-cased", value.toLowerCase()],
  ["NUL character inside", `${value.slice(0, 1)}\u0000${value.slice(1)}`],
  ["a non-ASCII character", `${value.slice(0, -1)}€`],
  ["full-width digits", fullWidthDigits(value)],
  ["right-to-left override", `\u202e${value}`],
  ["emoji appended", `${value}💸`],
  ["sign prefix", `-${value}`],
  ["exponent notation", `${value}e2`],
  ["lone UTF-16 surrogate", `${value}\ud800`],
  [`oversized (${oversize} characters)`, value.padEnd(oversize, value.at(-1) ?? "a")],
  ...(field.maxLength === undefined ? [] : [
    [`one past maxLength ${field.maxLength}`, value.padEnd(field.maxLength + 1, value.at(-1) ?? "a")] as const
  ]),
  ...(field.enumValues === undefined ? [] : [["not one of the allowed values", `${value.toLowerCase()}x`] as const])
]

const wrongTypes = (value: string): ReadonlyArray<readonly [string, unknown]> => [
  ["a number", 0],
  ["a negative number", -1],
  ["a fraction", 1.5],
  ["a boolean", true],
  ["null", null],
  ["an array", [value]],
  ["an object", { value }]
]

const encoder = new TextEncoder()

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const INVALID_UTF8 = Uint8Array.of(0xff, 0xfe, 0xc3)

/** The base body with raw bytes that are not UTF-8 at the start of `field`'s string. */
const withInvalidUtf8 = (base: Json, field: string): Uint8Array => {
  const marker = "\u0001MARK\u0001"
  const [before = "", after = ""] = JSON.stringify({ ...base, [field]: `${marker}${String(base[field])}` }).split(
    JSON.stringify(marker).slice(1, -1)
  )
  return concat(encoder.encode(before), INVALID_UTF8, encoder.encode(after))
}

/** `quoteId` → `quoteID`: the case of the last character flipped. */
const misspell = (name: string) => {
  const last = name.slice(-1)
  return `${name.slice(0, -1)}${last === last.toUpperCase() ? last.toLowerCase() : last.toUpperCase()}`
}

/** The valid body plus a misspelled copy of `field`: unknown fields are a 400 naming them (DESIGN §3 Errors). */
const unknownFieldCase = (base: Json, field: string): NegativeCase => {
  const unknown = misspell(field)
  return {
    description: `${unknown}: not a field of the contract (misspelled ${field})`,
    field: unknown,
    input: { kind: "json", value: { ...base, [unknown]: base[field] ?? "x" } },
    always: true
  }
}

const bodyCases = (surface: Surface, fields: ReadonlyArray<FieldInfo>): Array<NegativeCase> => {
  const base: Json = surface.base
  const text = JSON.stringify(base)
  const raw = (description: string, bytes: Uint8Array): NegativeCase => ({
    description,
    field: undefined,
    input: { kind: "raw", bytes }
  })
  const json = (description: string, field: string, value: Json): NegativeCase => ({
    description,
    field,
    input: { kind: "json", value }
  })
  const cases: Array<NegativeCase> = [
    raw("truncated JSON", encoder.encode(text.slice(0, Math.floor(text.length / 2)))),
    raw("JSON followed by garbage", encoder.encode(`${text}x`)),
    raw("a JSON array instead of an object", encoder.encode(`[${text}]`)),
    raw("JSON null", encoder.encode("null")),
    raw("an empty body", new Uint8Array()),
    raw("deeply nested arrays", encoder.encode(`${"[".repeat(4000)}${"]".repeat(4000)}`)),
    raw("UTF-16 instead of UTF-8", Uint8Array.from(Buffer.from(text, "utf16le")))
  ]
  const last = fields.at(-1)
  if (last !== undefined) cases.push(unknownFieldCase(base, last.name))
  for (const field of fields) {
    const value = surface.base[field.name]
    if (field.required) {
      const { [field.name]: _, ...rest } = base
      cases.push(json(`${field.name}: missing`, field.name, rest))
    }
    if (value === undefined) continue
    for (const [description, broken] of wrongTypes(value)) {
      cases.push(json(`${field.name}: ${description}`, field.name, { ...base, [field.name]: broken }))
    }
    for (const [description, broken] of stringBreakers(field, value, OVERSIZED.body)) {
      cases.push(json(`${field.name}: ${description}`, field.name, { ...base, [field.name]: broken }))
    }
    cases.push({
      description: `${field.name}: bytes that are not UTF-8`,
      field: field.name,
      input: { kind: "raw", bytes: withInvalidUtf8(base, field.name) }
    })
  }
  return cases
}

const encodeQuery = (entries: ReadonlyArray<readonly [string, string]>): string | undefined => {
  try {
    return entries.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join("&")
  } catch {
    return undefined // a lone surrogate has no URL encoding
  }
}

const queryCases = (surface: Surface, fields: ReadonlyArray<FieldInfo>): Array<NegativeCase> => {
  const entries = Object.entries(surface.base)
  const cases: Array<NegativeCase> = []
  const push = (description: string, field: string, query: string | undefined) => {
    if (query !== undefined) cases.push({ description, field, input: { kind: "query", query } })
  }
  for (const field of fields) {
    const value = surface.base[field.name] ?? "1"
    const others = entries.filter(([name]) => name !== field.name)
    const othersQuery = encodeQuery(others) ?? ""
    const withRaw = (raw: string) => [othersQuery, `${field.name}=${raw}`].filter((part) => part !== "").join("&")
    for (const [description, broken] of stringBreakers(field, value, OVERSIZED.query)) {
      push(`${field.name}: ${description}`, field.name, encodeQuery([...others, [field.name, broken]]))
    }
    push(`${field.name}: bad percent-encoding`, field.name, withRaw("%ZZ"))
    push(`${field.name}: percent-encoded bytes that are not UTF-8`, field.name, withRaw("%FF%FE"))
    push(`${field.name}: given twice`, field.name, encodeQuery([...entries, [field.name, value]]))
  }
  return cases
}

const pathCases = (surface: Surface, fields: ReadonlyArray<FieldInfo>): Array<NegativeCase> =>
  fields.flatMap((field) => {
    const value = surface.base[field.name] ?? "x"
    const segments: ReadonlyArray<readonly [string, string]> = [
      [`one past maxLength ${field.maxLength ?? 64}`, value.padEnd((field.maxLength ?? 64) + 1, "x")],
      [`oversized (${OVERSIZED.path} characters)`, value.padEnd(OVERSIZED.path, "x")],
      ["bad percent-encoding", `${value}%ZZ`],
      ["percent-encoded bytes that are not UTF-8, oversized", `${value.padEnd(80, "x")}%FF%FE`]
    ]
    return segments.map(([description, segment]): NegativeCase => ({
      description: `${field.name}: ${description}`,
      field: undefined,
      input: { kind: "path", segment }
    }))
  })

const parseJsonBytes = (bytes: Uint8Array): Result.Result<unknown, string> => {
  try {
    return Result.succeed(JSON.parse(new TextDecoder().decode(bytes)))
  } catch {
    return Result.fail("not JSON")
  }
}

/** What a server decodes from a query: a repeated key becomes a list. */
const parseQuery = (query: string): Record<string, string | ReadonlyArray<string>> => {
  const out: Record<string, string | ReadonlyArray<string>> = {}
  for (const [key, value] of new URLSearchParams(query)) {
    const seen = out[key]
    out[key] = seen === undefined ? value : [...(typeof seen === "string" ? [seen] : seen), value]
  }
  return out
}

const decodeSegment = (segment: string): Result.Result<string, string> => {
  try {
    return Result.succeed(decodeURIComponent(segment))
  } catch {
    return Result.fail("not a valid percent-encoding")
  }
}

/** The oracle: would the contract's schema reject this input? (Its request bodies reject excess properties.) */
export const isInvalid = (surface: Surface, input: Input, pathParam = "payoutId"): boolean => {
  const decode = SchemaParser.decodeUnknownResult(surface.schema, surface.parseOptions)
  const decodes = (value: unknown) => Result.isSuccess(decode(value))
  switch (input.kind) {
    case "json":
      return !decodes(input.value)
    case "raw":
      return Result.match(parseJsonBytes(input.bytes), { onFailure: () => true, onSuccess: (value) => !decodes(value) })
    case "query":
      return !decodes(parseQuery(input.query))
    case "path":
      return Result.match(decodeSegment(input.segment), {
        onFailure: () => true,
        onSuccess: (value) => !decodes({ [pathParam]: value })
      })
  }
}

export interface GeneratedCases {
  /** Every case derived from the schema. */
  readonly derived: number
  /** The ones the schema accepts after all (not negative inputs), left out. */
  readonly discarded: number
  readonly cases: ReadonlyArray<NegativeCase>
}

/** Up to `count` schema-invalid cases for the surface, in the order `rng` gives them. */
export const generateCases = (surface: Surface, rng: Random, count: number): GeneratedCases => {
  const fields = fieldsOf(surface.schema)
  const derived = surface.location === "body"
    ? bodyCases(surface, fields)
    : surface.location === "query"
    ? queryCases(surface, fields)
    : pathCases(surface, fields)
  const invalid = derived.filter((item) => isInvalid(surface, item.input))
  const always = invalid.filter((item) => item.always === true)
  const sampled = rng.shuffle(invalid.filter((item) => item.always !== true)).slice(
    0,
    Math.max(0, count - always.length)
  )
  return {
    derived: derived.length,
    discarded: derived.length - invalid.length,
    cases: [...always, ...sampled].slice(0, count)
  }
}

const LONG_VALUE = 64

/** Simpler inputs that break the same field: other fields dropped, an oversized value halved. */
export const simplerInputs = (item: NegativeCase): ReadonlyArray<NegativeCase> => {
  if (item.input.kind !== "json") return []
  const value = item.input.value
  const dropped = Object.keys(value)
    .filter((name) => name !== item.field)
    .map((name): NegativeCase => {
      const { [name]: _, ...rest } = value
      return { ...item, input: { kind: "json", value: rest } }
    })
  const mutated = item.field === undefined ? undefined : value[item.field]
  const halved = typeof mutated === "string" && mutated.length > LONG_VALUE && item.field !== undefined
    ? [
      {
        ...item,
        input: { kind: "json", value: { ...value, [item.field]: mutated.slice(0, Math.ceil(mutated.length / 2)) } }
      } as NegativeCase
    ]
    : []
  return [...halved, ...dropped]
}

/** The input as text for a report (raw bytes outside UTF-8 as \xNN). */
export const showInput = (input: Input): string => {
  switch (input.kind) {
    case "json": {
      const text = JSON.stringify(input.value)
      return text.length > 400 ? `${text.slice(0, 400)}… (${text.length} chars)` : text
    }
    case "raw": {
      let out = ""
      for (const byte of input.bytes.slice(0, 400)) {
        out += byte >= 0x20 && byte < 0x7f
          ? String.fromCharCode(byte)
          : `\\x${byte.toString(16).padStart(2, "0")}`
      }
      return input.bytes.length > 400 ? `${out}… (${input.bytes.length} bytes)` : out
    }
    case "query":
      return input.query.length > 400
        ? `?${input.query.slice(0, 400)}… (${input.query.length} chars)`
        : `?${input.query}`
    case "path":
      return input.segment.length > 400
        ? `${input.segment.slice(0, 400)}… (${input.segment.length} chars)`
        : input.segment
  }
}
