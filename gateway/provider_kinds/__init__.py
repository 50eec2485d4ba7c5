"""Provider kinds (vllm, openai, openai_compat, azure, anthropic, and whatever is registered
next), each one registration (`ProviderKind`): the policy keys only it accepts and how they
compile into its frozen options (`Backend.options`), the factory that builds its Provider, how
its prompts are counted and where it counts them itself, where its engine is scraped, its
telemetry name, and what the demo simulates for it.

Why a package of its own, between the policy and the providers: the policy validates and
compiles a kind's options, the composition root builds its Provider, and the engine token
counter asks its upstream, so a registration names both its policy side and its Provider.
It sits below policy/ (which reads the table) and above providers/ and translate/ (whose
code the built-in kinds' factories and token counts call); the built-in kinds' option values
live lower still, in gateway/types/provider_options.py, as providers and translation read
them on every request. A kind shipped from outside the gateway (a test's kind, a plugin) is
one `ProviderKind` handed to `PROVIDER_KINDS.register`, nothing else.
"""
