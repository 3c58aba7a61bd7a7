// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// A minimal smart-contract wallet, for tests on a local node only. Its owner (an EOA) makes it call other
/// contracts, one call or an atomic batch: a token's transfer from it is a Transfer whose `from` is the account,
/// in a transaction whose sender is the owner. Also the code an EOA delegates to (EIP-7702): the EOA then sends the
/// batch to itself, and each transfer is the EOA's own.
contract SmartAccount {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// Runs every call in order; one failing reverts them all.
    function execute(Call[] calldata calls) external payable {
        require(msg.sender == owner || msg.sender == address(this), "not owner");
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory result) = calls[i].to.call{value: calls[i].value}(calls[i].data);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
        }
    }
}
