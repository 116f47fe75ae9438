"""The model side of pi_tui: LiteLLM adapter, offline model, agent loop, typed events."""
