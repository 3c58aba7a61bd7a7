/** Writes contracts/openapi.json from the contract (`npm run openapi`); a test fails when it is stale. */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "@cop-integrations/contracts"

export const renderOpenApi = (): string => `${JSON.stringify(openApiDocument(), null, 2)}\n`

const target = fileURLToPath(new URL("../contracts/openapi.json", import.meta.url))
writeFileSync(target, renderOpenApi())
console.log(`wrote ${target}`)
