import { openApiDocument } from "@cop-integrations/contracts"

/** Same rendering as scripts/openapi.ts. */
export const renderOpenApiForTest = (): string => `${JSON.stringify(openApiDocument(), null, 2)}\n`
