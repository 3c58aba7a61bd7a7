import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"

// `npm run lint`: typescript-eslint's type-checked rules plus the ones below, and the layout the Effect repositories
// use, formatted by dprint inside ESLint (@effect/dprint). `npm run fmt` sets LAYOUT_ONLY: the layout rule alone,
// without type information (a fix pass that re-checks types costs minutes).
const layoutOnly = process.env["LAYOUT_ONLY"] === "1"

const unsafeAny = {
  "@typescript-eslint/no-explicit-any": "off",
  "@typescript-eslint/no-unsafe-argument": "off",
  "@typescript-eslint/no-unsafe-assignment": "off",
  "@typescript-eslint/no-unsafe-call": "off",
  "@typescript-eslint/no-unsafe-member-access": "off",
  "@typescript-eslint/no-unsafe-return": "off"
}

const checks = [
  {
    files: ["**/*.{ts,tsx,mjs,js}"],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: "./tsconfig.eslint.json", tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-import-type-side-effects": "error",
      // fast-xml-parser 5 sends validation to a separate package; the kit's tests keep the validator they have.
      "@typescript-eslint/no-deprecated": ["error", {
        allow: [{ from: "package", package: "fast-xml-parser", name: "XMLValidator" }]
      }],
      "@typescript-eslint/return-await": ["error", "in-try-catch"],
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
      // A caught value passed on as it is, as `throw` may (only-throw-error allows it too).
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
      // An async function without await is how a function that may throw hands back a rejection instead.
      "@typescript-eslint/require-await": "off"
    }
  },
  // Tests and the plain JavaScript scripts read JSON answers as `any` and assert on them; typing every body would
  // be a rewrite of the tests, not a fix.
  { files: ["test/**", "testkit/test/**", "sdk/test/**", "**/*.{mjs,js}"], rules: unsafeAny },
  { files: ["**/*.{mjs,js}"], languageOptions: { globals: globals.node } },
  // Type-checked by test/openapi/document-tools.test.ts against the api.ts it generates beside it.
  { files: ["test/openapi/typed-client.ts"], extends: [tseslint.configs.disableTypeChecked] }
]

const layout = [
  { files: ["**/*.{ts,tsx}"], languageOptions: { parser: tseslint.parser } },
  effect.configs.dprint,
  {
    rules: {
      // Imports keep their written order: sorting them is a layout change with no check behind it.
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          "module.sortImportDeclarations": "maintain",
          "module.sortExportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain"
        }
      }]
    }
  }
]

export default defineConfig(
  {
    ignores: [
      "**/node_modules/",
      "**/dist/",
      ".data/",
      ".artifacts/",
      ".conformance/",
      "coverage/",
      "sdk/src/generated/"
    ]
  },
  // Layout only: the other rules' disable comments stay, neither unknown nor removed as unused.
  layoutOnly
    ? { plugins: { "@typescript-eslint": tseslint.plugin }, linterOptions: { reportUnusedDisableDirectives: "off" } }
    : checks,
  layout
)
