import { BadGateway, ServiceUnavailable } from "@cop-integrations/contracts"
import type { SwapRouterFailure } from "./SwapRouter.ts"

/** A router failure as the partner sees it: 503 (retry), 502 (unreadable answer); no route stays NoSwapRoute. */
export const routerFailure = (error: SwapRouterFailure) => {
  switch (error._tag) {
    case "SwapRouterUnavailable":
      return new ServiceUnavailable({ error: `swap router unavailable: ${error.reason}; retry later` })
    case "SwapRouterBadResponse":
      return new BadGateway({ error: "the swap router answered unexpectedly; retry later" })
    case "NoSwapRoute":
      return error
  }
}
