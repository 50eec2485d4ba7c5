"""Provider kinds (vllm, openai, openai_compat, azure, anthropic, and whatever is registered
next): each declares, in one `ProviderKind`, the policy keys only it accepts and how they
compile into its frozen options (`Backend.options`), how its prompts are counted, where it
counts them itself and is scraped, its telemetry name, what the demo simulates for it, and
its factory.

Why a package of its own, below policy/ and providers/: those two are siblings that may not
import each other (pyproject.toml's layer contract), yet the policy validates and compiles a
kind's options while the providers read them on every request. The declarations live here,
where both may import them; the providers package attaches the built-in kinds' factories
(gateway/providers/registry.py), since their Provider classes live above this layer. A kind
shipped from outside the gateway (a test's toy provider, a plugin) carries its factory in the
declaration, and registering it in `PROVIDER_KINDS` is the one step that adds it.
"""
