/** The request and answer types of one operation, read from the types openapi-typescript generated. */
import type { components, operations } from "./generated/openapi.ts"
import type { OperationId } from "./generated/operations.ts"

export type Schemas = components["schemas"]
type Operation<O extends OperationId> = operations[O]

type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never

/** The JSON body an operation takes (`never` when it takes none). */
export type RequestBody<O extends OperationId> = Operation<O> extends { requestBody: infer R } ? JsonOf<R>
  : Operation<O> extends { requestBody?: infer R } ? JsonOf<NonNullable<R>>
  : never

/** Its query parameters. */
export type Query<O extends OperationId> = Operation<O>["parameters"] extends { query?: infer Q } ? NonNullable<Q>
  : never

/** Its path parameters. */
export type PathParams<O extends OperationId> = Operation<O>["parameters"] extends { path: infer P } ? P : never

type SuccessStatus = 200 | 201 | 202

/** What a 2xx of it carries as JSON. */
export type Answer<O extends OperationId> = {
  [S in keyof Operation<O>["responses"]]: S extends SuccessStatus ? JsonOf<Operation<O>["responses"][S]> : never
}[keyof Operation<O>["responses"]]
