import { renderOpenApi } from "../../scripts/openapi.ts"

/** Same rendering as scripts/openapi.ts (`npm run openapi`). */
export const renderOpenApiForTest = (): string => renderOpenApi()
