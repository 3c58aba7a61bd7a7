/** A small seeded generator (mulberry32): the same seed gives the same inputs on every machine. */
export interface Random {
  /** Uniform in [0, 1). */
  readonly next: () => number
  readonly int: (below: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  readonly bytes: (count: number) => Uint8Array
  /** The items in a seeded order. */
  readonly shuffle: <A>(items: ReadonlyArray<A>) => Array<A>
}

const mulberry32 = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** FNV-1a: a stable 32-bit number for a label, to give each endpoint its own stream of the seed. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

export const random = (seed: number, label = ""): Random => {
  const next = mulberry32((seed ^ hash(label)) >>> 0)
  const int = (below: number) => Math.floor(next() * below)
  return {
    next,
    int,
    pick: <A>(items: ReadonlyArray<A>): A => {
      const item = items[int(items.length)]
      if (item === undefined) throw new RangeError("pick from an empty list")
      return item
    },
    bytes: (count) => Uint8Array.from({ length: count }, () => int(256)),
    shuffle: <A>(items: ReadonlyArray<A>): Array<A> => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1)
        const swap = out[i] as A
        out[i] = out[j] as A
        out[j] = swap
      }
      return out
    }
  }
}

/** A fresh seed for a run that was given none. */
export const newSeed = (): number => crypto.getRandomValues(new Uint32Array(1))[0] ?? 1
