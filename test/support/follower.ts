/**
 * A partner following a list (GET events, payouts or swaps) as the README tells it to: it pages with the `nextCursor`
 * it was given and, at the end of the list (`nextCursor: null`), polls that last page again with the cursor that
 * fetched it, taking only what is new on it. It records what it was shown, so a test can check that every item of the
 * database was seen exactly once, in the documented order, and that a page read again starts with what it held before.
 */

export interface ListPage<Item> {
  readonly items: ReadonlyArray<Item>
  readonly nextCursor: string | null
}

export interface Follower<Item> {
  /** Reads pages until the end of the list (one poll). */
  readonly poll: () => Promise<void>
  /** Everything it was shown, in the order shown, the re-read end of the list counted once. */
  readonly seen: ReadonlyArray<Item>
  /** Pages read again that did not start with the items that page held before (a row committed into their middle). */
  readonly reshuffled: ReadonlyArray<string>
  /** How many pages it has read. */
  readonly pagesRead: () => number
}

export const follower = <Item>(
  fetchPage: (cursor: string | null) => Promise<ListPage<Item>>,
  idOf: (item: Item) => string
): Follower<Item> => {
  const seen: Array<Item> = []
  const reshuffled: Array<string> = []
  let cursor: string | null = null
  /** The items of the page `cursor` fetched, as last read. */
  let onPage: ReadonlyArray<string> = []
  let pages = 0

  const poll = async () => {
    for (;;) {
      const page = await fetchPage(cursor)
      pages++
      const ids = page.items.map(idOf)
      if (onPage.some((id, i) => ids[i] !== id)) {
        reshuffled.push(`cursor ${cursor}: held [${onPage.join(", ")}], now [${ids.join(", ")}]`)
      }
      const before = new Set(onPage)
      seen.push(...page.items.filter((item) => !before.has(idOf(item))))
      if (page.nextCursor === null) {
        onPage = ids
        return
      }
      cursor = page.nextCursor
      onPage = []
    }
  }

  return { poll, seen, reshuffled, pagesRead: () => pages }
}

/** The ids seen more than once. */
export const repeated = (
  ids: ReadonlyArray<string>
): ReadonlyArray<string> => [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))]
