/**
 * The coverage index of a run (issue #35, part 4; Microcks' "conformance index"): which operations, which declared
 * statuses of each, and which error codes the run's answers exercised, out of those the contract declares. Counted
 * from every answer a scenario's `kit.call` held to the contract (a request sent any other way is not counted).
 */
import { ErrorCode } from "@cop-integrations/contracts"
import { declaredStatuses, endpoints, type EndpointSpec } from "./contract.ts"
import type { CoverageIndex } from "./report/types.ts"

const operationOf = (spec: EndpointSpec) => `${spec.method} ${spec.path}`

export interface Coverage {
  /** One contract-kept answer: its operation, status and `errorCode` (if any). */
  readonly observe: (spec: EndpointSpec, status: number, errorCode: string | undefined) => void
  readonly index: () => CoverageIndex
}

export const makeCoverage = (): Coverage => {
  const operations = new Set<string>()
  const statuses = new Set<string>()
  const errorCodes = new Set<string>()
  return {
    observe: (spec, status, errorCode) => {
      operations.add(operationOf(spec))
      statuses.add(`${operationOf(spec)} ${status}`)
      if (errorCode !== undefined) errorCodes.add(errorCode)
    },
    index: () => {
      const specs = [...endpoints.values()]
      const declaredOperations = specs.map(operationOf)
      const declaredStatusPairs = specs.flatMap((spec) =>
        declaredStatuses(spec).map((status) => `${operationOf(spec)} ${status}`)
      )
      const declaredCodes: ReadonlyArray<string> = ErrorCode.literals
      const part = (declared: ReadonlyArray<string>, seen: ReadonlySet<string>) => ({
        exercised: declared.filter((item) => seen.has(item)).length,
        declared: declared.length
      })
      return {
        operations: part(declaredOperations, operations),
        statuses: part(declaredStatusPairs, statuses),
        errorCodes: part(declaredCodes, errorCodes),
        missed: {
          operations: declaredOperations.filter((item) => !operations.has(item)),
          statuses: declaredStatusPairs.filter((item) => !statuses.has(item)),
          errorCodes: declaredCodes.filter((item) => !errorCodes.has(item))
        }
      }
    }
  }
}

/** `41/45 operations, 97/160 operation × status, 20/27 error codes`. */
export const describeCoverage = (coverage: CoverageIndex): string =>
  `${coverage.operations.exercised}/${coverage.operations.declared} operations, ${coverage.statuses.exercised}/${coverage.statuses.declared} operation × status, ${coverage.errorCodes.exercised}/${coverage.errorCodes.declared} error codes`
