"""The Textual front end: chat, tool trace and tree navigator around one AgentSession."""
