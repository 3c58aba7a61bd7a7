// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// An 18-decimal mintable ERC-20 standing in for the COP stablecoin (COPm), for tests on a local node only.
contract TestCop {
    string public constant name = "Test COP";
    string public constant symbol = "COPm";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function mint(address to, uint256 value) external {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(balanceOf[from] >= value, "balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}

interface IERC20 {
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// A minimal swap router with its own liquidity and a settable price per pair:
/// amountOut = amountIn * numerator / denominator (base units), reverting below minAmountOut.
/// `shortfall` (test only) makes it deliver that many base units less than it promises, to test a confirm
/// that must refuse an output below minAmountOut when the router does not enforce it.
contract TestRouter {
    struct Rate { uint256 numerator; uint256 denominator; }
    mapping(address => mapping(address => Rate)) public rates;
    uint256 public shortfall;
    bool public enforceMinimum = true;

    event Swapped(address indexed sender, address indexed recipient, uint256 amountIn, uint256 amountOut);

    function setRate(address tokenIn, address tokenOut, uint256 numerator, uint256 denominator) external {
        rates[tokenIn][tokenOut] = Rate(numerator, denominator);
    }

    function setMisbehaviour(uint256 shortfall_, bool enforceMinimum_) external {
        shortfall = shortfall_;
        enforceMinimum = enforceMinimum_;
    }

    function quote(address tokenIn, address tokenOut, uint256 amountIn) public view returns (uint256) {
        Rate memory rate = rates[tokenIn][tokenOut];
        require(rate.denominator != 0, "no route");
        return amountIn * rate.numerator / rate.denominator;
    }

    function swap(address tokenIn, address tokenOut, uint256 amountIn, uint256 minAmountOut, address recipient)
        external
        returns (uint256 amountOut)
    {
        amountOut = quote(tokenIn, tokenOut, amountIn) - shortfall;
        if (enforceMinimum) require(amountOut >= minAmountOut, "slippage");
        require(IERC20(tokenIn).transferFrom(msg.sender, address(this), amountIn), "pull");
        require(IERC20(tokenOut).transfer(recipient, amountOut), "push");
        emit Swapped(msg.sender, recipient, amountIn, amountOut);
    }
}
