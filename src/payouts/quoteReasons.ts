/** How many of a batch's item reasons a refusal quotes. */
const QUOTED = 3

/** The first reasons of a batch's items, for a refusal's text: "a; b; c; and 4 more". */
export const quoteReasons = (reasons: ReadonlyArray<string>): string =>
  `${reasons.slice(0, QUOTED).join("; ")}${reasons.length > QUOTED ? `; and ${reasons.length - QUOTED} more` : ""}`
