"""Bots that learn from play (issue 22): NNB, NNB-sym, SPB and QP."""
