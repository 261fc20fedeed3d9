"""Bit tricks as LLVM intrinsics for the compiled kernels (one instruction each on
x86-64): a hand, a suit or a set of seats is a bit mask. Shared by the solver
(``bots.solver_compiled``) and SRP's playout (``bots.srp_compiled``), which
the solver's warm-up loads, so they live apart from both."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
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


@intrinsic
def prefetch_row(typingctx, table, row):  # noqa: ARG001
    """Ask the CPU to bring the first two cache lines of ``table[row]`` (a 2-D
    array) into its caches without waiting for them: the transposition
    table's probes would otherwise wait on memory one bucket after another."""
    sig = types.none(table, row)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = ir.Constant(ir.IntType(64), 0)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], zero])
        i8 = ir.IntType(8)
        i32 = ir.IntType(32)
        byte = builder.bitcast(ptr, i8.as_pointer())
        fnty = ir.FunctionType(ir.VoidType(), [byte.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        for offset in (0, 64):  # the bucket's keys: its first two lines
            at = builder.gep(byte, [ir.Constant(ir.IntType(64), offset)])
            builder.call(fn, [at, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
