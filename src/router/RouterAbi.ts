/**
 * The router call the mock router prepares: `swap(tokenIn, tokenOut, amountIn, minAmountOut, recipient)`. It pulls
 * amountIn from the sender (after an ERC-20 approve), reverts below minAmountOut, and sends the output to recipient.
 * The test router on anvil (`TestRouter` in test/chain/SwapFixtures.sol) implements it.
 */
export const routerAbi = [
  {
    type: "function",
    name: "swap",
    stateMutability: "nonpayable",
    inputs: [
      { name: "tokenIn", type: "address" },
      { name: "tokenOut", type: "address" },
      { name: "amountIn", type: "uint256" },
      { name: "minAmountOut", type: "uint256" },
      { name: "recipient", type: "address" }
    ],
    outputs: [{ name: "amountOut", type: "uint256" }]
  }
] as const
