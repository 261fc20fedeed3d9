"""Bit tricks as LLVM intrinsics for the compiled kernels (one instruction each on
x86-64): a hand, a suit or a set of seats is a bit mask. Shared by the solver
(``bots.solver_compiled``) and SRP's playout (``bots.srp_compiled``), which
the solver's warm-up loads, so they live apart from both."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):  # noqa: ARG001
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def high_bit(typingctx, x):  # noqa: ARG001
    """The index of the highest set bit (x > 0)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        lz = builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
        return builder.sub(ir.Constant(ir.IntType(64), 63), lz)

    return sig, codegen


@intrinsic
def low_bit(typingctx, x):  # noqa: ARG001
    """The index of the lowest set bit (x > 0)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen
