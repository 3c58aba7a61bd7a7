import { EventId } from "@cop-integrations/contracts"
import { randomBigInt } from "../base/ids.ts"

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

let lastMillis = -1
let lastRandom = 0n

const encode = (value: bigint, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(value & 31n)] + out
    value >>= 5n
  }
  return out
}

/** 80 random bits, from the ids' pool of random bytes (a system call per few hundred ids, not one per event). */
const random80 = (): bigint => randomBigInt(10)

/**
 * `evt_` + a ULID (48-bit milliseconds, 80 random bits), monotonic within this process: two events written in the
 * same millisecond (a payout's `deposit_confirmed` and `completed` in one transaction) sort in the order they were
 * made, so (createdAt, id) lists events of a resource in the order they happened.
 */
export const newEventId = (millis: number): EventId => {
  if (millis <= lastMillis) {
    lastRandom = (lastRandom + 1n) & ((1n << 80n) - 1n)
    millis = lastMillis
  } else {
    lastMillis = millis
    lastRandom = random80()
  }
  return EventId.make(`evt_${encode(BigInt(millis), 10)}${encode(lastRandom, 16)}`)
}
