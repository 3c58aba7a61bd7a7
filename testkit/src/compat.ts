/**
 * `compat`: a contract change held to the README's versioning rules (README#versioning). Two OpenAPI documents, the
 * last released and the new one, compared operation by operation and schema by schema, each schema in the direction
 * its data flows: what a client sends (parameters, request bodies) may accept more but never refuse what it accepted;
 * what a client receives (responses, webhooks) may carry more fields but never lose one, and a closed set of values
 * (an enum: statuses, `errorCode`, tokens…) may not grow. Event types are the open set, and ErrorBody is exact.
 *
 * Breaking: an operation, webhook, field, parameter or value removed; a new required input; an input narrowed (a
 * value, a type, a shorter limit, another pattern); a field's type changed; a response field made optional; a new
 * value of a closed set; a new field in ErrorBody; a success status changed. Additive: new operations, webhooks,
 * optional inputs, response fields, event types, error statuses.
 */

type Json = Readonly<Record<string, unknown>>

export interface CompatChange {
  readonly kind: "breaking" | "additive"
  /** Where: `GET /api/integrations/events 200 items[].type`, `webhook payout.created`, … */
  readonly where: string
  readonly what: string
}

type Direction = "input" | "output"

const METHODS = ["get", "put", "post", "delete", "patch"] as const

/** Sets a later version may grow: event types, since a `"*"` subscription takes the types to come. */
const isOpenSet = (name: string | undefined) => name !== undefined && /^Event(Type|Subscription)(_\d+)?$/.test(name)
const isErrorBody = (name: string | undefined) => name !== undefined && /^ErrorBody(_\d+)?$/.test(name)

const asObject = (value: unknown): Json => (typeof value === "object" && value !== null ? value as Json : {})
const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const keysOf = (value: unknown) => Object.keys(asObject(value))

interface Resolved {
  readonly schema: Json
  /** The component it was, through `$ref`s (`PayoutStatus`), if any. */
  readonly name: string | undefined
}

const resolver = (document: Json) => (schema: unknown): Resolved => {
  let current = asObject(schema)
  let name: string | undefined
  for (let hops = 0; typeof current["$ref"] === "string" && hops < 32; hops++) {
    const ref = current["$ref"]
    const match = /^#\/components\/schemas\/(.+)$/.exec(ref)
    if (match === null) break
    name = match[1]!
    current = asObject(asObject(asObject(document["components"])["schemas"])[name])
  }
  return { schema: current, name }
}

/** The values a schema allows when it is a closed list of them (`enum` or `const`), else undefined. */
const valuesOf = (schema: Json): ReadonlyArray<string> | undefined => {
  if (Array.isArray(schema["enum"])) return schema["enum"].map((value) => JSON.stringify(value))
  if ("const" in schema) return [JSON.stringify(schema["const"])]
  return undefined
}

const typesOf = (schema: Json): ReadonlyArray<string> | undefined =>
  typeof schema["type"] === "string" ? [schema["type"]] : Array.isArray(schema["type"]) ? schema["type"] : undefined

/** A union member's key: its component, else the values of its `type` property (an event envelope), else its place. */
const memberKey = (resolve: (schema: unknown) => Resolved) => (member: unknown, index: number): string => {
  const { name, schema } = resolve(member)
  if (name !== undefined) return name.replace(/_\d+$/, "")
  const typeValues = valuesOf(resolve(asObject(schema["properties"])["type"]).schema)
  return typeValues === undefined ? `#${index}` : `type ${typeValues.join("|")}`
}

export const compareContracts = (released: Json, next: Json): ReadonlyArray<CompatChange> => {
  const changes: Array<CompatChange> = []
  const breaking = (where: string, what: string) => changes.push({ kind: "breaking", where, what })
  const additive = (where: string, what: string) => changes.push({ kind: "additive", where, what })
  const resolveOld = resolver(released)
  const resolveNew = resolver(next)
  const eventTypes = new Set(keysOf(next["webhooks"]).map((type) => JSON.stringify(type)))
  const seen = new Set<string>()

  const compareSchema = (before: unknown, after: unknown, direction: Direction, where: string): void => {
    const old = resolveOld(before)
    const now = resolveNew(after)
    const visit = `${direction} ${where} ${old.name ?? ""} ${now.name ?? ""}`
    if (old.name !== undefined && now.name !== undefined) {
      const pair = `${direction} ${old.name} ${now.name}`
      if (seen.has(pair)) return
      seen.add(pair)
    } else if (seen.has(visit)) return
    seen.add(visit)
    const o = old.schema
    const n = now.schema
    const name = now.name ?? old.name

    const oldValues = valuesOf(o)
    const newValues = valuesOf(n)
    if (oldValues !== undefined || newValues !== undefined) {
      const added = newValues === undefined ? ["any value"] : newValues.filter((value) => !oldValues?.includes(value))
      const removed = oldValues === undefined ? [] : oldValues.filter((value) => !(newValues ?? []).includes(value))
      if (oldValues === undefined && newValues !== undefined && direction === "input") {
        breaking(where, `now only ${newValues.join(", ")}: input it accepted is refused`)
      }
      if (oldValues !== undefined && added.length > 0) {
        const open = isOpenSet(name) || added.every((value) => eventTypes.has(value))
        if (direction === "input" || open) additive(where, `new value(s) ${added.join(", ")}`)
        else {breaking(
            where,
            `new value(s) ${added.join(", ")} of a closed set${name === undefined ? "" : ` (${name})`}`
          )}
      }
      if (removed.length > 0) {
        breaking(
          where,
          `value(s) ${removed.join(", ")} removed${direction === "input" ? ": input it accepted is refused" : ""}`
        )
      }
    }

    const oldTypes = typesOf(o)
    const newTypes = typesOf(n)
    if (oldTypes !== undefined && newTypes !== undefined) {
      const gained = newTypes.filter((type) => !oldTypes.includes(type))
      const lost = oldTypes.filter((type) => !newTypes.includes(type))
      if (direction === "output" && gained.length > 0) breaking(where, `may now be ${gained.join(", ")}`)
      if (direction === "input" && lost.length > 0) breaking(where, `no longer accepts ${lost.join(", ")}`)
      if (direction === "output" && lost.length > 0 && gained.length === 0) {
        additive(where, `no longer ${lost.join(", ")}`)
      }
      if (direction === "input" && gained.length > 0 && lost.length === 0) {
        additive(where, `also accepts ${gained.join(", ")}`)
      }
    }

    if (direction === "input") compareLimits(o, n, where)
    compareProperties(o, n, direction, where, isErrorBody(name))
    if ("items" in o || "items" in n) compareSchema(o["items"], n["items"], direction, `${where}[]`)
    compareUnions(o, n, direction, where)
  }

  const compareLimits = (o: Json, n: Json, where: string) => {
    const tighter = (key: string, stricter: (before: number, after: number) => boolean) => {
      const before = o[key]
      const after = n[key]
      if (typeof after === "number" && (typeof before !== "number" || stricter(before, after))) {
        breaking(
          where,
          `${key} ${typeof before === "number" ? before : "none"} → ${after}: input it accepted is refused`
        )
      }
    }
    tighter("maxLength", (before, after) => after < before)
    tighter("maxItems", (before, after) => after < before)
    tighter("maximum", (before, after) => after < before)
    tighter("minLength", (before, after) => after > before)
    tighter("minItems", (before, after) => after > before)
    tighter("minimum", (before, after) => after > before)
    if (typeof n["pattern"] === "string" && n["pattern"] !== o["pattern"]) {
      const before = o["pattern"]
      breaking(where, `pattern ${typeof before === "string" ? before : "none"} → ${n["pattern"]}`)
    }
  }

  const compareProperties = (o: Json, n: Json, direction: Direction, where: string, errorBody: boolean) => {
    const before = asObject(o["properties"])
    const after = asObject(n["properties"])
    if (keysOf(before).length === 0 && keysOf(after).length === 0) return
    const wasRequired = new Set(asArray(o["required"]).map(String))
    const isRequired = new Set(asArray(n["required"]).map(String))
    for (const field of keysOf(before)) {
      const at = `${where}.${field}`
      if (!(field in after)) {
        breaking(at, direction === "input" ? "removed: a client sending it is refused" : "removed")
        continue
      }
      if (direction === "output" && wasRequired.has(field) && !isRequired.has(field)) breaking(at, "now optional")
      if (direction === "input" && !wasRequired.has(field) && isRequired.has(field)) breaking(at, "now required")
      compareSchema(before[field], after[field], direction, at)
    }
    for (const field of keysOf(after).filter((key) => !(key in before))) {
      const at = `${where}.${field}`
      if (errorBody) breaking(at, "a new field in ErrorBody")
      else if (direction === "input" && isRequired.has(field)) breaking(at, "a new required input")
      else additive(at, direction === "input" ? "a new optional input" : "a new field")
    }
  }

  const compareUnions = (o: Json, n: Json, direction: Direction, where: string) => {
    const members = (schema: Json) => asArray(schema["anyOf"] ?? schema["oneOf"])
    const before = members(o)
    const after = members(n)
    if (before.length === 0 && after.length === 0) return
    const oldKeys = before.map(memberKey(resolveOld))
    const newKeys = after.map(memberKey(resolveNew))
    // An event envelope's member is its type values: one member of several types may become one member per type.
    const typeValuesOf = (key: string) => (key.startsWith("type ") ? key.slice("type ".length).split("|") : [])
    oldKeys.forEach((key, index) => {
      const match = newKeys.indexOf(key)
      if (match !== -1) return compareSchema(before[index], after[match], direction, `${where} (${key})`)
      const values = typeValuesOf(key)
      const carriers = newKeys.flatMap((candidate, at) =>
        typeValuesOf(candidate).some((value) => values.includes(value)) ? [at] : []
      )
      const carried = new Set(carriers.flatMap((at) => typeValuesOf(newKeys[at]!)))
      if (values.length === 0 || values.some((value) => !carried.has(value))) {
        return breaking(`${where} (${key})`, "union member removed")
      }
      for (const at of carriers) compareSchema(before[index], after[at], direction, `${where} (${newKeys[at]})`)
    })
    const oldTypeValues = new Set(oldKeys.flatMap(typeValuesOf))
    newKeys.forEach((key) => {
      if (oldKeys.includes(key)) return
      const values = typeValuesOf(key)
      if (values.length > 0 && values.every((value) => oldTypeValues.has(value))) return
      const eventEnvelope = values.length > 0 &&
        values.every((value) => oldTypeValues.has(value) || eventTypes.has(value))
      if (direction === "input" || eventEnvelope || /Event$/.test(key)) {
        additive(`${where} (${key})`, "a new union member")
      } else breaking(`${where} (${key})`, "a new union member in a response")
    })
  }

  const compareOperation = (label: string, before: Json, after: Json) => {
    const parametersOf = (operation: Json) =>
      new Map(
        asArray(operation["parameters"]).map((parameter) => {
          const p = asObject(parameter)
          return [`${String(p["in"])} ${String(p["name"])}`, p] as const
        })
      )
    const oldParameters = parametersOf(before)
    const newParameters = parametersOf(after)
    for (const [key, parameter] of oldParameters) {
      const replacement = newParameters.get(key)
      if (replacement === undefined) {
        breaking(`${label} ${key}`, "parameter removed")
        continue
      }
      if (parameter["required"] !== true && replacement["required"] === true) {
        breaking(`${label} ${key}`, "now required")
      }
      compareSchema(parameter["schema"], replacement["schema"], "input", `${label} ${key}`)
    }
    for (const [key, parameter] of newParameters) {
      if (oldParameters.has(key)) continue
      if (parameter["required"] === true) breaking(`${label} ${key}`, "a new required parameter")
      else additive(`${label} ${key}`, "a new optional parameter")
    }

    const bodyOf = (operation: Json) =>
      asObject(asObject(asObject(operation["requestBody"])["content"])["application/json"])
    const oldBody = asObject(before["requestBody"])
    const newBody = asObject(after["requestBody"])
    if (keysOf(oldBody).length === 0 && newBody["required"] === true) breaking(`${label} body`, "a new required body")
    else if (keysOf(oldBody).length > 0 && keysOf(newBody).length === 0) breaking(`${label} body`, "body removed")
    else if (keysOf(newBody).length > 0) {
      compareSchema(bodyOf(before)["schema"], bodyOf(after)["schema"], "input", `${label} body`)
    }

    const oldResponses = asObject(before["responses"])
    const newResponses = asObject(after["responses"])
    for (const status of keysOf(oldResponses)) {
      if (!(status in newResponses)) {
        if (status.startsWith("2")) breaking(`${label} ${status}`, "success status changed")
        else additive(`${label} ${status}`, "no longer answered")
        continue
      }
      const schemaOf = (response: unknown) =>
        asObject(asObject(asObject(response)["content"])["application/json"])["schema"]
      compareSchema(schemaOf(oldResponses[status]), schemaOf(newResponses[status]), "output", `${label} ${status}`)
    }
    for (const status of keysOf(newResponses).filter((key) => !(key in oldResponses))) {
      if (status.startsWith("2")) breaking(`${label} ${status}`, "a new success status")
      else additive(`${label} ${status}`, "a new error status")
    }
  }

  const oldPaths = asObject(released["paths"])
  const newPaths = asObject(next["paths"])
  for (const path of new Set([...keysOf(oldPaths), ...keysOf(newPaths)])) {
    for (const method of METHODS) {
      const before = asObject(oldPaths[path])[method]
      const after = asObject(newPaths[path])[method]
      const label = `${method.toUpperCase()} ${path}`
      if (before === undefined && after === undefined) continue
      if (after === undefined) breaking(label, "operation removed")
      else if (before === undefined) additive(label, "a new operation")
      else compareOperation(label, asObject(before), asObject(after))
    }
  }

  const oldWebhooks = asObject(released["webhooks"])
  const newWebhooks = asObject(next["webhooks"])
  for (const type of new Set([...keysOf(oldWebhooks), ...keysOf(newWebhooks)])) {
    const bodyOf = (webhooks: Json) =>
      asObject(
        asObject(asObject(asObject(asObject(webhooks[type])["post"])["requestBody"])["content"])["application/json"]
      )[
        "schema"
      ]
    if (!(type in newWebhooks)) breaking(`webhook ${type}`, "event type removed")
    else if (!(type in oldWebhooks)) additive(`webhook ${type}`, "a new event type")
    else compareSchema(bodyOf(oldWebhooks), bodyOf(newWebhooks), "output", `webhook ${type}`)
  }
  return changes
}

/** A breaking change a release accepts on purpose, with why no client of the released contract is broken by it. */
export interface Acknowledgment {
  readonly where: string
  readonly what: string
  readonly why: string
}

/**
 * The breaking changes no acknowledgment names (they fail the check), those one does, and acknowledgments that name
 * no change (stale: the list must say exactly what it accepts). An acknowledgment names a change by `where` and `what`
 * as the check prints them.
 */
export const acknowledge = (
  changes: ReadonlyArray<CompatChange>,
  acknowledgments: ReadonlyArray<Acknowledgment>
): {
  readonly unacknowledged: ReadonlyArray<CompatChange>
  readonly acknowledged: ReadonlyArray<CompatChange & { readonly why: string }>
  readonly unused: ReadonlyArray<Acknowledgment>
} => {
  const named = (change: CompatChange) =>
    acknowledgments.find((each) => each.where === change.where && each.what === change.what)
  const breaking = changes.filter((change) => change.kind === "breaking")
  return {
    unacknowledged: breaking.filter((change) => named(change) === undefined),
    acknowledged: breaking.flatMap((change) => {
      const found = named(change)
      return found === undefined ? [] : [{ ...change, why: found.why }]
    }),
    unused: acknowledgments.filter((each) =>
      !breaking.some((change) => change.where === each.where && change.what === each.what)
    )
  }
}
