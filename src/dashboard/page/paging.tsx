/** Cursor pages over a list endpoint (`{ items, nextCursor }`): next, previous (the cursors seen), first. */
import { useState } from "preact/hooks"
import { get, type Query } from "./api.ts"
import { useLoad } from "./parts.tsx"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export const PAGE_SIZE = "25"

/** The cursors that fetched the pages before this one; the last fetched this one (none: the first page). */
export const useCursors = () => {
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  return {
    cursor: cursors.at(-1),
    pageNumber: cursors.length + 1,
    next: (cursor: string) => setCursors([...cursors, cursor]),
    previous: () => setCursors(cursors.slice(0, -1)),
    first: () => setCursors([])
  }
}

/**
 * A list endpoint read a page at a time with the filters applied: every page is asked for with the same filters (a
 * filtered list's cursor continues that list only), and applying other filters starts again from the first page.
 */
export function useFilteredPages<A>(path: string) {
  const [query, setQuery] = useState<Query>({})
  const cursors = useCursors()
  const list = useLoad(
    () => get<Page<A>>(path, { ...query, limit: PAGE_SIZE, cursor: cursors.cursor }),
    [path, query, cursors.cursor]
  )
  const apply = (next: Query) => {
    cursors.first()
    setQuery(next)
  }
  return { list, cursors, apply }
}

export const Pager = (
  { cursors, label, nextCursor }: {
    readonly cursors: ReturnType<typeof useCursors>
    readonly nextCursor: string | null | undefined
    readonly label: string
  }
) => (
  <nav class="pager" aria-label={`${label} pages`}>
    <button type="button" disabled={cursors.pageNumber === 1} onClick={cursors.previous}>Previous page</button>
    <span>Page {cursors.pageNumber}</span>
    <button
      type="button"
      disabled={nextCursor === null || nextCursor === undefined}
      onClick={() => nextCursor !== null && nextCursor !== undefined && cursors.next(nextCursor)}
    >
      Next page
    </button>
  </nav>
)
