/**
 * The app in mock mode with a part a test scripts: its own payout provider or chain in place of the mock's, and the
 * outbox of its choice (the plain one, so the provider's transfers move only as the test says, or the mock
 * lifecycle's). No mailer, no test helpers; every other port is mock mode's.
 */
import type { Layer } from "effect"
import { mockPorts, type ModeLayers, serverLayerFor } from "../../src/App.ts"
import { MockScenarioLive } from "../../src/base/MockScenario.ts"
import type { Chain } from "../../src/chain/Chain.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { TxHashClaimsMock } from "../../src/chain/TxHashClaimsMock.ts"
import type { AppConfigShape } from "../../src/config/Config.ts"
import { MailerDisabled } from "../../src/kyc/Mailer.ts"
import type { PayoutProvider } from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { RateCacheMock } from "../../src/quotes/RateCacheMock.ts"
import { TestHelpersNone } from "../../src/testHelpers/TestHelpers.ts"

/** What a mode's ports may need and fail with (ModeLayers["ports"]). */
type Port<A> = Layer.Layer<A, Layer.Error<ModeLayers["ports"]>, Layer.Services<ModeLayers["ports"]>>

export const mockModeWith = (parts: {
  readonly provider?: Port<PayoutProvider>
  readonly chain?: Port<Chain>
  readonly outbox: ModeLayers["outbox"]
}) =>
(config: AppConfigShape) =>
  serverLayerFor(config, {
    ports: mockPorts({
      provider: parts.provider ?? ProviderMock,
      chain: parts.chain ?? ChainMock,
      mailer: MailerDisabled
    }),
    outbox: parts.outbox,
    rateCache: RateCacheMock,
    claims: TxHashClaimsMock,
    testHelpers: TestHelpersNone,
    apiMiddleware: MockScenarioLive
  })
