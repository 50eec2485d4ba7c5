"""Spend control: pricing in integer micro-USD, per-tenant budgets and rate limits (memory or
Redis stores behind one BudgetStore protocol)."""
