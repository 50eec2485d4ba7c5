"""Responses API conversation state: stored responses, per tenant, with a retention."""
