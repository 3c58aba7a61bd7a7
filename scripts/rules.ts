/** Writes testkit/RULES.md from the kit's rules and scenarios (`npm run rules`); a test fails when it is stale. */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderRulesMarkdown } from "../testkit/src/rulesMarkdown.ts"

const target = fileURLToPath(new URL("../testkit/RULES.md", import.meta.url))
writeFileSync(target, renderRulesMarkdown())
console.log(`wrote ${target}`)
