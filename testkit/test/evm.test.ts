/**
 * The contract's own Keccak-256 and EIP-55 checksums (contracts/src/Evm.ts) and the kit's ERC-20 transfer decoding
 * (src/calldata.ts); they replace viem, most of the kit's install size), checked against viem itself, which the service still uses.
 */
import { randomBytes } from "node:crypto"
import { encodeFunctionData, erc20Abi, getAddress, keccak256 as viemKeccak256, toHex } from "viem"
import { describe, expect, it } from "vitest"
import { decodeErc20Transfer } from "../src/calldata.ts"
import { checksumAddress, isAddress, keccak256 } from "@cop-integrations/contracts"
import { freshAddress as randomAddress } from "../src/fixtures.ts"

const hex = (bytes: Uint8Array) => toHex(bytes)
const anyAddress = () => `0x${randomBytes(20).toString("hex")}`

describe("keccak256", () => {
  it("the known digests of the empty string and of abc", () => {
    expect(hex(keccak256(new Uint8Array()))).toBe("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    expect(hex(keccak256(new TextEncoder().encode("abc")))).toBe(
      "0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"
    )
  })

  it("equals viem's for every length around the 136-byte rate, and random inputs", () => {
    const lengths = [0, 1, 31, 32, 55, 56, 64, 134, 135, 136, 137, 200, 271, 272, 273, 1000]
    for (const length of [...lengths, ...Array.from({ length: 40 }, () => randomBytes(1)[0]! * 3)]) {
      const input = new Uint8Array(randomBytes(length))
      expect(hex(keccak256(input)), `length ${length}`).toBe(viemKeccak256(input))
    }
  })
})

describe("EIP-55 addresses", () => {
  it("checksums the EIP-55 examples and random addresses as viem does", () => {
    for (
      const example of [
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"
      ]
    ) {
      expect(checksumAddress(example.toLowerCase())).toBe(example)
    }
    for (let i = 0; i < 200; i++) {
      const address = anyAddress()
      expect(checksumAddress(address)).toBe(getAddress(address))
      expect(checksumAddress(address.toUpperCase().replace("0X", "0x"))).toBe(getAddress(address))
    }
  })

  it("fresh addresses are checksummed and new", () => {
    const addresses = Array.from({ length: 100 }, randomAddress)
    for (const address of addresses) expect(getAddress(address)).toBe(address)
    expect(new Set(addresses).size).toBe(100)
  })

  it("isAddress: 0x and 40 hex digits in any case, nothing else", () => {
    expect(isAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")).toBe(true)
    for (
      const bad of [
        "",
        "0x",
        "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
        "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae",
        "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedd",
        "0xg aeb6053f3e94c9b9a09f33669435e7ef1beae"
      ]
    ) {
      expect(isAddress(bad), bad).toBe(false)
    }
  })
})

describe("ERC-20 transfer calldata", () => {
  it("decodes what viem encodes", () => {
    for (let i = 0; i < 100; i++) {
      const to = getAddress(anyAddress())
      const amount = BigInt(`0x${randomBytes(1 + (i % 32)).toString("hex")}`)
      expect(decodeErc20Transfer(encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] })))
        .toEqual({ to, amount })
    }
  })

  it("says which function other ERC-20 calldata calls, and what is wrong with malformed calldata", () => {
    const to = getAddress(anyAddress())
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, 5n] })
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      [encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [to, 5n] }), /calls approve, not transfer/],
      [
        encodeFunctionData({ abi: erc20Abi, functionName: "transferFrom", args: [to, to, 5n] }),
        /calls transferFrom, not transfer/
      ],
      ["0xdeadbeef", /unknown function selector 0xdeadbeef/],
      ["0xa905", /shorter than a 4-byte function selector/],
      [transfer.slice(0, -2), /63 bytes of arguments, not 64/],
      [`${transfer}00`, /65 bytes of arguments, not 64/],
      [`0xa9059cbb${"1".repeat(24)}${transfer.slice(34)}`, /not a 20-byte address padded with zeros/],
      ["a9059cbb", /not 0x-prefixed hex/],
      ["0xzz", /not 0x-prefixed hex/]
    ]
    for (const [data, says] of cases) {
      expect((decodeErc20Transfer(data) as { problem?: string }).problem, data).toMatch(says)
    }
  })
})
