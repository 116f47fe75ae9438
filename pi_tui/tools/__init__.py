"""The coding tools the agent can call: read, write, edit, bash, grep, find, ls."""
