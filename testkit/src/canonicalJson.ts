/**
 * JSON with every object's keys in code-point order and no whitespace: one text per JSON value, whatever the order its
 * keys were written in. What the scenarios compare answers by (check.ts, sameJson) and what a signed report signs
 * (report/signed.ts, over a report as its JSON file holds it).
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "undefined"
}
