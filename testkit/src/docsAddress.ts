/**
 * Where the deployment's `/docs` page (Scalar) shows each operation of the contract: `#tag/<tag, lower case, spaces
 * as ->/<METHOD><path>`, the tag and the path as the contract's OpenAPI document writes them. Read from that document,
 * so an operation the contract adds has its address with no edit here (testkit/test/rules.test.ts checks the addresses
 * against the committed contracts/openapi.json, testkit/test/rules-docs.test.ts on the served page).
 */
import { openApiDocument } from "@cop-integrations/contracts"
import type { EndpointName } from "./contract.ts"

export interface Operation {
  readonly operationId: string
  readonly method: string
  /** With `{param}` placeholders, as the OpenAPI document writes it. */
  readonly path: string
  readonly tag: string
}

const readOperations = (): ReadonlyArray<Operation> => {
  const document = openApiDocument() as unknown as {
    readonly paths: Record<string, Record<string, { readonly operationId?: string; readonly tags?: Array<string> }>>
  }
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      operationId: operation.operationId ?? "",
      method: method.toUpperCase(),
      path,
      tag: operation.tags?.[0] ?? ""
    }))
  )
}

let read: ReadonlyArray<Operation> | undefined

/** Every operation of the contract's OpenAPI document (made once, on first use). */
export const operations = (): ReadonlyArray<Operation> => (read ??= readOperations())

/** How Scalar's /docs page names a tag in its addresses: lower case, spaces as `-`. */
export const scalarTagSlug = (tag: string): string => tag.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-")

/** The `/docs` fragment of an operation: `tag/bre-b/POST/api/integrations/breb/payouts/{payoutId}/cancel`. */
export const fragmentOf = (operation: Operation): string =>
  `tag/${scalarTagSlug(operation.tag)}/${operation.method}${operation.path}`

/** The endpoint an operation is: its operationId is `<group>.<endpoint>`, or the endpoint's name for a top-level one. */
export const endpointNameOf = (operation: Operation): string => operation.operationId.split(".").at(-1) ?? ""

/** The `/docs` fragment of an endpoint of the contract. */
export const docsFragment = (name: EndpointName): string => {
  const operation = operations().find((candidate) => endpointNameOf(candidate) === name)
  if (operation === undefined) throw new Error(`no operation of the contract's document is endpoint ${name}`)
  return fragmentOf(operation)
}

/** The operation of the OpenAPI document a `/docs` fragment addresses; throws when there is none. */
export const operationAt = (fragment: string): Operation => {
  const found = operations().find((operation) => fragmentOf(operation) === fragment)
  if (found === undefined) throw new Error(`no operation of the contract is at /docs#${fragment}`)
  return found
}
