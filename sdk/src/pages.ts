/** A list the API pages with `nextCursor`, read as items (`for await`), as pages, or one page at a time. */

export interface Page<Item> {
  readonly items: ReadonlyArray<Item>
  readonly nextCursor: string | null
}

export class PagedList<Item, P extends Page<Item> = Page<Item>> implements AsyncIterable<Item> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<P>,
    private readonly firstCursor: string | undefined
  ) {}

  /** One page: the first (or the one the list's `cursor` names), or the one `cursor` names. */
  page(cursor?: string): Promise<P> {
    return this.fetchPage(cursor ?? this.firstCursor)
  }

  /** Every page in turn, following `nextCursor` until it is `null`. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let cursor = this.firstCursor
    for (;;) {
      const page = await this.fetchPage(cursor)
      yield page
      if (page.nextCursor === null) return
      cursor = page.nextCursor
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.items
  }

  /** Every item in an array (mind a long list's size; `for await` reads it a page at a time). */
  async toArray(): Promise<Array<Item>> {
    const items: Array<Item> = []
    for await (const item of this) items.push(item)
    return items
  }
}
